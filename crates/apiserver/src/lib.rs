//! Tidegate's embedded Kubernetes-compatible API server.
//!
//! Real `kubectl` and kube-rs clients talk to it over HTTPS as they would to kube-apiserver:
//! discovery, OpenAPI, the REST verbs on every built-in resource and on custom resources from
//! CRDs, watches, and `metav1.Status` errors. State lives in SQLite (see [`store`]).
//!
//! ```no_run
//! # async fn run() -> Result<(), tidegate_apiserver::ServeError> {
//! let server = tidegate_apiserver::ApiServer::start(tidegate_apiserver::Config::default()).await?;
//! println!("serving at {}", server.url);
//! # Ok(()) }
//! ```

// ApiError carries a full Status body; it is built on the error path only, so its size does
// not matter for the happy path.
#![allow(clippy::result_large_err)]

mod admission;
mod allocate;
pub mod auth;
pub mod client_cert;
mod controllers;
mod crd_cel;
mod crd_schema;
pub mod defaults;
pub mod discovery;
pub mod error;
mod event_versions;
mod fieldmanager;
mod fieldsel;
mod fieldvalidation;
mod health;
mod hooks;
pub mod http;

mod immutable;
mod jsonpatch;
pub mod listen;
pub mod lock;
mod objects;
mod openapi;
mod openapi_proto;
mod printers;
pub mod protobuf;
pub mod registry;
mod rest;
pub mod route;
mod server;
pub mod simulator;
pub mod store;
pub mod table;
pub mod tls;
mod typecheck;
mod validate;
mod validation;

pub use auth::AuthorizationMode;
pub use server::{ApiServer, Config, GIT_VERSION, ServeError, ServerState, private_dir};
