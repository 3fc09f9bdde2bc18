//! Bad input: each error names the file (and line where it comes from YAML) and says what is
//! wrong, in the words a user sees.

use std::path::Path;

use tidegate_kustomize::{Builder, ErrorKind, LoadRestrictions, Options};

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

fn build_err(files: &[(&str, &str)], build: &str) -> tidegate_kustomize::Error {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), files);
    let b = Builder::new(tmp.path(), Options::default()).expect("root");
    match b.build(&tmp.path().join(build)) {
        Ok(r) => panic!("expected an error, built:\n{}", r.to_yaml()),
        Err(e) => e,
    }
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";

#[test]
fn missing_file() {
    let e = build_err(
        &[("kustomization.yaml", "resources:\n- nothere.yaml\n")],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::MissingFile);
    assert_eq!(
        e.to_string(),
        "kustomization.yaml: \"nothere.yaml\": no such file or directory (nothere.yaml)"
    );
}

#[test]
fn invalid_yaml_names_file_and_line() {
    let e = build_err(
        &[
            ("kustomization.yaml", "resources: [a.yaml]\n"),
            (
                "a.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n",
            ),
        ],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::InvalidYaml);
    assert_eq!(e.file.as_deref(), Some("a.yaml"));
    assert!(e.line.is_some(), "{e}");
    assert!(e.to_string().starts_with("a.yaml:"), "{e}");
}

#[test]
fn object_without_kind() {
    let e = build_err(
        &[
            ("kustomization.yaml", "resources: [a.yaml]\n"),
            ("a.yaml", "a: 1\n---\napiVersion: v1\nmetadata: {name: x}\n"),
        ],
        ".",
    );
    assert_eq!(
        e.to_string(),
        "a.yaml:1: missing kind in a Kubernetes object"
    );
}

#[test]
fn cycle() {
    let e = build_err(
        &[
            ("a/kustomization.yaml", "resources: [../b]\n"),
            ("b/kustomization.yaml", "resources: [../a]\n"),
        ],
        "a",
    );
    assert_eq!(e.kind, ErrorKind::Cycle);
    assert_eq!(
        e.to_string(),
        "a/kustomization.yaml: cycle detected: a -> b -> a"
    );
}

#[test]
fn id_conflict() {
    let e = build_err(
        &[
            ("kustomization.yaml", "resources: [a.yaml, b.yaml]\n"),
            ("a.yaml", CM),
            ("b.yaml", CM),
        ],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::IdConflict);
    assert_eq!(
        e.to_string(),
        "b.yaml:1: may not add resource with an already registered id: ConfigMap.v1|[noNs]|a (first read from a.yaml)"
    );
}

#[test]
fn patch_matching_nothing() {
    let e = build_err(
        &[
            (
                "kustomization.yaml",
                "resources: [a.yaml]\npatches:\n- path: p.yaml\n",
            ),
            ("a.yaml", CM),
            (
                "p.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zz\ndata: {x: y}\n",
            ),
        ],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::NoMatch);
    assert_eq!(
        e.to_string(),
        "p.yaml:1: no resource matches strategic merge patch \"ConfigMap.v1.[noGrp]/zz.[noNs]\": no matches for Id ConfigMap.v1.[noGrp]/zz.[noNs]; failed to find unique target for patch ConfigMap.v1.[noGrp]/zz.[noNs]"
    );
}

#[test]
fn unknown_field_in_kustomization() {
    let e = build_err(&[("kustomization.yaml", "resources: []\nfoo: bar\n")], ".");
    assert_eq!(e.kind, ErrorKind::UnknownField);
    assert_eq!(e.file.as_deref(), Some("kustomization.yaml"));
    assert_eq!(e.line, Some(2));
    assert!(e.to_string().contains("unknown field `foo`"), "{e}");
}

#[test]
fn remote_resource_is_refused_by_url() {
    let e = build_err(
        &[(
            "kustomization.yaml",
            "resources:\n- https://example.com/app.yaml\n",
        )],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::Remote);
    assert!(
        e.to_string()
            .contains("remote resource \"https://example.com/app.yaml\" is not supported"),
        "{e}"
    );
    let e = build_err(
        &[(
            "kustomization.yaml",
            "resources:\n- github.com/org/repo//deploy?ref=v1\n",
        )],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::Remote);
}

