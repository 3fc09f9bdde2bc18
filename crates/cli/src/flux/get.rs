//! `tidegate get sources git|oci|helm|chart|bucket|external|all | artifact generators |
//! kustomizations | helmreleases | all [-A]`: Flux's table
//! (`NAME REVISION SUSPENDED READY MESSAGE`, `NAMESPACE` first with `-A`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{DynamicObject, ListParams};
use kube::{Api, Client};
use serde_json::Value;

use super::kind::{
    ALERT, ARTIFACT_GENERATOR, BUCKET, EXTERNAL_ARTIFACT, GIT_REPOSITORY, HELM_CHART, HELM_RELEASE,
    HELM_REPOSITORY, IMAGE_POLICY, IMAGE_REPOSITORY, IMAGE_UPDATE, KUSTOMIZATION, Kind,
    OCI_REPOSITORY, PROVIDER,
};

use super::Global;

/// What to list.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Sources (`get sources git`).
    #[command(subcommand, alias = "source")]
    Sources(SourceWhat),
    /// Kustomizations.
    #[command(alias = "kustomization", alias = "ks")]
    Kustomizations(Args),
    /// HelmReleases.
    #[command(alias = "helmrelease", alias = "hr")]
    Helmreleases(Args),
    /// ArtifactGenerators (`get artifact generators`).
    #[command(subcommand, alias = "artifact")]
    Artifacts(ArtifactWhat),
    /// Every source, Kustomization and HelmRelease.
    All(Args),
    /// notification Receivers.
    #[command(alias = "receiver")]
    Receivers(Args),
    /// notification Alerts.
    #[command(alias = "alert")]
    Alerts(Args),
    /// notification Providers.
    #[command(name = "alert-providers", alias = "alert-provider")]
    AlertProviders(Args),
    /// Image automation objects (`get images repository|policy|all`).
    #[command(subcommand, alias = "image")]
    Images(ImagesWhat),
    /// Cluster API ClusterResourceSets (namespace `default` unless `-n`).
    #[command(alias = "clusterresourceset", alias = "crs")]
    Clusterresourcesets(super::clusterresourceset::Args),
    /// Cluster API ClusterResourceSetBindings.
    #[command(alias = "clusterresourcesetbinding")]
    Clusterresourcesetbindings(super::clusterresourceset::Args),
}

/// Artifact kinds to list.
#[derive(clap::Subcommand, Debug)]
pub enum ArtifactWhat {
    /// ArtifactGenerators.
    #[command(alias = "generator")]
    Generators(Args),
}

/// Image automation kinds to list.
#[derive(clap::Subcommand, Debug)]
pub enum ImagesWhat {
    /// ImageRepositories.
    Repository(Args),
    /// ImagePolicies.
    Policy(Args),
    /// ImageUpdateAutomations.
    Update(Args),
    /// Every image automation kind.
    All(Args),
}

/// Source kinds to list.
#[derive(clap::Subcommand, Debug)]
pub enum SourceWhat {
    /// GitRepositories.
    Git(Args),
    /// OCIRepositories.
    Oci(Args),
    /// HelmRepositories.
    Helm(Args),
    /// HelmCharts.
    Chart(Args),
    /// Buckets.
    Bucket(Args),
    /// ExternalArtifacts.
    External(Args),
    /// Every source kind.
    All(Args),
}

/// Flags of `get`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this object.
    name: Option<String>,
    /// List across all namespaces.
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    /// Output format: the table (default), `yaml` or `json` (the objects, as kubectl prints
    /// them).
    #[arg(short = 'o', long, value_parser = ["table", "yaml", "json"], default_value = "table")]
    output: String,
    /// After listing, print a row whenever an object changes (until interrupted).
    #[arg(short = 'w', long)]
    watch: bool,
    #[command(flatten)]
    global: Global,
}

/// The live objects of `kind` the flags select, as JSON.
async fn objects(kind: Kind, client: &Client, args: &Args) -> anyhow::Result<Vec<Value>> {
    let api: Api<DynamicObject> = if args.all_namespaces {
        Api::all_with(client.clone(), &kind.resource())
    } else {
        kind.api(client, &args.global.namespace)
    };
    let items = match &args.name {
        Some(n) => vec![kind.get(client, &args.global.namespace, n).await?],
        None => {
            api.list(&ListParams::default())
                .await
                .map_err(|e| super::api_error(&e))?
                .items
        }
    };
    items
        .iter()
        .map(|o| serde_json::to_value(o).map_err(Into::into))
        .collect()
}

