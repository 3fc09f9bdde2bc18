//! `tidegate diff kustomization NAME --path DIR`: build locally as the controller would,
//! server-side dry-run every object against the live cluster and print what would change:
//! `► Kind/ns/name created|drifted|deleted`, with field-level differences (Secret values
//! masked). Exit code 0 without differences, 1 with, 2 on error (as `flux diff`).

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::discovery::{Discovery, Scope};
use serde_json::Value;
use tidegate_core::ObjectRef;

use super::kind::KUSTOMIZATION;

/// What to diff.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// A Kustomization against local files.
    #[command(alias = "ks")]
    Kustomization(super::build::Args),
    /// An OCI artifact against a local directory or file (exit 1 when they differ).
    Artifact(super::artifact::DiffArgs),
}

/// Fields that say nothing about the desired state.
fn strip(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in [
            "managedFields",
            "resourceVersion",
            "generation",
            "uid",
            "creationTimestamp",
        ] {
            m.remove(k);
        }
    }
    if let Some(o) = obj.as_object_mut() {
        o.remove("status");
    }
}

/// Secret values masked in a pair of states, as Flux masks them: a value that differs becomes
/// `*** (before)` and `*** (after)`, one that does not `***`. A diff then shows that a value
/// changed, never what it is.
fn mask_pair(before: &mut Value, after: &mut Value) {
    let is_secret = |v: &Value| v.get("kind").and_then(Value::as_str) == Some("Secret");
    if !is_secret(before) && !is_secret(after) {
        return;
    }
    for field in ["data", "stringData"] {
        let old = before.get(field).and_then(Value::as_object).cloned();
        let new = after.get(field).and_then(Value::as_object).cloned();
        let changed =
            |k: &str| old.as_ref().and_then(|m| m.get(k)) != new.as_ref().and_then(|m| m.get(k));
        for (v, mark) in [(&mut *before, "*** (before)"), (&mut *after, "*** (after)")] {
            if let Some(m) = v.get_mut(field).and_then(Value::as_object_mut) {
                for (k, value) in m.iter_mut() {
                    let shown = if changed(k) { mark } else { "***" };
                    *value = Value::String(shown.into());
                }
            }
        }
    }
}

