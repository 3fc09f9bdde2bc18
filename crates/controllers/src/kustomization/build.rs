//! From the source's artifact to the objects to apply: download and verify the artifact,
//! extract it, build `spec.path` with the native kustomize engine and the spec's overlay
//! (Flux's generator), refuse SOPS-encrypted Secrets we cannot decrypt, then post-build
//! substitution and `commonMetadata`. The build (not the substitution, whose inputs live in
//! the cluster) is cached while artifact digest and spec stay the same.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, ResourceExt};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tidegate_api::Kustomization;
use tidegate_api::meta::Artifact;
use tidegate_kustomize::kustomization::{Image, Selector};
use tidegate_kustomize::{Builder, LoadRestrictions, Options, Overlay, postbuild};
use tidegate_source::extract::Limits;
use tidegate_source::fetch::{FetchError, fetch_artifact};

use super::reconcile::{Failure, Retry};
use super::{Context, key};

/// `ArtifactFailed`: the artifact could not be fetched or the path is missing.
pub(super) const ARTIFACT_FAILED: &str = "ArtifactFailed";
/// `BuildFailed`: the kustomize build or the substitution failed.
pub(super) const BUILD_FAILED: &str = "BuildFailed";

/// A Kustomization's last build.
pub(super) struct Cached {
    key: String,
    objects: Arc<Vec<Value>>,
}

/// What makes two builds the same: the artifact and every spec field the build reads.
fn build_key(obj: &Kustomization, artifact: &Artifact) -> String {
    let s = &obj.spec;
    let inputs = serde_json::json!([
        artifact.digest,
        s.path,
        s.target_namespace,
        s.name_prefix,
        s.name_suffix,
        s.patches,
        s.images,
        s.components,
        s.ignore_missing_components,
        s.build_metadata,
        s.decryption,
    ]);
    let mut h = Sha256::new();
    let _ = serde_json::to_writer(&mut h, &inputs);
    format!("{:x}", h.finalize())
}

/// The built objects for `obj` from `artifact`, before substitution.
pub(super) async fn built(
    obj: &Kustomization,
    ctx: &Context,
    artifact: &Artifact,
) -> Result<Arc<Vec<Value>>, Failure> {
    let cache = key(&obj.namespace().unwrap_or_default(), &obj.name_any());
    let wanted = build_key(obj, artifact);
    if let Some(c) = ctx
        .builds
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&cache)
        .filter(|c| c.key == wanted)
    {
        return Ok(c.objects.clone());
    }
    let tmp = tempfile::Builder::new()
        .prefix("kustomization-")
        .tempdir()
        .map_err(|e| Failure::new("DirCreationFailed", format!("tmp dir error: {e}")))?;
    fetch_artifact(
        &ctx.http,
        &artifact.url,
        &artifact.digest,
        tmp.path(),
        Limits::default(),
    )
    .await
    .map_err(|e| match e {
        FetchError::NotFound { .. } => Failure {
            reason: ARTIFACT_FAILED,
            message: format!(
                "Source is not ready, artifact not found, retrying in {}",
                tidegate_core::duration::format(ctx.options.requeue_dependency)
            ),
            retry: Retry::Dependency,
        },
        other => Failure::new(ARTIFACT_FAILED, other.to_string()),
    })?;
    let spec_path = obj.spec.path.clone().unwrap_or_default();
    let dir = secure_join(tmp.path(), &spec_path);
    if !dir.exists() {
        return Err(Failure::new(
            ARTIFACT_FAILED,
            format!("kustomization path not found: stat {spec_path}: no such file or directory"),
        ));
    }
    let overlay = overlay_of(obj);
    let root = tmp.path().to_path_buf();
    let objects = tokio::task::spawn_blocking(move || {
        let options = Options {
            load_restrictions: LoadRestrictions::None,
            generate_missing: true,
            overlay: Some(overlay),
        };
        let res = Builder::new(&root, options).and_then(|b| b.build(&dir));
        drop(tmp);
        res.map(|r| {
            r.resources
                .into_iter()
                .map(|r| Value::Object(r.obj))
                .collect::<Vec<Value>>()
        })
    })
    .await
    .map_err(|e| Failure::new(BUILD_FAILED, format!("build task failed: {e}")))?
    .map_err(|e| Failure::new(BUILD_FAILED, e.to_string()))?;
    for o in &objects {
        if is_sops_encrypted(o) {
            let subject = tidegate_core::ObjectRef::from_object(o);
            let message = if obj.spec.decryption.is_some() {
                format!(
                    "{subject}: SOPS decryption is not supported by Tidegate yet; the Secret was not applied"
                )
            } else {
                format!(
                    "{subject} is SOPS encrypted, configuring decryption is required for this secret to be reconciled"
                )
            };
            return Err(Failure::new(BUILD_FAILED, message));
        }
    }
    let objects = Arc::new(objects);
    ctx.builds.lock().unwrap_or_else(|e| e.into_inner()).insert(
        cache,
        Cached {
            key: wanted,
            objects: objects.clone(),
        },
    );
    Ok(objects)
}

