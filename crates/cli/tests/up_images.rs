//! Image automation's first half on `tidegate up`: tags pushed with `tidegate push artifact`
//! to Debian's docker-registry, an ImageRepository and an ImagePolicy reconciled by the
//! image-reflector-controller `up` runs, and Flux's verbs on them: `create image`, `get
//! images`, `reconcile image repository`, `suspend`/`resume`.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod up_support;

use registry_support::{Mode, Registry};
use up_support::*;

fn push(reg: &Registry, tag: &str) {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("app.yaml"), format!("tag: {tag}\n")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["push", "artifact", &reg.url(&format!("team/app:{tag}"))])
        .args(["--path", src.path().to_str().unwrap()])
        .args([
            "--source",
            "https://github.com/example/app",
            "--revision",
            tag,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "push {tag}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn image_repositories_and_policies_on_up_with_flux_verbs() {
    let reg = Registry::start(Mode::Plain);
    for tag in ["1.0.0", "1.1.0", "2.0.0"] {
        push(&reg, tag);
    }
    let dir = tempfile::tempdir().unwrap();
    let up = up(
        &dir.path().join("data"),
        git_support::free_port(),
        &[],
        false,
    );
    let kc = up.kubeconfig.clone();
    let image = format!("{}/team/app", reg.host);
    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "image",
            "repository",
            "app",
            "--image",
            &image,
            "--interval",
            "1h",
            "-n",
            "flux-system",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("✚ generating ImageRepository")
            && err.contains("✔ ImageRepository reconciliation completed"),
        "{err}"
    );
    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "image",
            "policy",
            "app",
            "--image-ref",
            "app",
            "--select-semver",
            "1.x",
            "-n",
            "flux-system",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("✔ ImagePolicy reconciliation completed"),
        "{err}"
    );
    wait_until("the policy to resolve", || {
        kubectl(
            &kc,
            &[
                "-n",
                "flux-system",
                "get",
                "imagepolicy",
                "app",
                "-o",
                "jsonpath={.status.latestRef.tag}",
            ],
        ) == "1.1.0"
    });
    let (code, out, err) = tidegate(&kc, &["get", "images", "policy", "-n", "flux-system"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!(
            "NAME\tIMAGE{}\tTAG  \tREADY\tMESSAGE\napp \t{image}\t1.1.0\tTrue \tLatest image tag for {image} resolved to 1.1.0\n",
            " ".repeat(image.len() - 5)
        )
    );
    // A new tag, a requested scan, Flux's report of it; the policy follows.
    push(&reg, "1.2.0");
    let (code, _, err) = tidegate(
        &kc,
        &[
            "reconcile",
            "image",
            "repository",
            "app",
            "-n",
            "flux-system",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("✔ scan fetched 4 tags"), "{err}");
    wait_until("the policy to follow", || {
        kubectl(
            &kc,
            &[
                "-n",
                "flux-system",
                "get",
                "imagepolicy",
                "app",
                "-o",
                "jsonpath={.status.latestRef.tag}",
            ],
        ) == "1.2.0"
    });
    let (code, _, err) = tidegate(
        &kc,
        &["suspend", "image", "repository", "app", "-n", "flux-system"],
    );
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = tidegate(&kc, &["get", "images", "all", "-n", "flux-system"]);
    let repo_row = out
        .lines()
        .find(|l| l.starts_with("imagerepository/app"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(repo_row.contains("\tTrue     \tTrue"), "suspended: {out}");
    assert!(out.contains("imagepolicy/app"), "{out}");
    assert!(out.starts_with("NAME               \tLAST SCAN"), "{out}");
    let (code, _, err) = tidegate(
        &kc,
        &["resume", "image", "repository", "app", "-n", "flux-system"],
    );
    assert_eq!(code, 0, "{err}");
}