#[test]
fn helm_and_plugins_are_refused() {
    let e = build_err(
        &[(
            "kustomization.yaml",
            "helmCharts:\n- name: x\n  repo: https://example.com\n",
        )],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.to_string().contains("helm chart inflation"), "{e}");
    // An exec or Go plugin: named, and the message says only builtins run.
    let e = build_err(
        &[
            ("kustomization.yaml", "transformers: [t.yaml]\n"),
            (
                "t.yaml",
                "apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata:\n  name: x\n",
            ),
        ],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(
        e.to_string()
            .contains("ChartInflator.someteam.example.com/v1 \"x\" is an external plugin")
            && e.to_string().contains("t.yaml"),
        "{e}"
    );
    // A builtin kind under another apiVersion is an external plugin in kustomize too.
    let e = build_err(
        &[
            ("kustomization.yaml", "transformers: [t.yaml]\n"),
            (
                "t.yaml",
                "apiVersion: example.com/v1\nkind: LabelTransformer\nmetadata:\n  name: x\n",
            ),
        ],
        ".",
    );
    assert!(
        e.to_string()
            .contains("configured with apiVersion: builtin"),
        "{e}"
    );
    // A KRM function (container or exec).
    let e = build_err(
        &[(
            "kustomization.yaml",
            "generators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n  metadata:\n    name: f\n    annotations:\n      config.kubernetes.io/function: |\n        container:\n          image: example/fn\n",
        )],
        ".",
    );
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.to_string().contains("is a KRM function"), "{e}");
    // Validators are always external.
    let e = build_err(&[("kustomization.yaml", "validators: [v.yaml]\n")], ".");
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(
        e.to_string().contains("validators are external plugins"),
        "{e}"
    );
    // A transformer listed as a generator.
    let e = build_err(
        &[(
            "kustomization.yaml",
            "generators:\n- |\n  apiVersion: builtin\n  kind: LabelTransformer\n  metadata:\n    name: l\n",
        )],
        ".",
    );
    assert!(
        e.to_string()
            .contains("LabelTransformer is a transformer, not a generator"),
        "{e}"
    );
}

#[test]
fn paths_leaving_the_root_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        &[
            ("outside.yaml", CM),
            ("root/kustomization.yaml", "resources: [../outside.yaml]\n"),
        ],
    );
    let root = tmp.path().join("root");
    let b = Builder::new(
        &root,
        Options {
            load_restrictions: LoadRestrictions::None,
            ..Options::default()
        },
    )
    .expect("root");
    let e = b.build(&root).expect_err("escapes");
    assert_eq!(e.kind, ErrorKind::OutsideRoot);
    assert_eq!(
        e.to_string(),
        "kustomization.yaml: \"../outside.yaml\" leaves the build root"
    );

    write(
        tmp.path(),
        &[("root/k2/kustomization.yaml", "resources: [/etc/passwd]\n")],
    );
    let e = b.build(&root.join("k2")).expect_err("absolute");
    assert_eq!(e.kind, ErrorKind::OutsideRoot);

    std::os::unix::fs::symlink(tmp.path().join("outside.yaml"), root.join("link.yaml"))
        .expect("symlink");
    write(
        tmp.path(),
        &[("root/k3/kustomization.yaml", "resources: [../link.yaml]\n")],
    );
    let e = b.build(&root.join("k3")).expect_err("symlink");
    assert_eq!(e.kind, ErrorKind::OutsideRoot);
    assert!(
        e.to_string().contains("symlink that leaves the build root"),
        "{e}"
    );
}

#[test]
fn kubectl_load_restriction_refuses_files_beside_the_kustomization() {
    let e = build_err(
        &[
            ("cm.yaml", CM),
            ("app/kustomization.yaml", "resources: [../cm.yaml]\n"),
        ],
        "app",
    );
    assert_eq!(e.kind, ErrorKind::OutsideRoot);
    assert!(
        e.to_string()
            .contains("is not in or below the kustomization directory"),
        "{e}"
    );
}