/// Prints objects as kubectl does: one object alone, several as a `List`.
fn print_objects(mut objects: Vec<Value>, single: bool, format: &str) -> anyhow::Result<()> {
    let doc = if single && objects.len() == 1 {
        objects.remove(0)
    } else {
        serde_json::json!({"apiVersion": "v1", "items": objects, "kind": "List",
            "metadata": {"resourceVersion": ""}})
    };
    if format == "json" {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", tidegate_core::yaml::to_yaml(&doc));
    }
    Ok(())
}

/// Prints a row for every change of `kind` until interrupted.
async fn watch(kind: Kind, client: &Client, args: &Args) -> anyhow::Result<()> {
    use futures::StreamExt;
    use kube::runtime::watcher;
    let api: Api<DynamicObject> = if args.all_namespaces {
        Api::all_with(client.clone(), &kind.resource())
    } else {
        kind.api(client, &args.global.namespace)
    };
    let config = match &args.name {
        Some(n) => watcher::Config::default().fields(&format!("metadata.name={n}")),
        None => watcher::Config::default(),
    };
    let mut stream = watcher::watcher(api, config).boxed();
    while let Some(event) = stream.next().await {
        // The first list repeats what the table showed; only changes are printed.
        let obj = match event.map_err(|e| anyhow::anyhow!("watch: {e}"))? {
            watcher::Event::Apply(o) | watcher::Event::Delete(o) => o,
            _ => continue,
        };
        let v = serde_json::to_value(&obj)?;
        let row = row_of(kind, &v);
        let text = table(std::slice::from_ref(&row), args.all_namespaces);
        if let Some(line) = text.lines().nth(1) {
            println!("{line}");
        }
    }
    Ok(())
}

/// A table row from an object of `kind`.
fn row_of(kind: Kind, v: &Value) -> Row {
    let text = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut revision = text(kind.revision);
    if kind.kind == IMAGE_REPOSITORY.kind {
        revision = text("/status/lastScanResult/scanTime");
    } else if kind.kind == IMAGE_UPDATE.kind {
        revision = text("/status/lastAutomationRunTime");
    } else if kind.kind == IMAGE_POLICY.kind {
        revision = text("/status/latestRef/name");
    }
    if kind.kind == HELM_RELEASE.kind {
        // Flux shows the chart version of the newest release, else the last attempted one.
        if let Some(v) = v
            .pointer("/status/history/0/chartVersion")
            .and_then(Value::as_str)
        {
            revision = v.to_string();
        }
    }
    let ready = if kind.kind == ALERT.kind || kind.kind == PROVIDER.kind {
        // v1beta3 Alerts and Providers have no status; Flux shows them ready.
        Some(Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: String::new(),
            message: format!("{} is Ready", kind.kind),
            observed_generation: None,
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ),
        })
    } else {
        super::kind::ready_condition(v)
            .and_then(|c| serde_json::from_value::<Condition>(c.clone()).ok())
    };
    let suspended = if kind.kind == ARTIFACT_GENERATOR.kind {
        v.pointer("/metadata/annotations/source.extensions.fluxcd.io~1reconcile")
            .and_then(Value::as_str)
            .is_some_and(|a| a.eq_ignore_ascii_case("disabled"))
    } else {
        super::kind::is_suspended(v)
    };
    Row {
        namespace: text("/metadata/namespace"),
        name: text("/metadata/name"),
        revision,
        suspended,
        source: if kind.kind == EXTERNAL_ARTIFACT.kind {
            Some(format!(
                "{}/{}/{}",
                text("/spec/sourceRef/kind"),
                text("/spec/sourceRef/namespace"),
                text("/spec/sourceRef/name")
            ))
        } else if kind.kind == IMAGE_POLICY.kind {
            Some(text("/status/latestRef/tag"))
        } else {
            None
        },
        columns: if kind.kind == ARTIFACT_GENERATOR.kind
            || kind.kind == super::kind::RECEIVER.kind
            || kind.kind == ALERT.kind
        {
            Columns::Generator
        } else if kind.kind == PROVIDER.kind {
            Columns::Provider
        } else if kind.kind == EXTERNAL_ARTIFACT.kind {
            Columns::External
        } else if kind.kind == IMAGE_REPOSITORY.kind {
            Columns::ImageRepository
        } else if kind.kind == IMAGE_UPDATE.kind {
            Columns::ImageUpdate
        } else if kind.kind == IMAGE_POLICY.kind {
            Columns::ImagePolicy
        } else {
            Columns::Default
        },
        ready,
    }
}

