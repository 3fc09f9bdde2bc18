//! Running `tidegate up` and the binary's verbs from tests, shared by the test binaries that
//! drive a whole `tidegate up`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running `tidegate up`; killed when dropped.
pub struct Up {
    pub child: Child,
    pub kubeconfig: PathBuf,
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tidegate up` on `data`, listening on `port`, with short simulated rollouts and `args`.
fn up_command(data: &Path, port: u16, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tidegate"));
    cmd.arg("up")
        .arg("--data-dir")
        .arg(data)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--simulator-delay", "200ms"])
        .args(args);
    cmd
}

/// Starts `tidegate up` with `args` on `data`; returns once the kubeconfig file exists and
/// the server answers (`wait_for_line`: once stdout printed the kubeconfig line, i.e. the
/// first reconcile was shown).
pub fn up(data: &Path, port: u16, args: &[&str], wait_for_line: bool) -> Up {
    let mut child = up_command(data, port, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("tidegate runs");
    let kubeconfig = data.join("kubeconfig");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut up = Up { child, kubeconfig };
    let deadline = Instant::now() + Duration::from_secs(120);
    if wait_for_line {
        loop {
            let line = rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("tidegate up prints the kubeconfig path");
            if line.starts_with("kubeconfig: ") {
                assert_eq!(line, format!("kubeconfig: {}", up.kubeconfig.display()));
                break;
            }
        }
    } else {
        while !(up.kubeconfig.exists() && kubectl_ok(&up.kubeconfig, &["get", "ns"])) {
            assert!(Instant::now() < deadline, "the API server did not come up");
            if let Ok(Some(status)) = up.child.try_wait() {
                panic!("tidegate up exited: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The toolkit's kinds are served once up has installed its CRDs, a moment after the
        // server answers: a test creating them at once raced that.
        while !kubectl_ok(
            &up.kubeconfig,
            &[
                "wait",
                "--for=condition=Established",
                "--timeout=60s",
                "crd/gitrepositories.source.toolkit.fluxcd.io",
                "crd/imagerepositories.image.toolkit.fluxcd.io",
                "crd/kustomizations.kustomize.toolkit.fluxcd.io",
                "crd/helmreleases.helm.toolkit.fluxcd.io",
            ],
        ) {
            assert!(Instant::now() < deadline, "up did not install its CRDs");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    // Keep draining stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || while rx.recv().is_ok() {});
    up
}

/// `tidegate up --example` with its data in `dir`, on a free port, converged.
pub fn up_example(dir: &Path) -> Up {
    up_example_with(dir, &[])
}

/// `tidegate up --example` with more flags, converged.
pub fn up_example_with(dir: &Path, flags: &[&str]) -> Up {
    let mut args = vec!["--example"];
    args.extend(flags);
    let up = up(
        &dir.join("data"),
        crate::git_support::free_port(),
        &args,
        true,
    );
    wait_until("the example to converge", || {
        all_ready(&up.kubeconfig, "main@sha1:")
    });
    up
}

pub fn kubectl_ok(kc: &Path, args: &[&str]) -> bool {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

pub fn kubectl(kc: &Path, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .output()
        .expect("kubectl runs (CI installs it)");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// kubectl with `stdin` that must succeed.
pub fn kubectl_stdin(kc: &Path, args: &[&str], stdin: &str) {
    use std::io::Write as _;
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("kubectl runs (CI installs it)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("kubectl reads stdin");
    assert!(
        child.wait().expect("kubectl ends").success(),
        "kubectl {args:?}"
    );
}

pub fn json(kc: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    serde_json::from_str(&kubectl(kc, &a)).unwrap()
}

pub fn ready(k: &Value) -> Option<(String, String)> {
    k["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
}

pub fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn all_ready(kc: &Path, revision_prefix: &str) -> bool {
    let list = json(kc, &["get", "kustomizations", "-A"]);
    let items = list["items"].as_array().unwrap();
    !items.is_empty()
        && items.iter().all(|k| {
            ready(k).is_some_and(|(s, m)| {
                s == "True" && m.starts_with(&format!("Applied revision: {revision_prefix}"))
            })
        })
}

/// Ctrl-C: a clean stop.
pub fn interrupt(up: &mut Up) {
    let pid = up.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = up.child.try_wait().unwrap() {
            assert!(status.success(), "tidegate up exited with {status}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "tidegate up did not stop on Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs the binary with `args` against `kc`: (exit code, stdout, stderr).
pub fn tidegate(kc: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(args)
        .arg("--kubeconfig")
        .arg(kc)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A running `tidegate up` whose stdout and stderr are both recorded, line by line.
pub struct Logged {
    pub up: Up,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Logged {
    /// Every line printed so far (stdout and stderr interleaved as they were read).
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits until a line satisfies `f`; panics (with everything printed) after two minutes or
    /// when the process exits first.
    pub fn wait_for(&mut self, what: &str, f: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(l) = self.lines().into_iter().find(|l| f(l)) {
                return l;
            }
            if let Ok(Some(status)) = self.up.child.try_wait() {
                panic!(
                    "tidegate up exited ({status}) before {what}:\n{}",
                    self.lines().join("\n")
                );
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}:\n{}",
                self.lines().join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends `signal` (`INT`, `TERM`) and waits for a successful exit.
    pub fn stop(&mut self, signal: &str) {
        let pid = self.up.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([&format!("-{signal}"), &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.up.child.try_wait().unwrap() {
                assert!(status.success(), "tidegate up exited with {status}");
                // Let the readers take the last lines.
                std::thread::sleep(Duration::from_millis(200));
                return;
            }
            assert!(
                Instant::now() < deadline,
                "tidegate up did not stop on SIG{signal}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Starts `tidegate up` with `args` on `data`, recording everything it prints; returns at
/// once.
pub fn up_logged(data: &Path, port: u16, args: &[&str], env: &[(&str, &str)]) -> Logged {
    let mut child = up_command(data, port, args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tidegate runs");
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    for pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
    }
    Logged {
        up: Up {
            child,
            kubeconfig: data.join("kubeconfig"),
        },
        lines,
    }
}

/// Runs `cmd`; its standard output, or a panic with its standard error.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("command runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Serves `dir` over HTTP on loopback (a static chart repository); returns its URL.
pub fn serve(dir: PathBuf) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let app = axum::Router::new().route(
                "/{*path}",
                axum::routing::get(move |axum::extract::Path(p): axum::extract::Path<String>| {
                    let dir = dir.clone();
                    async move {
                        use axum::response::IntoResponse;
                        match std::fs::read(dir.join(p)) {
                            Ok(b) => b.into_response(),
                            Err(_) => axum::http::StatusCode::NOT_FOUND.into_response(),
                        }
                    }
                }),
            );
            axum::serve(listener, app).await.unwrap();
        });
    });
    url
}
