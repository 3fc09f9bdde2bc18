//! `helm.toolkit.fluxcd.io/v2` HelmRelease (also served as `v2beta2`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde::{Deserialize, Serialize};

/// Kind name.
pub const KIND: &str = "HelmRelease";

/// The API group.
pub const GROUP: &str = "helm.toolkit.fluxcd.io";

/// The annotation requesting a forced release (acted on when it equals `requestedAt`).
pub const FORCE_REQUESTED_AT: &str = "reconcile.fluxcd.io/forceAt";

/// The annotation requesting the failure counters be reset.
pub const RESET_REQUESTED_AT: &str = "reconcile.fluxcd.io/resetAt";

/// A Helm release of a chart, kept installed and up to date.
pub type HelmRelease = crate::Object<HelmReleaseSpec, HelmReleaseStatus>;

crate::namespaced_resource!(
    HelmRelease,
    group = "helm.toolkit.fluxcd.io",
    version = "v2",
    kind = "HelmRelease",
    plural = "helmreleases"
);

fn is_false(b: &bool) -> bool {
    !*b
}

/// `spec` of a HelmRelease.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmReleaseSpec {
    /// The HelmChart the controller creates (`<namespace>-<name>`), exclusive with `chartRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<HelmChartTemplate>,
    /// An OCIRepository, HelmChart or ExternalArtifact holding the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_ref: Option<CrossNamespaceSourceReference>,
    /// How often to reconcile (Go duration).
    pub interval: String,
    /// A kubeconfig for a remote cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_config: Option<crate::kustomization::KubeConfigReference>,
    /// Stop reconciling.
    #[serde(default, skip_serializing_if = "is_false")]
    pub suspend: bool,
    /// The release name (default `[targetNamespace-]name`, shortened past 53 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_name: Option<String>,
    /// The namespace the release's objects go to (default the HelmRelease's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_namespace: Option<String>,
    /// The namespace of the release's storage Secrets (default the HelmRelease's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_namespace: Option<String>,
    /// HelmReleases that must be ready first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<DependencyReference>,
    /// The default timeout of every Helm action (default `5m0s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Releases kept in storage (default 5, 0 = unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_history: Option<i64>,
    /// The service account impersonated for every cluster request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Keep the cluster client between reconciles (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_client: Option<bool>,
    /// Drift detection and correction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_detection: Option<DriftDetection>,
    /// `install` settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<Install>,
    /// `upgrade` settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<Upgrade>,
    /// `test` settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<Test>,
    /// `rollback` settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<Rollback>,
    /// `uninstall` settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uninstall: Option<Uninstall>,
    /// ConfigMaps and Secrets merged into the values, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values_from: Vec<ValuesReference>,
    /// Inline values, merged last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<serde_json::Value>,
    /// Labels and annotations set on every rendered object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_metadata: Option<CommonMetadata>,
    /// Kustomize post-renderers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_renderers: Vec<PostRenderer>,
    /// `combined` (default), `nohooks` or `separate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_render_strategy: Option<String>,
    /// `poller` (default) or `legacy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_strategy: Option<serde_json::Value>,
    /// Custom health checks (CEL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_check_exprs: Vec<crate::kustomization::CustomHealthCheck>,
}

/// `spec.chart`: the HelmChart template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartTemplate {
    /// Labels and annotations of the HelmChart.
    #[serde(default, rename = "metadata", skip_serializing_if = "Option::is_none")]
    pub object_meta: Option<HelmChartTemplateObjectMeta>,
    /// The HelmChart's spec.
    pub spec: HelmChartTemplateSpec,
}

/// `spec.chart.metadata`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelmChartTemplateObjectMeta {
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// `spec.chart.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartTemplateSpec {
    /// The chart name or path.
    pub chart: String,
    /// A version or semver constraint (default `*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The HelmRepository, GitRepository or Bucket.
    pub source_ref: CrossNamespaceObjectReference,
    /// The HelmChart's interval (default the HelmRelease's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// `ChartVersion` (default) or `Revision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile_strategy: Option<String>,
    /// Values files merged into the chart's values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values_files: Vec<String>,
    /// Skip values files that do not exist.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_missing_values_files: bool,
    /// Signature verification of OCI charts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<serde_json::Value>,
}

/// A reference to a source object, possibly in another namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrossNamespaceObjectReference {
    /// The API version, when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The kind.
    pub kind: String,
    /// The name.
    pub name: String,
    /// The namespace (default the referrer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `spec.chartRef`.
pub type CrossNamespaceSourceReference = CrossNamespaceObjectReference;

/// `spec.dependsOn[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DependencyReference {
    /// The HelmRelease's name.
    pub name: String,
    /// Its namespace (default the dependent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// A CEL readiness expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_expr: Option<String>,
}

/// `spec.valuesFrom[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValuesReference {
    /// `Secret` or `ConfigMap`.
    pub kind: String,
    /// The object's name, in the HelmRelease's namespace.
    pub name: String,
    /// The data key (default `values.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values_key: Option<String>,
    /// A `--set` path the value is written to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_path: Option<String>,
    /// A missing object or key is not an error.
    #[serde(default, skip_serializing_if = "is_false")]
    pub optional: bool,
    /// The value is written as a literal string (with `targetPath`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub literal: bool,
}

impl ValuesReference {
    /// `valuesKey`, default `values.yaml`.
    pub fn values_key(&self) -> &str {
        self.values_key
            .as_deref()
            .filter(|k| !k.is_empty())
            .unwrap_or("values.yaml")
    }
}

