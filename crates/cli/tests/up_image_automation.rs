//! Image automation end to end on `tidegate up`: tags pushed with `tidegate push artifact` to
//! Debian's docker-registry (one behind htpasswd basic auth, one behind TLS with a test CA),
//! scanned, selected, written into Git (`git http-backend` with basic auth) as an OpenPGP-signed
//! commit that the real git verifies, fetched and applied. With every interval at an hour, a
//! Receiver for the registry webhook and one for the Git push drive the chain; its latency is
//! printed (measured properly by `cargo bench -p tidegate --bench image_update`).

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod up_support;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use registry_support::{Mode, Registry};
use up_support::*;

fn push(reg: &Registry, repo: &str, tag: &str, extra: &[&str]) {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("app.yaml"), format!("tag: {tag}\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["push", "artifact", &reg.url(&format!("{repo}:{tag}"))])
        .args(["--path", src.path().to_str().unwrap()])
        .args([
            "--source",
            "https://github.com/example/app",
            "--revision",
            tag,
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "push {tag}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn deployment(app: &str, sidecar: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: default
spec:
  selector:
    matchLabels:
      app: app
  template:
    metadata:
      labels:
        app: app
    spec:
      containers:
      - name: app
        image: {app}:0.9.0 # {{\"$imagepolicy\": \"flux-system:app\"}}
      - name: sidecar
        image: {sidecar}:1.9.0 # {{\"$imagepolicy\": \"flux-system:sidecar\"}}
"
    )
}

fn images(kc: &Path) -> String {
    kubectl(
        kc,
        &[
            "get",
            "deployment",
            "app",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].image}",
        ],
    )
}

fn gpg(home: &Path, args: &[&str]) -> String {
    run(Command::new("gpg")
        .env("GNUPGHOME", home)
        .args([
            "--batch",
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "pgp-pass",
        ])
        .args(args))
}

/// POSTs an empty JSON body to a generic Receiver; the status code.
fn post(url: &str) -> u16 {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
    .unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn pushed_tags_become_signed_commits_and_reach_the_cluster_through_receivers() {
    let private = Registry::start(Mode::Htpasswd("reg", "reg-pass"));
    let tls = Registry::start(Mode::Tls);
    let app = format!("{}/team/app", private.host);
    let sidecar = format!("{}/team/sidecar", tls.host);
    push(&private, "team/app", "1.0.0", &["--creds", "reg:reg-pass"]);
    push(&tls, "team/sidecar", "2.0.0", &["--insecure-registry"]);

    let mut repo = git_support::Repo::new();
    repo.write("deploy/app.yaml", &deployment(&app, &sidecar));
    repo.commit("initial");
    let git = git_support::HttpBackend::start(&repo.base, Some(("git", "git-pass")));

    let gnupg = git_support::gnupg_home();
    gpg(
        gnupg.path(),
        &[
            "--quick-gen-key",
            "Flux Bot <bot@tidegate.invalid>",
            "ed25519",
            "sign",
            "never",
        ],
    );
    let secret_key = gnupg.path().join("signing.asc");
    std::fs::write(
        &secret_key,
        gpg(gnupg.path(), &["--armor", "--export-secret-keys"]),
    )
    .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let up = up(&data, git_support::free_port(), &[], false);
    let kc = up.kubeconfig.clone();
    let ca = dir.path().join("ca.crt");
    std::fs::write(&ca, tls.ca_pem.as_deref().unwrap()).unwrap();
    let ns = ["-n", "flux-system"];
    for args in [
        vec![
            "create",
            "secret",
            "generic",
            "git-auth",
            "--from-literal=username=git",
            "--from-literal=password=git-pass",
        ],
        vec![
            "create",
            "secret",
            "docker-registry",
            "regcred",
            &format!("--docker-server={}", private.host),
            "--docker-username=reg",
            "--docker-password=reg-pass",
        ],
        vec![
            "create",
            "secret",
            "generic",
            "registry-ca",
            &format!("--from-file=ca.crt={}", ca.display()),
        ],
        vec![
            "create",
            "secret",
            "generic",
            "signing",
            &format!("--from-file=git.asc={}", secret_key.display()),
            "--from-literal=passphrase=pgp-pass",
        ],
        vec![
            "create",
            "secret",
            "generic",
            "webhook-token",
            "--from-literal=token=hook-token",
        ],
    ] {
        let mut a = ns.to_vec();
        a.extend(args);
        kubectl(&kc, &a);
    }
    kubectl_stdin(
        &kc,
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: fleet, namespace: flux-system}}
spec:
  url: {}
  interval: 1h
  ref: {{branch: main}}
  secretRef: {{name: git-auth}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: apps, namespace: flux-system}}
