//! `tidegate tree kustomization NAME`: the inventory as a tree, nested Kustomizations
//! expanded and HelmReleases expanded into the objects of their current release (from Helm's
//! storage), as `flux tree kustomization` prints it; `tidegate tree artifact generator NAME`:
//! an ArtifactGenerator's ExternalArtifacts.

use kube::Client;

use super::Global;
use super::kind::{HELM_RELEASE, KUSTOMIZATION};

/// Flags of `tree kustomization`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The Kustomization's name.
    name: String,
    /// Only the Flux objects (`*.toolkit.fluxcd.io`).
    #[arg(long)]
    compact: bool,
    #[command(flatten)]
    global: Global,
}

/// What to draw.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// A Kustomization and what it manages.
    #[command(alias = "ks")]
    Kustomization(Args),
    /// Artifacts (`tree artifact generator NAME`).
    #[command(subcommand)]
    Artifact(ArtifactWhat),
    /// A ClusterResourceSet: per Cluster, each resource's last apply and its objects' state.
    #[command(alias = "crs")]
    Clusterresourceset(super::clusterresourceset::Args),
}

/// Artifact producers to draw.
#[derive(clap::Subcommand, Debug)]
pub enum ArtifactWhat {
    /// An ArtifactGenerator and the ExternalArtifacts it manages (its inventory).
    Generator(GeneratorArgs),
}

/// Flags of `tree artifact generator`.
#[derive(clap::Args, Debug)]
pub struct GeneratorArgs {
    /// The ArtifactGenerator's name.
    name: String,
    #[command(flatten)]
    global: Global,
}

/// An ArtifactGenerator (`obj`, as stored) with its inventory's ExternalArtifacts.
fn generator_tree(obj: &serde_json::Value) -> Node {
    let text = |v: &serde_json::Value, p: &str| {
        v.pointer(p)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let children = obj
        .pointer("/status/inventory")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            leaf(
                "ExternalArtifact",
                &text(e, "/namespace"),
                &text(e, "/name"),
            )
        })
        .collect();
    Node {
        label: label(
            "ArtifactGenerator",
            &text(obj, "/metadata/namespace"),
            &text(obj, "/metadata/name"),
        ),
        children,
    }
}

/// One node: its `Kind/namespace/name` and its children.
#[derive(Debug, PartialEq)]
pub struct Node {
    label: String,
    children: Vec<Node>,
}

impl Node {
    /// A node with its children.
    pub fn new(label: String, children: Vec<Node>) -> Node {
        Node { label, children }
    }
}

fn label(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    }
}

/// Flux's `--compact`: only objects of the toolkit's groups.
fn shown(group: &str, compact: bool) -> bool {
    !compact || group.contains("toolkit.fluxcd.io")
}

fn leaf(kind: &str, namespace: &str, name: &str) -> Node {
    Node {
        label: label(kind, namespace, name),
        children: Vec::new(),
    }
}

/// The tree of a Kustomization; `depth` guards against cycles.
async fn node(
    client: &Client,
    namespace: &str,
    name: &str,
    compact: bool,
    depth: usize,
) -> anyhow::Result<Node> {
    let obj = KUSTOMIZATION.get(client, namespace, name).await?;
    let remote = obj.data.pointer("/spec/kubeConfig").is_some();
    let mut children = Vec::new();
    for (_, r) in super::kind::inventory(&obj) {
        if !shown(&r.group, compact)
            || (r.kind == "Kustomization"
                && r.group == KUSTOMIZATION_GROUP
                && r.namespace == namespace
                && r.name == name)
        {
            continue;
        }
        let mut n = leaf(&r.kind, &r.namespace, &r.name);
        if r.kind == "HelmRelease" && r.group == HELM_GROUP {
            n.children = release_objects(client, &r.namespace, &r.name)
                .await?
                .into_iter()
                .filter(|(group, ..)| shown(group, compact))
                .map(|(_, kind, ns, name)| leaf(&kind, &ns, &name))
                .collect();
        }
        if r.kind == "Kustomization" && r.group == KUSTOMIZATION_GROUP && !remote && depth < 16 {
            let nested = Box::pin(node(client, &r.namespace, &r.name, compact, depth + 1))
                .await
                .map_err(|e| anyhow::anyhow!("failed to find object: {e}"))?;
            n.children = nested.children;
        }
        children.push(n);
    }
    Ok(Node {
        label: label("Kustomization", namespace, name),
        children,
    })
}

