//! The ordered set of resources a build accumulates, with kustomize's id-conflict rule.

use crate::error::{Error, ErrorKind, Result};
use crate::resource::{ResId, Resource};

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
        let id = res.id();
        if let Some(existing) = self.resources.iter().find(|r| r.id().same(&id)) {
            return Err(Error::in_file(
                ErrorKind::IdConflict,
                res.origin.clone(),
                format!(
                    "may not add resource with an already registered id: {id} (first read from {})",
                    existing.origin
                ),
            )
            .at_line(Some(res.line)));
        }
        self.resources.push(res);
        Ok(())
    }

    /// Adds every resource of `other`.
    pub fn append_all(&mut self, other: ResMap) -> Result<()> {
        for r in other.resources {
            self.append(r)?;
        }
        Ok(())
    }

    /// Indexes of resources any of whose ids (current or earlier) is `id`.
    pub fn by_any_id(&self, id: &ResId) -> Vec<usize> {
        (0..self.resources.len())
            .filter(|&i| self.resources[i].any_id(|x| x.same(id)))
            .collect()
    }

    /// Indexes of resources whose current id is `id`.
    pub fn by_current_id(&self, id: &ResId) -> Vec<usize> {
        (0..self.resources.len())
            .filter(|&i| self.resources[i].id().same(id))
            .collect()
    }
}
