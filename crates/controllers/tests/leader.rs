//! Leader election on a Lease against the embedded API server: one holder at a time, and a
//! stand-by takes over once the holder stops renewing.

#[path = "../../apiserver/tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use tidegate_controllers::leader::{self, LeaseOptions};

fn options(identity: &str) -> LeaseOptions {
    let mut o = LeaseOptions::new("default", "tidegate-test-leader");
    o.identity = identity.into();
    o.lease_duration = Duration::from_secs(3);
    o.renew_deadline = Duration::from_secs(2);
    o.retry_period = Duration::from_millis(300);
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_at_a_time_and_takeover_after_expiry() {
    let server = common::start().await;
    let client = server.client().await;
    let a = options("replica-a");
    let b = options("replica-b");
    leader::acquire(&client, &a).await;
    let holder = server.ok(&[
        "get",
        "lease",
        "tidegate-test-leader",
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ]);
    assert_eq!(holder, "replica-a");

    // A keeps renewing: B must not get the lease.
    let keeper = tokio::spawn({
        let client = client.clone();
        let a = a.clone();
        async move { leader::keep(&client, &a).await }
    });
    let contender = tokio::spawn({
        let client = client.clone();
        let b = b.clone();
        async move {
            leader::acquire(&client, &b).await;
            Instant::now()
        }
    });
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        !contender.is_finished(),
        "B acquired a lease A kept renewing"
    );

    // A stops (as a killed process would): B takes over after the lease runs out.
    keeper.abort();
    let stopped = Instant::now();
    let acquired = tokio::time::timeout(Duration::from_secs(15), contender)
        .await
        .expect("B takes over")
        .unwrap();
    assert!(
        acquired.duration_since(stopped) >= Duration::from_secs(1),
        "took over before the lease could expire"
    );
    let lease = server.ok(&["get", "lease", "tidegate-test-leader", "-o", "json"]);
    let lease: serde_json::Value = serde_json::from_str(&lease).unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "replica-b");
    assert_eq!(lease["spec"]["leaseTransitions"], 1);

    // A, coming back, finds the lease taken and stops leading.
    tokio::time::timeout(Duration::from_secs(5), leader::keep(&client, &a))
        .await
        .expect("A notices it lost the lease");
}
