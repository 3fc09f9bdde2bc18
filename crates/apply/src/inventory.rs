//! The inventory: the objects an apply manages, in Flux's format (`<ns>_<name>_<group>_<kind>`
//! plus the version), and the stale set left when a new inventory replaces an old one.

use crate::changeset::{Action, ChangeSet};
use crate::sort::apply_order;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use tidegate_core::ObjectRef;

/// One managed object, as `status.inventory.entries[]` holds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InventoryEntry {
    /// `<namespace>_<name>_<group>_<kind>`.
    pub id: String,
    /// The API version without the group.
    pub v: String,
}

/// The objects an apply manages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    /// The entries, in apply order.
    #[serde(default)]
    pub entries: Vec<InventoryEntry>,
}

fn is_rbac(group: &str, kind: &str) -> bool {
    group == "rbac.authorization.k8s.io"
        && matches!(
            kind,
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
        )
}

/// The inventory id of an object. RBAC names may hold `:`, written as `__`.
pub fn object_id(r: &ObjectRef) -> String {
    let name = if is_rbac(&r.group, &r.kind) {
        r.name.replace(':', "__")
    } else {
        r.name.clone()
    };
    format!("{}_{}_{}_{}", r.namespace, name, r.group, r.kind)
}

/// Reads an inventory id back; `None` when it has fewer than four fields.
pub fn parse_id(id: &str) -> Option<ObjectRef> {
    let (namespace, rest) = id.split_once('_')?;
    let (rest, kind) = rest.rsplit_once('_')?;
    let (name, group) = rest.rsplit_once('_')?;
    let name = if is_rbac(group, kind) {
        name.replace("__", ":")
    } else {
        name.to_string()
    };
    Some(ObjectRef {
        group: group.into(),
        kind: kind.into(),
        namespace: namespace.into(),
        name,
    })
}

impl Inventory {
    /// The inventory of an applied change set: every entry, skipped and unchanged ones included.
    pub fn from_change_set(cs: &ChangeSet) -> Inventory {
        let mut seen = HashSet::new();
        let entries = cs
            .entries
            .iter()
            .filter(|e| e.action != Action::Deleted)
            .filter(|e| seen.insert(e.object.clone()))
            .map(|e| InventoryEntry {
                id: object_id(&e.object),
                v: e.version.clone(),
            })
            .collect();
        Inventory { entries }
    }

    /// The objects with their versions, in apply order. Malformed ids are left out.
    pub fn objects(&self) -> Vec<(ObjectRef, String)> {
        let mut out: Vec<(ObjectRef, String)> = self
            .entries
            .iter()
            .filter_map(|e| parse_id(&e.id).map(|r| (r, e.v.clone())))
            .collect();
        out.sort_by(|a, b| apply_order(&a.0, &b.0));
        out
    }

    /// What `self` holds and `newer` does not (the stale objects), in apply order, with the
    /// versions `self` recorded.
    pub fn stale(&self, newer: &Inventory) -> Vec<(ObjectRef, String)> {
        let keep: HashSet<&str> = newer.entries.iter().map(|e| e.id.as_str()).collect();
        let mut out: Vec<(ObjectRef, String)> = self
            .entries
            .iter()
            .filter(|e| !keep.contains(e.id.as_str()))
            .filter_map(|e| parse_id(&e.id).map(|r| (r, e.v.clone())))
            .collect();
        out.sort_by(|a, b| apply_order(&a.0, &b.0));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_like_flux() {
        assert_eq!(
            object_id(&ObjectRef::new("apps", "Deployment", "default", "web")),
            "default_web_apps_Deployment"
        );
        assert_eq!(
            object_id(&ObjectRef::new("", "Service", "default", "web")),
            "default_web__Service"
        );
        assert_eq!(
            object_id(&ObjectRef::new("", "Namespace", "", "apps")),
            "_apps__Namespace"
        );
        let role = ObjectRef::new("rbac.authorization.k8s.io", "ClusterRole", "", "system:foo");
        assert_eq!(
            object_id(&role),
            "_system__foo_rbac.authorization.k8s.io_ClusterRole"
        );
        assert_eq!(parse_id(&object_id(&role)), Some(role));
        let crd = ObjectRef::new(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "",
            "foos.example.com",
        );
        assert_eq!(parse_id(&object_id(&crd)), Some(crd));
        assert_eq!(parse_id("nonsense"), None);
    }

    #[test]
    fn stale_objects_in_apply_order() {
        let entry = |id: &str| InventoryEntry {
            id: id.into(),
            v: "v1".into(),
        };
        let old = Inventory {
            entries: vec![
                entry("default_web_apps_Deployment"),
                entry("_apps__Namespace"),
                entry("default_web__Service"),
            ],
        };
        let new = Inventory {
            entries: vec![entry("default_web__Service")],
        };
        let stale: Vec<String> = old.stale(&new).iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(stale, ["Namespace/apps", "Deployment/default/web"]);
    }
}
