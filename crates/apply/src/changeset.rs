//! The change set: what an apply or prune did to each object, as Flux prints it.

use std::fmt;
use tidegate_core::ObjectRef;

/// What happened to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// It did not exist and was created (or was recreated after an immutable change).
    Created,
    /// It existed and was changed.
    Configured,
    /// Nothing was written.
    Unchanged,
    /// It was deleted (or was already gone).
    Deleted,
    /// A policy or ownership check left it alone.
    Skipped,
    /// The outcome is not known (a failed delete).
    Unknown,
}

impl Action {
    /// Whether the cluster was changed (`created`, `configured`, `deleted`).
    pub fn changed(self) -> bool {
        !matches!(self, Action::Unchanged | Action::Skipped)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Created => "created",
            Action::Configured => "configured",
            Action::Unchanged => "unchanged",
            Action::Deleted => "deleted",
            Action::Skipped => "skipped",
            Action::Unknown => "unknown",
        })
    }
}

/// One object's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSetEntry {
    /// The object.
    pub object: ObjectRef,
    /// Its API version without the group (`v1`), as Flux's inventory records it.
    pub version: String,
    /// What happened.
    pub action: Action,
}

impl ChangeSetEntry {
    /// The object's `apiVersion` (group and version).
    pub fn api_version(&self) -> String {
        if self.object.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.object.group, self.version)
        }
    }
}

/// `Kind/Namespace/Name action`.
impl fmt::Display for ChangeSetEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.object, self.action)
    }
}

/// The entries of an apply or prune, in the order the objects were handled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    /// The entries.
    pub entries: Vec<ChangeSetEntry>,
}

impl ChangeSet {
    /// Appends every entry of `other`.
    pub fn append(&mut self, other: ChangeSet) {
        self.entries.extend(other.entries);
    }

    /// The entries that changed the cluster, one `Kind/Namespace/Name action` per line (what
    /// Flux puts in its apply event).
    pub fn changes(&self) -> String {
        let lines: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.action.changed())
            .map(ToString::to_string)
            .collect();
        lines.join("\n")
    }

    /// How many entries have `action`.
    pub fn count(&self, action: Action) -> usize {
        self.entries.iter().filter(|e| e.action == action).count()
    }
}

/// Every entry, one per line.
impl fmt::Display for ChangeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_flux() {
        let entry = |kind: &str, ns: &str, action| ChangeSetEntry {
            object: ObjectRef {
                group: String::new(),
                kind: kind.into(),
                namespace: ns.into(),
                name: "web".into(),
            },
            version: "v1".into(),
            action,
        };
        let cs = ChangeSet {
            entries: vec![
                entry("Namespace", "", Action::Unchanged),
                entry("Service", "apps", Action::Configured),
                entry("ConfigMap", "apps", Action::Created),
            ],
        };
        assert_eq!(
            cs.to_string(),
            "Namespace/web unchanged\nService/apps/web configured\nConfigMap/apps/web created"
        );
        assert_eq!(
            cs.changes(),
            "Service/apps/web configured\nConfigMap/apps/web created"
        );
        assert_eq!(cs.count(Action::Unchanged), 1);
    }
}
