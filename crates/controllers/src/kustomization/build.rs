//! From the source's artifact to the objects to apply: download and verify the artifact,
//! extract it, build `spec.path` with the native kustomize engine and the spec's overlay
//! (Flux's generator), decrypting SOPS files as they are read (`decrypt`), refuse Secrets still
//! encrypted, then post-build
//! substitution and `commonMetadata`. The build (not the substitution, whose inputs live in
//! the cluster) is cached while artifact digest and spec stay the same.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use kube::ResourceExt;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tidegate_api::Kustomization;
use tidegate_api::meta::Artifact;
use tidegate_kustomize::{Builder, LoadRestrictions, Options};
use tidegate_source::extract::Limits;
use tidegate_source::fetch::{FetchError, Waited, extract_bytes};

use super::reconcile::{Failure, Retry};
use super::{Context, decrypt, generate, key};

/// `ArtifactFailed`: the artifact could not be fetched or the path is missing.
pub(super) const ARTIFACT_FAILED: &str = "ArtifactFailed";
/// `BuildFailed`: the kustomize build or the substitution failed.
pub(super) const BUILD_FAILED: &str = "BuildFailed";

/// How long a reconcile waits for its artifact's download before it lets its worker go and
/// checks again shortly.
const FETCH_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// The failure a download or extraction error is reported as (Flux's messages).
fn fetch_failure(e: &FetchError, ctx: &Context) -> Failure {
    match e {
        FetchError::NotFound { .. } => Failure {
            reason: ARTIFACT_FAILED,
            message: format!(
                "Source is not ready, artifact not found, retrying in {}",
                tidegate_core::duration::format(ctx.options.requeue_dependency)
            ),
            retry: Retry::Dependency,
        },
        other => Failure::new(ARTIFACT_FAILED, other.to_string()),
    }
}

/// A Kustomization's last build.
pub(super) struct Cached {
    key: String,
    objects: Arc<Vec<Value>>,
}

/// What makes two builds the same: the artifact and every spec field the build reads.
fn build_key(obj: &Kustomization, artifact: &Artifact, keys_version: &str) -> String {
    let s = &obj.spec;
    let inputs = serde_json::json!([
        keys_version,
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
    // The decryption keys are read first: a changed key Secret is a new build.
    let decryption = decrypt::keys(obj, ctx).await?;
    let wanted = build_key(
        obj,
        artifact,
        decryption.as_ref().map_or("", |d| d.version.as_str()),
    );
    if let Some(c) = ctx
        .builds
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&cache)
        .filter(|c| c.key == wanted)
    {
        return Ok(c.objects.clone());
    }
    let tmp = tidegate_source::scratch::tempdir("kustomization-")
        .map_err(|e| Failure::new("DirCreationFailed", format!("tmp dir error: {e}")))?;
    let limits = Limits::default();
    // The download is shared with every Kustomization of the same artifact, and waited for at
    // most FETCH_WAIT: a slow source holds no reconcile worker longer than that.
    let bytes = match ctx
        .fetcher
        .get(&artifact.url, &artifact.digest, FETCH_WAIT)
        .await
    {
        Waited::Done(Ok(bytes)) => bytes,
        Waited::Done(Err(e)) => return Err(fetch_failure(&e, ctx)),
        Waited::Pending(running) => {
            return Err(Failure {
                reason: ARTIFACT_FAILED,
                message: format!(
                    "downloading artifact from {} for revision {}: still in progress after {}",
                    artifact.url,
                    artifact.revision,
                    tidegate_core::duration::format(running)
                ),
                retry: Retry::Soon,
            });
        }
    };
    extract_bytes(bytes, tmp.path(), limits)
        .await
        .map_err(|e| fetch_failure(&e, ctx))?;
    let spec_path = obj.spec.path.clone().unwrap_or_default();
    let dir = secure_join(tmp.path(), &spec_path);
    if !dir.exists() {
        return Err(Failure::new(
            ARTIFACT_FAILED,
            format!("kustomization path not found: stat {spec_path}: no such file or directory"),
        ));
    }
    let overlay = generate::overlay(&obj.spec);
    let root = tmp.path().to_path_buf();
    let keys = decryption.map(|d| d.keys);
    let objects = tokio::task::spawn_blocking(move || {
        let filter = keys.as_ref().map(|k| {
            tidegate_kustomize::Filter(Arc::new(decrypt::SopsFilter::new(&root, &dir, k.clone())))
        });
        let options = Options {
            load_restrictions: LoadRestrictions::None,
            generate_missing: true,
            overlay: Some(overlay),
            filter,
        };
        let res = Builder::new(&root, options).and_then(|b| b.build(&dir));
        drop(tmp);
        let mut objects = res
            .map(|r| {
                r.resources
                    .into_iter()
                    .map(|r| Value::Object(r.obj))
                    .collect::<Vec<Value>>()
            })
            .map_err(|e| e.to_string())?;
        if let Some(keys) = &keys {
            decrypt::decrypt_built(&mut objects, keys)?;
        }
        Ok::<_, String>(objects)
    })
    .await
    .map_err(|e| Failure::new(BUILD_FAILED, format!("build task failed: {e}")))?
    .map_err(|e| Failure::new(BUILD_FAILED, e))?;
    for o in &objects {
        if is_sops_encrypted(o) {
            let subject = tidegate_core::ObjectRef::from_object(o);
            return Err(Failure::new(
                BUILD_FAILED,
                format!(
                    "{subject} is SOPS encrypted, configuring decryption is required for this secret to be reconciled"
                ),
            ));
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

/// A Secret encrypted with SOPS (Flux's test: `v1` Secret with a top-level `sops` field, not
/// annotated `kustomize.toolkit.fluxcd.io/decrypt: disabled`).
fn is_sops_encrypted(obj: &Value) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some("Secret")
        && obj.get("apiVersion").and_then(Value::as_str) == Some("v1")
        && obj.get("sops").is_some()
        && !decrypt::disabled(obj)
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

/// The objects to apply: the build with variables substituted and `commonMetadata` merged.
pub(super) async fn manifests(
    obj: &Kustomization,
    ctx: &Context,
    artifact: &Artifact,
) -> Result<Vec<Value>, Failure> {
    let built = built(obj, ctx, artifact).await?;
    let mut objects: Vec<Value> = built.as_ref().clone();
    let namespace = obj.namespace().unwrap_or_default();
    let vars = generate::variables(Some(&ctx.client), &namespace, &obj.spec)
        .await
        .map_err(|m| Failure::new(BUILD_FAILED, m))?;
    generate::post_build(&mut objects, &obj.spec, &vars)
        .map_err(|m| Failure::new(BUILD_FAILED, m))?;
    Ok(objects)
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
    fn sops_secrets_are_recognised() {
        let enc = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "sops": {"mac": "x"}});
        let plain = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "data": {}});
        assert!(is_sops_encrypted(&enc));
        assert!(!is_sops_encrypted(&plain));
    }
}
