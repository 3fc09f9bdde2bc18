//! `tidegate create secret git` against `tidegate up`: an SSH deploy key and the host key of a
//! real sshd, used by a GitRepository the way a Flux user bootstraps a private repository;
//! HTTP(S) credentials; and the refusals, each one clear line.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::path::Path;

use up_support::*;

#[test]
fn create_secret_git_ssh_and_https_against_up() {
    let dir = tempfile::tempdir().unwrap();
    let up = up_example(dir.path());
    let kc = up.kubeconfig.clone();
    let repo = git_support::Repo::new();
    repo.write("deploy/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: private\n  namespace: default\ndata:\n  a: \"1\"\n");
    let sha = repo.commit("private");
    // The server knows no key of ours yet; the one it starts with is a stranger's.
    let keys = tempfile::tempdir().unwrap();
    let (_, stranger) = git_support::ssh_keygen(keys.path(), "stranger");
    let sshd = git_support::Sshd::start(&stranger);
    let url = sshd.url(&repo.bare());

    // The deploy key is generated, the host key scanned, the Secret applied.
    let (code, out, err) = tidegate(&kc, &["create", "secret", "git", "ssh-auth", "--url", &url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    let deploy_key = lines[0]
        .strip_prefix("✚ deploy key: ")
        .unwrap_or_else(|| panic!("{err}"));
    assert!(deploy_key.starts_with("ecdsa-sha2-nistp384 "), "{err}");
    assert_eq!(
        lines[1],
        "► git secret 'ssh-auth' created in 'flux-system' namespace"
    );
    let secret = json(&kc, &["-n", "flux-system", "get", "secret", "ssh-auth"]);
    let field = |k: &str| {
        use base64::Engine;
        let b64 = secret["data"][k]
            .as_str()
            .unwrap_or_else(|| panic!("{k} in {secret}"));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        String::from_utf8(bytes).unwrap()
    };
    assert_eq!(field("identity.pub"), format!("{deploy_key}\n"));
    assert!(field("identity").starts_with("-----BEGIN OPENSSH PRIVATE KEY-----\n"));
    // The scanned line is the server's key as the test's own known_hosts names it.
    let expected = sshd.known_hosts.trim_end().rsplit_once(' ').unwrap().0;
    assert_eq!(field("known_hosts"), expected);

    // Before the deploy key is added, the source fails to authenticate; after, it fetches.
    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "source",
            "git",
            "private",
            "--url",
            &url,
            "--branch",
            "main",
            "--secret-ref",
            "ssh-auth",
            "--timeout",
            "20s",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.ends_with(
            "ssh: unable to authenticate: the server refused the key in 'identity' (publickey)\n"
        ),
        "{err}"
    );
    sshd.authorize(deploy_key);
    let (code, _, err) = tidegate(&kc, &["reconcile", "source", "git", "private"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.ends_with(&format!("✔ fetched revision main@sha1:{sha}\n")),
        "{err}"
    );

    // --export prints the Secret with the same three keys and applies nothing.
    let (code, out, err) = tidegate(
        &kc,
        &[
            "create",
            "secret",
            "git",
            "exported",
            "--url",
            &url,
            "--ssh-key-algorithm",
            "ed25519",
            "--export",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: exported\n  namespace: flux-system\nstringData:\n  identity: |\n    -----BEGIN OPENSSH PRIVATE KEY-----\n"), "{out}");
    assert!(
        out.contains("\n  identity.pub: |\n    ssh-ed25519 "),
        "{out}"
    );
    assert!(
        out.contains(&format!("\n  known_hosts: '{expected}'\n")),
        "{out}"
    );
    assert!(!kubectl_ok(
        &kc,
        &["-n", "flux-system", "get", "secret", "exported"]
    ));

    // HTTPS: basic auth.
    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "secret",
            "git",
            "https-auth",
            "--url",
            "https://git.example/org/repo",
            "--username",
            "git",
            "--password",
            "token",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "► git secret 'https-auth' created in 'flux-system' namespace\n"
    );
    let secret = json(&kc, &["-n", "flux-system", "get", "secret", "https-auth"]);
    assert_eq!(
        secret["data"],
        serde_json::json!({"password": "dG9rZW4=", "username": "Z2l0"})
    );

    // Refusals: one line each, exit 1, nothing applied.
    let closed = git_support::free_port();
    for (args, message) in [
        (
            vec!["--url", "https://git.example/r"],
            "✗ for Git over HTTP/S the username and password, or a bearer token is required"
                .to_string(),
        ),
        (
            vec![
                "--url",
                "https://git.example/r",
                "-u",
                "a",
                "-p",
                "b",
                "--bearer-token",
                "t",
            ],
            "✗ user credentials and bearer token cannot be used together".to_string(),
        ),
        (
            vec!["--url", "ftp://git.example/r"],
            "✗ git URL scheme 'ftp' not supported, can be: ssh, http and https".to_string(),
        ),
        (
            vec!["--url", &format!("ssh://git@127.0.0.1:{closed}/r")],
            format!(
                "✗ SSH key scan for host 127.0.0.1:{closed} failed, error: dial tcp 127.0.0.1:{closed}: "
            ),
        ),
        (
            vec![
                "--url",
                &url,
                "--ssh-key-algorithm",
                "rsa",
                "--ssh-rsa-bits",
                "1000",
            ],
            "✗ --ssh-rsa-bits: RSA key bit size must be at least 2048".to_string(),
        ),
    ] {
        let mut all = vec!["create", "secret", "git", "refused"];
        all.extend(args.iter().copied());
        let (code, _, err) = tidegate(&kc, &all);
        assert_eq!(code, 1, "{all:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{all:?}: {err}");
        assert!(err.starts_with(&message), "{all:?}: {err}");
    }
    let key_file = Path::new("/nonexistent/key");
    let (code, _, err) = tidegate(
        &kc,
        &[
            "create",
            "secret",
            "git",
            "refused",
            "--url",
            &url,
            "--private-key-file",
            key_file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1);
    assert!(
        err.starts_with("✗ failed to open private key file /nonexistent/key: "),
        "{err}"
    );
    assert!(!kubectl_ok(
        &kc,
        &["-n", "flux-system", "get", "secret", "refused"]
    ));
    drop(up);
}