#[test]
fn flux_generates_a_kustomization_for_plain_manifests() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        &[
            ("b.yaml", CM),
            (
                "a.yml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n",
            ),
            ("notes.txt", "not yaml"),
            (
                "sub/c.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n",
            ),
            ("app/kustomization.yaml", "resources: [d.yaml]\n"),
            (
                "app/d.yaml",
                "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
            ),
        ],
    );
    let b = Builder::new(
        tmp.path(),
        Options {
            generate_missing: true,
            overlay: None,
            ..Options::default()
        },
    )
    .expect("root");
    let out = b.build(tmp.path()).expect("builds");
    let kinds: Vec<&str> = out.resources.iter().map(|r| r.kind()).collect();
    assert_eq!(
        kinds,
        vec!["Namespace", "ServiceAccount", "ConfigMap", "Secret"]
    );
    let e = Builder::new(tmp.path(), Options::default())
        .expect("root")
        .build(tmp.path())
        .expect_err("no file");
    assert_eq!(e.kind, ErrorKind::MissingFile);
    write(tmp.path(), &[("bad.yaml", "a: 1\n")]);
    let e = b.build(tmp.path()).expect_err("not kubernetes");
    assert!(
        e.to_string().contains("failed to decode Kubernetes YAML"),
        "{e}"
    );
}

#[test]
fn builds_run_concurrently_without_sharing_state() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(
        tmp.path(),
        &[
            (
                "kustomization.yaml",
                "namePrefix: p-\nresources: [a.yaml]\nconfigMapGenerator:\n- name: g\n  literals: [k=v]\n",
            ),
            ("a.yaml", CM),
        ],
    );
    let first = Builder::new(tmp.path(), Options::default())
        .expect("root")
        .build(tmp.path())
        .expect("builds")
        .to_yaml();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                let out = Builder::new(tmp.path(), Options::default())
                    .expect("root")
                    .build(tmp.path())
                    .expect("builds")
                    .to_yaml();
                assert_eq!(out, first);
            });
        }
    });
}

/// kubectl kustomize's answer for `dir`: its output, or its error text.
fn kubectl_kustomize(dir: &Path) -> Result<String, String> {
    let out = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .expect("kubectl must be installed: it is the reference for kustomize builds");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// An empty kustomization builds to nothing, and a Kustomization applying that with prune
/// deletes everything it manages: kustomize refuses it, and so does Tidegate, at every level.
#[test]
fn empty_kustomization_yaml_is_refused() {
    for text in [
        "",
        "\n\n",
        "# only a comment\n",
        "---\n",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n",
        "resources: null\nnamePrefix: ''\n",
    ] {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(tmp.path(), &[("kustomization.yaml", text)]);
        let reference = kubectl_kustomize(tmp.path()).expect_err(text);
        assert!(
            reference.contains("kustomization.yaml is empty"),
            "kubectl on {text:?}: {reference}"
        );
        let e = build_err(&[("kustomization.yaml", text)], ".");
        assert_eq!(
            e.to_string(),
            "kustomization.yaml: kustomization.yaml is empty",
            "{text:?}"
        );
    }
    // In a base too.
    let e = build_err(
        &[
            ("kustomization.yaml", "resources: [base]\n"),
            ("base/kustomization.yaml", "# nothing yet\n"),
        ],
        ".",
    );
    assert_eq!(
        e.to_string(),
        "base/kustomization.yaml: kustomization.yaml is empty"
    );
}

/// A kustomization that declares an empty list does mean nothing: it builds, as kubectl's.
#[test]
fn a_kustomization_declaring_no_resources_builds_empty() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), &[("kustomization.yaml", "resources: []\n")]);
    assert_eq!(
        kubectl_kustomize(tmp.path()).expect("kubectl builds it"),
        ""
    );
    let b = Builder::new(tmp.path(), Options::default()).expect("root");
    let built = b.build(tmp.path()).expect("builds");
    assert_eq!(built.to_yaml(), "");
}

/// Go decodes `commonLabels` into a map of strings: a YAML 1.1 boolean (`y`) or a number is
/// refused there, by kubectl and here, not labelled as text.
#[test]
fn booleans_and_numbers_in_string_maps_are_refused() {
    for value in ["y", "true", "1", "on"] {
        let files = [
            ("cm.yaml", CM),
            (
                "kustomization.yaml",
                &*format!("resources: [cm.yaml]\ncommonLabels: {{x: {value}}}\n"),
            ),
        ];
        let tmp = tempfile::tempdir().expect("tempdir");
        write(tmp.path(), &files);
        let reference = kubectl_kustomize(tmp.path()).expect_err(value);
        assert!(reference.contains("cannot unmarshal"), "{reference}");
        let e = build_err(&files, ".");
        assert!(
            e.to_string().contains("cannot unmarshal") && e.to_string().contains("\"x\""),
            "{value}: {e}"
        );
    }
}
