//! Helm hooks as Helm's `execHook` runs them: the hooks of one event in weight order (then by
//! name), each created after `before-hook-creation` deleted its predecessor, waited for until a
//! Job completes or a Pod succeeds (anything else is done once created), then deleted by its
//! `hook-succeeded`/`hook-failed` policy. Each run is recorded in the hook's `last_run`.

use std::time::{Duration, Instant};

use kube::api::DeleteParams;
use serde_json::Value;
use tidegate_apply::ResourceManager;
use tidegate_helm::storage::{HookExecution, HookRecord, now_rfc3339};

/// Polling interval while a hook runs.
const POLL: Duration = Duration::from_millis(500);

/// The object a hook's manifest describes, with the release namespace set when it has none.
fn hook_object(h: &HookRecord, namespace: &str) -> Result<Value, String> {
    let mut obj = tidegate_kustomize::yaml::parse_one_as(
        &h.manifest,
        &h.path,
        tidegate_kustomize::yaml::Dialect::Objects,
    )
    .map_err(|e| {
        format!(
            "unable to build kubernetes object for {} hook {}: {e}",
            h.events.join(","),
            h.path
        )
    })?;
    super::action::default_namespace(&mut obj, namespace);
    Ok(obj)
}

fn has_policy(h: &HookRecord, policy: &str) -> bool {
    if h.delete_policies.is_empty() {
        // Helm's default when a hook names none.
        return policy == "before-hook-creation";
    }
    h.delete_policies.iter().any(|p| p == policy)
}

/// Runs the hooks of `event` in order; stops at the first failure with Helm's message.
/// `hooks` is updated with each run.
pub async fn run(
    manager: &ResourceManager,
    hooks: &mut [HookRecord],
    event: &str,
    namespace: &str,
    timeout: Duration,
) -> Result<(), String> {
    let mut order: Vec<usize> = (0..hooks.len())
        .filter(|&i| hooks[i].runs_on(event))
        .collect();
    order.sort_by(|&a, &b| {
        hooks[a]
            .weight
            .cmp(&hooks[b].weight)
            .then_with(|| hooks[a].name.cmp(&hooks[b].name))
    });
    for i in order {
        let obj = hook_object(&hooks[i], namespace)?;
        if has_policy(&hooks[i], "before-hook-creation") {
            delete(manager, &obj, timeout).await?;
        }
        hooks[i].last_run = HookExecution {
            started_at: Some(now_rfc3339()),
            completed_at: None,
            phase: "Running".into(),
        };
        let outcome = async {
            create(manager, &obj).await?;
            wait(manager, &obj, timeout).await
        }
        .await;
        hooks[i].last_run.completed_at = Some(now_rfc3339());
        match outcome {
            Ok(()) => {
                hooks[i].last_run.phase = "Succeeded".into();
                if has_policy(&hooks[i], "hook-succeeded") {
                    delete(manager, &obj, timeout).await?;
                }
            }
            Err(e) => {
                hooks[i].last_run.phase = "Failed".into();
                if has_policy(&hooks[i], "hook-failed") {
                    delete(manager, &obj, timeout).await?;
                }
                return Err(format!("{event} hook {} failed: {e}", hooks[i].path));
            }
        }
    }
    Ok(())
}

async fn api_for(
    manager: &ResourceManager,
    obj: &Value,
) -> Result<(kube::Api<kube::core::DynamicObject>, String), String> {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let namespace = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let target = manager
        .target(api_version, kind)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!("resource mapping not found for name: \"{name}\" namespace: \"{namespace}\" from \"\": no matches for kind \"{kind}\" in version \"{api_version}\"")
        })?;
    Ok((target.api(manager.client(), namespace), name))
}

async fn create(manager: &ResourceManager, obj: &Value) -> Result<(), String> {
    let (api, _) = api_for(manager, obj).await?;
    let dynamic: kube::core::DynamicObject =
        serde_json::from_value(obj.clone()).map_err(|e| e.to_string())?;
    match api.create(&Default::default(), &dynamic).await {
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "warning: Hook {}: {}",
            obj.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or(""),
            tidegate_apply::error::describe(&e)
        )),
    }
}

