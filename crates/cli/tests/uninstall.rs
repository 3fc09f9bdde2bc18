//! `tidegate uninstall` against `tidegate up --example`: by default the toolkit goes and the
//! workloads stay; with `--prune-workloads` the Kustomizations prune what they applied first.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use up_support::*;

const CRD: &str = "kustomizations.kustomize.toolkit.fluxcd.io";

#[test]
fn uninstall_keeps_the_workloads_against_up() {
    let dir = tempfile::tempdir().unwrap();
    let up = up_example(dir.path());
    let kc = up.kubeconfig.clone();

    let (code, _, err) = tidegate(&kc, &["uninstall"]);
    assert_eq!(
        (code, err.trim()),
        (
            1,
            "✗ refusing to uninstall without confirmation; use --silent"
        )
    );
    assert!(kubectl_ok(&kc, &["get", "crd", CRD]));

    let (code, _, err) = tidegate(&kc, &["uninstall", "--silent"]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "► deleting toolkit.fluxcd.io finalizers in all namespaces",
        "✔ Kustomization/flux-system/apps-production finalizers deleted",
        "✔ GitRepository/flux-system/flux-system finalizers deleted",
        &format!("✔ CustomResourceDefinition/{CRD} deleted"),
        "✔ Namespace/flux-system deleted",
    ] {
        assert!(err.lines().any(|l| l == line), "{line:?} in\n{err}");
    }
    assert!(err.ends_with("✔ uninstall finished\n"), "{err}");
    wait_until("the toolkit CRDs and namespace to go", || {
        !kubectl_ok(&kc, &["get", "crd", CRD]) && !kubectl_ok(&kc, &["get", "ns", "flux-system"])
    });
    // What the Kustomizations applied is still there, custom resources included.
    assert!(kubectl_ok(
        &kc,
        &["-n", "production", "get", "deployment", "podinfo"]
    ));
    assert!(kubectl_ok(
        &kc,
        &["-n", "staging", "get", "deployment", "podinfo"]
    ));
    assert!(kubectl_ok(
        &kc,
        &["get", "crd", "greetings.example.tidegate.dev"]
    ));
    assert!(kubectl_ok(
        &kc,
        &["-n", "production", "get", "greeting", "welcome"]
    ));
    drop(up);
}

#[test]
fn uninstall_prune_workloads_against_up() {
    let dir = tempfile::tempdir().unwrap();
    let up = up_example(dir.path());
    let kc = up.kubeconfig.clone();
    assert!(kubectl_ok(
        &kc,
        &["-n", "production", "get", "deployment", "podinfo"]
    ));

    let (code, _, err) = tidegate(&kc, &["uninstall", "--silent", "--prune-workloads"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with("► deleting Kustomizations in all namespaces, pruning their workloads\n"),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l == "✔ Kustomizations finalized, workloads pruned"),
        "{err}"
    );
    assert!(err.ends_with("✔ uninstall finished\n"), "{err}");
    for (ns, kind, name) in [
        ("production", "deployment", "podinfo"),
        ("staging", "deployment", "podinfo"),
        ("production", "service", "podinfo"),
    ] {
        assert!(
            !kubectl_ok(&kc, &["-n", ns, "get", kind, name]),
            "{kind} {ns}/{name} was not pruned"
        );
    }
    wait_until("the toolkit CRDs to go", || {
        !kubectl_ok(&kc, &["get", "crd", CRD])
    });
    drop(up);
}
