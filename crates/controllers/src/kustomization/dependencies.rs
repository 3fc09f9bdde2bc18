//! `spec.dependsOn`: a dependency is ready when it exists, has observed its generation, is
//! `Ready=True` and, when it reads the same source, has applied the source's current revision
//! (Flux's rules and messages). Dependencies are read from the watch cache.

use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use tidegate_api::Kustomization;
use tidegate_api::conditions::{self, READY};

use super::triggers::source_of;

/// Why the dependencies are not ready.
#[derive(Debug)]
pub(super) enum NotReady {
    /// A dependency is not ready (yet).
    Waiting(String),
    /// A `readyExpr` is not valid CEL: a configuration error.
    InvalidExpr(String),
}

impl From<String> for NotReady {
    fn from(m: String) -> NotReady {
        NotReady::Waiting(m)
    }
}

/// Checks every dependency of `obj`; `revision` is the revision of its source's artifact.
/// A dependency with a `readyExpr` is ready when the expression (over `self` and `dep`) is
/// true, and the built-in checks are skipped, as in Flux without its additive gate.
pub(super) fn check(
    obj: &Kustomization,
    store: &Store<Kustomization>,
    revision: &str,
    no_cross_namespace_refs: bool,
) -> Result<(), NotReady> {
    let namespace = obj.namespace().unwrap_or_default();
    for dep in &obj.spec.depends_on {
        let dep_ns = dep
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| namespace.clone());
        let name = format!("{dep_ns}/{}", dep.name);
        if no_cross_namespace_refs && dep_ns != namespace {
            return Err(format!(
                "dependency '{name}' can't be accessed, cross-namespace references have been blocked"
            )
            .into());
        }
        let Some(k) = store.get(&ObjectRef::new(&dep.name).within(&dep_ns)) else {
            return Err(format!(
                "dependency '{name}' not found: kustomizations.kustomize.toolkit.fluxcd.io \"{}\" not found",
                dep.name
            )
            .into());
        };
        if let Some(expr) = dep.ready_expr.as_deref().filter(|e| !e.is_empty()) {
            use crate::shared::{ReadyExprError, eval_ready_expr};
            match eval_ready_expr(expr, obj, k.as_ref(), &dep.name) {
                Ok(true) => continue,
                Ok(false) => {
                    return Err(format!(
                        "dependency '{name}' is not ready according to readyExpr eval"
                    )
                    .into());
                }
                Err(ReadyExprError::Invalid(m)) => return Err(NotReady::InvalidExpr(m)),
                Err(ReadyExprError::Failed(m)) => return Err(m.into()),
            }
        }
        let Some(st) = k.status.as_ref() else {
            return Err(format!("dependency '{name}' is not ready").into());
        };
        if st.conditions.is_empty() || k.metadata.generation != st.observed_generation {
            return Err(format!("dependency '{name}' is not ready").into());
        }
        if !conditions::is_true(&st.conditions, READY) {
            return Err(format!("dependency '{name}' is not ready").into());
        }
        if source_of(&k) == source_of(obj) && st.last_applied_revision.as_deref() != Some(revision)
        {
            return Err(format!("dependency '{name}' revision is not up to date").into());
        }
    }
    Ok(())
}
