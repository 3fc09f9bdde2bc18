//! The ordered set of resources a build accumulates, with kustomize's id-conflict rule.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, ErrorKind, Result};
use crate::resource::{Gvk, ResId, Resource};

/// A current id with the namespace made effective (unset = `default`), for hashing; equal keys
/// are exactly the ids [`ResId::same`] treats as one.
#[derive(PartialEq, Eq, Hash)]
struct IdKey {
    gvk: Gvk,
    name: String,
    namespace: String,
}

impl IdKey {
    fn of(r: &Resource) -> IdKey {
        let ns = r.namespace();
        IdKey {
            gvk: r.gvk(),
            name: r.name().to_string(),
            namespace: if ns.is_empty() {
                "default".into()
            } else {
                ns.to_string()
            },
        }
    }
}

/// Resources in the order they were accumulated.
#[derive(Debug, Clone, Default)]
pub struct ResMap {
    /// The resources.
    pub resources: Vec<Resource>,
}

impl ResMap {
    /// An empty map.
    pub fn new() -> ResMap {
        ResMap::default()
    }

    /// Number of resources.
    pub fn len(&self) -> usize {
        self.resources.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }

    /// Adds a resource; one whose current id is already present is a conflict.
    pub fn append(&mut self, res: Resource) -> Result<()> {
        self.extend(vec![res])
    }

    /// Adds every resource of `other`.
    pub fn append_all(&mut self, other: ResMap) -> Result<()> {
        self.extend(other.resources)
    }

    /// Adds resources in order; any whose current id is already present (or repeats within
    /// `incoming`) is a conflict. The existing ids are indexed once per call.
    pub fn extend(&mut self, incoming: Vec<Resource>) -> Result<()> {
        let mut seen: HashMap<IdKey, usize> = self
            .resources
            .iter()
            .enumerate()
            .map(|(i, r)| (IdKey::of(r), i))
            .collect();
        for res in incoming {
            let key = IdKey::of(&res);
            if let Some(&i) = seen.get(&key) {
                return Err(Error::in_file(
                    ErrorKind::IdConflict,
                    res.origin.clone(),
                    format!(
                        "may not add resource with an already registered id: {} (first read from {})",
                        res.id(),
                        self.resources[i].origin
                    ),
                )
                .at_line(Some(res.line)));
            }
            seen.insert(key, self.resources.len());
            self.resources.push(res);
        }
        Ok(())
    }

    /// The first pair of resources sharing a current id, if any.
    pub fn first_duplicate(&self) -> Option<&Resource> {
        let mut seen = HashSet::new();
        self.resources.iter().find(|r| !seen.insert(IdKey::of(r)))
    }

    /// Indexes of resources any of whose ids (current or earlier) is `id`.
    pub fn by_any_id(&self, id: &ResId) -> Vec<usize> {
        (0..self.resources.len())
            .filter(|&i| self.resources[i].any_id(|x| x.same(id)))
            .collect()
    }
}
