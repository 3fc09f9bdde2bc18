//! Tag push → commit latency of image automation on `tidegate up`: a new tag is in Debian's
//! docker-registry, a generic Receiver is called (as the registry's webhook would), and the
//! clock stops when the SSH-signed commit with the new tag is on the branch of the Git server
//! (`git http-backend`, basic auth). Peer, in the same run: the git CLI doing the Git part of
//! the same change by hand (`clone --depth 1`, edit, `commit -S` with the same SSH key, `push`)
//! against the same server. Median of `TIDEGATE_BENCH_ROUNDS` (default 10) alternating rounds;
//! `up`'s peak RSS at the end. Run with `cargo bench -p tidegate --bench image_update`.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use tidegate_source::oci;

fn rounds() -> usize {
    std::env::var("TIDEGATE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

fn kubectl(kc: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl");
    if let Some(s) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(s.as_bytes())
            .expect("write");
    }
    let out = child.wait_with_output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn wait(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The branch's commit, read from the bare repository's files.
fn head(bare: &Path) -> String {
    if let Ok(s) = std::fs::read_to_string(bare.join("refs/heads/main")) {
        return s.trim().to_string();
    }
    std::fs::read_to_string(bare.join("packed-refs"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.ends_with(" refs/heads/main"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default()
        .to_string()
}

fn post(url: &str) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("http");
    let (host, path) = rest.split_at(rest.find('/').expect("path"));
    let mut s = std::net::TcpStream::connect(host).expect("receiver");
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
    .expect("write");
    let mut r = String::new();
    let _ = s.read_to_string(&mut r);
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let reg = registry_support::Registry::start(registry_support::Mode::Plain);
    let image = format!("{}/bench/app", reg.host);
    let repo = git_support::Repo::new();
    repo.write(
        "deploy/app.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  image: {image}:0.0.0 # {{\"$imagepolicy\": \"flux-system:app\"}}\n"
        ),
    );
    repo.commit("initial");
    let bare = repo.bare();
    let git = git_support::HttpBackend::start(&repo.base, Some(("git", "pw")));
    let keys = tempfile::tempdir().expect("tempdir");
    let (key, _) = git_support::ssh_keygen(keys.path(), "signing");
    let identity = std::fs::read_to_string(&key).expect("key");

    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut up = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .arg("up")
        .arg("--data-dir")
        .arg(&data)
        .args([
            "--listen",
            &format!("127.0.0.1:{}", git_support::free_port()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("tidegate up");
    let kc = data.join("kubeconfig");
    wait("the API server", || {
        kc.exists()
            && Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&kc)
                .args(["get", "ns"])
                .output()
                .is_ok_and(|o| o.status.success())
    });
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    kubectl(
        &kc,
        &["apply", "-f", "-"],
        Some(&format!(
            "apiVersion: v1
kind: Secret
metadata: {{name: git-auth, namespace: flux-system}}
data: {{username: {}, password: {}}}
---
apiVersion: v1
kind: Secret
metadata: {{name: signing, namespace: flux-system}}
data: {{identity: {}}}
---
apiVersion: v1
kind: Secret
metadata: {{name: token, namespace: flux-system}}
data: {{token: {}}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: fleet, namespace: flux-system}}
spec: {{url: {}, interval: 1h, ref: {{branch: main}}, secretRef: {{name: git-auth}}}}
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata: {{name: app, namespace: flux-system}}
spec: {{image: {image}, interval: 1h}}
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: {{name: app, namespace: flux-system}}
spec: {{imageRepositoryRef: {{name: app}}, policy: {{numerical: {{order: asc}}}}, filterTags: {{pattern: '^0\\.0\\.(?P<n>[0-9]+)$', extract: '$n'}}}}
---
apiVersion: notification.toolkit.fluxcd.io/v1
kind: Receiver
metadata: {{name: registry, namespace: flux-system}}
spec:
  type: generic
  secretRef: {{name: token}}
  resources: [{{kind: ImageRepository, name: app}}]
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageUpdateAutomation
metadata: {{name: fleet, namespace: flux-system}}
spec:
  interval: 1h
  sourceRef: {{kind: GitRepository, name: fleet}}
  git:
    checkout: {{ref: {{branch: main}}}}
    commit:
      author: {{name: Flux Bot, email: bot@tidegate.invalid}}
      signingKey: {{type: ssh, secretRef: {{name: signing}}}}
  update: {{path: ./deploy, strategy: Setters}}
",
            b64("git"),
            b64("pw"),
            b64(&identity),
            b64("hook"),
            git.url("repo.git"),
        )),
    );
    let mut path = String::new();
    wait("the webhook path", || {
        path = kubectl(
            &kc,
            &[
                "-n",
                "flux-system",
                "get",
                "receiver",
                "registry",
                "-o",
                "jsonpath={.status.webhookPath}",
            ],
            None,
        );
        !path.is_empty()
    });
    let address = std::fs::read_to_string(data.join("receiver-address")).expect("address");
    let hook = format!("http://{}{path}", address.trim());

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let registry = rt.block_on(async {
        let (repository, _) = oci::parse_artifact_url(&reg.url("bench/app")).expect("url");
        oci::Registry::connect(&repository, &oci::Options::default())
            .await
            .expect("registry")
    });
    let push_tag = |tag: &str| {
        rt.block_on(registry.push_artifact(
            tag,
            tag.as_bytes().to_vec().into(),
            oci::registry::FLUX_CONTENT,
            &BTreeMap::new(),
        ))
        .expect("push");
    };
    // The first tag: the automation's first run (not measured).
    push_tag("0.0.1");
    post(&hook);
    let first = head(&bare);
    wait("the first commit", || head(&bare) != first);

    let work = tempfile::tempdir().expect("tempdir");
    let (mut ours, mut peer) = (Vec::new(), Vec::new());
    for round in 0..rounds() {
        let tag = format!("0.0.{}", round + 2);
        push_tag(&tag);
        let before = head(&bare);
        let started = Instant::now();
        post(&hook);
        wait("the automated commit", || head(&bare) != before);
        ours.push(started.elapsed());

        // The peer: the same change by hand with the git CLI.
        let clone = work.path().join(format!("clone-{round}"));
        let url = git.url("repo.git").replace("http://", "http://git:pw@");
        let started = Instant::now();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(["-c", "gpg.format=ssh", "-c"])
                .arg(format!("user.signingkey={}", key.display()))
                .args([
                    "-c",
                    "user.name=Flux Bot",
                    "-c",
                    "user.email=bot@tidegate.invalid",
                ])
                .args(args)
                .output()
                .expect("git");
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        git(&[
            "clone",
            "-q",
            "--depth",
            "1",
            "--branch",
            "main",
            &url,
            clone.to_str().expect("utf-8"),
        ]);
        let file = clone.join("deploy/app.yaml");
        let text = std::fs::read_to_string(&file).expect("read");
        std::fs::write(&file, text.replace(":0.0.", ":9.9.")).expect("write");
        let c = clone.to_str().expect("utf-8");
        git(&[
            "-C",
            c,
            "commit",
            "-q",
            "-S",
            "-am",
            "Update from image update automation",
        ]);
        git(&["-C", c, "push", "-q", "origin", "main"]);
        peer.push(started.elapsed());
        // Undo the peer's edit on the branch so the next automated run has the marker's value.
        let text = std::fs::read_to_string(&file).expect("read");
        std::fs::write(&file, text.replace(":9.9.", ":0.0.")).expect("write");
        git(&["-C", c, "commit", "-q", "-am", "restore"]);
        git(&["-C", c, "push", "-q", "origin", "main"]);
    }
    let rss = std::fs::read_to_string(format!("/proc/{}/status", up.id()))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_default();
    let _ = up.kill();
    let _ = up.wait();
    let (o, p) = (median(&mut ours), median(&mut peer));
    println!(
        "tag push → signed commit on the branch, {} rounds, median: tidegate up {:.3} s (webhook, scan, policy, checkout, setters, SSH-signed commit, push); git CLI clone+edit+commit -S+push {:.3} s; ratio {:.2}; tidegate up peak RSS {rss}",
        ours.len(),
        o.as_secs_f64(),
        p.as_secs_f64(),
        o.as_secs_f64() / p.as_secs_f64()
    );
}
