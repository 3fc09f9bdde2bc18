//! An ImageUpdateAutomation run against real Git servers on loopback: checkout, setters, a
//! signed commit the real git verifies, push over file://, HTTP (basic auth), SSH and git://;
//! a push branch created and then reused, a refspec, the early stop when the remote has not
//! moved, and a non-fast-forward push refused with nothing changed on the server.

mod proxy_support;
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use support::{GitDaemon, HttpBackend, Repo, Sshd, run, ssh_keygen};
use tidegate_source::git::commit::Author;
use tidegate_source::git::sign::Signer;
use tidegate_source::git::{Auth, GitError, GitReference};
use tidegate_source::image::setters::{LatestRef, Setters};
use tidegate_source::image::update::{Checkout, CheckoutRequest, PushRequest, Workspace, checkout};

static NO_INTERRUPT: AtomicBool = AtomicBool::new(false);

const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  namespace: apps\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: reg.example/app:1.0.0 # {\"$imagepolicy\": \"flux-system:app\"}\n";

fn setters(tag: &str) -> Setters {
    let mut s = Setters::new();
    s.add_policy(
        "flux-system",
        "app",
        &LatestRef {
            name: "reg.example/app".into(),
            tag: tag.into(),
            digest: String::new(),
        },
    );
    s
}

fn seeded() -> Repo {
    let repo = Repo::new();
    repo.write("clusters/app/deploy.yaml", DEPLOY);
    repo.write("clusters/app/other.yaml", "kind: ConfigMap\n");
    repo.write("outside/deploy.yaml", DEPLOY);
    repo.commit("initial");
    repo
}

fn branch(b: &str) -> GitReference {
    GitReference {
        branch: Some(b.into()),
        ..Default::default()
    }
}

fn try_open(
    url: &str,
    auth: &Auth,
    reference: &GitReference,
    push: &str,
    last: Option<&str>,
) -> Result<Checkout, GitError> {
    checkout(&CheckoutRequest {
        url,
        auth,
        timeout: Duration::from_secs(30),
        interrupt: &NO_INTERRUPT,
        reference,
        push_branch: push,
        switch_branch: reference.branch.as_deref() != Some(push),
        last_observed: last,
    })
}

fn open(
    url: &str,
    auth: &Auth,
    reference: &GitReference,
    push: &str,
    last: Option<&str>,
) -> Checkout {
    try_open(url, auth, reference, push, last).expect("checkout")
}

fn ready(c: Checkout) -> Box<Workspace> {
    match c {
        Checkout::Ready(w) => w,
        Checkout::Unchanged => panic!("expected a checkout"),
    }
}

fn author() -> Author {
    Author {
        name: "Flux Bot".into(),
        email: "bot@tidegate.invalid".into(),
    }
}

fn push(ws: &Workspace, url: &str, auth: &Auth, refspec: Option<&str>) -> Result<(), GitError> {
    ws.push(&PushRequest {
        url,
        auth,
        timeout: Duration::from_secs(30),
        force_push_branch: false,
        refspec,
        options: &BTreeMap::new(),
    })
}

/// One run: checkout main, set the tag, commit with `signer`, push; returns the workspace.
fn run_once(url: &str, auth: &Auth, tag: &str, signer: Option<&Signer>) -> Box<Workspace> {
    let mut ws = ready(open(url, auth, &branch("main"), "main", None));
    let result = ws
        .apply_setters("./clusters", &setters(tag))
        .expect("setters");
    assert_eq!(result.files.len(), 1, "{:?}", result.files);
    assert_eq!(result.files[0].0, "app/deploy.yaml");
    ws.commit(&result, &author(), &format!("Update to {tag}"), signer)
        .expect("commit");
    push(&ws, url, auth, None).expect("push");
    ws
}

fn remote_file(repo: &Repo, rev: &str, path: &str) -> String {
    repo.git(&["fetch", "-q", "origin"]);
    repo.git(&["show", &format!("{rev}:{path}")])
}

fn gpg(home: &Path, args: &[&str]) -> String {
    run(Command::new("gpg")
        .env("GNUPGHOME", home)
        .args([
            "--batch",
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "s3cret",
        ])
        .args(args))
}

