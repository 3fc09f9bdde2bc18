//! Tidegate's sources: a Git ref becomes an immutable, verified artifact that other controllers
//! download by URL and digest.
//!
//! - [`tree`] and [`ignore`]: the files of a source and Flux's `.sourceignore` rules;
//! - [`archive`]: reproducible tar.gz with a `sha256:` digest;
//! - [`extract`]: safe extraction of a downloaded artifact (the consumer side).

pub mod archive;
pub mod extract;
pub mod fetch;
pub mod git;
pub mod ignore;
pub mod package;
pub mod server;
pub mod ssh;
pub mod storage;
pub mod tls;
pub mod tree;
pub mod verify;
