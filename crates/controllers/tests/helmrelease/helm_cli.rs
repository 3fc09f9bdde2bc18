//! The real helm reading, rolling back and uninstalling what Tidegate released; releases
//! into a remote cluster through `spec.kubeConfig`.

use std::process::Command;

use serde_json::Value;

use crate::chart_support::*;
use crate::source_support::*;
use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_helm_reads_rolls_back_and_uninstalls_what_tidegate_released() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release("app", "  values:\n    message: first\n"),
    );
    wait_for(
        &env,
        "helmrelease/app",
        "installed",
        released("InstallSucceeded"),
    )
    .await;
    env.server.ok(&[
        "patch",
        "helmrelease/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"values":{"message":"second"}}}"#,
    ]);
    wait_for(
        &env,
        "helmrelease/app",
        "upgraded",
        released("UpgradeSucceeded"),
    )
    .await;
    assert_eq!(
        get(&env, "configmap/app-config")["data"]["message"],
        "second"
    );

    // Helm 3 users read the Helm 4 records too.
    let out = Command::new(helm3())
        .args([
            "history",
            "app",
            "-n",
            "default",
            "-o",
            "json",
            "--kubeconfig",
        ])
        .arg(&env.server.kubeconfig)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let history3: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(history3.as_array().unwrap().len(), 2, "{history3}");
    assert_eq!(history3[1]["status"], "deployed");
    assert_eq!(history3[1]["chart"], "webapp-1.0.0");
    assert_eq!(history3[0]["status"], "superseded");
    let out = Command::new(helm3())
        .args([
            "get",
            "values",
            "app",
            "-n",
            "default",
            "-o",
            "json",
            "--kubeconfig",
        ])
        .arg(&env.server.kubeconfig)
        .output()
        .unwrap();
    let values3: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(values3["message"], "second");

    // A rollback by hand, with the controller suspended: helm reads our records, re-applies
    // revision 1 and writes revision 3. The fields belong to `helm-controller`, so Helm 4's
    // server-side rollback needs `--force-conflicts`, as against Flux.
    env.server.ok(&[
        "patch",
        "helmrelease/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true}}"#,
    ]);
    helm_cli(
        &env,
        &["rollback", "app", "1", "-n", "default", "--force-conflicts"],
    );
    assert_eq!(
        get(&env, "configmap/app-config")["data"]["message"],
        "first"
    );
    let history = helm_json(&env, &["history", "app", "-n", "default"]);
    let last = history.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["revision"], 3, "{history}");
    assert_eq!(last["status"], "deployed");
    assert_eq!(last["description"], "Rollback to 1");

    // Resumed, the controller sees a release changed outside it and upgrades to its spec.
    env.server.ok(&[
        "patch",
        "helmrelease/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":false}}"#,
    ]);
    let hr = wait_for(&env, "helmrelease/app", "taken back", |o| {
        released("UpgradeSucceeded")(o) && o["status"]["lastReleaseRevision"] == 4
    })
    .await;
    assert_eq!(hr["status"]["history"][0]["version"], 4);
    assert_eq!(
        get(&env, "configmap/app-config")["data"]["message"],
        "second"
    );

    // Uninstalled by hand: helm deletes the objects and the records.
    env.server.ok(&[
        "patch",
        "helmrelease/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true}}"#,
    ]);
    helm_cli(&env, &["uninstall", "app", "-n", "default", "--wait"]);
    assert!(
        env.server
            .kubectl(&["get", "configmap/app-config", "-n", "default"])
            .status
            .code()
            != Some(0)
    );
    let records = env.server.ok(&[
        "get",
        "secrets",
        "-n",
        "default",
        "-l",
        "owner=helm,name=app",
        "-o",
        "name",
    ]);
    assert_eq!(records.trim(), "", "records left: {records}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_config_releases_into_a_remote_cluster() {
    let (env, _server, _dir) = start_with_repo(&["1.0.0"]).await;
    let remote = common::start_simulated(200).await;
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "remote-kubeconfig",
        &format!("--from-file=value={}", remote.kubeconfig.display()),
    ]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &helm_release(
            "far",
            "  kubeConfig:\n    secretRef:\n      name: remote-kubeconfig\n  values:\n    message: remote\n",
        ),
    );
    wait_for(
        &env,
        "helmrelease/far",
        "installed remotely",
        released("InstallSucceeded"),
    )
    .await;
    // The objects and the release records are in the remote cluster only.
    let cm: Value = serde_json::from_str(&remote.ok(&[
        "get",
        "configmap",
        "far-config",
        "-n",
        "default",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(cm["data"]["message"], "remote");
    assert_eq!(
        cm["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"],
        "far"
    );
    let list = Command::new(helm())
        .args(["list", "-n", "default", "-o", "json", "--kubeconfig"])
        .arg(&remote.kubeconfig)
        .output()
        .unwrap();
    let releases: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(releases[0]["name"], "far", "{releases}");
    assert_eq!(releases[0]["status"], "deployed");
    assert!(
        env.server
            .kubectl(&["get", "configmap/far-config", "-n", "default"])
            .status
            .code()
            != Some(0),
        "not in the local cluster"
    );
    let local = env.server.ok(&[
        "get",
        "secrets",
        "-n",
        "default",
        "-l",
        "owner=helm",
        "-o",
        "name",
    ]);
    assert_eq!(local.trim(), "", "no local release records: {local}");

    // Deleting the HelmRelease uninstalls from the remote cluster.
    env.server.ok(&["delete", "helmrelease/far", "--wait=true"]);
    let gone = remote.kubectl(&["get", "configmap/far-config", "-n", "default"]);
    assert!(gone.status.code() != Some(0), "uninstalled remotely");
}
