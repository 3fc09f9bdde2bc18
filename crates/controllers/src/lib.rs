//! Tidegate's controllers. Each reconciler reaches its cluster only through kube-rs over HTTP,
//! so what runs against the embedded API server runs against any Kubernetes.
//!
//! - [`gitrepository`]: `source.toolkit.fluxcd.io/v1` GitRepository (Flux's source-controller);
//! - [`events`], [`metrics`], [`status`], [`timing`]: what every reconciler shares.

pub mod events;
pub mod gitrepository;
pub mod metrics;
pub mod status;
pub mod timing;
