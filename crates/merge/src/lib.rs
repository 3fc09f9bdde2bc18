//! Structured merge and strategic merge patch for Tidegate's API server.
//!
//! [`Updater`] implements server-side apply's field ownership over a [`Schema`]: which manager
//! owns which fields ([`Set`], encoded as FieldsV1), conflicts, and removal of fields an applier
//! stopped declaring — the semantics of Kubernetes' structured-merge-diff. Schemas come from the
//! built-in OpenAPI definitions, CRD structural schemas, or structured-merge-diff's own format.

pub mod compare;
pub mod fieldpath;
pub mod merge;
pub mod openapi;
pub mod remove;
pub mod schema;
pub mod set;
pub mod smd_format;
pub mod smp;
pub mod typed;
pub mod updater;
pub mod value;

pub use compare::{Comparison, compare};
pub use fieldpath::{Path, PathElement};
pub use merge::merge;
pub use openapi::{builtin_schema, schema_for_crd, schema_from_definitions};
pub use remove::{extract_items, remove_items};
pub use schema::{Schema, TypeRef};
pub use set::Set;
pub use typed::{ValidationErrors, to_field_set, validate};
pub use updater::{
    Conflict, Conflicts, ConvertError, Converter, Filter, Identity, ManagedFields, MergeError,
    Roots, Updater, VersionedSet,
};