/// Leaf differences `(path, before, after)` between two values.
pub fn differences(
    path: &str,
    before: &Value,
    after: &Value,
    out: &mut Vec<(String, String, String)>,
) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                differences(
                    &p,
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (a, b) if a == b => {}
        (a, b) => {
            let show = |v: &Value| match v {
                Value::Null => "<none>".to_string(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push((path.to_string(), show(a), show(b)));
        }
    }
}

/// The comparison; `Ok(true)` when something differs.
async fn diff(a: &super::build::Args) -> anyhow::Result<bool> {
    let client = a.global.cluster.client().await?;
    let desired = super::build::objects(a, Some(&client)).await?;
    let discovery = Discovery::new(client.clone())
        .run_aggregated()
        .await
        .map_err(|e| super::api_error(&e))?;
    let mut changed = false;
    let mut errors: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let params = PatchParams::apply(tidegate_controllers::kustomization::FIELD_MANAGER)
        .force()
        .dry_run();
    for obj in &desired {
        let r = ObjectRef::from_object(obj);
        seen.insert(tidegate_apply::inventory::object_id(&r));
        let api_version = obj["apiVersion"].as_str().unwrap_or("");
        let (group, version) = tidegate_core::object_ref::split_api_version(api_version);
        let gvk = kube::core::GroupVersionKind::gvk(group, version, &r.kind);
        let Some((res, caps)) = discovery.resolve_gvk(&gvk) else {
            // As Flux: a kind the cluster does not serve (even when its CRD is in the same
            // build) cannot be dry-run; the error is gathered and the other objects diffed.
            errors.push(format!(
                "{r} dry-run failed: no matches for kind \"{}\" in version \"{api_version}\"",
                r.kind
            ));
            continue;
        };
        let api: Api<DynamicObject> = if caps.scope == Scope::Namespaced {
            Api::namespaced_with(client.clone(), &r.namespace, &res)
        } else {
            Api::all_with(client.clone(), &res)
        };
        let live = match api.get_opt(&r.name).await {
            Ok(live) => live,
            Err(e) => {
                errors.push(format!("{r}: {}", super::api_error(&e)));
                continue;
            }
        };
        let Some(live) = live else {
            println!("► {r} created");
            changed = true;
            continue;
        };
        let merged = match api.patch(&r.name, &params, &Patch::Apply(obj)).await {
            Ok(merged) => merged,
            Err(e) => {
                errors.push(format!("{r} dry-run failed: {}", super::api_error(&e)));
                continue;
            }
        };
        let (mut before, mut after) =
            (serde_json::to_value(&live)?, serde_json::to_value(&merged)?);
        strip(&mut before);
        strip(&mut after);
        mask_pair(&mut before, &mut after);
        let mut diffs = Vec::new();
        differences("", &before, &after, &mut diffs);
        if diffs.is_empty() {
            continue;
        }
        changed = true;
        // Flux's report (dyff's human format without its header).
        println!("► {r} drifted");
        for (path, old, new) in diffs {
            println!("\n{path}\n± value change\n- {old}\n+ {new}");
        }
        println!();
    }
    // Objects the Kustomization manages today that the build no longer has: pruned.
    if let Ok(ks) = KUSTOMIZATION
        .get(&client, &a.global.namespace, &a.name)
        .await
    {
        let prune = ks.data.pointer("/spec/prune").and_then(Value::as_bool) == Some(true);
        for (id, r) in super::kind::inventory(&ks) {
            if prune && !seen.contains(id.as_str()) {
                println!("► {r} deleted");
                changed = true;
            }
        }
    }
    // Errors end the run after every other object was diffed, in Kubernetes' aggregate form.
    match errors.len() {
        0 => Ok(changed),
        1 => Err(anyhow::anyhow!("{}", errors[0])),
        _ => Err(anyhow::anyhow!("[{}]", errors.join(", "))),
    }
}

/// Runs `diff`; exits with Flux's codes.
pub async fn run(what: What) -> ! {
    let outcome = match what {
        What::Kustomization(a) => diff(&a).await,
        What::Artifact(a) => match super::artifact::diff(a).await {
            Ok(true) => {
                super::failure("the remote artifact contents differs from the local one");
                std::process::exit(1)
            }
            Ok(false) => {
                super::success("no changes detected");
                Ok(false)
            }
            Err(e) => Err(e),
        },
    };
    match outcome {
        Ok(false) => std::process::exit(0),
        Ok(true) => std::process::exit(1),
        Err(e) => {
            super::failure(&super::one_line(&e));
            std::process::exit(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaf_differences_and_masking() {
        let mut a = json!({"kind": "Secret", "data": {"k": "b2xk", "same": "eA=="},
                           "spec": {"replicas": 2, "x": [1]}});
        let mut b = json!({"kind": "Secret", "data": {"k": "bmV3", "same": "eA==", "new": "eQ=="},
                           "spec": {"replicas": 3, "x": [1]}});
        let mut out = Vec::new();
        differences("", &a, &b, &mut out);
        assert_eq!(out.len(), 3);
        mask_pair(&mut a, &mut b);
        out.clear();
        differences("", &a, &b, &mut out);
        assert_eq!(
            out,
            [
                ("data.k".into(), "*** (before)".into(), "*** (after)".into()),
                ("data.new".into(), "<none>".into(), "*** (after)".into()),
                ("spec.replicas".into(), "2".into(), "3".into()),
            ]
        );
        assert_eq!(a["data"]["same"], "***");
        // Other kinds are shown as they are.
        let (mut c, mut d) = (
            json!({"kind": "ConfigMap", "data": {"k": "1"}}),
            json!({"kind": "ConfigMap", "data": {"k": "2"}}),
        );
        mask_pair(&mut c, &mut d);
        assert_eq!(d["data"]["k"], "2");
    }
}
