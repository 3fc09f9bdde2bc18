//! Alerts through `tidegate up`: a failing Kustomization, reconciled every two seconds, sends
//! exactly one Slack-shaped message per distinct failure to a local sink within the
//! rate-limit window; a different failure sends another; `get alerts|alert-providers` and
//! `create alert-provider|alert` work against it.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use up_support::*;

/// A tiny HTTP sink: every POST body, in order.
fn sink() -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/services/T0/B0/x", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let rec = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_ok()
                && let Ok(v) = serde_json::from_slice(&body)
            {
                rec.lock().unwrap().push(v);
            }
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    (url, seen)
}

fn config_map(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  k: v\n"
    )
}

/// The Slack messages about failures (colour `danger`).
fn failures(seen: &Arc<Mutex<Vec<Value>>>) -> Vec<Value> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|m| m["attachments"][0]["color"] == "danger")
        .cloned()
        .collect()
}

#[test]
fn a_failing_kustomization_alerts_slack_once_per_distinct_failure() {
    let (url, seen) = sink();
    let repo = git_support::Repo::new();
    repo.write("deploy/cm.yaml", &config_map("good"));
    repo.commit("good");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let bare = repo.bare().display().to_string();
    let up = up(
        &data,
        git_support::free_port(),
        &["--git", &bare, "--path", "./deploy", "--interval", "2s"],
        true,
    );
    let kc = up.kubeconfig.clone();
    wait_until("the first apply", || {
        kubectl_ok(&kc, &["get", "configmap", "good"])
    });
    let (code, out, err) = tidegate(
        &kc,
        &[
            "create",
            "alert-provider",
            "slack",
            "--type",
            "slack",
            "--channel",
            "ops",
            "--address",
            &url,
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = tidegate(
        &kc,
        &[
            "create",
            "alert",
            "failures",
            "--provider-ref",
            "slack",
            "--event-severity",
            "error",
            "--event-source",
            "Kustomization/*",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (_, table, _) = tidegate(&kc, &["get", "alerts"]);
    assert!(
        table.contains("failures") && table.contains("Alert is Ready"),
        "{table}"
    );
    let (_, table, _) = tidegate(&kc, &["get", "alert-providers"]);
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("Provider is Ready"), "{table}");
    // Let the event server's caches see the new objects.
    std::thread::sleep(Duration::from_secs(1));

    repo.write("deploy/cm.yaml", &config_map("Bad_Name"));
    repo.commit("bad name");
    wait_until("a failure message", || !failures(&seen).is_empty());
    // Several more failing reconciles (every two seconds) within the window send nothing new.
    std::thread::sleep(Duration::from_secs(10));
    let first = failures(&seen);
    assert_eq!(
        first.len(),
        1,
        "one message per distinct failure: {first:#?}"
    );
    let m = &first[0];
    assert_eq!(m["channel"], "ops");
    assert_eq!(m["username"], "kustomize-controller");
    let a = &m["attachments"][0];
    assert_eq!(a["author_name"], "kustomization/flux-system.flux-system");
    assert!(a["text"].as_str().unwrap().contains("Bad_Name"), "{a:#}");
    assert!(
        a["fields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["title"] == "revision"
                && f["value"].as_str().unwrap().starts_with("main@sha1:")),
        "{a:#}"
    );

    repo.write("deploy/cm.yaml", &config_map("Other_Bad"));
    repo.commit("another bad name");
    wait_until("a second failure message", || failures(&seen).len() >= 2);
    std::thread::sleep(Duration::from_secs(6));
    let all = failures(&seen);
    assert_eq!(all.len(), 2, "{all:#?}");
    assert!(
        all[1]["attachments"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Other_Bad")
    );
    // Info events (the successful first apply, "Reconciliation finished") never reached an
    // error-only Alert.
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|m| m["attachments"][0]["color"] == "danger")
    );
}
