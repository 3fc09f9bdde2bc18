//! Fetching, selecting, verifying and packing against real Git servers on loopback.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use support::{GitDaemon, HttpBackend, Repo, Sshd, run, ssh_keygen};
use tidegate_source::extract::{Limits, extract_tar_gz};
use tidegate_source::git::{self, Auth, GitError, GitReference, Outcome};
use tidegate_source::package::{commit_tree, package};
use tidegate_source::storage::{Retention, Storage};
use tidegate_source::verify::Keyring;

static NO_INTERRUPT: AtomicBool = AtomicBool::new(false);

fn fetch_with(
    url: &str,
    reference: &GitReference,
    auth: &Auth,
    last: Option<&str>,
) -> (Result<Outcome, GitError>, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let opts = git::FetchOptions {
        url,
        reference,
        auth,
        last_revision: last,
        interrupt: &NO_INTERRUPT,
        timeout: std::time::Duration::from_secs(30),
    };
    (git::fetch(&opts, work.path()), work)
}

fn fetched(url: &str, reference: &GitReference) -> (Box<git::Fetched>, tempfile::TempDir) {
    let (r, dir) = fetch_with(url, reference, &Auth::default(), None);
    match r {
        Ok(Outcome::Fetched(f)) => (f, dir),
        Ok(Outcome::Unchanged { revision }) => panic!("unexpected no-op at {revision}"),
        Err(e) => panic!("fetch {url} failed: {e}"),
    }
}

fn branch(b: &str) -> GitReference {
    GitReference {
        branch: Some(b.into()),
        ..Default::default()
    }
}

/// Packs the fetched commit and returns (digest, files in the artifact → content).
fn pack(f: &git::Fetched, ignore: Option<&str>) -> (String, BTreeMap<String, String>) {
    let store_dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(store_dir.path(), "localhost:0", Retention::default()).unwrap();
    let tree = commit_tree(&f.repo, f.commit).unwrap();
    let path = Storage::artifact_path(
        "GitRepository",
        "default",
        "x",
        &format!("{}.tar.gz", f.commit),
    );
    let written = package(&tree, &f.repo, ignore, &storage, &path).unwrap();
    let out = tempfile::tempdir().unwrap();
    let file = std::fs::File::open(storage.local_path(&path).unwrap()).unwrap();
    extract_tar_gz(file, out.path(), Limits::default()).unwrap();
    (written.digest, read_tree(out.path()))
}

fn read_tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e
                    .path()
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
    }
    out
}

#[test]
fn references_and_revisions_on_a_local_repository() {
    let repo = Repo::new();
    repo.write("deploy/app.yaml", "kind: ConfigMap\n");
    let c1 = repo.commit("first");
    repo.git(&["tag", "v0.1.0"]);
    repo.git(&["tag", "-a", "v1.0.0", "-m", "release 1.0.0"]);
    repo.git(&["tag", "1.1.0-rc.1"]);
    repo.git(&["checkout", "-q", "-b", "staging"]);
    repo.write("deploy/app.yaml", "kind: Secret\n");
    let c2 = repo.commit("second on staging");
    repo.git(&["checkout", "-q", "main"]);
    repo.push();
    let url = repo.file_url();

    let (f, _w) = fetched(&url, &branch("main"));
    assert_eq!(f.revision, format!("main@sha1:{c1}"));
    let (f, _w) = fetched(&url, &branch("staging"));
    assert_eq!(f.revision, format!("staging@sha1:{c2}"));
    // Lightweight and annotated tags give the commit hash; the annotated one keeps its object.
    let (f, _w) = fetched(
        &url,
        &GitReference {
            tag: Some("v0.1.0".into()),
            ..Default::default()
        },
    );
    assert_eq!(f.revision, format!("v0.1.0@sha1:{c1}"));
    assert!(f.tag.is_none() && f.is_tag);
    let (f, _w) = fetched(
        &url,
        &GitReference {
            tag: Some("v1.0.0".into()),
            ..Default::default()
        },
    );
    assert_eq!(f.revision, format!("v1.0.0@sha1:{c1}"));
    assert!(f.tag.is_some());
    // Semver: highest release; a prerelease only when the range asks for it.
    let semver = |r: &str| GitReference {
        semver: Some(r.into()),
        ..Default::default()
    };
    assert_eq!(
        fetched(&url, &semver(">=0.1.0")).0.revision,
        format!("v1.0.0@sha1:{c1}")
    );
    assert_eq!(
        fetched(&url, &semver(">=1.1.0-0")).0.revision,
        format!("1.1.0-rc.1@sha1:{c1}")
    );
    // Name references use the full name.
    let name = GitReference {
        name: Some("refs/heads/staging".into()),
        ..Default::default()
    };
    assert_eq!(
        fetched(&url, &name).0.revision,
        format!("refs/heads/staging@sha1:{c2}")
    );
    // Commits: bare SHA, or on a branch.
    let commit = GitReference {
        commit: Some(c2.clone()),
        ..Default::default()
    };
    assert_eq!(fetched(&url, &commit).0.revision, format!("sha1:{c2}"));
    let on_branch = GitReference {
        commit: Some(c2.clone()),
        branch: Some("staging".into()),
        ..Default::default()
    };
    assert_eq!(
        fetched(&url, &on_branch).0.revision,
        format!("staging@sha1:{c2}")
    );
    // The default branch is master, which this repository lacks.
    let (r, _w) = fetch_with(&url, &GitReference::default(), &Auth::default(), None);
    let err = r.err().expect("no master branch");
    assert!(
        err.to_string()
            .contains("couldn't find remote ref \"refs/heads/master\""),
        "{err}"
    );
    // No tag in range.
    let (r, _w) = fetch_with(&url, &semver(">=5.0.0"), &Auth::default(), None);
    assert_eq!(
        r.err().unwrap().to_string(),
        "no match found for semver: >=5.0.0"
    );
    // An unknown commit.
    let missing = GitReference {
        commit: Some("0123456789012345678901234567890123456789".into()),
        ..Default::default()
    };
    let (r, _w) = fetch_with(&url, &missing, &Auth::default(), None);
    assert!(r.err().unwrap().to_string().contains(
        "unable to resolve commit object for '0123456789012345678901234567890123456789'"
    ));
}