#[test]
fn file_push_with_openpgp_signature_verified_by_git() {
    let mut repo = seeded();
    let gnupg = support::gnupg_home();
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
    let secret = gpg(gnupg.path(), &["--armor", "--export-secret-keys"]);
    // Without the passphrase the key is refused with Flux's words; a wrong one too.
    let missing = Signer::open_pgp("signing", secret.as_bytes(), None).unwrap_err();
    assert!(
        missing
            .0
            .contains("without 'passphrase' field present in secret signing"),
        "{missing}"
    );
    let wrong = Signer::open_pgp("signing", secret.as_bytes(), Some(b"nope")).unwrap_err();
    assert!(wrong.0.contains("could not decrypt private key"), "{wrong}");
    let signer = Signer::open_pgp("signing", secret.as_bytes(), Some(b"s3cret")).unwrap();

    let url = repo.file_url();
    let ws = run_once(&url, &Auth::default(), "1.0.1", Some(&signer));
    let text = remote_file(&repo, "origin/main", "clusters/app/deploy.yaml");
    assert!(
        text.contains("image: reg.example/app:1.0.1 # {\"$imagepolicy\""),
        "{text}"
    );
    // Only the marked file under the update path changed.
    assert_eq!(
        remote_file(&repo, "origin/main", "outside/deploy.yaml"),
        DEPLOY.trim_end()
    );
    repo.set_env("GNUPGHOME", gnupg.path().to_str().unwrap());
    repo.git(&["verify-commit", "origin/main"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae>|%s", "origin/main"]),
        "Flux Bot <bot@tidegate.invalid>|Update to 1.0.1"
    );

    // The remote moved: a checkout with the revision observed before runs again; with the
    // new revision it stops early.
    let old = ws.revision.clone();
    assert!(matches!(
        open(&url, &Auth::default(), &branch("main"), "main", Some(&old)),
        Checkout::Ready(_)
    ));
    let now = ready(open(&url, &Auth::default(), &branch("main"), "main", None)).revision;
    assert_ne!(now, old);
    assert!(matches!(
        open(&url, &Auth::default(), &branch("main"), "main", Some(&now)),
        Checkout::Unchanged
    ));
    // Nothing left to change.
    let again = ready(open(&url, &Auth::default(), &branch("main"), "main", None));
    assert!(
        again
            .apply_setters("clusters", &setters("1.0.1"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn http_push_with_ssh_signature_and_non_fast_forward_refused() {
    let repo = seeded();
    let server = HttpBackend::start(&repo.base, Some(("bot", "pw")));
    let url = server.url("repo.git");
    let auth = Auth {
        username: Some("bot".into()),
        password: Some("pw".into()),
        ..Default::default()
    };
    let keys = tempfile::tempdir().unwrap();
    let (key, public) = ssh_keygen(keys.path(), "signing");
    let signer = Signer::ssh("signing", &std::fs::read(&key).unwrap(), None).unwrap();
    run_once(&url, &auth, "1.0.1", Some(&signer));
    let allowed = keys.path().join("allowed_signers");
    std::fs::write(&allowed, format!("bot@tidegate.invalid {public}\n")).unwrap();
    repo.git(&["fetch", "-q", "origin"]);
    repo.git(&[
        "-c",
        "gpg.format=ssh",
        "-c",
        &format!("gpg.ssh.allowedSignersFile={}", allowed.display()),
        "verify-commit",
        "origin/main",
    ]);

    // Someone pushes between our checkout and our push: refused, the remote keeps their commit.
    let mut ws = ready(open(&url, &auth, &branch("main"), "main", None));
    let result = ws.apply_setters("clusters", &setters("1.0.2")).unwrap();
    ws.commit(&result, &author(), "Update to 1.0.2", None)
        .unwrap();
    repo.git(&["reset", "-q", "--hard", "origin/main"]);
    repo.write("concurrent.txt", "x");
    let theirs = repo.commit("concurrent change");
    let err = push(&ws, &url, &auth, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("non-fast-forward update: refs/heads/main"),
        "{err}"
    );
    repo.git(&["fetch", "-q", "origin"]);
    assert_eq!(repo.git(&["rev-parse", "origin/main"]), theirs);

    // Wrong credentials: the handshake is refused.
    let bad = Auth {
        username: Some("bot".into()),
        password: Some("wrong".into()),
        ..Default::default()
    };
    let err = push(&ws, &url, &bad, None).unwrap_err();
    assert!(!err.to_string().contains("wrong"), "{err}");
}

#[test]
fn push_branch_created_then_reused_and_refspec() {
    let repo = seeded();
    let daemon_base = repo.base.clone();
    run(Command::new("git").args([
        "-C",
        repo.bare().to_str().unwrap(),
        "config",
        "daemon.receivepack",
        "true",
    ]));
    let daemon = GitDaemon::start(&daemon_base);
    let url = daemon.url("repo.git");
    let auth = Auth::default();

    // The push branch does not exist: created from main.
    let mut ws = ready(open(&url, &auth, &branch("main"), "auto", None));
    let result = ws.apply_setters("clusters", &setters("2.0.0")).unwrap();
    ws.commit(&result, &author(), "first", None).unwrap();
    push(&ws, &url, &auth, Some("refs/heads/auto:refs/heads/review")).unwrap();
    repo.git(&["fetch", "-q", "origin"]);
    let main = repo.git(&["rev-parse", "origin/main"]);
    assert_eq!(repo.git(&["rev-parse", "origin/auto^"]), main);
    assert_eq!(
        repo.git(&["rev-parse", "origin/review"]),
        repo.git(&["rev-parse", "origin/auto"])
    );

    // It exists now: the next run builds on it.
    let first = repo.git(&["rev-parse", "origin/auto"]);
    let mut ws = ready(open(&url, &auth, &branch("main"), "auto", None));
    let result = ws.apply_setters("clusters", &setters("2.0.1")).unwrap();
    assert_eq!(result.files[0].1[0].1[0].old_value, "reg.example/app:2.0.0");
    ws.commit(&result, &author(), "second", None).unwrap();
    push(&ws, &url, &auth, None).unwrap();
    repo.git(&["fetch", "-q", "origin"]);
    assert_eq!(repo.git(&["rev-parse", "origin/auto^"]), first);
    assert_eq!(repo.git(&["rev-parse", "origin/main"]), main);
}

#[test]
fn ssh_push() {
    let repo = seeded();
    let keys = tempfile::tempdir().unwrap();
    let (key, public) = ssh_keygen(keys.path(), "deploy");
    let sshd = Sshd::start(&public);
    let url = sshd.url(&repo.bare());
    let auth = Auth {
        identity: Some(std::fs::read(&key).unwrap()),
        known_hosts: Some(sshd.known_hosts.clone().into_bytes()),
        ..Default::default()
    };
    run_once(&url, &auth, "3.0.0", None);
    let text = remote_file(&repo, "origin/main", "clusters/app/deploy.yaml");
    assert!(text.contains("reg.example/app:3.0.0"), "{text}");
}

#[test]
fn missing_update_path_is_an_error() {
    let repo = seeded();
    let ws = ready(open(
        &repo.file_url(),
        &Auth::default(),
        &branch("main"),
        "main",
        None,
    ));
    let err = ws.apply_setters("./nope", &setters("1.0.1")).unwrap_err();
    assert!(
        err.to_string().contains("no such file or directory"),
        "{err}"
    );
    // `..` never leaves the root.
    let r = ws
        .apply_setters("../../clusters", &setters("1.0.1"))
        .unwrap();
    assert_eq!(r.files.len(), 1);
}

#[test]
fn fetch_and_push_through_a_proxy() {
    let repo = seeded();
    let server = HttpBackend::start(&repo.base, Some(("bot", "pw")));
    let proxy = proxy_support::HttpProxy::start(Some(("p", "q")));
    let url = server.url("repo.git");
    let auth = Auth {
        username: Some("bot".into()),
        password: Some("pw".into()),
        proxy: Some(proxy.url(Some(("p", "q")))),
        ..Default::default()
    };
    run_once(&url, &auth, "4.0.0", None);
    assert!(
        proxy.forwarded.load(std::sync::atomic::Ordering::Relaxed) >= 4,
        "the listing, the fetch, the push's listing and the push went through the proxy"
    );
    let text = remote_file(&repo, "origin/main", "clusters/app/deploy.yaml");
    assert!(text.contains("reg.example/app:4.0.0"), "{text}");
    // Wrong proxy credentials: refused by the proxy, and said.
    let bad = Auth {
        proxy: Some(proxy.url(Some(("p", "wrong")))),
        ..auth.clone()
    };
    let err = match try_open(&url, &bad, &branch("main"), "main", None) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a refused proxy must fail"),
    };
    assert!(err.contains("407"), "{err}");
    // A proxy for an SSH remote is refused rather than ignored.
    let ssh = Auth {
        proxy: Some(proxy.url(None)),
        identity: Some(b"key".to_vec()),
        known_hosts: Some(b"hosts".to_vec()),
        ..Default::default()
    };
    let err = match try_open(
        "ssh://git@127.0.0.1:1/repo.git",
        &ssh,
        &branch("main"),
        "main",
        None,
    ) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("ssh with a proxy must fail"),
    };
    assert!(
        err.contains("only supported for HTTP(S) Git repositories"),
        "{err}"
    );
}

#[test]
fn fetch_and_push_with_a_client_certificate() {
    let repo = seeded();
    let (server, cert, key) = HttpBackend::start_mtls(&repo.base);
    let url = server.url("repo.git");
    let ca = server.ca_pem.clone().unwrap();
    let mut data = std::collections::BTreeMap::new();
    data.insert("ca.crt".to_string(), ca.clone().into_bytes());
    // Without a client certificate the server refuses the handshake.
    let no_cert = Auth::from_secret(&url, Some(&data)).unwrap();
    assert!(try_open(&url, &no_cert, &branch("main"), "main", None).is_err());
    // Only half of the pair is a configuration error.
    data.insert("tls.crt".to_string(), cert.clone().into_bytes());
    let err = Auth::from_secret(&url, Some(&data))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'tls.crt' and 'tls.key' must be given together"),
        "{err}"
    );
    data.insert("tls.key".to_string(), key.into_bytes());
    let auth = Auth::from_secret(&url, Some(&data)).unwrap();
    run_once(&url, &auth, "5.0.0", None);
    let text = remote_file(&repo, "origin/main", "clusters/app/deploy.yaml");
    assert!(text.contains("reg.example/app:5.0.0"), "{text}");
}
