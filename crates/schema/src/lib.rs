//! The type structure and resource catalogue of Kubernetes kinds.
//!
//! Built-in kinds come from a table generated from the Kubernetes 1.35 OpenAPI document by
//! `scripts/gen-schema.py` and committed as `data/kubernetes.json`; custom kinds come from
//! CustomResourceDefinitions ([`crd`]). Both describe a resource the same way
//! ([`ResourceInfo`]), so the API server, kustomize and the apply manager need not care where a
//! kind came from.

pub mod builtin;
pub mod crd;
pub mod protobuf;
pub mod resource;

pub use builtin::{builtin_definitions, builtin_resources};
pub use resource::{PrinterColumn, ResourceInfo, SubresourceInfo, version_priority};