spec:
  interval: 1h
  path: ./deploy
  prune: true
  sourceRef: {{kind: GitRepository, name: fleet}}
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata: {{name: app, namespace: flux-system}}
spec:
  image: {app}
  interval: 1h
  secretRef: {{name: regcred}}
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata: {{name: sidecar, namespace: flux-system}}
spec:
  image: {sidecar}
  interval: 1h
  certSecretRef: {{name: registry-ca}}
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: {{name: app, namespace: flux-system}}
spec:
  imageRepositoryRef: {{name: app}}
  policy: {{semver: {{range: 1.x}}}}
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: {{name: sidecar, namespace: flux-system}}
spec:
  imageRepositoryRef: {{name: sidecar}}
  policy: {{semver: {{range: 2.x}}}}
---
apiVersion: notification.toolkit.fluxcd.io/v1
kind: Receiver
metadata: {{name: registry, namespace: flux-system}}
spec:
  type: generic
  secretRef: {{name: webhook-token}}
  resources:
  - {{apiVersion: image.toolkit.fluxcd.io/v1, kind: ImageRepository, name: app}}
---
apiVersion: notification.toolkit.fluxcd.io/v1
kind: Receiver
metadata: {{name: git-push, namespace: flux-system}}
spec:
  type: generic
  secretRef: {{name: webhook-token}}
  resources:
  - {{kind: GitRepository, name: fleet}}
