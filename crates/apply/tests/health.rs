//! Health waits against the embedded server's workload simulator: every outcome kstatus knows
//! for the kinds Flux checks, with Flux's error texts.

mod support;

use std::time::Duration;
use support::*;
use tidegate_apply::live::Mode;
use tidegate_apply::{AppliedState, ChangeSet, WaitOptions};
use tidegate_core::ObjectRef;

fn workloads(simulate: &str) -> String {
    let annotations = if simulate.is_empty() {
        String::new()
    } else {
        format!("\n  annotations: {{tidegate.dev/simulate: {simulate}}}")
    };
    let meta = |kind: &str| {
        format!(
            "metadata:\n  name: {}\n  namespace: default{annotations}",
            kind.to_lowercase()
        )
    };
    let template = "  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      containers: [{name: app, image: busybox}]\n";
    format!(
        "apiVersion: apps/v1\nkind: Deployment\n{}\nspec:\n  replicas: 2\n{template}---\n\
         apiVersion: apps/v1\nkind: StatefulSet\n{}\nspec:\n  replicas: 1\n  serviceName: s\n{template}---\n\
         apiVersion: apps/v1\nkind: DaemonSet\n{}\nspec:\n{template}---\n\
         apiVersion: apps/v1\nkind: ReplicaSet\n{}\nspec:\n  replicas: 1\n{template}---\n\
         apiVersion: batch/v1\nkind: Job\n{}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: app, image: busybox}}]\n---\n\
         apiVersion: v1\nkind: Pod\n{}\nspec:\n  containers: [{{name: app, image: busybox}}]\n",
        meta("Deployment"),
        meta("StatefulSet"),
        meta("DaemonSet"),
        meta("ReplicaSet"),
        meta("Job"),
        meta("Pod"),
    )
}

fn refs(cs: &ChangeSet) -> Vec<(ObjectRef, String)> {
    cs.entries
        .iter()
        .map(|e| (e.object.clone(), e.api_version()))
        .collect()
}

fn opts(timeout: u64) -> WaitOptions {
    WaitOptions {
        timeout: Duration::from_secs(timeout),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ready_workloads_pass() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let cs = apply(&m, &workloads(""), &mut AppliedState::default())
        .await
        .expect("apply");
    m.wait(&refs(&cs), &opts(20))
        .await
        .expect("all become healthy");
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_stop_early_with_fluxs_message() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let cs = apply(&m, &workloads("fail"), &mut AppliedState::default())
        .await
        .expect("apply");
    let all = refs(&cs);
    let pick = |kind: &str| {
        all.iter()
            .filter(|(r, _)| r.kind == kind)
            .cloned()
            .collect::<Vec<_>>()
    };
    for kind in ["Deployment", "Job", "Pod"] {
        let err = m.wait(&pick(kind), &opts(20)).await.expect_err("fails");
        assert_eq!(
            err.to_string(),
            format!(
                "failed early due to stalled resources: [{kind}/default/{} status: 'Failed']",
                kind.to_lowercase()
            )
        );
    }
    // kstatus has no failed state for these: they stay in progress until the timeout.
    let err = m
        .wait(&pick("StatefulSet"), &opts(1))
        .await
        .expect_err("times out");
    assert_eq!(
        err.to_string(),
        "timeout waiting for: [StatefulSet/default/statefulset status: 'InProgress']"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hanging_rollouts_time_out() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let cs = apply(&m, &workloads("hang"), &mut AppliedState::default())
        .await
        .expect("apply");
    let err = m.wait(&refs(&cs), &opts(2)).await.expect_err("times out");
    assert_eq!(
        err.to_string(),
        "timeout waiting for: [Deployment/default/deployment status: 'InProgress', \
         StatefulSet/default/statefulset status: 'InProgress', \
         Pod/default/pod status: 'InProgress', \
         DaemonSet/default/daemonset status: 'InProgress', \
         ReplicaSet/default/replicaset status: 'InProgress', \
         Job/default/job status: 'InProgress']"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_objects_and_custom_resources() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let gone = (
        ObjectRef {
            group: "apps".into(),
            kind: "Deployment".into(),
            namespace: "default".into(),
            name: "nowhere".into(),
        },
        "apps/v1".to_string(),
    );
    let err = m.wait(&[gone], &opts(1)).await.expect_err("not found");
    assert_eq!(
        err.to_string(),
        "timeout waiting for: [Deployment/default/nowhere status: 'NotFound']"
    );
    // A deletion in progress shows as Terminating; a Namespace is healthy when active.
    let mut state = AppliedState::default();
    let cs = apply(
        &m,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n",
        &mut state,
    )
    .await
    .expect("apply");
    m.wait(&refs(&cs), &opts(5))
        .await
        .expect("namespace is current");
}
