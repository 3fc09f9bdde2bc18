//! `tidegate apply DIR`: build a kustomization with the native engine and apply it in stages
//! with the apply manager, printing the change set (`Kind/Namespace/Name action`).

use crate::cluster::ClusterArgs;
use anyhow::Context;
use serde_json::Value;
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;
use tidegate_apply::store::{InventoryStore, Stored};
use tidegate_apply::{
    Action, ApplyOptions, Inventory, ManagerOptions, Owner, ResourceManager, WaitOptions,
};
use tidegate_kustomize::{Builder, LoadRestrictions, Options};

/// The label prefix of the owner labels `tidegate apply` sets with an inventory.
pub const OWNER_GROUP: &str = "apply.tidegate.dev";

/// Flags of `tidegate apply`.
#[derive(clap::Args)]
pub struct Args {
    /// The directory to build and apply (a kustomization, or plain manifests).
    dir: PathBuf,
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Field manager name of the applies.
    #[arg(long, default_value = "tidegate")]
    field_manager: String,
    /// Keep an inventory of the applied objects in ConfigMap NAME (owner labels are set on
    /// every object); it also lets the next run skip unchanged objects without requests.
    #[arg(long, value_name = "NAME")]
    inventory: Option<String>,
    /// Namespace of the inventory ConfigMap.
    #[arg(long, default_value = "default")]
    inventory_namespace: String,
    /// Delete objects recorded in the inventory that are no longer in DIR (needs --inventory).
    #[arg(long, requires = "inventory")]
    prune: bool,
    /// Wait until the applied objects are healthy.
    #[arg(long)]
    wait: bool,
    /// How long to wait for health (and for CRDs and Namespaces between stages).
    #[arg(long, default_value = "5m", value_parser = tidegate_core::duration::parse)]
    timeout: Duration,
    /// Validate with a server-side dry run and print what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Recreate objects whose change touches immutable fields.
    #[arg(long)]
    force: bool,
}

fn build(dir: &std::path::Path) -> anyhow::Result<Vec<Value>> {
    let root = dir
        .canonicalize()
        .with_context(|| format!("{}: no such directory", dir.display()))?;
    let options = Options {
        load_restrictions: LoadRestrictions::RootOnly,
        generate_missing: true,
        overlay: None,
        filter: None,
    };
    let built = Builder::new(&root, options)
        .and_then(|b| b.build(&root))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(built
        .resources
        .into_iter()
        .map(|r| Value::Object(r.obj))
        .collect())
}

/// Runs the apply. An error exits non-zero.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let objects = build(&args.dir)?;
    let client = args.cluster.client().await?;
    let owner = args.inventory.as_ref().map(|name| Owner {
        group: OWNER_GROUP.into(),
        name: name.clone(),
        namespace: args.inventory_namespace.clone(),
    });
    let manager = ResourceManager::new(
        client.clone(),
        ManagerOptions {
            field_manager: args.field_manager.clone(),
            owner,
            ..Default::default()
        },
    );
    let store = args.inventory.as_ref().map(|name| {
        InventoryStore::new(
            client.clone(),
            &args.inventory_namespace,
            name,
            &args.field_manager,
        )
    });
    let before = match &store {
        Some(s) => s.load().await?,
        None => Stored::default(),
    };
    let mut state = before.state.clone();
    let options = ApplyOptions {
        force: args.force,
        dry_run: args.dry_run,
        stage_timeout: args.timeout,
    };
    let applied = manager
        .apply_all_staged(objects.clone(), &options, &mut state)
        .await;
    let change_set = match applied {
        Ok(cs) => cs,
        Err(e) => {
            // What was written before the failure is still recorded.
            if let Some(s) = &store
                && !args.dry_run
                && state != before.state
            {
                let keep = Stored {
                    inventory: before.inventory.clone(),
                    state,
                };
                let _ = s.save(&keep).await;
            }
            // Every invalid object, one per line.
            if let tidegate_apply::Error::Validation(all) = &e {
                anyhow::bail!("{}", all.join("\n"));
            }
            anyhow::bail!("{e}");
        }
    };
    for entry in &change_set.entries {
        println!("{entry}{}", if args.dry_run { " (dry run)" } else { "" });
    }
    let mut inventory = Inventory::from_change_set(&change_set);
    let mut failure = None;
    if args.prune {
        let stale = before.inventory.stale(&inventory);
        if args.dry_run {
            for (r, _) in &stale {
                println!("{r} deleted (dry run)");
            }
        } else {
            let (deleted, result) = manager.delete_all(&stale).await;
            for entry in &deleted.entries {
                println!("{entry}");
                // What could not be deleted stays in the inventory, to be retried.
                if entry.action == Action::Unknown {
                    inventory.entries.push(tidegate_apply::InventoryEntry {
                        id: tidegate_apply::inventory::object_id(&entry.object),
                        v: entry.version.clone(),
                    });
                }
                if entry.action == Action::Deleted {
                    state
                        .objects
                        .remove(&tidegate_apply::inventory::object_id(&entry.object));
                }
            }
            failure = result.err();
        }
    } else if args.inventory.is_some() {
        // Without prune, objects that left DIR stay in the inventory.
        let kept: HashSet<String> = inventory.entries.iter().map(|e| e.id.clone()).collect();
        for e in &before.inventory.entries {
            if !kept.contains(&e.id) {
                inventory.entries.push(e.clone());
            }
        }
    }
    if let Some(s) = &store
        && !args.dry_run
    {
        let after = Stored { inventory, state };
        if after != before {
            s.save(&after).await?;
        }
    }
    if let Some(e) = failure {
        anyhow::bail!("{e}");
    }
    if args.wait && !args.dry_run {
        let ttl_jobs = objects
            .iter()
            .filter(|o| o.get("kind").and_then(Value::as_str) == Some("Job"))
            .filter(|o| o.pointer("/spec/ttlSecondsAfterFinished").is_some())
            .map(tidegate_core::ObjectRef::from_object)
            .collect();
        let to_check: Vec<(tidegate_core::ObjectRef, String)> = change_set
            .entries
            .iter()
            .filter(|e| e.action != Action::Skipped)
            .map(|e| (e.object.clone(), e.api_version()))
            .collect();
        let started = std::time::Instant::now();
        manager
            .wait(
                &to_check,
                &WaitOptions {
                    timeout: args.timeout,
                    fail_fast: true,
                    ttl_jobs,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| {
                anyhow::anyhow!("health check failed after {:?}: {e}", started.elapsed())
            })?;
        println!(
            "all {} objects are healthy ({:.1?})",
            to_check.len(),
            started.elapsed()
        );
    }
    Ok(())
}
