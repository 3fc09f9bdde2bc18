//! Drift made with kubectl, corrected or reported; CEL health expressions.

use crate::source_support::*;
use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_made_with_kubectl_is_corrected_or_reported() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "{}---\n{}",
            helm_release("fix", "  driftDetection:\n    mode: enabled\n"),
            helm_release(
                "watch",
                "  driftDetection:\n    mode: warn\n    ignore:\n    - paths: [\"/spec/replicas\"]\n      target:\n        kind: Deployment\n    - paths: [\"\"]\n      target:\n        kind: Service\n",
            )
        ),
    );
    for name in ["fix", "watch"] {
        let hr = wait_for(
            &env,
            &format!("helmrelease/{name}"),
            "installed and checked for drift",
            |o| {
                released("InstallSucceeded")(o)
                    && condition(o, "Drifted").is_some_and(|c| c["reason"] == "NoDriftDetected")
            },
        )
        .await;
        assert_eq!(
            condition(&hr, "Drifted").unwrap()["status"],
            "False",
            "{}",
            hr["status"]
        );
    }

    // Drift made by hand: `kubectl edit` (with a non-interactive editor), a patch and a delete.
    env.server.ok_env(
        &["edit", "deployment/fix"],
        &[("KUBE_EDITOR", "sed -i s/replicas:\\ 1$/replicas:\\ 5/")],
    );
    assert_eq!(get(&env, "deployment/fix")["spec"]["replicas"], 5);
    env.server.ok(&["delete", "configmap/fix-config"]);
    env.server.ok(&[
        "patch",
        "service/fix",
        "--type=merge",
        "-p",
        r#"{"spec":{"selector":{"app":"other"}}}"#,
    ]);
    let hr = reconcile_now(&env, "helmrelease/fix", "drift").await;
    assert!(ready(&hr), "{}", hr["status"]);
    assert_eq!(
        condition(&hr, "Drifted").unwrap()["reason"],
        "NoDriftDetected"
    );
    assert_eq!(hr["status"]["lastReleaseRevision"], 1, "no upgrade");
    assert_eq!(get(&env, "deployment/fix")["spec"]["replicas"], 1);
    assert_eq!(get(&env, "service/fix")["spec"]["selector"]["app"], "fix");
    let cm = get(&env, "configmap/fix-config");
    assert_eq!(cm["data"]["message"], "hello");
    assert_eq!(
        cm["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "Helm"
    );
    let events = events_of(&env, "fix");
    let detected = events
        .iter()
        .find(|(r, _)| r == "DriftDetected")
        .expect("a DriftDetected event");
    assert_eq!(
        detected.1,
        "Cluster state of release default/fix.v1 has drifted from the desired state:\n\
         ConfigMap/default/fix-config removed\n\
         Service/default/fix changed (0 additions, 1 changes, 0 removals)\n\
         Deployment/default/fix changed (0 additions, 1 changes, 0 removals)"
    );
    let corrected = events
        .iter()
        .find(|(r, _)| r == "DriftCorrected")
        .expect("a DriftCorrected event");
    assert_eq!(
        corrected.1,
        "Cluster state of release default/fix.v1 has been corrected:\n\
         ConfigMap/default/fix-config created\n\
         Service/default/fix configured\n\
         Deployment/default/fix configured"
    );
    // The real helm still sees one revision.
    let history = helm_json(&env, &["history", "fix", "-n", "default"]);
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");

    // Warn mode reports and leaves the cluster alone; ignored paths and objects are not drift.
    env.server
        .ok(&["scale", "deployment/watch", "--replicas=4"]);
    env.server.ok(&[
        "patch",
        "service/watch",
        "--type=merge",
        "-p",
        r#"{"spec":{"selector":{"app":"other"}}}"#,
    ]);
    let hr = reconcile_now(&env, "helmrelease/watch", "ignored").await;
    assert_eq!(
        condition(&hr, "Drifted").unwrap()["reason"],
        "NoDriftDetected",
        "{}",
        hr["status"]
    );
    env.server.ok(&[
        "patch",
        "configmap/watch-config",
        "--type=merge",
        "-p",
        r#"{"data":{"message":"edited"}}"#,
    ]);
    let hr = reconcile_now(&env, "helmrelease/watch", "warn").await;
    let drifted = condition(&hr, "Drifted").unwrap();
    assert_eq!(drifted["status"], "True", "{}", hr["status"]);
    assert_eq!(drifted["reason"], "DriftDetected");
    assert_eq!(
        drifted["message"],
        "Cluster state of release default/watch.v1 has drifted from the desired state:\n\
         ConfigMap/default/watch-config changed (0 additions, 1 changes, 0 removals)\n\
         Service/default/watch excluded"
    );
    assert!(ready(&hr), "warn mode stays Ready: {}", hr["status"]);
    assert_eq!(
        get(&env, "configmap/watch-config")["data"]["message"],
        "edited"
    );
    assert_eq!(get(&env, "deployment/watch")["spec"]["replicas"], 4);
    assert!(
        !events_of(&env, "watch")
            .iter()
            .any(|(r, _)| r == "DriftCorrected")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_check_exprs_decide_when_a_release_is_healthy() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    let exprs = |current: &str| {
        format!(
            "  install:\n    timeout: 4s\n  healthCheckExprs:\n  - apiVersion: apps/v1\n    kind: Deployment\n    current: \"{current}\"\n"
        )
    };
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "{}---\n{}---\n{}",
            helm_release("cel-bad", &exprs("status.(")),
            helm_release("cel-never", &exprs("status.readyReplicas > 5")),
            helm_release(
                "cel-ok",
                &exprs("status.readyReplicas == 1 && metadata.name == 'cel-ok'")
            ),
        ),
    );
    let bad = wait_for(&env, "helmrelease/cel-bad", "stalled", |o| {
        condition(o, "Stalled").is_some_and(|c| c["status"] == "True")
    })
    .await;
    let ready = condition(&bad, "Ready").unwrap();
    assert_eq!(ready["reason"], "InvalidCELExpression");
    assert!(
        ready["message"].as_str().unwrap().starts_with(
            "Reconciliation failed terminally due to configuration error: failed to create custom \
             status evaluator for healthchecks[0]: failed to parse the expression Current: "
        ),
        "{ready}"
    );
    let never = wait_for(&env, "helmrelease/cel-never", "install failed", |o| {
        condition(o, "Released").is_some_and(|c| c["reason"] == "InstallFailed")
    })
    .await;
    let failed = condition(&never, "Released").unwrap();
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("Deployment/default/cel-never status: 'InProgress'"),
        "{failed}"
    );
    wait_for(
        &env,
        "helmrelease/cel-ok",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    let releases = helm_json(&env, &["list", "-n", "default"]);
    let names: Vec<&str> = releases
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(!names.contains(&"cel-bad"), "nothing installed: {names:?}");
}
