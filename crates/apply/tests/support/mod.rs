//! Shared set-up of the apply manager's tests: an embedded API server with the workload
//! simulator, a manager talking to it over HTTPS through kube-rs, and real kubectl.
#![allow(dead_code)]

#[path = "../../../apiserver/tests/common/mod.rs"]
pub mod common;
#[path = "../../../apiserver/tests/common/intercept.rs"]
pub mod intercept;

use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tidegate_apply::live::Mode;
use tidegate_apply::{
    AppliedState, ApplyOptions, ChangeSet, ManagerOptions, Owner, ResourceManager,
};

pub use common::TestServer;

pub const OWNER_GROUP: &str = "test.tidegate.dev";

pub async fn server() -> TestServer {
    common::start_with(tidegate_apiserver::Config {
        workload_simulator: Some(Duration::from_millis(100)),
        ..Default::default()
    })
    .await
}

pub fn owner() -> Owner {
    Owner {
        group: OWNER_GROUP.into(),
        name: "app".into(),
        namespace: "default".into(),
    }
}

/// A manager for a second owner (`default/other`) on `client`.
pub fn other_manager(client: kube::Client) -> ResourceManager {
    ResourceManager::new(
        client,
        ManagerOptions {
            field_manager: "tidegate".into(),
            owner: Some(Owner {
                group: OWNER_GROUP.into(),
                name: "other".into(),
                namespace: "default".into(),
            }),
            live_mode: Mode::List,
            ..Default::default()
        },
    )
}

/// A client for `s` whose requests await `hook` first.
pub async fn hooked_client(s: &TestServer, hook: intercept::Hook) -> kube::Client {
    let kc = kube::config::Kubeconfig::from_yaml(&s.server.kubeconfig).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("config");
    intercept::client(&config, Some(hook), None)
}

pub async fn manager(s: &TestServer, mode: Mode) -> ResourceManager {
    ResourceManager::new(
        s.client().await,
        ManagerOptions {
            field_manager: "tidegate".into(),
            owner: Some(owner()),
            live_mode: mode,
            ..Default::default()
        },
    )
}

pub fn objects(yaml: &str) -> Vec<Value> {
    tidegate_core::yaml::parse_stream(yaml).expect("test YAML parses")
}

pub async fn apply(
    m: &ResourceManager,
    yaml: &str,
    state: &mut AppliedState,
) -> Result<ChangeSet, tidegate_apply::Error> {
    m.apply_all_staged(objects(yaml), &ApplyOptions::default(), state)
        .await
}

pub async fn apply_ok(m: &ResourceManager, yaml: &str, state: &mut AppliedState) -> Vec<String> {
    let cs = apply(m, yaml, state)
        .await
        .unwrap_or_else(|e| panic!("apply failed: {e}"));
    lines(&cs)
}

pub fn lines(cs: &ChangeSet) -> Vec<String> {
    cs.entries.iter().map(ToString::to_string).collect()
}

/// Requests the server has served so far.
pub fn requests(s: &TestServer) -> u64 {
    s.server.state().requests.load(Ordering::SeqCst)
}

/// A field of a live object read with kubectl (`jsonpath`).
pub fn jsonpath(s: &TestServer, args: &[&str], path: &str) -> String {
    let mut a: Vec<&str> = args.to_vec();
    let out = format!("jsonpath={path}");
    a.extend(["-o", &out]);
    s.ok(&a)
}
