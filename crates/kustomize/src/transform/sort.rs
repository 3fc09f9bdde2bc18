//! Output order: kustomize's legacy kind order (the default), or the order resources were
//! accumulated in (`sortOptions.order: fifo`).

use crate::error::{Error, ErrorKind, Result};
use crate::kustomization::SortOptions;
use crate::resmap::ResMap;
use crate::resource::Resource;

const ORDER_FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];
const ORDER_LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// Sorts the resources as the top-level kustomization's `sortOptions` ask.
pub fn sort(res: &mut ResMap, opts: Option<&SortOptions>, file: &str) -> Result<()> {
    let (first, last): (Vec<String>, Vec<String>) = match opts {
        None => (
            ORDER_FIRST.iter().map(|s| s.to_string()).collect(),
            ORDER_LAST.iter().map(|s| s.to_string()).collect(),
        ),
        Some(o) => match o.order.as_str() {
            "fifo" => {
                if o.legacy_sort_options.is_some() {
                    return Err(Error::in_file(
                        ErrorKind::Invalid,
                        file,
                        "the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'",
                    ));
                }
                return Ok(());
            }
            "legacy" => match &o.legacy_sort_options {
                Some(l) => (l.order_first.clone(), l.order_last.clone()),
                None => (
                    ORDER_FIRST.iter().map(|s| s.to_string()).collect(),
                    ORDER_LAST.iter().map(|s| s.to_string()).collect(),
                ),
            },
            _ => {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    file,
                    "the field 'sortOptions.order' must be one of [fifo, legacy]",
                ));
            }
        },
    };
    let rank = |kind: &str| -> i64 {
        if let Some(i) = first.iter().position(|k| k == kind) {
            return i as i64 - first.len() as i64;
        }
        if let Some(i) = last.iter().position(|k| k == kind) {
            return i as i64 + 1;
        }
        0
    };
    let mut keyed: Vec<(i64, String, String, Resource)> = std::mem::take(&mut res.resources)
        .into_iter()
        .map(|r| (rank(r.kind()), gvk_key(&r), id_key(&r), r))
        .collect();
    keyed.sort_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| {
            if a.1 != b.1 {
                let namespaces = a.3.kind() == "Namespace" && b.3.kind() == "Namespace";
                if namespaces && (a.3.gvk().group.is_empty() || b.3.gvk().group.is_empty()) {
                    return b.1.cmp(&a.1);
                }
                return a.1.cmp(&b.1);
            }
            a.2.cmp(&b.2)
        })
    });
    res.resources = keyed.into_iter().map(|k| k.3).collect();
    Ok(())
}

fn or(s: &str, placeholder: &str) -> String {
    if s.is_empty() {
        placeholder.to_string()
    } else {
        s.to_string()
    }
}

fn gvk_key(r: &Resource) -> String {
    let g = r.gvk();
    format!(
        "{}_{}_{}",
        or(&g.group, "~G"),
        or(&g.version, "~V"),
        or(&g.kind, "~K")
    )
}

fn id_key(r: &Resource) -> String {
    let g = r.gvk();
    format!(
        "{}.{}.{}|{}|{}",
        g.kind,
        g.version,
        or(&g.group, "[noGrp]"),
        or(r.namespace(), "~X"),
        or(r.name(), "~N")
    )
}
