//! `spec.chart`: the HelmChart `<namespace>-<name>` the controller creates and keeps equal to
//! the template (server-side apply), and deletes when the template goes or moves.

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use tidegate_api::HelmRelease;
use tidegate_api::helmchart::HelmChart;
use tidegate_api::helmrelease::GROUP;

use super::{Context, FIELD_MANAGER};

/// The HelmChart's namespace and name for `hr` (from `spec.chart`), if it has a template.
pub fn chart_ref(hr: &HelmRelease) -> Option<(String, String)> {
    let template = hr.spec.chart.as_ref()?;
    let namespace = hr.namespace().unwrap_or_default();
    let chart_ns = template
        .spec
        .source_ref
        .namespace
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| namespace.clone());
    Some((chart_ns, format!("{namespace}-{}", hr.name_any())))
}

/// The HelmChart object the template asks for.
fn desired(hr: &HelmRelease, namespace: &str, name: &str) -> Option<serde_json::Value> {
    let t = hr.spec.chart.as_ref()?;
    let mut labels = t
        .object_meta
        .as_ref()
        .map(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(format!("{GROUP}/name"), hr.name_any());
    labels.insert(
        format!("{GROUP}/namespace"),
        hr.namespace().unwrap_or_default(),
    );
    let annotations = t
        .object_meta
        .as_ref()
        .map(|m| m.annotations.clone())
        .unwrap_or_default();
    let mut spec = serde_json::json!({
        "chart": t.spec.chart,
        "version": t.spec.version.clone().filter(|v| !v.is_empty()).unwrap_or_else(|| "*".into()),
        "sourceRef": {"kind": t.spec.source_ref.kind, "name": t.spec.source_ref.name},
        "interval": t.spec.interval.clone().unwrap_or_else(|| hr.spec.interval.clone()),
        "reconcileStrategy": t.spec.reconcile_strategy.clone().unwrap_or_else(|| "ChartVersion".into()),
    });
    if !t.spec.values_files.is_empty() {
        spec["valuesFiles"] = serde_json::json!(t.spec.values_files);
    }
    if t.spec.ignore_missing_values_files {
        spec["ignoreMissingValuesFiles"] = true.into();
    }
    if let Some(v) = &t.spec.verify {
        spec["verify"] = v.clone();
    }
    Some(serde_json::json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmChart",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": annotations,
        },
        "spec": spec,
    }))
}

/// Creates or updates the HelmChart, deleting a previous one the status names. Returns
/// `<namespace>/<name>` of the chart, or `None` when the release uses `chartRef`.
pub async fn reconcile(
    hr: &HelmRelease,
    ctx: &Context,
    previous: Option<&str>,
) -> Result<Option<String>, String> {
    let wanted = chart_ref(hr);
    let wanted_key = wanted.as_ref().map(|(ns, n)| format!("{ns}/{n}"));
    if let Some(prev) = previous.filter(|p| Some(*p) != wanted_key.as_deref())
        && let Some((ns, name)) = prev.split_once('/')
    {
        delete(ctx, ns, name).await?;
    }
    let Some((namespace, name)) = wanted else {
        return Ok(None);
    };
    let Some(obj) = desired(hr, &namespace, &name) else {
        return Ok(None);
    };
    let api: Api<HelmChart> = Api::namespaced(ctx.client.clone(), &namespace);
    let existed = api
        .get_opt(&name)
        .await
        .map_err(|e| format!("failed to get HelmChart {namespace}/{name}: {e}"))?
        .is_some();
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&obj),
    )
    .await
    .map_err(|e| {
        format!(
            "failed to create HelmChart {namespace}/{name}: {}",
            tidegate_apply::error::describe(&e)
        )
    })?;
    if !existed {
        let source = &hr
            .spec
            .chart
            .as_ref()
            .map(|c| c.spec.source_ref.clone())
            .unwrap_or_default();
        tracing::info!(
            "HelmChart/{namespace}/{name} created with SourceRef '{}/{namespace}/{}'",
            source.kind,
            source.name
        );
    }
    Ok(Some(format!("{namespace}/{name}")))
}

/// Deletes a HelmChart this controller made; a missing one is fine.
pub async fn delete(ctx: &Context, namespace: &str, name: &str) -> Result<(), String> {
    let api: Api<HelmChart> = Api::namespaced(ctx.client.clone(), namespace);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(format!(
            "failed to delete HelmChart {namespace}/{name}: {}",
            tidegate_apply::error::describe(&e)
        )),
    }
}
