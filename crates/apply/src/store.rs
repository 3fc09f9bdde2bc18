//! An inventory kept in a ConfigMap, for applies run from the command line (a Kustomization
//! keeps its inventory in its status instead). It also keeps the applied-state records, so the
//! next run can skip unchanged objects without a request.

use crate::error::{Error, describe};
use crate::inventory::Inventory;
use crate::state::AppliedState;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

const INVENTORY_KEY: &str = "inventory";
const APPLIED_KEY: &str = "applied";

/// What an inventory ConfigMap holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stored {
    /// The managed objects.
    pub inventory: Inventory,
    /// The applied-state records.
    pub state: AppliedState,
}

/// A ConfigMap holding an inventory.
pub struct InventoryStore {
    api: Api<ConfigMap>,
    name: String,
    namespace: String,
    field_manager: String,
}

impl InventoryStore {
    /// The inventory `namespace`/`name`.
    pub fn new(client: Client, namespace: &str, name: &str, field_manager: &str) -> InventoryStore {
        InventoryStore {
            api: Api::namespaced(client, namespace),
            name: name.into(),
            namespace: namespace.into(),
            field_manager: field_manager.into(),
        }
    }

    fn context(&self, what: &str) -> String {
        format!(
            "{what} inventory ConfigMap/{}/{}",
            self.namespace, self.name
        )
    }

    /// Reads the inventory; an absent ConfigMap is an empty inventory.
    pub async fn load(&self) -> Result<Stored, Error> {
        let cm = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| Error::Cluster {
                context: self.context("reading"),
                message: describe(&e),
            })?;
        let Some(data) = cm.and_then(|c| c.data) else {
            return Ok(Stored::default());
        };
        let field = |key: &str| data.get(key).map(String::as_str).unwrap_or("{}");
        let inventory = serde_json::from_str(field(INVENTORY_KEY)).map_err(|e| Error::Cluster {
            context: self.context("reading"),
            message: format!("data.{INVENTORY_KEY}: {e}"),
        })?;
        // Lost records only cost requests: a damaged record set is dropped, not fatal.
        let state = serde_json::from_str(field(APPLIED_KEY)).unwrap_or_default();
        Ok(Stored { inventory, state })
    }

    /// Writes the inventory (server-side apply of the ConfigMap).
    pub async fn save(&self, stored: &Stored) -> Result<(), Error> {
        let encode = |v: serde_json::Result<String>| {
            v.map_err(|e| Error::Cluster {
                context: self.context("writing"),
                message: e.to_string(),
            })
        };
        let cm = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/managed-by": "tidegate"},
            },
            "data": {
                INVENTORY_KEY: encode(serde_json::to_string(&stored.inventory))?,
                APPLIED_KEY: encode(serde_json::to_string(&stored.state))?,
            },
        });
        self.api
            .patch(
                &self.name,
                &PatchParams::apply(&self.field_manager).force(),
                &Patch::Apply(&cm),
            )
            .await
            .map_err(|e| Error::Cluster {
                context: self.context("writing"),
                message: describe(&e),
            })?;
        Ok(())
    }
}