/// Deletes the object if it exists and waits until it is gone.
pub async fn delete(
    manager: &ResourceManager,
    obj: &Value,
    timeout: Duration,
) -> Result<(), String> {
    let (api, name) = api_for(manager, obj).await?;
    match api
        .delete(
            &name,
            &DeleteParams {
                propagation_policy: Some(kube::api::PropagationPolicy::Background),
                ..Default::default()
            },
        )
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
        Err(e) => return Err(tidegate_apply::error::describe(&e)),
    }
    let started = Instant::now();
    while started.elapsed() < timeout {
        match api.get_opt(&name).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) => tokio::time::sleep(POLL).await,
            Err(e) => return Err(tidegate_apply::error::describe(&e)),
        }
    }
    Err(format!("timed out waiting for {name} to be deleted"))
}

/// Waits as Helm's `WatchUntilReady`: Jobs until complete (failed is an error), Pods until
/// succeeded (failed is an error), anything else not at all.
async fn wait(manager: &ResourceManager, obj: &Value, timeout: Duration) -> Result<(), String> {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != "Job" && kind != "Pod" {
        return Ok(());
    }
    let (api, name) = api_for(manager, obj).await?;
    let started = Instant::now();
    loop {
        let live = api
            .get_opt(&name)
            .await
            .map_err(|e| tidegate_apply::error::describe(&e))?;
        if let Some(live) = live {
            let live = serde_json::to_value(live).map_err(|e| e.to_string())?;
            if let Some(done) = finished(kind, &live) {
                return done;
            }
        }
        if started.elapsed() >= timeout {
            return Err("timed out waiting for the condition".into());
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether a Job or Pod finished: `Some(Ok)` on success, `Some(Err)` on failure.
fn finished(kind: &str, live: &Value) -> Option<Result<(), String>> {
    if kind == "Pod" {
        return match live.pointer("/status/phase").and_then(Value::as_str) {
            Some("Succeeded") => Some(Ok(())),
            Some("Failed") => Some(Err(format!(
                "pod {} failed",
                live.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ))),
            _ => None,
        };
    }
    let conditions = live
        .pointer("/status/conditions")
        .and_then(Value::as_array)?;
    for c in conditions {
        let type_ = c.get("type").and_then(Value::as_str).unwrap_or("");
        let status = c.get("status").and_then(Value::as_str).unwrap_or("");
        if status != "True" {
            continue;
        }
        if type_ == "Complete" {
            return Some(Ok(()));
        }
        if type_ == "Failed" {
            return Some(Err(format!(
                "job {} failed: {}",
                live.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                c.get("reason").and_then(Value::as_str).unwrap_or("")
            )));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jobs_and_pods_finish_as_helm_waits_for_them() {
        let job = |t: &str, s: &str| json!({"metadata": {"name": "j"}, "status": {"conditions": [{"type": t, "status": s, "reason": "BackoffLimitExceeded"}]}});
        assert_eq!(finished("Job", &job("Complete", "True")), Some(Ok(())));
        assert_eq!(
            finished("Job", &job("Failed", "True")),
            Some(Err("job j failed: BackoffLimitExceeded".into()))
        );
        assert_eq!(finished("Job", &job("Complete", "False")), None);
        let pod = |p: &str| json!({"metadata": {"name": "p"}, "status": {"phase": p}});
        assert_eq!(finished("Pod", &pod("Running")), None);
        assert_eq!(finished("Pod", &pod("Succeeded")), Some(Ok(())));
        assert!(finished("Pod", &pod("Failed")).is_some_and(|r| r.is_err()));
    }

    #[test]
    fn before_hook_creation_is_the_default_policy() {
        let mut h = HookRecord::default();
        assert!(has_policy(&h, "before-hook-creation"));
        assert!(!has_policy(&h, "hook-succeeded"));
        h.delete_policies = vec!["hook-succeeded".into()];
        assert!(!has_policy(&h, "before-hook-creation"));
        assert!(has_policy(&h, "hook-succeeded"));
    }
}
