//! Helpers shared by the integration tests: an in-process server reached over HTTPS, a kube-rs
//! client for it, and real kubectl pointed at it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use tidegate_apiserver::{ApiServer, Config};

/// The ConfigMap every namespace holds (the cluster CA), as on a real cluster.
pub const ROOT_CA: &str = "kube-root-ca.crt";

pub struct TestServer {
    pub server: ApiServer,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
}

pub async fn start() -> TestServer {
    start_with(Config::default()).await
}

/// A server whose workload simulator settles rollouts after `millis` milliseconds.
pub async fn start_simulated(millis: u64) -> TestServer {
    start_with(Config {
        workload_simulator: Some(std::time::Duration::from_millis(millis)),
        ..Config::default()
    })
    .await
}

pub async fn start_with(mut config: Config) -> TestServer {
    let dir = tempfile::tempdir().expect("tempdir");
    if config.data_dir.is_none() {
        config.data_dir = Some(dir.path().join("data"));
    }
    let server = ApiServer::start(config).await.expect("server starts");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, &server.kubeconfig).expect("write kubeconfig");
    TestServer {
        server,
        dir,
        kubeconfig,
    }
}

impl TestServer {
    pub async fn client(&self) -> kube::Client {
        let kc = kube::config::Kubeconfig::from_yaml(&self.server.kubeconfig)
            .expect("kubeconfig parses");
        let cfg =
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .expect("kube config");
        kube::Client::try_from(cfg).expect("client")
    }

    /// Runs real kubectl against the server. Panics (fails the test loudly) when kubectl is
    /// not installed: CI installs it.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_stdin(args, None)
    }

    pub fn kubectl_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.kubectl_full(args, stdin, &[])
    }

    pub fn kubectl_full(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
        let bin = kubectl_bin();
        let mut cmd = Command::new(&bin);
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.path().join("kube-cache"))
            .args(args);
        cmd.env_remove("KUBECONFIG");
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(input) = stdin {
            use std::io::Write;
            cmd.stdin(std::process::Stdio::piped());
            cmd.stdout(std::process::Stdio::piped());
            cmd.stderr(std::process::Stdio::piped());
            let mut child = cmd.spawn().unwrap_or_else(|e| panic!("running {bin}: {e}"));
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
            return child.wait_with_output().expect("kubectl output");
        }
        cmd.output()
            .unwrap_or_else(|e| panic!("running {bin}: {e}"))
    }

    /// kubectl that must succeed; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        succeeded(args, self.kubectl(args))
    }

    /// kubectl reading stdin that must succeed; returns stdout.
    pub fn ok_stdin(&self, args: &[&str], stdin: &str) -> String {
        succeeded(args, self.kubectl_stdin(args, Some(stdin)))
    }

    /// kubectl with extra environment that must succeed; returns stdout.
    pub fn ok_env(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        succeeded(args, self.kubectl_full(args, None, env))
    }

    /// kubectl reading stdin that must fail; returns stderr.
    pub fn fails_stdin(&self, args: &[&str], stdin: &str) -> String {
        failed(args, self.kubectl_stdin(args, Some(stdin)))
    }

    /// kubectl that must fail; returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        failed(args, self.kubectl(args))
    }
}

fn succeeded(args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "kubectl {args:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn failed(args: &[&str], out: Output) -> String {
    assert!(
        !out.status.success(),
        "kubectl {args:?} should have failed; stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Sends each raw request and requires the given status code and a message containing the text.
pub async fn expect_statuses(
    client: &kube::Client,
    cases: Vec<(axum::http::Request<Vec<u8>>, u16, &str)>,
) {
    for (req, code, text) in cases {
        let uri = req.uri().to_string();
        match client.request_text(req).await {
            Err(kube::Error::Api(s)) => {
                assert_eq!(s.code, code, "{uri}: {s:?}");
                assert!(s.message.contains(text), "{uri}: {}", s.message);
            }
            other => panic!("{uri}: expected {code}, got {other:?}"),
        }
    }
}

pub fn kubectl_bin() -> String {
    let bin = std::env::var("KUBECTL").unwrap_or_else(|_| "/usr/bin/kubectl".to_string());
    assert!(
        std::path::Path::new(&bin).exists(),
        "kubectl not found at {bin}: these tests need real kubectl (.ci/run installs it)"
    );
    bin
}

/// A YAML "billion laughs": nine levels of ten aliases under `indent`, a few hundred bytes that
/// expand to a billion values, after `head` (the object's first lines).
pub fn alias_bomb(head: &str, indent: &str) -> String {
    let mut text = format!("{head}{indent}l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        text.push_str(&format!(
            "{indent}l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    text
}