/// Which columns a kind's table has (Flux's adapters).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Columns {
    /// `NAME REVISION SUSPENDED READY MESSAGE`.
    Default,
    /// ArtifactGenerators: `NAME SUSPENDED READY MESSAGE`.
    Generator,
    /// ExternalArtifacts: `NAME REVISION SOURCE READY MESSAGE`.
    External,
    /// Providers: `NAME READY MESSAGE`.
    Provider,
    /// ImageRepositories: `NAME LAST SCAN SUSPENDED READY MESSAGE`.
    ImageRepository,
    /// ImagePolicies: `NAME IMAGE TAG READY MESSAGE`.
    ImagePolicy,
    /// ImageUpdateAutomations: `NAME LAST RUN SUSPENDED READY MESSAGE`.
    ImageUpdate,
}

/// One row.
struct Row {
    namespace: String,
    name: String,
    revision: String,
    suspended: bool,
    /// ExternalArtifacts: `<kind>/<namespace>/<name>` of the producer.
    source: Option<String>,
    columns: Columns,
    ready: Option<Condition>,
}

/// Formats rows as Flux's table: left-aligned columns separated by a tab.
fn table(rows: &[Row], all_namespaces: bool) -> String {
    let mut lines: Vec<Vec<String>> = Vec::new();
    let columns = rows.first().map(|r| r.columns).unwrap_or(Columns::Default);
    let mut header = match columns {
        Columns::Default => vec!["NAME", "REVISION", "SUSPENDED", "READY", "MESSAGE"],
        Columns::Generator => vec!["NAME", "SUSPENDED", "READY", "MESSAGE"],
        Columns::External => vec!["NAME", "REVISION", "SOURCE", "READY", "MESSAGE"],
        Columns::Provider => vec!["NAME", "READY", "MESSAGE"],
        Columns::ImageRepository => vec!["NAME", "LAST SCAN", "SUSPENDED", "READY", "MESSAGE"],
        Columns::ImagePolicy => vec!["NAME", "IMAGE", "TAG", "READY", "MESSAGE"],
        Columns::ImageUpdate => vec!["NAME", "LAST RUN", "SUSPENDED", "READY", "MESSAGE"],
    };
    if all_namespaces {
        header.insert(0, "NAMESPACE");
    }
    lines.push(header.iter().map(|s| s.to_string()).collect());
    for r in rows {
        let (status, message) = match &r.ready {
            Some(c) => (c.status.clone(), c.message.clone()),
            None => (
                "Unknown".to_string(),
                "waiting to be reconciled".to_string(),
            ),
        };
        let suspended = if r.suspended { "True" } else { "False" }.to_string();
        let mut cells = match columns {
            Columns::Default | Columns::ImageRepository | Columns::ImageUpdate => vec![
                r.name.clone(),
                r.revision.clone(),
                suspended,
                status,
                message,
            ],
            Columns::Generator => vec![r.name.clone(), suspended, status, message],
            Columns::Provider => vec![r.name.clone(), status, message],
            Columns::External | Columns::ImagePolicy => vec![
                r.name.clone(),
                r.revision.clone(),
                r.source.clone().unwrap_or_default(),
                status,
                message,
            ],
        };
        if all_namespaces {
            cells.insert(0, r.namespace.clone());
        }
        lines.push(cells);
    }
    super::format_table(&lines)
}