/// The objects of a HelmRelease's current release, from Helm's storage: (group, kind,
/// namespace, name), namespaced objects without a namespace in the release's. Nothing for a
/// release in a remote cluster or not (yet) stored.
async fn release_objects(
    client: &Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<Vec<(String, String, String, String)>> {
    let hr = HELM_RELEASE.get(client, namespace, name).await?;
    let d = &hr.data;
    if d.pointer("/spec/kubeConfig").is_some() {
        return Ok(Vec::new());
    }
    let s = |p: &str| {
        d.pointer(p)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
    };
    let storage_ns = s("/status/storageNamespace");
    let (Some(latest_name), Some(version)) = (
        d.pointer("/status/history/0/name")
            .and_then(serde_json::Value::as_str),
        d.pointer("/status/history/0/version")
            .and_then(serde_json::Value::as_i64),
    ) else {
        return Ok(Vec::new());
    };
    if storage_ns.is_empty() {
        return Ok(Vec::new());
    }
    let release_ns = s("/status/history/0/namespace").to_string();
    let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(client.clone(), storage_ns);
    let record = tidegate_helm::storage::secret_name(latest_name, version);
    let Some(secret) = secrets.get_opt(&record).await.map_err(|e| {
        anyhow::anyhow!(
            "failed to find the Helm storage object for HelmRelease '{namespace}/{name}': {e}"
        )
    })?
    else {
        return Ok(Vec::new());
    };
    let data = secret.data.unwrap_or_default();
    let Some(raw) = data.get("release") else {
        anyhow::bail!(
            "failed to decode the Helm storage object for HelmRelease '{namespace}/{name}'"
        );
    };
    let release = tidegate_helm::storage::decode(&raw.0).map_err(|e| {
        anyhow::anyhow!(
            "failed to decode the Helm storage object for HelmRelease '{namespace}/{name}': {e}"
        )
    })?;
    let resolver = tidegate_apply::resolve::Resolver::new(client.clone());
    let mut out = Vec::new();
    for doc in tidegate_helm::release::split_manifests(&release.manifest) {
        let Ok(obj) = tidegate_core::yaml::parse_one(&doc) else {
            continue;
        };
        let r = tidegate_core::ObjectRef::from_object(&obj);
        if r.kind.is_empty() || r.name.is_empty() {
            continue;
        }
        let mut ns = r.namespace.clone();
        if ns.is_empty() {
            let api_version = obj["apiVersion"].as_str().unwrap_or_default();
            if let Ok(Some(t)) = resolver.resolve(api_version, &r.kind).await
                && t.namespaced
            {
                ns = release_ns.clone();
            }
        }
        out.push((r.group, r.kind, ns, r.name));
    }
    Ok(out)
}

const KUSTOMIZATION_GROUP: &str = "kustomize.toolkit.fluxcd.io";
const HELM_GROUP: &str = "helm.toolkit.fluxcd.io";

/// Draws `node` with box-drawing branches.
pub fn draw(node: &Node) -> String {
    let mut out = format!("{}\n", node.label);
    draw_children(&node.children, "", &mut out);
    out
}

fn draw_children(children: &[Node], prefix: &str, out: &mut String) {
    for (i, c) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        out.push_str(prefix);
        out.push_str(if last { "└── " } else { "├── " });
        out.push_str(&c.label);
        out.push('\n');
        let next = format!("{prefix}{}", if last { "    " } else { "│   " });
        draw_children(&c.children, &next, out);
    }
}

/// Runs `tree`.
pub async fn run(what: What) -> anyhow::Result<()> {
    match what {
        What::Kustomization(a) => {
            let client = a.global.cluster.client().await?;
            let tree = node(&client, &a.global.namespace, &a.name, a.compact, 0).await?;
            print!("{}", draw(&tree));
        }
        What::Artifact(ArtifactWhat::Generator(a)) => {
            let client = a.global.cluster.client().await?;
            let obj = super::kind::ARTIFACT_GENERATOR
                .get(&client, &a.global.namespace, &a.name)
                .await?;
            print!("{}", draw(&generator_tree(&serde_json::to_value(&obj)?)));
        }
        What::Clusterresourceset(a) => super::clusterresourceset::tree(a).await?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(l: &str) -> Node {
        Node {
            label: l.into(),
            children: Vec::new(),
        }
    }

    #[test]
    fn a_generator_s_tree_is_its_inventory() {
        let g = serde_json::json!({"metadata": {"name": "flux-system", "namespace": "flux-system"},
            "status": {"inventory": [
                {"name": "infrastructure", "namespace": "flux-system", "digest": "sha256:a", "filename": "1.tar.gz"},
                {"name": "apps", "namespace": "flux-system", "digest": "sha256:b", "filename": "2.tar.gz"}]}});
        assert_eq!(
            draw(&generator_tree(&g)),
            "ArtifactGenerator/flux-system/flux-system\n├── ExternalArtifact/flux-system/infrastructure\n└── ExternalArtifact/flux-system/apps\n"
        );
    }

    #[test]
    fn draws_like_flux() {
        let tree = Node {
            label: "Kustomization/flux-system/flux-system".into(),
            children: vec![
                Node {
                    label: "Kustomization/flux-system/apps".into(),
                    children: vec![leaf("Service/apps/web"), leaf("Deployment/apps/web")],
                },
                leaf("Namespace/apps"),
            ],
        };
        assert_eq!(
            draw(&tree),
            "Kustomization/flux-system/flux-system\n├── Kustomization/flux-system/apps\n│   ├── Service/apps/web\n│   └── Deployment/apps/web\n└── Namespace/apps\n"
        );
    }
}
