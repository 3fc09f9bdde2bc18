//! Tidegate's sources: a Git ref becomes an immutable, verified artifact that other controllers
//! download by URL and digest.
//!
//! - [`tree`] and [`ignore`]: the files of a source and Flux's `.sourceignore` rules;
//! - [`archive`]: reproducible tar.gz with a `sha256:` digest;
//! - [`extract`]: safe extraction of a downloaded artifact (the consumer side);
//! - [`fetch`]: downloads with timeouts, shared by the consumers of one artifact;
//! - [`oci`]: OCI artifacts in registries (pull, push, tags);
//! - [`scratch`]: per-process temporary space, cleared of what killed processes left.

pub mod archive;
pub mod bucket;
pub mod extract;
pub mod fetch;
pub mod git;
pub mod helm_index;
pub mod ignore;
pub mod image;
pub mod oci;
pub mod package;
pub mod scratch;
pub mod server;
pub mod sigv4;
pub mod ssh;
pub mod storage;
pub mod tls;
pub mod tree;
pub mod verify;