/// Forgets the build of a deleted Kustomization.
pub(super) fn forget(ctx: &Context, namespace: &str, name: &str) {
    ctx.builds
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&key(namespace, name));
}

/// A Secret encrypted with SOPS (Flux's test: `v1` Secret with a top-level `sops` field).
fn is_sops_encrypted(obj: &Value) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some("Secret")
        && obj.get("apiVersion").and_then(Value::as_str) == Some("v1")
        && obj.get("sops").is_some()
}

/// `root` joined with `path` as Flux's secure join does: `..` never climbs above `root`.
fn secure_join(root: &Path, path: &str) -> PathBuf {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    parts.iter().fold(root.to_path_buf(), |p, c| p.join(c))
}

/// The spec fields Flux merges into the kustomization file before the build.
fn overlay_of(obj: &Kustomization) -> Overlay {
    let s = &obj.spec;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    Overlay {
        target_namespace: s.target_namespace.clone(),
        name_prefix: s.name_prefix.clone(),
        name_suffix: s.name_suffix.clone(),
        patches: s
            .patches
            .iter()
            .map(|p| {
                let target = p.target.as_ref().map(|t| Selector {
                    group: text(&t.group),
                    version: text(&t.version),
                    kind: text(&t.kind),
                    name: text(&t.name),
                    namespace: text(&t.namespace),
                    label_selector: text(&t.label_selector),
                    annotation_selector: text(&t.annotation_selector),
                });
                (p.patch.clone(), target)
            })
            .collect(),
        images: s
            .images
            .iter()
            .map(|i| Image {
                name: i.name.clone(),
                new_name: text(&i.new_name),
                new_tag: text(&i.new_tag),
                digest: text(&i.digest),
            })
            .collect(),
        components: s.components.clone(),
        ignore_missing_components: s.ignore_missing_components.unwrap_or(false),
        build_metadata: s.build_metadata.clone(),
    }
}