#[test]
fn unchanged_force_push_and_deleted_branch_over_git_daemon() {
    let repo = Repo::new();
    repo.write("a.txt", "one\n");
    let c1 = repo.commit("one");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("b.txt", "two\n");
    repo.commit("two");
    repo.git(&["checkout", "-q", "main"]);
    let daemon = GitDaemon::start(&repo.base);
    let url = daemon.url("repo.git");

    let (f, _w) = fetched(&url, &branch("main"));
    assert_eq!(f.revision, format!("main@sha1:{c1}"));
    assert!(f.repo.is_shallow().unwrap(), "branch fetches are shallow");
    // Same commit on the remote: nothing fetched.
    let (r, _w) = fetch_with(&url, &branch("main"), &Auth::default(), Some(&f.revision));
    assert!(matches!(r, Ok(Outcome::Unchanged { .. })));
    // A force-push replaces the commit.
    repo.git(&["commit", "-q", "--amend", "-m", "one, amended"]);
    repo.push();
    let c1b = repo.git(&["rev-parse", "HEAD"]);
    assert_ne!(c1, c1b);
    let (r, _w) = fetch_with(&url, &branch("main"), &Auth::default(), Some(&f.revision));
    match r {
        Ok(Outcome::Fetched(f)) => assert_eq!(f.revision, format!("main@sha1:{c1b}")),
        _ => panic!("force-push not seen"),
    }
    // A deleted branch.
    repo.git(&["push", "-q", "origin", "--delete", "feature"]);
    let (r, _w) = fetch_with(&url, &branch("feature"), &Auth::default(), None);
    let err = r.err().expect("deleted branch");
    assert!(
        err.to_string()
            .contains("couldn't find remote ref \"refs/heads/feature\""),
        "{err}"
    );
    // Semver over git daemon: the chosen tag alone is fetched.
    repo.git(&["tag", "v2.0.0"]);
    repo.git(&["tag", "v1.5.0", "HEAD~0"]);
    repo.push();
    let (f, _w) = fetched(
        &url,
        &GitReference {
            semver: Some("^1".into()),
            ..Default::default()
        },
    );
    assert_eq!(f.revision, format!("v1.5.0@sha1:{c1b}"));
    // An unreachable host.
    let dead = format!("git://127.0.0.1:{}/repo.git", support::free_port());
    let (r, _w) = fetch_with(&dead, &branch("main"), &Auth::default(), None);
    let err = r.err().expect("unreachable");
    assert!(
        err.to_string()
            .contains(&format!("unable to clone '{dead}'")),
        "{err}"
    );
}

