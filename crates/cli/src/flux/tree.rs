//! `tidegate tree kustomization NAME`: the inventory as a tree, nested Kustomizations
//! expanded, as `flux tree kustomization` prints it.

use kube::Client;

use super::Global;
use super::kind::KUSTOMIZATION;

/// Flags of `tree kustomization`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The Kustomization's name.
    name: String,
    #[command(flatten)]
    global: Global,
}

/// What to draw.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// A Kustomization and what it manages.
    #[command(alias = "ks")]
    Kustomization(Args),
}

/// One node: its `Kind/namespace/name` and its children.
#[derive(Debug, PartialEq)]
pub struct Node {
    label: String,
    children: Vec<Node>,
}

fn label(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    }
}

/// The tree of a Kustomization; `depth` guards against cycles.
async fn node(client: &Client, namespace: &str, name: &str, depth: usize) -> anyhow::Result<Node> {
    let obj = KUSTOMIZATION.get(client, namespace, name).await?;
    let mut children = Vec::new();
    for (_, r) in super::kind::inventory(&obj) {
        if r.kind == "Kustomization" && r.group == KUSTOMIZATION_GROUP && depth < 16 {
            match Box::pin(node(client, &r.namespace, &r.name, depth + 1)).await {
                Ok(n) => children.push(n),
                Err(_) => children.push(Node {
                    label: label(&r.kind, &r.namespace, &r.name),
                    children: Vec::new(),
                }),
            }
        } else {
            children.push(Node {
                label: label(&r.kind, &r.namespace, &r.name),
                children: Vec::new(),
            });
        }
    }
    Ok(Node {
        label: label("Kustomization", namespace, name),
        children,
    })
}

const KUSTOMIZATION_GROUP: &str = "kustomize.toolkit.fluxcd.io";

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
    let What::Kustomization(a) = what;
    let client = a.global.cluster.client().await?;
    let tree = node(&client, &a.global.namespace, &a.name, 0).await?;
    print!("{}", draw(&tree));
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
