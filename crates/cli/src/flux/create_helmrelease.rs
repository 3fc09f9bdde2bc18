//! `tidegate create helmrelease NAME (--source <Kind>/<name>[.<ns>] --chart C | --chart-ref
//! <Kind>/<name>[.<ns>]) …`: the HelmRelease `flux create hr` writes, exported or applied.

use serde_json::{Map, Value, json};

use super::Global;

/// Flags of `create helmrelease`.
#[derive(clap::Args, Debug)]
pub struct HrArgs {
    /// The HelmRelease's name.
    pub(super) name: String,
    /// The chart source: `<kind>/<name>[.<namespace>]` (HelmRepository, GitRepository, Bucket).
    #[arg(long)]
    source: Option<String>,
    /// The chart's name in the repository, or its path in a Git or Bucket source.
    #[arg(long)]
    chart: Option<String>,
    /// A chart version or semver range.
    #[arg(long)]
    chart_version: Option<String>,
    /// A chart reference instead of a source and chart: `<kind>/<name>[.<namespace>]`
    /// (OCIRepository, HelmChart, ExternalArtifact).
    #[arg(long)]
    chart_ref: Option<String>,
    /// The Helm release name (default `[<target-namespace>-]<name>`).
    #[arg(long)]
    release_name: Option<String>,
    /// HelmReleases that must be ready first: `<name>` or `<namespace>/<name>`.
    #[arg(long, value_delimiter = ',')]
    depends_on: Vec<String>,
    /// The namespace the release installs into.
    #[arg(long)]
    target_namespace: Option<String>,
    /// Create the target namespace when it does not exist.
    #[arg(long)]
    create_target_namespace: bool,
    /// The service account impersonated to reconcile the release.
    #[arg(long)]
    service_account: Option<String>,
    /// The HelmChart's reconcile strategy (`ChartVersion` or `Revision`).
    #[arg(long, default_value = "ChartVersion")]
    reconcile_strategy: String,
    /// How often the HelmChart checks for new versions.
    #[arg(long)]
    chart_interval: Option<String>,
    /// Local values files, merged in order into `spec.values`.
    #[arg(long, value_delimiter = ',')]
    values: Vec<std::path::PathBuf>,
    /// `<kind>/<name>` of a Secret or ConfigMap holding `values.yaml`.
    #[arg(long, value_delimiter = ',')]
    values_from: Vec<String>,
    /// The CRD policy on upgrades (`Skip`, `Create`, `CreateReplace`).
    #[arg(long, value_parser = ["Skip", "Create", "CreateReplace"])]
    crds: Option<String>,
    /// A Secret with a kubeconfig of the cluster to release to.
    #[arg(long)]
    kubeconfig_secret_ref: Option<String>,
    /// The reconcile interval.
    #[arg(long, default_value = "1m")]
    interval: String,
    /// Print the object as YAML instead of applying it.
    #[arg(long)]
    pub(super) export: bool,
    #[command(flatten)]
    pub(super) global: Global,
}

fn duration(flag: &str, text: &str) -> anyhow::Result<String> {
    let d = tidegate_core::duration::parse(text).map_err(|e| anyhow::anyhow!("--{flag}: {e}"))?;
    Ok(tidegate_core::duration::format(d))
}

/// `<kind>/<name>[.<namespace>]` as a reference with `kinds` allowed.
fn reference(flag: &str, text: &str, kinds: &[&str]) -> anyhow::Result<Value> {
    let Some((kind, rest)) = text.split_once('/') else {
        anyhow::bail!(
            "--{flag}: invalid reference '{text}', must be in format <kind>/<name>[.<namespace>]"
        );
    };
    let Some(kind) = kinds.iter().find(|k| k.eq_ignore_ascii_case(kind)) else {
        anyhow::bail!(
            "--{flag}: source kind '{kind}' is not supported, must be one of: {}",
            kinds.join(", ")
        );
    };
    let (name, namespace) = match rest.split_once('.') {
        Some((n, ns)) => (n, Some(ns)),
        None => (rest, None),
    };
    if name.is_empty() {
        anyhow::bail!("--{flag}: a name is required");
    }
    let mut r = Map::new();
    r.insert("kind".into(), json!(kind));
    r.insert("name".into(), json!(name));
    if let Some(ns) = namespace.filter(|n| !n.is_empty()) {
        r.insert("namespace".into(), json!(ns));
    }
    Ok(Value::Object(r))
}