#[test]
fn http_backend_with_basic_auth() {
    let repo = Repo::new();
    repo.write("deploy/app.yaml", "kind: ConfigMap\n");
    let c1 = repo.commit("first");
    let server = HttpBackend::start(&repo.base, Some(("flux", "s3cret")));
    let url = server.url("repo.git");
    let secret = |u: &str, p: &str| -> BTreeMap<String, Vec<u8>> {
        [
            ("username".to_string(), u.as_bytes().to_vec()),
            ("password".to_string(), p.as_bytes().to_vec()),
        ]
        .into()
    };
    let good = Auth::from_secret(&url, Some(&secret("flux", "s3cret"))).unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &good, None);
    match r {
        Ok(Outcome::Fetched(f)) => {
            assert_eq!(f.revision, format!("main@sha1:{c1}"));
            let (_, files) = pack(&f, None);
            assert_eq!(
                files.get("deploy/app.yaml").map(String::as_str),
                Some("kind: ConfigMap\n")
            );
        }
        Ok(_) => panic!("no-op without last revision"),
        Err(e) => panic!("fetch with credentials failed: {e}"),
    }
    let bad = Auth::from_secret(&url, Some(&secret("flux", "wrong"))).unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &bad, None);
    let err = r.err().expect("wrong password is refused");
    // Flux reports every checkout error as GitOperationFailed.
    assert_eq!(err.reason(), "GitOperationFailed", "{err}");
    assert!(
        err.to_string()
            .starts_with(&format!("unable to clone '{url}'")),
        "{err}"
    );
    let (r, _w) = fetch_with(&url, &branch("main"), &Auth::default(), None);
    let err = r.err().expect("no credentials are refused");
    assert_eq!(err.reason(), "GitOperationFailed", "{err}");
    // Credentials in the URL never show in messages.
    let with_password = url.replace("http://", "http://flux:hunter2@");
    let (r, _w) = fetch_with(&with_password, &branch("nope"), &Auth::default(), None);
    let err = r.err().expect("unknown branch");
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[test]
fn sshd_with_key_authentication() {
    let repo = Repo::new();
    repo.write("x.yaml", "a: 1\n");
    let c1 = repo.commit("first");
    let keys = tempfile::tempdir().unwrap();
    let (client_key, client_pub) = ssh_keygen(keys.path(), "client");
    let sshd = Sshd::start(&client_pub);
    let url = sshd.url(&repo.bare());
    let identity = std::fs::read(&client_key).unwrap();
    let secret: BTreeMap<String, Vec<u8>> = [
        ("identity".to_string(), identity.clone()),
        (
            "known_hosts".to_string(),
            sshd.known_hosts.as_bytes().to_vec(),
        ),
    ]
    .into();
    let auth = Auth::from_secret(&url, Some(&secret)).unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &auth, None);
    match r {
        Ok(Outcome::Fetched(f)) => assert_eq!(f.revision, format!("main@sha1:{c1}")),
        Ok(_) => panic!("no-op without last revision"),
        Err(e) => panic!("ssh fetch failed: {e}"),
    }
    // A host key that does not match known_hosts is refused.
    let (_, other_pub) = ssh_keygen(keys.path(), "other");
    let wrong: BTreeMap<String, Vec<u8>> = [
        ("identity".to_string(), identity),
        (
            "known_hosts".to_string(),
            format!("[127.0.0.1]:{} {other_pub}\n", sshd.port).into_bytes(),
        ),
    ]
    .into();
    let auth = Auth::from_secret(&url, Some(&wrong)).unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &auth, None);
    assert!(r.is_err(), "unknown host key must fail");
    // A key the server does not know is refused.
    let (stranger, _) = ssh_keygen(keys.path(), "stranger");
    let secret: BTreeMap<String, Vec<u8>> = [
        ("identity".to_string(), std::fs::read(stranger).unwrap()),
        (
            "known_hosts".to_string(),
            sshd.known_hosts.as_bytes().to_vec(),
        ),
    ]
    .into();
    let auth = Auth::from_secret(&url, Some(&secret)).unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &auth, None);
    let err = r.err().expect("unknown client key must fail");
    assert!(
        err.to_string().ends_with(
            "ssh: unable to authenticate: the server refused the key in 'identity' (publickey)"
        ),
        "{err}"
    );
}

