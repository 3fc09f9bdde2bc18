//! Flux's generator overlay (targetNamespace, namePrefix/Suffix, patches, images, components)
//! merged into the top kustomization, checked against `kubectl kustomize` on the file Flux would
//! write, and Flux's own generator test expectations.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tidegate_kustomize::kustomization::{Image, Selector};
use tidegate_kustomize::{Builder, LoadRestrictions, Options, Overlay};

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn build(root: &Path, dir: &str, overlay: Option<Overlay>) -> Result<Vec<Value>, String> {
    let options = Options {
        load_restrictions: LoadRestrictions::None,
        generate_missing: true,
        overlay,
        filter: None,
    };
    let b = Builder::new(root, options).map_err(|e| e.to_string())?;
    let res = b.build(&root.join(dir)).map_err(|e| e.to_string())?;
    Ok(res
        .resources
        .into_iter()
        .map(|r| Value::Object(r.obj))
        .collect())
}

fn kubectl_kustomize(dir: &Path) -> Vec<Value> {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .expect("kubectl must be installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tidegate_core::yaml::parse_stream(&String::from_utf8_lossy(&out.stdout)).unwrap()
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector:\n    matchLabels: {app: app}\n  template:\n    metadata:\n      labels: {app: app}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.0\n      - name: side\n        image: ghcr.io/example/side:v1\n";
const CONFIG: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-vars\ndata:\n  a: b\n";
const COMPONENT: &str =
    "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels:\n  tier: web\n";

#[test]
fn overlay_equals_kubectl_on_the_file_flux_writes() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &[
            (
                "app/kustomization.yaml",
                "namespace: apps\nresources:\n- ./deployment.yaml\n- ./config.yaml\nimages:\n- name: ghcr.io/example/side\n  digest: sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3\n",
            ),
            ("app/deployment.yaml", DEPLOYMENT),
            ("app/config.yaml", CONFIG),
            ("comp/kustomization.yaml", COMPONENT),
        ],
    );
    let overlay = Overlay {
        target_namespace: Some("prod".into()),
        name_prefix: Some("prefix-".into()),
        name_suffix: Some("-suffix".into()),
        patches: vec![(
            "- op: add\n  path: /metadata/annotations\n  value: {patched: \"yes\"}\n".into(),
            Some(Selector {
                kind: "Deployment".into(),
                name: "app".into(),
                ..Default::default()
            }),
        )],
        images: vec![
            Image {
                name: "nginx".into(),
                new_tag: "1.27".into(),
                ..Default::default()
            },
            // Existing digest + new tag: the digest is cleared (Flux's rule).
            Image {
                name: "ghcr.io/example/side".into(),
                new_tag: "v2.0.0".into(),
                ..Default::default()
            },
        ],
        components: vec!["../comp".into(), "../missing".into()],
        ignore_missing_components: true,
        build_metadata: Vec::new(),
    };
    let ours = build(tmp.path(), "app", Some(overlay)).unwrap();
    // The file Flux's generator would write for the same spec.
    let flux = tempfile::tempdir().unwrap();
    write(
        flux.path(),
        &[
            (
                "app/kustomization.yaml",
                "namespace: prod\nnamePrefix: prefix-\nnameSuffix: -suffix\nresources:\n- ./deployment.yaml\n- ./config.yaml\nimages:\n- name: ghcr.io/example/side\n  newTag: v2.0.0\n- name: nginx\n  newTag: \"1.27\"\ncomponents:\n- ../comp\npatches:\n- patch: |\n    - op: add\n      path: /metadata/annotations\n      value: {patched: \"yes\"}\n  target:\n    kind: Deployment\n    name: app\n",
            ),
            ("app/deployment.yaml", DEPLOYMENT),
            ("app/config.yaml", CONFIG),
            ("comp/kustomization.yaml", COMPONENT),
        ],
    );
    let reference = kubectl_kustomize(&flux.path().join("app"));
    assert_eq!(ours, reference);
    let names: Vec<&str> = ours
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"prefix-app-suffix") && names.contains(&"prefix-app-vars-suffix"),
        "{names:?}"
    );
}

#[test]
fn generated_kustomization_gets_the_overlay_and_bad_components_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &[("plain/config.yaml", CONFIG)]);
    let overlay = Overlay {
        target_namespace: Some("test-namespace".into()),
        ..Default::default()
    };
    let ours = build(tmp.path(), "plain", Some(overlay)).unwrap();
    assert_eq!(ours[0]["metadata"]["namespace"], "test-namespace");
    let remote = Overlay {
        components: vec!["https://github.com/x/y".into()],
        ..Default::default()
    };
    let err = build(tmp.path(), "plain", Some(remote)).unwrap_err();
    assert!(
        err.contains("component path 'https://github.com/x/y' must be local and relative"),
        "{err}"
    );
    // Without ignoreMissingComponents, a missing component fails the build naming it.
    let missing = Overlay {
        components: vec!["../missing-component".into()],
        ..Default::default()
    };
    let err = build(tmp.path(), "plain", Some(missing)).unwrap_err();
    assert!(err.contains("missing-component"), "{err}");
}
