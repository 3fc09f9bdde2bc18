//! Drift detection and correction as helm-controller does them (`internal/action/diff.go`,
//! `internal/reconcile/correct_cluster_drift.go`): every object of the release's manifest is
//! read from the cluster and server-side applied in dry-run (forced, as `helm-controller`);
//! the differences are the JSON patch from the live object to the dry-run result. Correction
//! creates what is missing and patches what changed.

use kube::api::{Patch, PatchParams, PostParams};
use serde_json::Value;
use tidegate_api::helmrelease::IgnoreRule;
use tidegate_apply::ResourceManager;
use tidegate_apply::error::{describe, dry_run_failed, reason};
use tidegate_apply::jsondiff::{self, Diff, DiffType, IgnoreRules, Selector};
use tidegate_apply::sort::apply_order;
use tidegate_core::ObjectRef;
use tidegate_helm::storage::Release;

use super::action::{FIELD_MANAGER, default_namespace, set_ownership};
use super::render::manifest_objects;

/// The label or annotation that leaves an object out of drift detection.
pub const DRIFT_DETECTION_KEY: &str = "helm.toolkit.fluxcd.io/driftDetection";
const DISABLED: &str = "disabled";

/// The objects of the release compared with the cluster, and the errors met on the way
/// (objects that could not be compared; the others still are, as Flux's graceful diff).
pub struct DiffSet {
    pub diffs: Vec<Diff>,
    pub errors: Vec<String>,
}

fn excluded(obj: &Value) -> bool {
    ["labels", "annotations"].iter().any(|field| {
        obj.pointer(&format!("/metadata/{field}"))
            .and_then(|m| m.get(DRIFT_DETECTION_KEY))
            .and_then(Value::as_str)
            == Some(DISABLED)
    })
}

fn rules(ignore: &[IgnoreRule]) -> Result<IgnoreRules, String> {
    let rules: Vec<jsondiff::IgnoreRule> = ignore
        .iter()
        .map(|r| jsondiff::IgnoreRule {
            paths: r.paths.clone(),
            selector: r.target.as_ref().map(|t| Selector {
                group: t.group.clone().unwrap_or_default(),
                version: t.version.clone().unwrap_or_default(),
                kind: t.kind.clone().unwrap_or_default(),
                name: t.name.clone().unwrap_or_default(),
                namespace: t.namespace.clone().unwrap_or_default(),
                annotation_selector: t.annotation_selector.clone().unwrap_or_default(),
                label_selector: t.label_selector.clone().unwrap_or_default(),
            }),
        })
        .collect();
    IgnoreRules::compile(&rules)
}

/// Compares the objects of `release` with the cluster.
pub async fn diff(
    manager: &ResourceManager,
    release: &Release,
    ignore: &[IgnoreRule],
) -> Result<DiffSet, String> {
    let rules = rules(ignore)?;
    let mut set = DiffSet {
        diffs: Vec::new(),
        errors: Vec::new(),
    };
    for mut obj in manifest_objects(&release.manifest) {
        set_ownership(&mut obj, &release.name, &release.namespace);
        let api_version = obj["apiVersion"].as_str().unwrap_or_default().to_string();
        let kind = obj["kind"].as_str().unwrap_or_default().to_string();
        let target = match manager.target(&api_version, &kind).await {
            Ok(Some(t)) => t,
            Ok(None) => {
                set.errors.push(format!(
                    "failed to determine if {kind} is namespace scoped: no matches for kind \
                     \"{kind}\" in version \"{api_version}\""
                ));
                continue;
            }
            Err(e) => {
                set.errors.push(format!(
                    "failed to determine if {kind} is namespace scoped: {e}"
                ));
                continue;
            }
        };
        if target.namespaced {
            default_namespace(&mut obj, &release.namespace);
        }
        match diff_object(manager, &target, obj, &rules).await {
            Ok(d) => set.diffs.push(d),
            Err(e) => set.errors.push(e),
        }
    }
    Ok(set)
}

async fn diff_object(
    manager: &ResourceManager,
    target: &tidegate_apply::resolve::Target,
    obj: Value,
    rules: &IgnoreRules,
) -> Result<Diff, String> {
    let ignore = rules.paths_for(&obj);
    let exclude = |obj: Value| Diff {
        kind: DiffType::Exclude,
        desired: obj,
        patch: Vec::new(),
    };
    if excluded(&obj) || ignore.iter().any(String::is_empty) {
        return Ok(exclude(obj));
    }
    let namespace = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let subject = jsondiff::resource_name(&obj);
    let api = target.api(manager.client(), &namespace);
    let live = api
        .get_opt(&name)
        .await
        .map_err(|e| format!("{subject} query failed: {}", describe(&e)))?;
    let Some(live) = live else {
        return Ok(Diff {
            kind: DiffType::Create,
            desired: obj,
            patch: Vec::new(),
        });
    };
    let live = serde_json::to_value(&live).map_err(|e| e.to_string())?;
    if excluded(&live) {
        return Ok(exclude(obj));
    }
    let mut params = PatchParams::apply(FIELD_MANAGER).force();
    params.dry_run = true;
    let dry = api
        .patch(&name, &params, &Patch::Apply(&obj))
        .await
        .map_err(|e| dry_run_failed(&subject, &e).to_string())?;
    let dry = serde_json::to_value(&dry).map_err(|e| e.to_string())?;
    let patch = jsondiff::object_patch(&live, &dry, &ignore);
    Ok(Diff {
        kind: if patch.is_empty() {
            DiffType::None
        } else {
            DiffType::Update
        },
        desired: obj,
        patch,
    })
}