/// Runs `get`.
pub async fn run(what: What) -> anyhow::Result<()> {
    let (kinds, args): (&[Kind], Args) = match what {
        What::Clusterresourcesets(a) => return super::clusterresourceset::get(a).await,
        What::Clusterresourcesetbindings(a) => {
            return super::clusterresourceset::get_bindings(a).await;
        }
        What::Sources(SourceWhat::Git(a)) => (&[GIT_REPOSITORY], a),
        What::Sources(SourceWhat::Oci(a)) => (&[OCI_REPOSITORY], a),
        What::Sources(SourceWhat::Helm(a)) => (&[HELM_REPOSITORY], a),
        What::Sources(SourceWhat::Chart(a)) => (&[HELM_CHART], a),
        What::Sources(SourceWhat::Bucket(a)) => (&[BUCKET], a),
        What::Sources(SourceWhat::External(a)) => (&[EXTERNAL_ARTIFACT], a),
        What::Artifacts(ArtifactWhat::Generators(a)) => (&[ARTIFACT_GENERATOR], a),
        What::Receivers(a) => (&[super::kind::RECEIVER], a),
        What::Alerts(a) => (&[ALERT], a),
        What::AlertProviders(a) => (&[PROVIDER], a),
        What::Sources(SourceWhat::All(a)) => (
            &[
                GIT_REPOSITORY,
                OCI_REPOSITORY,
                HELM_REPOSITORY,
                HELM_CHART,
                BUCKET,
            ],
            a,
        ),
        What::Images(ImagesWhat::Repository(a)) => (&[IMAGE_REPOSITORY], a),
        What::Images(ImagesWhat::Policy(a)) => (&[IMAGE_POLICY], a),
        What::Images(ImagesWhat::Update(a)) => (&[IMAGE_UPDATE], a),
        What::Images(ImagesWhat::All(a)) => (&[IMAGE_REPOSITORY, IMAGE_POLICY, IMAGE_UPDATE], a),
        What::Kustomizations(a) => (&[KUSTOMIZATION], a),
        What::Helmreleases(a) => (&[HELM_RELEASE], a),
        What::All(a) => (
            &[
                GIT_REPOSITORY,
                OCI_REPOSITORY,
                HELM_REPOSITORY,
                BUCKET,
                KUSTOMIZATION,
                HELM_RELEASE,
            ],
            a,
        ),
    };
    if args.watch && kinds.len() != 1 {
        anyhow::bail!("--watch needs one kind (sources git or kustomizations)");
    }
    let client = args.global.cluster.client().await?;
    let mut per_kind = Vec::with_capacity(kinds.len());
    for k in kinds {
        per_kind.push((*k, objects(*k, &client, &args).await?));
    }
    // `-o yaml|json`: the objects themselves.
    if args.output != "table" {
        let single = kinds.len() == 1 && args.name.is_some();
        let all = per_kind.into_iter().flat_map(|(_, o)| o).collect();
        return print_objects(all, single, &args.output);
    }
    let prefixed = kinds.len() > 1;
    let mut printed = false;
    for (kind, objs) in &per_kind {
        let rows: Vec<Row> = objs
            .iter()
            .map(|o| {
                let mut r = row_of(*kind, o);
                if prefixed {
                    r.name = format!("{}/{}", kind.kind.to_lowercase(), r.name);
                }
                r
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        if printed {
            println!();
        }
        print!("{}", table(&rows, args.all_namespaces));
        printed = true;
    }
    if !printed {
        let kind = if prefixed { "Flux" } else { kinds[0].kind };
        if args.all_namespaces {
            eprintln!("no {kind} objects found in any namespace");
        } else {
            eprintln!(
                "no {kind} objects found in {} namespace",
                args.global.namespace
            );
        }
    }
    if args.watch {
        watch(kinds[0], &client, &args).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_pads_all_but_the_last_column() {
        let rows = vec![Row {
            namespace: "flux-system".into(),
            name: "flux-system".into(),
            revision: "main@sha1:abc".into(),
            suspended: false,
            source: None,
            columns: Columns::Default,
            ready: Some(Condition {
                type_: "Ready".into(),
                status: "True".into(),
                reason: "ReconciliationSucceeded".into(),
                message: "Applied revision: main@sha1:abc".into(),
                observed_generation: None,
                last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                ),
            }),
        }];
        assert_eq!(
            table(&rows, false),
            "NAME       \tREVISION     \tSUSPENDED\tREADY\tMESSAGE\nflux-system\tmain@sha1:abc\tFalse    \tTrue \tApplied revision: main@sha1:abc\n"
        );
    }

    /// Flux's ArtifactGenerator and ExternalArtifact adapters, from objects as stored.
    #[test]
    fn generator_and_external_artifact_columns() {
        let ready = serde_json::json!([{"type": "Ready", "status": "True", "reason": "Succeeded",
            "message": "reconciliation succeeded, generated 2 artifact(s)",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
        let g = serde_json::json!({"metadata": {"name": "flux-system", "namespace": "flux-system",
            "annotations": {"source.extensions.fluxcd.io/reconcile": "Disabled"}},
            "status": {"conditions": ready}});
        assert_eq!(
            table(&[row_of(ARTIFACT_GENERATOR, &g)], false),
            "NAME       \tSUSPENDED\tREADY\tMESSAGE\nflux-system\tTrue     \tTrue \treconciliation succeeded, generated 2 artifact(s)\n"
        );
        let ea = serde_json::json!({"metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": {"sourceRef": {"kind": "ArtifactGenerator", "name": "flux-system", "namespace": "flux-system"}},
            "status": {"artifact": {"revision": "latest@sha256:abc"}, "conditions": [{"type": "Ready",
                "status": "True", "reason": "Succeeded", "message": "Artifact is ready",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
        assert_eq!(
            table(&[row_of(EXTERNAL_ARTIFACT, &ea)], true),
            "NAMESPACE  \tNAME\tREVISION         \tSOURCE                                   \tREADY\tMESSAGE\nflux-system\tapps\tlatest@sha256:abc\tArtifactGenerator/flux-system/flux-system\tTrue \tArtifact is ready\n"
        );
    }
}
