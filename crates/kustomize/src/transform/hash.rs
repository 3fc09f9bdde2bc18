//! Appends the content hash to the names of generated objects that want it.

use crate::error::Result;
use crate::generate::content_hash;
use crate::resmap::ResMap;

/// Renames every generated ConfigMap and Secret with a hash to `<name>-<hash>`.
pub fn add_hashes(res: &mut ResMap) -> Result<()> {
    for r in &mut res.resources {
        if r.generated.as_ref().is_some_and(|g| g.hash) {
            let name = format!("{}-{}", r.name(), content_hash(&r.obj));
            r.set_name(&name);
        }
    }
    Ok(())
}