",
            git.url("repo.git")
        ),
    );
    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "image",
            "update",
            "fleet",
            "--git-repo-ref=fleet",
            "--git-repo-path=./deploy",
            "--checkout-branch=main",
            "--author-name=Flux Bot",
            "--author-email=bot@tidegate.invalid",
            "--signing-key-secret=signing",
            "--commit-template={{ range .Changed.Changes }}{{ print .OldValue \" -> \" .NewValue }}\n{{ end }}",
            "--interval=1h",
            "-n",
            "flux-system",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("✚ generating ImageUpdateAutomation"), "{err}");

    // Both images land in one signed commit; the source and the cluster follow.
    wait_until("the first automated commit", || {
        kubectl(
            &kc,
            &[
                "-n",
                "flux-system",
                "get",
                "imageupdateautomation",
                "fleet",
                "-o",
                "jsonpath={.status.observedPolicies.sidecar.tag}/{.status.lastPushCommit}",
            ],
        )
        .starts_with("2.0.0/")
    });
    repo.git(&["fetch", "-q", "origin"]);
    repo.set_env("GNUPGHOME", gnupg.path().to_str().unwrap());
    let initial = repo.git(&["rev-list", "--max-parents=0", "origin/main"]);
    let automated = repo.git(&["rev-list", "origin/main", &format!("^{initial}")]);
    let mut bodies = String::new();
    for c in automated.lines() {
        // Every automated commit is signed with the key of the Secret.
        repo.git(&["verify-commit", c]);
        assert_eq!(
            repo.git(&["log", "-1", "--format=%an <%ae>", c]),
            "Flux Bot <bot@tidegate.invalid>"
        );
        bodies.push_str(&repo.git(&["log", "-1", "--format=%B", c]));
    }
    assert!(
        bodies.contains(&format!("{app}:0.9.0 -> {app}:1.0.0"))
            && bodies.contains(&format!("{sidecar}:1.9.0 -> {sidecar}:2.0.0")),
        "{bodies}"
    );
    assert_eq!(
        repo.git(&["show", "origin/main:deploy/app.yaml"]),
        deployment(&app, &sidecar)
            .replace(":0.9.0 #", ":1.0.0 #")
            .replace(":1.9.0 #", ":2.0.0 #")
            .trim_end()
    );
    let (code, _, err) = tidegate(
        &kc,
        &["reconcile", "source", "git", "fleet", "-n", "flux-system"],
    );
    assert_eq!(code, 0, "{err}");
    wait_until("the first images applied", || {
        kubectl_ok(&kc, &["get", "deployment", "app"])
            && images(&kc) == format!("{app}:1.0.0 {sidecar}:2.0.0")
    });
    let (code, out, err) = tidegate(&kc, &["get", "images", "update", "-n", "flux-system"]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert!(
        lines
            .next()
            .is_some_and(|h| h.starts_with("NAME \tLAST RUN")),
        "{out}"
    );
    assert!(
        lines.next().is_some_and(|r| r.starts_with("fleet\t")
            && r.ends_with("\tFalse    \tTrue \trepository up-to-date")),
        "{out}"
    );
    let (code, _, err) = tidegate(
        &kc,
        &["reconcile", "image", "update", "fleet", "-n", "flux-system"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("✔ repository up-to-date"), "{err}");

    // The timed chain: tag pushed → registry webhook → scan → policy → signed commit pushed →
    // Git webhook → fetch → apply.
    let path_of = |name: &str| {
        let mut p = String::new();
        wait_until("a webhook path", || {
            p = kubectl(
                &kc,
                &[
                    "-n",
                    "flux-system",
                    "get",
                    "receiver",
                    name,
                    "-o",
                    "jsonpath={.status.webhookPath}",
                ],
            );
            !p.is_empty()
        });
        p
    };
    let address = std::fs::read_to_string(data.join("receiver-address")).unwrap();
    let registry_hook = format!("http://{}{}", address.trim(), path_of("registry"));
    let git_hook = format!("http://{}{}", address.trim(), path_of("git-push"));
    let before = repo.git(&["rev-parse", "origin/main"]);
    let started = Instant::now();
    push(&private, "team/app", "1.0.1", &["--creds", "reg:reg-pass"]);
    assert_eq!(post(&registry_hook), 200);
    let mut head = before.clone();
    wait_until("the commit for 1.0.1", || {
        head = run(Command::new("git").args([
            "ls-remote",
            repo.bare().to_str().unwrap(),
            "refs/heads/main",
        ]))
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
        head != before
    });
    let committed = started.elapsed();
    assert_eq!(post(&git_hook), 200);
    wait_until("1.0.1 applied", || {
        images(&kc) == format!("{app}:1.0.1 {sidecar}:2.0.0")
    });
    eprintln!(
        "tag push to commit: {:.2} s; tag push to applied: {:.2} s",
        committed.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    repo.git(&["fetch", "-q", "origin"]);
    repo.git(&["verify-commit", "origin/main"]);
    assert_eq!(repo.git(&["rev-parse", "origin/main^"]), before);

    // Suspended, a new tag changes nothing; resumed, it is committed.
    let (code, _, err) = tidegate(
        &kc,
        &["suspend", "image", "update", "fleet", "-n", "flux-system"],
    );
    assert_eq!(code, 0, "{err}");
    push(&tls, "team/sidecar", "2.1.0", &["--insecure-registry"]);
    let (code, _, err) = tidegate(
        &kc,
        &[
            "reconcile",
            "image",
            "repository",
            "sidecar",
            "-n",
            "flux-system",
        ],
    );
    assert_eq!(code, 0, "{err}");
    wait_until("the sidecar policy to follow", || {
        kubectl(
            &kc,
            &[
                "-n",
                "flux-system",
                "get",
                "imagepolicy",
                "sidecar",
                "-o",
                "jsonpath={.status.latestRef.tag}",
            ],
        ) == "2.1.0"
    });
    std::thread::sleep(std::time::Duration::from_secs(1));
    let suspended_head = run(Command::new("git").args([
        "ls-remote",
        repo.bare().to_str().unwrap(),
        "refs/heads/main",
    ]));
    assert!(suspended_head.starts_with(&head), "{suspended_head}");
    let (code, _, err) = tidegate(
        &kc,
        &["resume", "image", "update", "fleet", "-n", "flux-system"],
    );
    assert_eq!(code, 0, "{err}");
    wait_until("the sidecar commit", || {
        repo.git(&["fetch", "-q", "origin"]);
        repo.git(&["show", "origin/main:deploy/app.yaml"])
            .contains(&format!("{sidecar}:2.1.0 #"))
    });
}