/// The variables of `spec.postBuild`: `substituteFrom` in order (later ones win), then the
/// inline `substitute` over all of them.
async fn variables(
    obj: &Kustomization,
    ctx: &Context,
) -> Result<BTreeMap<String, String>, Failure> {
    let mut vars = BTreeMap::new();
    let Some(pb) = &obj.spec.post_build else {
        return Ok(vars);
    };
    let namespace = obj.namespace().unwrap_or_default();
    for r in &pb.substitute_from {
        let fail = |m: String| {
            Failure::new(
                BUILD_FAILED,
                format!("substitute from '{}/{}' error: {m}", r.kind, r.name),
            )
        };
        match r.kind.as_str() {
            "ConfigMap" => {
                let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &namespace);
                match api.get_opt(&r.name).await {
                    Ok(Some(cm)) => vars.extend(cm.data.unwrap_or_default()),
                    Ok(None) if r.optional => {}
                    Ok(None) => {
                        return Err(fail(format!("configmaps \"{}\" not found", r.name)));
                    }
                    Err(e) => return Err(fail(tidegate_apply::error::describe(&e))),
                }
            }
            "Secret" => {
                let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
                match api.get_opt(&r.name).await {
                    Ok(Some(s)) => {
                        for (k, v) in s.data.unwrap_or_default() {
                            vars.insert(k, String::from_utf8_lossy(&v.0).into_owned());
                        }
                    }
                    Ok(None) if r.optional => {}
                    Ok(None) => return Err(fail(format!("secrets \"{}\" not found", r.name))),
                    Err(e) => return Err(fail(tidegate_apply::error::describe(&e))),
                }
            }
            other => {
                return Err(fail(format!(
                    "unsupported kind '{other}' (ConfigMap or Secret)"
                )));
            }
        }
    }
    vars.extend(pb.substitute.clone());
    Ok(vars)
}

/// The objects to apply: the build with variables substituted and `commonMetadata` merged.
pub(super) async fn manifests(
    obj: &Kustomization,
    ctx: &Context,
    artifact: &Artifact,
) -> Result<Vec<Value>, Failure> {
    let built = built(obj, ctx, artifact).await?;
    let mut objects: Vec<Value> = built.as_ref().clone();
    if let Some(pb) = &obj.spec.post_build {
        let vars = variables(obj, ctx).await?;
        let options = postbuild::Options {
            strict: true,
            always: pb.substitute_strategy.as_deref() == Some("Always"),
        };
        postbuild::substitute(&mut objects, &vars, options)
            .map_err(|e| Failure::new(BUILD_FAILED, e.to_string()))?;
    }
    if let Some(cm) = &obj.spec.common_metadata {
        for o in &mut objects {
            merge_metadata(o, "labels", &cm.labels);
            merge_metadata(o, "annotations", &cm.annotations);
        }
    }
    Ok(objects)
}

/// Sets every entry of `values` in `metadata.<field>` (Flux's `SetCommonMetadata`).
fn merge_metadata(obj: &mut Value, field: &str, values: &BTreeMap<String, String>) {
    if values.is_empty() {
        return;
    }
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let entry = meta
        .entry(field)
        .or_insert_with(|| Value::Object(Default::default()));
    if !entry.is_object() {
        *entry = Value::Object(Default::default());
    }
    if let Some(map) = entry.as_object_mut() {
        for (k, v) in values {
            map.insert(k.clone(), Value::String(v.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secure_join_stays_inside() {
        let root = Path::new("/tmp/k");
        assert_eq!(secure_join(root, "./apps/dev"), root.join("apps/dev"));
        assert_eq!(secure_join(root, "../../etc"), root.join("etc"));
        assert_eq!(secure_join(root, "/abs/x"), root.join("abs/x"));
        assert_eq!(secure_join(root, ""), root.to_path_buf());
        assert_eq!(secure_join(root, "a/../../b"), root.join("b"));
    }

    #[test]
    fn common_metadata_merges_over_existing() {
        let mut o = serde_json::json!({"metadata": {"name": "x", "labels": {"a": "1", "b": "2"}}});
        let labels = BTreeMap::from([("b".to_string(), "3".to_string())]);
        let annotations = BTreeMap::from([("n".to_string(), "v".to_string())]);
        merge_metadata(&mut o, "labels", &labels);
        merge_metadata(&mut o, "annotations", &annotations);
        assert_eq!(
            o["metadata"]["labels"],
            serde_json::json!({"a": "1", "b": "3"})
        );
        assert_eq!(o["metadata"]["annotations"], serde_json::json!({"n": "v"}));
    }

    #[test]
    fn sops_secrets_are_recognised() {
        let enc = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "sops": {"mac": "x"}});
        let plain = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "data": {}});
        assert!(is_sops_encrypted(&enc));
        assert!(!is_sops_encrypted(&plain));
    }
}
