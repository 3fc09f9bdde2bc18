//! `tidegate export source git NAME|--all` and `tidegate export kustomization NAME|--all`:
//! existing objects as clean YAML (apiVersion, kind, name, namespace, labels, annotations
//! without kubectl's, spec), each after `---`, as `flux export` prints them.

use kube::api::ListParams;
use serde_json::{Map, Value};

use super::Global;
use super::create::export_yaml;
use super::kind::Kind;

/// What to export.
pub type What = super::kind::Target<Args, Args>;

/// Flags of `export`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The object to export.
    #[arg(required_unless_present = "all")]
    name: Option<String>,
    /// Every object of the kind in the namespace.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    global: Global,
}

/// The clean form of a live object.
pub fn clean(obj: &Value) -> Value {
    let mut meta = Map::new();
    let m = &obj["metadata"];
    for k in ["name", "namespace"] {
        if let Some(v) = m.get(k) {
            meta.insert(k.into(), v.clone());
        }
    }
    if let Some(l) = m
        .get("labels")
        .and_then(Value::as_object)
        .filter(|l| !l.is_empty())
    {
        meta.insert("labels".into(), Value::Object(l.clone()));
    }
    if let Some(a) = m.get("annotations").and_then(Value::as_object) {
        let kept: Map<String, Value> = a
            .iter()
            .filter(|(k, _)| !k.starts_with("kubectl.kubernetes.io/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !kept.is_empty() {
            meta.insert("annotations".into(), Value::Object(kept));
        }
    }
    let mut out = Map::new();
    out.insert("apiVersion".into(), obj["apiVersion"].clone());
    out.insert("kind".into(), obj["kind"].clone());
    out.insert("metadata".into(), Value::Object(meta));
    out.insert("spec".into(), obj["spec"].clone());
    Value::Object(out)
}

async fn export(kind: Kind, a: &Args) -> anyhow::Result<()> {
    let client = a.global.cluster.client().await?;
    let ns = &a.global.namespace;
    let objects = match &a.name {
        Some(n) if !a.all => vec![kind.get(&client, ns, n).await?],
        _ => {
            kind.api(&client, ns)
                .list(&ListParams::default())
                .await
                .map_err(|e| super::api_error(&e))?
                .items
        }
    };
    for o in objects {
        let v = serde_json::to_value(&o)?;
        print!("{}", export_yaml(&clean(&v)));
    }
    Ok(())
}

/// Runs `export`.
pub async fn run(what: What) -> anyhow::Result<()> {
    let (kind, _, a) = what.pick();
    export(kind, &a).await
}