/// A deploy key generated the way `create secret git` does and the server's host key scanned
/// over the wire are, together, a working SSH secret for a real sshd.
#[test]
fn generated_deploy_key_and_scanned_host_key() {
    use tidegate_source::ssh::{KeyAlgorithm, KeyPair, scan_host_key};
    let repo = Repo::new();
    repo.write("x.yaml", "a: 1\n");
    let c1 = repo.commit("first");
    for algorithm in [KeyAlgorithm::Ecdsa(384), KeyAlgorithm::Ed25519] {
        let pair = KeyPair::generate(algorithm).unwrap();
        let sshd = Sshd::start(pair.public_key.trim_end());
        let address = format!("127.0.0.1:{}", sshd.port);
        let known_hosts = scan_host_key(&address, std::time::Duration::from_secs(30)).unwrap();
        // The helper's line is `[127.0.0.1]:port ssh-ed25519 AAAA… host_key` (with a comment).
        let expected = sshd.known_hosts.trim_end().rsplit_once(' ').unwrap().0;
        assert_eq!(known_hosts, expected);
        let url = sshd.url(&repo.bare());
        let secret: BTreeMap<String, Vec<u8>> = [
            ("identity".to_string(), pair.private_key.into_bytes()),
            ("known_hosts".to_string(), known_hosts.into_bytes()),
        ]
        .into();
        let auth = Auth::from_secret(&url, Some(&secret)).unwrap();
        let (r, _w) = fetch_with(&url, &branch("main"), &auth, None);
        match r {
            Ok(Outcome::Fetched(f)) => assert_eq!(f.revision, format!("main@sha1:{c1}")),
            Ok(_) => panic!("no-op without last revision"),
            Err(e) => panic!("ssh fetch with a generated key failed ({algorithm:?}): {e}"),
        }
    }
}

#[test]
fn artifacts_are_reproducible_and_honour_sourceignore() {
    let repo = Repo::new();
    repo.write("deploy/app.yaml", "kind: ConfigMap\n");
    repo.write("deploy/README.md", "docs\n");
    repo.write("logo.png", "png\n");
    repo.write(".github/workflows/ci.yaml", "on: push\n");
    repo.write("scripts/run.sh", "#!/bin/sh\n");
    repo.commit("files");
    let url = repo.file_url();
    let (f, _w) = fetched(&url, &branch("main"));
    let (d1, files) = pack(&f, None);
    let (d2, _) = pack(&f, None);
    assert_eq!(d1, d2, "same commit, same bytes");
    assert!(files.contains_key("deploy/app.yaml") && files.contains_key("deploy/README.md"));
    assert!(
        !files.contains_key("logo.png"),
        "default exclusions apply without patterns"
    );
    assert!(!files.keys().any(|k| k.starts_with(".github")));
    // spec.ignore drops the defaults and applies its own patterns.
    let (d3, files) = pack(&f, Some("*.md\n"));
    assert_ne!(d1, d3);
    assert!(files.contains_key("logo.png"));
    assert!(!files.contains_key("deploy/README.md"));
    // A nested .sourceignore is scoped to its directory.
    repo.write("deploy/.sourceignore", "/app.yaml\n");
    repo.write("app.yaml", "top\n");
    repo.commit("ignore");
    let (f, _w) = fetched(&url, &branch("main"));
    let (_, files) = pack(&f, None);
    assert!(!files.contains_key("deploy/app.yaml"));
    assert!(files.contains_key("app.yaml"));
}

fn gpg(home: &Path, args: &[&str]) -> String {
    run(Command::new("gpg")
        .env("GNUPGHOME", home)
        .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
        .args(args))
}

