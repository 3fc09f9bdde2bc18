//! Tidegate's apply manager, the heart of a Flux reconciler: apply a set of objects with
//! server-side apply in stages (CRDs, Namespaces and ClusterRoles first, then `…Class` kinds,
//! then the rest), say what changed (`Kind/Namespace/Name action`), skip objects that have not
//! changed without asking the server, take fields over from `kubectl`, recreate objects on
//! immutable changes when forced, wait for health (kstatus), and prune what left the source.
//!
//! It speaks to clusters only through kube-rs, so it behaves the same against the embedded
//! API server and any Kubernetes.

pub mod cel;
pub mod changeset;
pub mod custom_health;
pub mod error;
pub mod health;
pub mod inventory;
pub mod jsondiff;
pub mod live;
mod manager;
pub mod normalize;
mod plan;
pub mod policy;
mod prune;
pub mod resolve;
pub mod sort;
pub mod state;
mod status_index;
pub mod store;
pub mod takeover;
pub mod wait;

pub use changeset::{Action, ChangeSet, ChangeSetEntry};
pub use error::Error;
pub use inventory::{Inventory, InventoryEntry};
pub use manager::{ApplyOptions, ManagerOptions, Owner, ResourceManager, Validated};
pub use state::AppliedState;
pub use wait::WaitOptions;