/// The HelmRelease the flags describe.
pub fn helmrelease_object(a: &HrArgs) -> anyhow::Result<Value> {
    let mut spec = Map::new();
    match (&a.chart_ref, &a.source, &a.chart) {
        (Some(r), None, None) => {
            spec.insert(
                "chartRef".into(),
                reference(
                    "chart-ref",
                    r,
                    &["OCIRepository", "HelmChart", "ExternalArtifact"],
                )?,
            );
        }
        (None, Some(source), Some(chart)) => {
            if !["ChartVersion", "Revision"].contains(&a.reconcile_strategy.as_str()) {
                anyhow::bail!(
                    "'{}' is an invalid reconcile strategy(valid: Revision, ChartVersion)",
                    a.reconcile_strategy
                );
            }
            let mut chart_spec = Map::new();
            chart_spec.insert("chart".into(), json!(chart));
            if let Some(i) = &a.chart_interval {
                chart_spec.insert("interval".into(), json!(duration("chart-interval", i)?));
            }
            chart_spec.insert("reconcileStrategy".into(), json!(a.reconcile_strategy));
            chart_spec.insert(
                "sourceRef".into(),
                reference(
                    "source",
                    source,
                    &["HelmRepository", "GitRepository", "Bucket"],
                )?,
            );
            if let Some(v) = &a.chart_version {
                chart_spec.insert("version".into(), json!(v));
            }
            spec.insert("chart".into(), json!({"spec": chart_spec}));
        }
        (None, _, None) => anyhow::bail!("chart name or path is required"),
        (None, None, Some(_)) => anyhow::bail!("--source is required with --chart"),
        (Some(_), _, _) => anyhow::bail!("--chart-ref cannot be combined with --source or --chart"),
    }
    if !a.depends_on.is_empty() {
        spec.insert("dependsOn".into(), super::create::depends_on(&a.depends_on));
    }
    let mut install = Map::new();
    if a.create_target_namespace {
        install.insert("createNamespace".into(), json!(true));
    }
    if let Some(c) = &a.crds {
        install.insert("crds".into(), json!("Create"));
        spec.insert("upgrade".into(), json!({"crds": c}));
    }
    if !install.is_empty() {
        spec.insert("install".into(), Value::Object(install));
    }
    spec.insert("interval".into(), json!(duration("interval", &a.interval)?));
    if let Some(s) = &a.kubeconfig_secret_ref {
        spec.insert("kubeConfig".into(), json!({"secretRef": {"name": s}}));
    }
    if let Some(r) = &a.release_name {
        spec.insert("releaseName".into(), json!(r));
    }
    if let Some(s) = &a.service_account {
        spec.insert("serviceAccountName".into(), json!(s));
    }
    if let Some(t) = &a.target_namespace {
        spec.insert("targetNamespace".into(), json!(t));
    }
    if !a.values.is_empty() {
        let mut merged = Map::new();
        for path in &a.values {
            let text = std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("reading values from {} failed: {e}", path.display())
            })?;
            let values = tidegate_helm::chart::load_values_text(&text).map_err(|e| {
                anyhow::anyhow!(
                    "converting values to JSON from {} failed: {e}",
                    path.display()
                )
            })?;
            tidegate_helm::chart::merge_maps(&mut merged, values);
        }
        spec.insert("values".into(), Value::Object(merged));
    }
    if !a.values_from.is_empty() {
        let mut refs = Vec::new();
        for v in &a.values_from {
            let Some((kind, name)) = v.split_once('/') else {
                anyhow::bail!(
                    "invalid Kubernetes object reference '{v}', must be in format <kind>/<name>"
                );
            };
            let Some(kind) = ["Secret", "ConfigMap"]
                .iter()
                .find(|k| k.eq_ignore_ascii_case(kind))
            else {
                anyhow::bail!(
                    "reference kind '{kind}' is not supported, must be one of: Secret, ConfigMap"
                );
            };
            refs.push(json!({"kind": kind, "name": name}));
        }
        spec.insert("valuesFrom".into(), Value::Array(refs));
    }
    Ok(json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": a.name, "namespace": a.global.namespace},
        "spec": spec,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: HrArgs,
    }

    fn exported(args: &[&str]) -> anyhow::Result<String> {
        let t = T::try_parse_from(std::iter::once("hr").chain(args.iter().copied())).unwrap();
        Ok(super::super::create::export_yaml(&helmrelease_object(
            &t.a,
        )?))
    }

    #[test]
    fn exports_as_flux_does() {
        // `flux create hr podinfo --source=HelmRepository/podinfo --chart=podinfo
        // --chart-version=">4.0.0" --interval=10m --export`.
        assert_eq!(
            exported(&[
                "podinfo",
                "--source=HelmRepository/podinfo",
                "--chart=podinfo",
                "--chart-version=>4.0.0",
                "--interval=10m",
                "--export",
            ])
            .unwrap(),
            "---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  chart:\n    spec:\n      chart: podinfo\n      reconcileStrategy: ChartVersion\n      sourceRef:\n        kind: HelmRepository\n        name: podinfo\n      version: '>4.0.0'\n  interval: 10m0s\n"
        );
        assert_eq!(
            exported(&[
                "podinfo",
                "--chart-ref=OCIRepository/podinfo.flux-system",
                "--target-namespace=apps",
                "--create-target-namespace",
                "--values-from=secret/values",
                "--export",
            ])
            .unwrap(),
            "---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: flux-system\nspec:\n  chartRef:\n    kind: OCIRepository\n    name: podinfo\n    namespace: flux-system\n  install:\n    createNamespace: true\n  interval: 1m0s\n  targetNamespace: apps\n  valuesFrom:\n  - kind: Secret\n    name: values\n"
        );
    }

    #[test]
    fn bad_flags_are_named() {
        let e = exported(&["x", "--source=HelmRepository/p"])
            .unwrap_err()
            .to_string();
        assert_eq!(e, "chart name or path is required");
        let e = exported(&["x", "--source=Foo/p", "--chart=c"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--source: source kind 'Foo' is not supported"),
            "{e}"
        );
        let e = exported(&[
            "x",
            "--source=HelmRepository/p",
            "--chart=c",
            "--values-from=Pod/x",
        ])
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "reference kind 'Pod' is not supported, must be one of: Secret, ConfigMap"
        );
    }
}
