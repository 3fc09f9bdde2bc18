//! What the manager remembers between applies: per object, the hash of the desired state it
//! last applied and the resourceVersion the server answered with. When both still match, the
//! object is unchanged without a request.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// One object's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedRecord {
    /// sha256 of the desired object and the options that shape the apply.
    pub hash: String,
    /// The resourceVersion the object had after the apply (or after the check that found it
    /// unchanged).
    #[serde(rename = "rv")]
    pub resource_version: String,
}

/// The records of one applier (an inventory, a Kustomization), by inventory id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedState {
    /// Records by inventory id.
    #[serde(default)]
    pub objects: HashMap<String, AppliedRecord>,
}

impl AppliedState {
    /// The resourceVersions the writes of `change_set` left, by object (what a wait right
    /// after the apply must see at least).
    pub fn written_versions(
        &self,
        change_set: &crate::changeset::ChangeSet,
    ) -> HashMap<tidegate_core::ObjectRef, String> {
        change_set
            .entries
            .iter()
            .filter(|e| e.action.changed())
            .filter_map(|e| {
                let id = crate::inventory::object_id(&e.object);
                self.objects
                    .get(&id)
                    .map(|r| (e.object.clone(), r.resource_version.clone()))
            })
            .collect()
    }
}

/// The hash of a desired object as the manager will apply it: the object's JSON and the
/// settings that change the outcome.
pub fn desired_hash(obj: &Value, field_manager: &str, force: bool) -> String {
    hash_and_size(obj, field_manager, force).0
}

/// [`desired_hash`], and the length of the object's JSON (what a request carrying it sends).
pub fn hash_and_size(obj: &Value, field_manager: &str, force: bool) -> (String, usize) {
    let mut h = Counting {
        hasher: Sha256::new(),
        bytes: 0,
    };
    h.hasher.update(field_manager.as_bytes());
    h.hasher.update([0, u8::from(force)]);
    // Serialising into the hasher cannot fail: a Value always serialises and the hasher's
    // writer accepts everything.
    let _ = serde_json::to_writer(&mut h, obj);
    (format!("{:x}", h.hasher.finalize()), h.bytes)
}

/// A hasher that counts what it is fed.
struct Counting {
    hasher: Sha256,
    bytes: usize,
}

impl std::io::Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.hasher.update(buf);
        self.bytes += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hash_follows_content_and_settings() {
        let a = json!({"kind": "ConfigMap", "data": {"a": "1"}});
        let b = json!({"kind": "ConfigMap", "data": {"a": "2"}});
        assert_eq!(desired_hash(&a, "m", false), desired_hash(&a, "m", false));
        assert_ne!(desired_hash(&a, "m", false), desired_hash(&b, "m", false));
        assert_ne!(desired_hash(&a, "m", false), desired_hash(&a, "m", true));
        assert_ne!(desired_hash(&a, "m", false), desired_hash(&a, "n", false));
    }
}