#[test]
fn signed_commits_and_tags_gpg_and_ssh() {
    let mut repo = Repo::new();
    let gnupg = support::gnupg_home();
    gpg(
        gnupg.path(),
        &[
            "--quick-gen-key",
            "Signer <signer@tidegate.invalid>",
            "ed25519",
            "sign",
            "never",
        ],
    );
    let colons = gpg(gnupg.path(), &["--list-keys", "--with-colons"]);
    let fpr = colons
        .lines()
        .find(|l| l.starts_with("fpr:"))
        .and_then(|l| l.split(':').nth(9))
        .unwrap()
        .to_string();
    let armored = gpg(gnupg.path(), &["--armor", "--export", &fpr]);
    repo.set_env("GNUPGHOME", gnupg.path().to_str().unwrap());
    repo.write("a.yaml", "a: 1\n");
    repo.git(&["add", "-A"]);
    repo.git(&[
        "-c",
        &format!("user.signingkey={fpr}"),
        "commit",
        "-q",
        "-S",
        "-m",
        "signed with gpg",
    ]);
    repo.git(&[
        "-c",
        &format!("user.signingkey={fpr}"),
        "tag",
        "-s",
        "v1.0.0",
        "-m",
        "signed tag",
    ]);
    repo.push();
    let url = repo.file_url();
    let keyring =
        Keyring::from_secret(&[("author.asc".to_string(), armored.into_bytes())].into()).unwrap();
    let (f, _w) = fetched(&url, &branch("main"));
    let sig = git::commit_signature(&f.repo, f.commit)
        .unwrap()
        .expect("commit is signed");
    let id = keyring.verify(&sig.signature, &sig.payload).unwrap();
    assert_eq!(id, fpr[fpr.len() - 16..].to_string());
    let (t, _w) = fetched(
        &url,
        &GitReference {
            tag: Some("v1.0.0".into()),
            ..Default::default()
        },
    );
    let tag_sig = git::tag_signature(&t.repo, t.tag.expect("annotated"))
        .unwrap()
        .expect("tag is signed");
    assert_eq!(
        keyring
            .verify(&tag_sig.signature, &tag_sig.payload)
            .unwrap(),
        id
    );
    // A tampered payload fails.
    let mut bad = sig.payload.clone();
    bad.extend_from_slice(b"x");
    assert!(
        keyring
            .verify(&sig.signature, &bad)
            .unwrap_err()
            .to_string()
            .contains("no matching key")
    );

    // SSH signatures.
    let keys = tempfile::tempdir().unwrap();
    let (key, public) = ssh_keygen(keys.path(), "signer");
    repo.write("b.yaml", "b: 2\n");
    repo.git(&["add", "-A"]);
    repo.git(&[
        "-c",
        "gpg.format=ssh",
        "-c",
        &format!("user.signingkey={}", key.display()),
        "commit",
        "-q",
        "-S",
        "-m",
        "signed with ssh",
    ]);
    repo.push();
    let (f, _w) = fetched(&url, &branch("main"));
    let sig = git::commit_signature(&f.repo, f.commit)
        .unwrap()
        .expect("signed");
    let ssh_ring =
        Keyring::from_secret(&[("author.sshpub".to_string(), public.clone().into_bytes())].into())
            .unwrap();
    let fingerprint = run(Command::new("ssh-keygen")
        .arg("-lf")
        .arg(key.with_extension("pub")));
    let expected = fingerprint.split_whitespace().nth(1).unwrap().to_string();
    assert_eq!(
        ssh_ring.verify(&sig.signature, &sig.payload).unwrap(),
        expected
    );
    // The PGP keyring has no SSH key; a stranger's SSH key does not match.
    assert!(
        keyring
            .verify(&sig.signature, &sig.payload)
            .unwrap_err()
            .to_string()
            .contains("no SSH public keys")
    );
    let (_, stranger) = ssh_keygen(keys.path(), "stranger");
    let other =
        Keyring::from_secret(&[("x.sshpub".to_string(), stranger.into_bytes())].into()).unwrap();
    assert!(
        other
            .verify(&sig.signature, &sig.payload)
            .unwrap_err()
            .to_string()
            .contains("no matching key")
    );
    // Unsigned commits are reported as such.
    repo.write("c.yaml", "c: 3\n");
    repo.commit("unsigned");
    let (f, _w) = fetched(&url, &branch("main"));
    assert!(git::commit_signature(&f.repo, f.commit).unwrap().is_none());
}

#[test]
fn https_with_a_custom_ca_and_a_bearer_token() {
    let repo = Repo::new();
    repo.write("a.yaml", "a: 1\n");
    let c1 = repo.commit("first");
    let server = HttpBackend::start_with(&repo.base, support::Required::Bearer("t0ken"), true);
    let url = server.url("repo.git");
    assert!(url.starts_with("https://"));
    let ca = server.ca_pem.clone().unwrap().into_bytes();
    let secret = |pairs: &[(&str, &[u8])]| -> BTreeMap<String, Vec<u8>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_vec()))
            .collect()
    };
    // CA from ca.crt and the bearer token: fetched.
    let auth = Auth::from_secret(
        &url,
        Some(&secret(&[("ca.crt", &ca), ("bearerToken", b"t0ken")])),
    )
    .unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &auth, None);
    match r {
        Ok(Outcome::Fetched(f)) => assert_eq!(f.revision, format!("main@sha1:{c1}")),
        Ok(_) => panic!("no-op without last revision"),
        Err(e) => panic!("https fetch failed: {e}"),
    }
    // Without the CA the certificate is not trusted.
    let auth = Auth::from_secret(&url, Some(&secret(&[("bearerToken", b"t0ken")]))).unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &auth, None);
    let err = r.err().expect("untrusted certificate");
    assert!(
        err.to_string().to_lowercase().contains("certificate"),
        "{err}"
    );
    // A wrong token is refused.
    let auth = Auth::from_secret(
        &url,
        Some(&secret(&[("caFile", &ca), ("bearerToken", b"wrong")])),
    )
    .unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &auth, None);
    let err = r.err().expect("wrong token");
    // The server answers 401; gix then asks for credentials, which a token secret has none of.
    let text = err.to_string();
    assert!(
        text.contains("401") || text.contains("credentials"),
        "{err}"
    );
}