/// `spec.commonMetadata`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommonMetadata {
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// `spec.postRenderers[]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PostRenderer {
    /// A kustomize post-renderer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kustomize: Option<KustomizePostRenderer>,
}

/// `spec.postRenderers[].kustomize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KustomizePostRenderer {
    /// Patches with optional targets (as a Kustomization's `patches`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<serde_json::Value>,
    /// Image overrides (as a Kustomization's `images`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<serde_json::Value>,
}

/// `spec.driftDetection`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriftDetection {
    /// `enabled`, `warn` or `disabled` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Paths ignored, optionally per target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<IgnoreRule>,
}

/// `spec.driftDetection.ignore[]`: JSON pointers left out of drift detection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoreRule {
    /// JSON pointers (RFC 6901); `""` ignores the whole object.
    #[serde(default)]
    pub paths: Vec<String>,
    /// The objects the rule applies to (all of the release's without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<crate::kustomization::Selector>,
}

impl DriftDetection {
    /// The mode, default `disabled`.
    pub fn mode(&self) -> &str {
        self.mode.as_deref().unwrap_or("disabled")
    }

    /// Flux's `MustDetectChanges`: mode `enabled` or `warn`.
    pub fn must_detect_changes(&self) -> bool {
        matches!(self.mode(), "enabled" | "warn")
    }
}

/// `strategy` of install and upgrade.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionStrategy {
    /// `RemediateOnFailure` or `RetryOnFailure`.
    pub name: String,
    /// The retry delay with `RetryOnFailure` (default 5m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_interval: Option<String>,
}

/// `install.remediation` and `upgrade.remediation`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remediation {
    /// Retries before giving up (negative: forever).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<i64>,
    /// Test failures do not count as release failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_test_failures: Option<bool>,
    /// Remediate the last failure when retries run out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediate_last_failure: Option<bool>,
    /// `rollback` (default) or `uninstall` (upgrade only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
}

/// `spec.install`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Install {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<ActionStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<Remediation>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_take_ownership: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_wait: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_wait_for_jobs: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_hooks: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_open_api_validation: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_schema_validation: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub replace: bool,
    #[serde(default, rename = "skipCRDs", skip_serializing_if = "is_false")]
    pub skip_crds: bool,
    /// `Skip`, `Create` (default) or `CreateReplace`.
    #[serde(default, rename = "crds", skip_serializing_if = "Option::is_none")]
    pub crds: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub create_namespace: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_apply: Option<bool>,
}

/// `spec.upgrade`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Upgrade {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<ActionStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<Remediation>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_take_ownership: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_wait: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_wait_for_jobs: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_hooks: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_open_api_validation: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_schema_validation: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub force: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub preserve_values: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub cleanup_on_fail: bool,
    /// `Skip` (default), `Create` or `CreateReplace`.
    #[serde(default, rename = "crds", skip_serializing_if = "Option::is_none")]
    pub crds: Option<String>,
    /// `enabled`, `disabled` or `auto` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_apply: Option<String>,
    /// `Reinstall` (default) or `InPlaceUpdate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_name_change_strategy: Option<String>,
}

/// `spec.test`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Test {
    #[serde(default, skip_serializing_if = "is_false")]
    pub enable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_failures: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<TestFilter>>,
}

/// `spec.test.filters[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFilter {
    pub name: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclude: bool,
}

/// `spec.rollback`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollback {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_wait: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_wait_for_jobs: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_hooks: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub recreate: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub force: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub cleanup_on_fail: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_apply: Option<String>,
}

/// `spec.uninstall`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Uninstall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_hooks: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub keep_history: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_wait: bool,
    /// `background` (default), `foreground` or `orphan`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_propagation: Option<String>,
}

/// `status` of a HelmRelease.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmReleaseStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_post_renderers_digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_common_metadata_digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// `<namespace>/<name>` of the HelmChart made from the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_chart: Option<String>,
    /// The namespace the release is stored in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_namespace: Option<String>,
    /// The releases this controller made, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Snapshot>,
    /// The objects of the release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory: Option<serde_json::Value>,
    /// `install` or `upgrade`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_release_action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_release_action_duration: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub install_failures: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub upgrade_failures: i64,
    /// The chart version last attempted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_revision_digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_values_checksum: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_release_revision: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_config_digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reset_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_force_at: Option<String>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// A release this controller made (`status.history[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// `v2`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `sha256:<hex>` of the release's observation.
    pub digest: String,
    pub name: String,
    pub namespace: String,
    pub version: i64,
    pub status: String,
    /// `install` or `upgrade`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub action: String,
    pub chart_name: String,
    pub chart_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub app_version: String,
    pub config_digest: String,
    pub first_deployed: String,
    pub last_deployed: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted: Option<String>,
    /// Test hooks by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_hooks: Option<BTreeMap<String, TestHookStatus>>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub oci_digest: String,
}

impl Snapshot {
    /// `<namespace>/<name>.v<version>`, as Flux names releases in messages.
    pub fn full_release_name(&self) -> String {
        format!("{}/{}.v{}", self.namespace, self.name, self.version)
    }

    /// Whether the snapshot has test results.
    pub fn has_tests_run(&self) -> bool {
        self.test_hooks.as_ref().is_some_and(|t| !t.is_empty())
    }

    /// Whether a test hook failed.
    pub fn has_test_in_phase_failed(&self) -> bool {
        self.test_hooks
            .as_ref()
            .is_some_and(|t| t.values().any(|h| h.phase == "Failed"))
    }
}

/// `testHooks.<name>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestHookStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_completed: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
}
