//! Flux's per-object policies, read from labels or annotations (values compared without case).

use serde_json::Value;

/// `kustomize.toolkit.fluxcd.io/ssa`: `Override` (the default), `Merge`, `IfNotPresent`, `Ignore`.
pub const SSA_KEY: &str = "kustomize.toolkit.fluxcd.io/ssa";
/// `kustomize.toolkit.fluxcd.io/reconcile: disabled` leaves an object alone.
pub const RECONCILE_KEY: &str = "kustomize.toolkit.fluxcd.io/reconcile";
/// `kustomize.toolkit.fluxcd.io/prune: disabled` keeps an object when it leaves the source.
pub const PRUNE_KEY: &str = "kustomize.toolkit.fluxcd.io/prune";
/// `kustomize.toolkit.fluxcd.io/force: enabled` recreates an object on immutable changes.
pub const FORCE_KEY: &str = "kustomize.toolkit.fluxcd.io/force";

/// Whether a label or an annotation `key` of `obj` equals `value`, ignoring case.
pub fn any_in_metadata(obj: &Value, key: &str, value: &str) -> bool {
    ["labels", "annotations"].iter().any(|field| {
        obj.get("metadata")
            .and_then(|m| m.get(*field))
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty() && v.eq_ignore_ascii_case(value))
    })
}

/// The policies one object carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Policies {
    /// `ssa: Ignore` or `reconcile: disabled`: never applied (nor pruned).
    pub excluded: bool,
    /// `ssa: IfNotPresent`: created when missing, left alone when present.
    pub if_not_present: bool,
    /// `ssa: Merge`: other managers' fields are kept (no ownership takeover).
    pub merge: bool,
    /// `force: enabled`: recreated when an immutable field changes.
    pub force: bool,
    /// `prune: disabled`: never deleted by prune.
    pub prune_disabled: bool,
}

impl Policies {
    /// Reads the policies from `obj`'s labels and annotations.
    pub fn of(obj: &Value) -> Policies {
        Policies {
            excluded: any_in_metadata(obj, SSA_KEY, "Ignore")
                || any_in_metadata(obj, RECONCILE_KEY, "disabled"),
            if_not_present: any_in_metadata(obj, SSA_KEY, "IfNotPresent"),
            merge: any_in_metadata(obj, SSA_KEY, "Merge"),
            force: any_in_metadata(obj, FORCE_KEY, "enabled"),
            prune_disabled: any_in_metadata(obj, PRUNE_KEY, "disabled"),
        }
    }

    /// Policies that hold when either the desired or the live object declares them.
    pub fn either(self, other: Policies) -> Policies {
        Policies {
            excluded: self.excluded || other.excluded,
            if_not_present: self.if_not_present,
            merge: self.merge || other.merge,
            force: self.force || other.force,
            prune_disabled: self.prune_disabled || other.prune_disabled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_and_annotations_without_case() {
        let obj = json!({"metadata": {
            "labels": {RECONCILE_KEY: "Disabled"},
            "annotations": {SSA_KEY: "merge", FORCE_KEY: "Enabled"}}});
        let p = Policies::of(&obj);
        assert!(p.excluded && p.merge && p.force && !p.if_not_present && !p.prune_disabled);
        let none = Policies::of(&json!({"metadata": {"annotations": {SSA_KEY: ""}}}));
        assert_eq!(none, Policies::default());
    }
}
