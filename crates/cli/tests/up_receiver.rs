//! A GitHub push webhook through `tidegate up`'s receiver server: with a one-hour interval, a
//! pushed change reaches the cluster only because the signed webhook asked the GitRepository and
//! the Kustomization to reconcile.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::time::Duration;

use hmac::{Hmac, Mac};
use up_support::*;

const TOKEN: &str = "push-token";

fn config_map(value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pushed\n  namespace: default\ndata:\n  value: \"{value}\"\n"
    )
}

fn value(kc: &std::path::Path) -> Option<String> {
    kubectl_ok(kc, &["get", "configmap", "pushed"]).then(|| {
        kubectl(
            kc,
            &["get", "configmap", "pushed", "-o", "jsonpath={.data.value}"],
        )
    })
}

/// POSTs over a plain HTTP/1.1 connection: the status code.
fn post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> u16 {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_signed_push_webhook_reconciles_the_source_and_its_kustomization_at_once() {
    let repo = git_support::Repo::new();
    repo.write("deploy/cm.yaml", &config_map("one"));
    repo.commit("one");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let bare = repo.bare().display().to_string();
    let up = up(
        &data,
        git_support::free_port(),
        &["--git", &bare, "--path", "./deploy", "--interval", "1h"],
        true,
    );
    let kc = up.kubeconfig.clone();
    wait_until("the first apply", || value(&kc).as_deref() == Some("one"));
    kubectl(
        &kc,
        &[
            "-n",
            "flux-system",
            "create",
            "secret",
            "generic",
            "github-webhook",
            &format!("--from-literal=token={TOKEN}"),
        ],
    );
    kubectl_stdin(
        &kc,
        &["apply", "-f", "-"],
        "apiVersion: notification.toolkit.fluxcd.io/v1\nkind: Receiver\nmetadata: {name: github, namespace: flux-system}\nspec:\n  type: github\n  events: [ping, push]\n  secretRef: {name: github-webhook}\n  resources:\n  - {kind: GitRepository, name: flux-system}\n  - {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, name: flux-system}\n",
    );
    let mut path = String::new();
    wait_until("the webhook path", || {
        path = kubectl(
            &kc,
            &[
                "-n",
                "flux-system",
                "get",
                "receiver",
                "github",
                "-o",
                "jsonpath={.status.webhookPath}",
            ],
        );
        !path.is_empty()
    });
    let address = std::fs::read_to_string(data.join("receiver-address")).unwrap();
    let url = format!("http://{}{path}", address.trim());

    repo.write("deploy/cm.yaml", &config_map("two"));
    repo.commit("two");
    let body = br#"{"ref":"refs/heads/main"}"#;
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(TOKEN.as_bytes()).unwrap();
    mac.update(body);
    let sig: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let sig = format!("sha256={sig}");
    // A forged request changes nothing.
    let forged = post(
        &url,
        &[
            ("Content-Type", "application/json"),
            ("X-GitHub-Event", "push"),
            ("X-Hub-Signature-256", "sha256=00"),
        ],
        body,
    );
    assert_eq!(forged, 400);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        value(&kc).as_deref(),
        Some("one"),
        "the interval is an hour"
    );
    let code = post(
        &url,
        &[
            ("Content-Type", "application/json"),
            ("X-GitHub-Event", "push"),
            ("X-Hub-Signature-256", &sig),
        ],
        body,
    );
    assert_eq!(code, 200);
    wait_until("the pushed change applied", || {
        value(&kc).as_deref() == Some("two")
    });
}
