//! `source.toolkit.fluxcd.io/v1` HelmChart (also served as `v1beta2`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

use crate::meta::Artifact;

/// Kind name.
pub const KIND: &str = "HelmChart";

/// A chart from a HelmRepository, GitRepository or Bucket, turned into a chart artifact.
pub type HelmChart = crate::Object<HelmChartSpec, HelmChartStatus>;

crate::namespaced_resource!(
    HelmChart,
    group = "source.toolkit.fluxcd.io",
    version = "v1",
    kind = "HelmChart",
    plural = "helmcharts"
);

/// `spec` of a HelmChart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartSpec {
    /// The chart's name in a repository, or its path in a Git or Bucket artifact.
    pub chart: String,
    /// A version or a semver constraint (default `*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Where the chart comes from (same namespace).
    pub source_ref: HelmChartSourceRef,
    /// How often to check for a new version (Go duration).
    pub interval: String,
    /// `ChartVersion` (default) or `Revision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile_strategy: Option<String>,
    /// Values files merged into the chart's `values.yaml`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values_files: Vec<String>,
    /// Skip values files that do not exist.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_missing_values_files: bool,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
    /// Signature verification (OCI charts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<serde_json::Value>,
}

impl HelmChartSpec {
    /// `spec.version`, default `*`.
    pub fn version(&self) -> &str {
        self.version
            .as_deref()
            .filter(|v| !v.is_empty())
            .unwrap_or("*")
    }
}

/// `spec.sourceRef`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartSourceRef {
    /// `source.toolkit.fluxcd.io/v1`, when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `HelmRepository`, `GitRepository` or `Bucket`.
    pub kind: String,
    /// The source's name.
    pub name: String,
}

/// `status` of a HelmChart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartStatus {
    /// Last generation reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The source artifact revision the chart was built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_source_artifact_revision: Option<String>,
    /// The chart name of the stored artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_chart_name: Option<String>,
    /// The values files merged into the stored artifact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_values_files: Vec<String>,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The address of the latest chart (`…/latest.tar.gz`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The stored chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// The last `reconcile.fluxcd.io/requestedAt` value handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
}
