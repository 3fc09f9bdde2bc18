//! The official Python client (kubernetes 37.0.2, installed by scripts/install-test-tools.sh)
//! against the server: CRUD, paging, watch, server-side apply and logs
//! (`tests/data/python_client.py`). A missing client fails the test.

mod common;

use std::path::PathBuf;

fn python() -> PathBuf {
    let tools = std::env::var_os("TIDEGATE_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/tidegate-tools")
        });
    let bin = tools.join("python/bin/python3");
    assert!(
        bin.is_file(),
        "the Python client is not installed at {} (run scripts/install-test-tools.sh)",
        bin.display()
    );
    bin
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_client_works() {
    let t = common::start_simulated(100).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/python_client.py");
    let bin = python();
    let kubeconfig = t.kubeconfig.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(bin)
            .arg(script)
            .env("KUBECONFIG", kubeconfig)
            .output()
            .expect("python runs")
    })
    .await
    .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("python client: all checks passed"),
        "{stdout}"
    );
    assert!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count() >= 13,
        "{stdout}"
    );
}
