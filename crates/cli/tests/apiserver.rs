//! `tidegate apiserver` as a user runs it: address and kubeconfig printed, port 0, kubectl
//! works, and acknowledged writes survive `kill -9`.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

struct Running {
    child: Child,
    url: String,
    kubeconfig: PathBuf,
}

fn start(data: &Path) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["apiserver", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("tidegate apiserver starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = lines.next().expect("address line").expect("read");
    let url = first
        .strip_prefix("tidegate apiserver listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();
    let second = lines.next().expect("kubeconfig line").expect("read");
    let kubeconfig = PathBuf::from(
        second
            .strip_prefix("kubeconfig: ")
            .expect("kubeconfig path"),
    );
    std::thread::spawn(move || for _ in lines {});
    Running {
        child,
        url,
        kubeconfig,
    }
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let bin = std::env::var("KUBECTL").unwrap_or_else(|_| "/usr/bin/kubectl".into());
    assert!(
        Path::new(&bin).exists(),
        "kubectl not found at {bin}: these tests need real kubectl"
    );
    let out = Command::new(&bin)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn client(kubeconfig: &Path) -> kube::Client {
    let text = std::fs::read_to_string(kubeconfig).expect("kubeconfig");
    let kc = kube::config::Kubeconfig::from_yaml(&text).expect("parses");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("config");
    kube::Client::try_from(cfg).expect("client")
}

#[test]
fn prints_address_and_kubeconfig_and_serves_kubectl() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut run = start(&data);
    assert!(run.url.starts_with("https://127.0.0.1:"), "{}", run.url);
    assert!(
        !run.url.ends_with(":0"),
        "port 0 is replaced by the real port"
    );
    assert_eq!(run.kubeconfig, data.join("kubeconfig"));
    let kc = std::fs::read_to_string(&run.kubeconfig).expect("kubeconfig written");
    assert!(kc.contains(&run.url), "kubeconfig names the real address");
    let ns = kubectl(&run.kubeconfig, &["get", "ns", "-o", "name"]);
    assert!(ns.contains("namespace/default"), "{ns}");

    // A kubeconfig for a named user: a client certificate from the server's CA.
    let bob = dir.path().join("bob.kubeconfig");
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args([
            "kubeconfig",
            "--user",
            "bob",
            "--group",
            "devs,ops",
            "--data-dir",
        ])
        .arg(&data)
        .arg("-o")
        .arg(&bob)
        .output()
        .expect("tidegate kubeconfig runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let who = kubectl(
        &bob,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username} {.status.userInfo.groups}",
        ],
    );
    assert_eq!(who, r#"bob ["devs","ops","system:authenticated"]"#);
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["kubeconfig", "--user", "bob", "--data-dir"])
        .arg(dir.path().join("nothing-here"))
        .output()
        .expect("tidegate kubeconfig runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no API server has run in"), "{err}");
    let _ = run.child.kill();
    let _ = run.child.wait();
}

#[tokio::test(flavor = "multi_thread")]
async fn acknowledged_writes_survive_kill_9() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut run = start(&data);
    let api: Api<ConfigMap> = Api::namespaced(client(&run.kubeconfig).await, "default");
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let writer = {
        let acked = acked.clone();
        tokio::spawn(async move {
            for i in 0.. {
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(format!("cm-{i}")),
                        ..Default::default()
                    },
                    data: Some([("i".to_string(), i.to_string())].into()),
                    ..Default::default()
                };
                match api.create(&PostParams::default(), &cm).await {
                    Ok(c) => acked.lock().expect("lock").push((
                        c.metadata.name.unwrap_or_default(),
                        c.metadata.resource_version.unwrap_or_default(),
                    )),
                    Err(_) => return,
                }
            }
        })
    };
    // Let writes flow, then kill the server mid-stream.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while acked.lock().expect("lock").len() < 200 {
        assert!(std::time::Instant::now() < deadline, "writes too slow");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    run.child.kill().expect("kill -9");
    let _ = run.child.wait();
    let _ = writer.await;
    let acked = acked.lock().expect("lock").clone();
    assert!(acked.len() >= 200);

    let mut again = start(&data);
    let api: Api<ConfigMap> = Api::namespaced(client(&again.kubeconfig).await, "default");
    let stored: std::collections::HashMap<String, String> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .map(|c| {
            (
                c.metadata.name.unwrap_or_default(),
                c.metadata.resource_version.unwrap_or_default(),
            )
        })
        .collect();
    for (name, rv) in &acked {
        assert_eq!(
            stored.get(name),
            Some(rv),
            "{name} lost or changed after kill -9"
        );
    }
    let _ = again.child.kill();
    let _ = again.child.wait();
}
