//! `tidegate up` on a repository in the shape of flux2-kustomize-helm-example: its
//! `clusters/staging` (the ArtifactGenerator and the Kustomizations that read its
//! ExternalArtifacts, copied unchanged into tests/data/kustomize-helm-example) bootstrapped as
//! `--path`, with ConfigMaps standing in for the infrastructure and apps charts. Everything
//! converges; a commit outside an artifact's copy rules leaves its revision alone.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use up_support::*;

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/kustomize-helm-example"
);

fn cm(name: &str, ns: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  value: \"{value}\"\n"
    )
}

fn kustomization(resources: &[&str]) -> String {
    let mut s = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
        .to_string();
    for r in resources {
        s.push_str(&format!("  - {r}\n"));
    }
    s
}

#[test]
fn the_kustomize_helm_example_shape_converges_through_external_artifacts() {
    let repo = git_support::Repo::new();
    for f in ["artifacts.yaml", "apps.yaml", "infrastructure.yaml"] {
        let text = std::fs::read_to_string(format!("{DATA}/{f}")).unwrap();
        repo.write(&format!("clusters/staging/{f}"), &text);
    }
    repo.write("README.md", "# fleet\n");
    repo.write(
        "infrastructure/controllers/kustomization.yaml",
        &kustomization(&["cert-manager.yaml"]),
    );
    repo.write(
        "infrastructure/controllers/cert-manager.yaml",
        &cm("cert-manager", "flux-system", "v1"),
    );
    repo.write(
        "infrastructure/configs/kustomization.yaml",
        &kustomization(&["cluster-issuers.yaml"]),
    );
    repo.write(
        "infrastructure/configs/cluster-issuers.yaml",
        &cm("cluster-issuers", "flux-system", "v1"),
    );
    repo.write(
        "apps/base/podinfo/kustomization.yaml",
        &kustomization(&["release.yaml"]),
    );
    repo.write(
        "apps/base/podinfo/release.yaml",
        &cm("podinfo", "flux-system", "base"),
    );
    repo.write(
        "apps/staging/kustomization.yaml",
        &kustomization(&["../base/podinfo", "podinfo-values.yaml"]),
    );
    repo.write(
        "apps/staging/podinfo-values.yaml",
        &cm("podinfo-values", "flux-system", "staging"),
    );
    repo.commit("fleet");
    let dir = tempfile::tempdir().unwrap();
    let bare = repo.bare().display().to_string();
    let up = up(
        &dir.path().join("data"),
        git_support::free_port(),
        &[
            "--git",
            &bare,
            "--path",
            "./clusters/staging",
            "--interval",
            "1m",
        ],
        false,
    );
    let kc = up.kubeconfig.clone();
    let ks_ready = |name: &str| {
        ready(&json(
            &kc,
            &["get", "kustomization", name, "-n", "flux-system"],
        ))
        .is_some_and(|(s, _)| s == "True")
    };
    wait_until("every Kustomization to be ready", || {
        ["flux-system", "infra-controllers", "infra-configs", "apps"]
            .iter()
            .all(|k| {
                kubectl_ok(&kc, &["get", "kustomization", k, "-n", "flux-system"]) && ks_ready(k)
            })
    });
    let value = |name: &str| {
        kubectl(
            &kc,
            &[
                "get",
                "configmap",
                name,
                "-n",
                "flux-system",
                "-o",
                "jsonpath={.data.value}",
            ],
        )
    };
    assert_eq!(value("podinfo-values"), "staging");
    assert_eq!(value("cluster-issuers"), "v1");
    let g = json(
        &kc,
        &[
            "get",
            "artifactgenerator",
            "flux-system",
            "-n",
            "flux-system",
        ],
    );
    assert_eq!(
        ready(&g),
        Some((
            "True".to_string(),
            "reconciliation succeeded, generated 2 artifact(s)".to_string()
        ))
    );
    let revision = |name: &str| {
        kubectl(
            &kc,
            &[
                "get",
                "externalartifact",
                name,
                "-n",
                "flux-system",
                "-o",
                "jsonpath={.status.artifact.revision}",
            ],
        )
    };
    let (apps, infra) = (revision("apps"), revision("infrastructure"));
    assert!(apps.starts_with("latest@sha256:"), "{apps}");

    // Outside every copy rule: the generator sees the new commit, the artifacts stay.
    let digest = g["status"]["observedSourcesDigest"]
        .as_str()
        .unwrap()
        .to_string();
    repo.write("README.md", "# fleet, documented\n");
    repo.commit("docs");
    let (code, _, err) = tidegate(&kc, &["reconcile", "source", "git", "flux-system"]);
    assert_eq!(code, 0, "{err}");
    wait_until("the generator to see the new commit", || {
        let g = json(
            &kc,
            &[
                "get",
                "artifactgenerator",
                "flux-system",
                "-n",
                "flux-system",
            ],
        );
        g["status"]["observedSourcesDigest"].as_str() != Some(digest.as_str())
            && ready(&g).is_some_and(|(s, _)| s == "True")
    });
    assert_eq!(revision("apps"), apps);
    assert_eq!(revision("infrastructure"), infra);
    // An ExternalArtifact has no controller of its own to ask: `--with-source` fails at once,
    // as flux does, instead of waiting for the timeout.
    let started = std::time::Instant::now();
    let (code, _, err) = tidegate(
        &kc,
        &[
            "reconcile",
            "ks",
            "apps",
            "--with-source",
            "-n",
            "flux-system",
        ],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("cannot reconcile source of kind ExternalArtifact"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    // `get sources external` and `get artifact generators` list them.
    let (code, out, err) = tidegate(&kc, &["get", "sources", "external", "-n", "flux-system"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("ArtifactGenerator/flux-system/flux-system"),
        "{out}"
    );
    let (code, out, err) = tidegate(&kc, &["get", "artifact", "generators", "-n", "flux-system"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NAME"), "{out}");
    assert!(out.contains("generated 2 artifact(s)"), "{out}");
    let (code, out, err) = tidegate(
        &kc,
        &[
            "tree",
            "artifact",
            "generator",
            "flux-system",
            "-n",
            "flux-system",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "ArtifactGenerator/flux-system/flux-system\n├── ExternalArtifact/flux-system/infrastructure\n└── ExternalArtifact/flux-system/apps\n"
    );
}
