//! Tidegate's controllers. Each reconciler reaches its cluster only through kube-rs over HTTP,
//! so what runs against the embedded API server runs against any Kubernetes.
//!
//! - [`gitrepository`]: `source.toolkit.fluxcd.io/v1` GitRepository (Flux's source-controller);
//! - [`helmchart`]: `source.toolkit.fluxcd.io/v1` HelmChart (source-controller);
//! - [`helmrepository`]: `source.toolkit.fluxcd.io/v1` HelmRepository (source-controller);
//! - [`artifactgenerator`]: `source.extensions.fluxcd.io/v1beta1` ArtifactGenerator (Flux's
//!   source-watcher), publishing ExternalArtifacts;
//! - [`bucket`]: `source.toolkit.fluxcd.io/v1` Bucket (source-controller);
//! - [`ocirepository`]: `source.toolkit.fluxcd.io/v1` OCIRepository (source-controller);
//! - [`clusterresourceset`]: Cluster API's `addons.cluster.x-k8s.io` ClusterResourceSet, with
//!   Tidegate's `ContinuousApply` strategy;
//! - [`helmrelease`]: `helm.toolkit.fluxcd.io/v2` HelmRelease (Flux's helm-controller);
//! - [`receiver`]: `notification.toolkit.fluxcd.io/v1` Receiver and its webhook server (Flux's
//!   notification-controller);
//! - [`kustomization`]: `kustomize.toolkit.fluxcd.io/v1` Kustomization (Flux's
//!   kustomize-controller);
//! - [`events`], [`metrics`], [`status`], [`timing`], [`fresh`]: what every reconciler shares.

pub mod artifactgenerator;
pub mod bucket;
pub mod cluster;
pub mod clusterresourceset;
pub mod events;
pub mod file_urls;
pub mod finalizer;
pub mod fresh;
pub mod gitrepository;
pub mod helmchart;
pub mod helmrelease;
pub mod helmrepository;
pub mod imageautomation;
pub mod imagereflector;
pub mod kubeconfig;
pub mod kustomization;
pub mod leader;
pub mod metrics;
pub mod notification;
pub mod ocirepository;
pub mod receiver;
mod selector;
pub mod shared;
mod source;
mod sources;
pub mod status;
pub mod timing;