#[test]
fn a_silent_http_server_times_out() {
    // Accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for c in listener.incoming().take(4) {
            conns.push(c);
        }
        std::thread::sleep(std::time::Duration::from_secs(5));
    });
    let url = format!("http://127.0.0.1:{port}/repo.git");
    let work = tempfile::tempdir().unwrap();
    let reference = branch("main");
    let auth = Auth::default();
    let opts = git::FetchOptions {
        url: &url,
        reference: &reference,
        auth: &auth,
        last_revision: None,
        interrupt: &NO_INTERRUPT,
        timeout: std::time::Duration::from_secs(1),
    };
    let started = std::time::Instant::now();
    let err = git::fetch(&opts, work.path())
        .err()
        .expect("a silent server fails");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(err.to_string().contains(&url), "{err}");
    drop(held);
}

/// `--private-key-file` with and without `--password`, on keys ssh-keygen wrote.
#[test]
fn loads_ssh_keygen_private_keys() {
    use tidegate_source::ssh::KeyPair;
    let keys = tempfile::tempdir().unwrap();
    let (plain, plain_pub) = ssh_keygen(keys.path(), "plain");
    let text = std::fs::read_to_string(&plain).unwrap();
    let pair = KeyPair::load(&text, None).unwrap();
    // ssh-keygen's line ends with the comment; Flux's `identity.pub` has none.
    assert_eq!(
        pair.public_key,
        format!("{}\n", plain_pub.rsplit_once(' ').unwrap().0)
    );
    assert_eq!(pair.private_key, text);

    let encrypted = keys.path().join("encrypted");
    run(Command::new("ssh-keygen")
        .args([
            "-q", "-t", "ecdsa", "-b", "384", "-N", "s3cret", "-C", "x", "-f",
        ])
        .arg(&encrypted));
    let text = std::fs::read_to_string(&encrypted).unwrap();
    let e = KeyPair::load(&text, None).unwrap_err().to_string();
    assert_eq!(e, "the private key is encrypted: give its --password");
    let e = KeyPair::load(&text, Some("wrong")).unwrap_err().to_string();
    assert_eq!(e, "failed to decrypt private key: wrong --password");
    let pair = KeyPair::load(&text, Some("s3cret")).unwrap();
    assert!(pair.public_key.starts_with("ecdsa-sha2-nistp384 "));
    // The file is kept as it is, still encrypted.
    assert_eq!(pair.private_key, text);
}

/// A password-protected identity with its `password` (Flux's secret keys) fetches over sshd;
/// a wrong password is an authentication error.
#[test]
fn sshd_with_password_protected_identity() {
    let repo = Repo::new();
    repo.write("x.yaml", "a: 1\n");
    let c1 = repo.commit("first");
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("protected");
    run(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "s3cret", "-C", "p", "-f"])
        .arg(&key));
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let sshd = Sshd::start(public.trim());
    let url = sshd.url(&repo.bare());
    let secret = |password: &str| -> BTreeMap<String, Vec<u8>> {
        [
            ("identity".to_string(), std::fs::read(&key).unwrap()),
            (
                "known_hosts".to_string(),
                sshd.known_hosts.clone().into_bytes(),
            ),
            ("password".to_string(), password.as_bytes().to_vec()),
        ]
        .into()
    };
    let auth = Auth::from_secret(&url, Some(&secret("s3cret"))).unwrap();
    let (r, _w) = fetch_with(&url, &branch("main"), &auth, None);
    match r {
        Ok(Outcome::Fetched(f)) => assert_eq!(f.revision, format!("main@sha1:{c1}")),
        Ok(_) => panic!("no-op without last revision"),
        Err(e) => panic!("ssh fetch with a protected key failed: {e}"),
    }
    let err = Auth::from_secret(&url, Some(&secret("wrong"))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to decrypt the SSH identity with 'password'"
    );
    assert_eq!(err.reason(), "AuthenticationFailed");
}