/// What a correction did: the objects created and patched (`Kind/ns/name created|configured`
/// lines), and the failures.
pub struct Correction {
    pub changes: Vec<String>,
    pub errors: Vec<String>,
}

/// Flux masks the value part of an Invalid error on a Secret patch: only the text after the
/// last `:` is kept.
fn mask_invalid(e: &kube::Error) -> String {
    let text = describe(e);
    if reason(e) == "Invalid"
        && let Some(i) = text.rfind(':')
    {
        return text[i + 1..].trim().to_string();
    }
    text
}

/// Creates the objects missing from the cluster and patches the changed ones, in apply
/// order; every failure is collected.
pub async fn correct(manager: &ResourceManager, set: &[Diff]) -> Correction {
    let mut creates: Vec<&Diff> = set.iter().filter(|d| d.kind == DiffType::Create).collect();
    let mut updates: Vec<&Diff> = set.iter().filter(|d| d.kind == DiffType::Update).collect();
    let order = |a: &&Diff, b: &&Diff| {
        apply_order(
            &ObjectRef::from_object(&a.desired),
            &ObjectRef::from_object(&b.desired),
        )
    };
    creates.sort_by(order);
    updates.sort_by(order);
    let mut out = Correction {
        changes: Vec::new(),
        errors: Vec::new(),
    };
    for (d, create) in creates
        .into_iter()
        .map(|d| (d, true))
        .chain(updates.into_iter().map(|d| (d, false)))
    {
        let obj = &d.desired;
        let subject = jsondiff::resource_name(obj);
        let api_version = obj["apiVersion"].as_str().unwrap_or_default();
        let kind = obj["kind"].as_str().unwrap_or_default();
        let target = match manager.target(api_version, kind).await {
            Ok(Some(t)) => t,
            Ok(None) => {
                out.errors.push(format!(
                    "{subject} {} failure: no matches for kind",
                    verb(create)
                ));
                continue;
            }
            Err(e) => {
                out.errors
                    .push(format!("{subject} {} failure: {e}", verb(create)));
                continue;
            }
        };
        let namespace = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let api = target.api(manager.client(), namespace);
        let result = if create {
            let mut o = obj.clone();
            if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("resourceVersion");
            }
            match serde_json::from_value::<kube::api::DynamicObject>(o) {
                Ok(o) => api
                    .create(
                        &PostParams {
                            field_manager: Some(FIELD_MANAGER.into()),
                            ..Default::default()
                        },
                        &o,
                    )
                    .await
                    .map(|_| ())
                    .map_err(|e| describe(&e)),
                Err(e) => Err(e.to_string()),
            }
        } else {
            match serde_json::from_value::<json_patch::Patch>(jsondiff::patch_json(&d.patch)) {
                Ok(p) => api
                    .patch(
                        name,
                        &PatchParams {
                            field_manager: Some(FIELD_MANAGER.into()),
                            ..Default::default()
                        },
                        &Patch::<()>::Json(p),
                    )
                    .await
                    .map(|_| ())
                    .map_err(|e| {
                        if kind == "Secret" {
                            mask_invalid(&e)
                        } else {
                            describe(&e)
                        }
                    }),
                Err(e) => Err(e.to_string()),
            }
        };
        match result {
            Ok(()) => out.changes.push(format!(
                "{subject} {}",
                if create { "created" } else { "configured" }
            )),
            Err(e) => out
                .errors
                .push(format!("{subject} {} failure: {e}", verb(create))),
        }
    }
    out
}

fn verb(create: bool) -> &'static str {
    if create { "creation" } else { "patch" }
}

/// Flux's log lines for the changes: deleted objects and patches (Secret values masked).
pub fn log(release: &str, set: &[Diff]) {
    tracing::info!(
        release,
        "detected changes in cluster state: {}",
        jsondiff::summarize_brief(set)
    );
    for d in set {
        match d.kind {
            DiffType::Create => tracing::debug!(
                resource = %jsondiff::resource_name(&d.desired),
                "resource deleted"
            ),
            DiffType::Update => {
                let mut patch = d.patch.clone();
                if d.desired["kind"] == "Secret" {
                    jsondiff::mask_secret_patch(&mut patch);
                }
                tracing::debug!(
                    resource = %jsondiff::resource_name(&d.desired),
                    patch = %jsondiff::patch_json(&patch),
                    "resource modified"
                );
            }
            _ => {}
        }
    }
}
