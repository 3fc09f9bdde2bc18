//! `tidegate build kustomization NAME --path DIR [--kustomization-file F] [--dry-run]`: what the
//! controller would apply for a Kustomization, built from local files (no push needed): the
//! spec's overlay, post-build substitution (with `substituteFrom` read from the cluster unless
//! `--dry-run`), `commonMetadata` and the owner labels.

use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::Value;
use tidegate_api::Kustomization;
use tidegate_controllers::kustomization::generate;
use tidegate_kustomize::{Builder, LoadRestrictions, Options};

use super::Global;

/// Flags of `build kustomization`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The Kustomization's name.
    name: String,
    /// The local directory to build (what `spec.path` points at in the repository).
    #[arg(long)]
    path: PathBuf,
    /// A file holding the Kustomization (instead of reading it from the cluster).
    #[arg(long)]
    kustomization_file: Option<PathBuf>,
    /// Build without the cluster (needs --kustomization-file; `substituteFrom` is skipped).
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    pub global: Global,
}

impl Args {
    /// The Kustomization's name.
    pub fn name_any(&self) -> String {
        self.name.clone()
    }
}

/// The objects the controller would apply, in build order.
pub async fn objects(a: &Args) -> anyhow::Result<Vec<Value>> {
    let ns = a.global.namespace.clone();
    let client = if a.dry_run {
        None
    } else {
        Some(a.global.cluster.client().await?)
    };
    let ks: Kustomization = match (&a.kustomization_file, &client) {
        (Some(f), _) => {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            let docs = tidegate_core::yaml::parse_stream(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
            let doc = docs
                .into_iter()
                .find(|d| {
                    d["kind"] == "Kustomization"
                        && d["apiVersion"]
                            .as_str()
                            .is_some_and(|v| v.starts_with("kustomize.toolkit.fluxcd.io/"))
                        && d["metadata"]["name"] == a.name.as_str()
                })
                .ok_or_else(|| {
                    anyhow::anyhow!("{}: no Kustomization named '{}'", f.display(), a.name)
                })?;
            serde_json::from_value(doc).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?
        }
        (None, Some(c)) => {
            let api: kube::Api<Kustomization> = kube::Api::namespaced(c.clone(), &ns);
            api.get(&a.name)
                .await
                .map_err(|e| super::describe("Kustomization", &ns, &a.name, &e))?
        }
        (None, None) => anyhow::bail!("--dry-run needs --kustomization-file"),
    };
    let namespace = ks.metadata.namespace.clone().unwrap_or(ns);
    let dir = a
        .path
        .canonicalize()
        .with_context(|| format!("--path {}: no such directory", a.path.display()))?;
    let options = Options {
        load_restrictions: LoadRestrictions::None,
        generate_missing: true,
        overlay: Some(generate::overlay(&ks.spec)),
    };
    // A local build trusts the local filesystem: the root is `/`.
    let built = Builder::new(std::path::Path::new("/"), options)
        .and_then(|b| b.build(&dir))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut objects: Vec<Value> = built
        .resources
        .into_iter()
        .map(|r| Value::Object(r.obj))
        .collect();
    let vars = generate::variables(client.as_ref(), &namespace, &ks.spec)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    generate::post_build(&mut objects, &ks.spec, &vars).map_err(|e| anyhow::anyhow!("{e}"))?;
    for o in &mut objects {
        tidegate_apply::normalize::set_owner_labels(
            o,
            tidegate_api::kustomization::GROUP,
            &a.name,
            &namespace,
        );
    }
    Ok(objects)
}

/// Runs `build kustomization`: the YAML stream on stdout.
pub async fn run(a: Args) -> anyhow::Result<()> {
    let objects = objects(&a).await?;
    print!(
        "{}",
        tidegate_kustomize::yaml::to_stream(objects.iter().filter_map(Value::as_object))
    );
    Ok(())
}
