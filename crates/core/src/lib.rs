//! Tidegate's object model, shared by every stage of the pipeline.
//!
//! Objects are kept as `serde_json::Value` with key order preserved, so what a user wrote is
//! what the server stores and what a diff shows. This crate holds the small vocabulary every
//! other crate speaks: object references (`Kind/Namespace/Name`), label and field selectors, and
//! YAML streams.

pub mod cel;
pub mod duration;
pub mod gojson;
pub mod labels;
pub mod object_ref;
pub mod secret;
pub mod semver;
pub mod yaml;

pub use labels::{LabelSelector, SelectorError};
pub use object_ref::ObjectRef;
