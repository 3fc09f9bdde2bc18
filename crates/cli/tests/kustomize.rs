//! `tidegate kustomize DIR` prints what `kubectl kustomize DIR` prints, and fails with one line
//! naming the file.

use std::path::Path;
use std::process::Command;

fn tidegate() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tidegate"))
}

#[test]
fn prints_the_same_stream_as_kubectl() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kustomize/tests/fixtures/features/app-podinfo-production");
    let dir = case.join(
        std::fs::read_to_string(case.join("build-path"))
            .expect("build-path")
            .trim(),
    );
    let ours = tidegate()
        .arg("kustomize")
        .arg(&dir)
        .arg("--root")
        .arg(&case)
        .output()
        .expect("runs");
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let theirs = Command::new("kubectl")
        .arg("kustomize")
        .arg(&dir)
        .output()
        .expect("kubectl must be installed");
    assert!(theirs.status.success());
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout)
    );
}

#[test]
fn a_bad_build_exits_non_zero_naming_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        tmp.path().join("kustomization.yaml"),
        "resources: [missing.yaml]\n",
    )
    .expect("write");
    let out = tidegate()
        .arg("kustomize")
        .arg(tmp.path())
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kustomization.yaml: \"missing.yaml\": no such file or directory"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing printed on failure");
}
