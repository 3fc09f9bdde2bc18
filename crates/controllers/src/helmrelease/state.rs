//! The release state machine as helm-controller runs it (`internal/reconcile/state.go` and
//! `atomic_release.go`): what state the release is in, and the next action for that state.
//! Pure functions over the stored release and the HelmRelease's status, tested as tables.

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tidegate_api::helmrelease::{HelmReleaseSpec, HelmReleaseStatus, Snapshot};
use tidegate_helm::storage::{HookRecord, Info, Release, status};

/// The state of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// No release in storage (or it was uninstalled).
    Absent(String),
    /// A release is pending (an action was interrupted).
    Locked(String),
    /// A release exists that this HelmRelease did not make (or was changed by hand).
    Unmanaged(String),
    /// The chart or values differ from the release.
    OutOfSync(String),
    /// Tests are enabled and have not run.
    Untested(String),
    /// The release failed.
    Failed(String),
    /// The release is as desired.
    InSync,
}

/// What the desired release is.
#[derive(Debug, Clone)]
pub struct Desired<'a> {
    pub chart_name: &'a str,
    pub chart_version: &'a str,
    pub config_digest: &'a str,
    /// The postRenderers or commonMetadata digest changed (checked when the generation did).
    pub render_changed: bool,
}

/// helm-controller's `Observation` of a release, whose digest a snapshot keeps: edits to the
/// release made outside this controller change it (test hooks excepted).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Observation<'a> {
    name: &'a str,
    version: i64,
    info: &'a Info,
    chart_metadata: &'a Value,
    #[serde(skip_serializing_if = "Map::is_empty")]
    config: &'a Map<String, Value>,
    manifest: &'a str,
    hooks: Vec<&'a HookRecord>,
    namespace: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    oci_digest: &'a str,
}

/// `sha256:<hex>` of the release's observation (JSON plus a newline, as Go's encoder).
pub fn observation_digest(r: &Release, oci_digest: &str) -> String {
    let null = Value::Null;
    let obs = Observation {
        name: &r.name,
        version: r.version,
        info: &r.info,
        chart_metadata: r.chart.get("metadata").unwrap_or(&null),
        config: &r.config,
        manifest: &r.manifest,
        hooks: r.hooks.iter().filter(|h| !h.runs_on("test")).collect(),
        namespace: &r.namespace,
        oci_digest,
    };
    let mut json = serde_json::to_vec(&obs).unwrap_or_default();
    json.push(b'\n');
    format!("sha256:{:x}", Sha256::digest(&json))
}

/// The snapshot of a release for `status.history`.
pub fn snapshot(r: &Release, config_digest: &str, oci_digest: &str, action: &str) -> Snapshot {
    Snapshot {
        api_version: "v2".into(),
        digest: observation_digest(r, oci_digest),
        name: r.name.clone(),
        namespace: r.namespace.clone(),
        version: r.version,
        status: r.info.status.clone(),
        action: action.into(),
        chart_name: r.chart_name().into(),
        chart_version: r.chart_version().into(),
        app_version: r.app_version().into(),
        config_digest: config_digest.into(),
        first_deployed: r.info.first_deployed.clone().unwrap_or_default(),
        last_deployed: r.info.last_deployed.clone().unwrap_or_default(),
        deleted: r.info.deleted.clone(),
        test_hooks: None,
        oci_digest: oci_digest.into(),
    }
}

/// Helm-controller's `DetermineReleaseState`.
pub fn determine(
    last: Option<&Release>,
    status: &HelmReleaseStatus,
    spec: &HelmReleaseSpec,
    desired: &Desired<'_>,
) -> State {
    let Some(r) = last else {
        return State::Absent("no release in storage for object".into());
    };
    if status::is_pending(&r.info.status) {
        return State::Locked(format!("release with status '{}'", r.info.status));
    }
    let Some(latest) = status.history.first() else {
        if r.info.status == status::UNINSTALLED {
            return State::Absent("found uninstalled release in storage".into());
        }
        return State::Unmanaged("found existing release in storage".into());
    };
    if latest.api_version == "v2"
        && (latest.name != r.name
            || latest.version != r.version
            || latest.digest != observation_digest(r, &latest.oci_digest))
    {
        return State::Unmanaged(
            "release digest verification failed: release was changed outside of the controller"
                .into(),
        );
    }
    match r.info.status.as_str() {
        status::FAILED => State::Failed("release is in a failed state".into()),
        status::UNINSTALLED => State::Absent("found uninstalled release in storage".into()),
        status::DEPLOYED => {
            if r.chart_name() != desired.chart_name || r.chart_version() != desired.chart_version {
                return State::OutOfSync("release chart changed".into());
            }
            if latest.config_digest != desired.config_digest {
                return State::OutOfSync("release config values changed".into());
            }
            if desired.render_changed {
                return State::OutOfSync(
                    "release post-renderers or common metadata changed".into(),
                );
            }
            let test = spec.test.as_ref();
            if test.is_some_and(|t| t.enable) {
                if !latest.has_tests_run() {
                    return State::Untested("release has not been tested".into());
                }
                if latest.has_test_in_phase_failed() && !test.is_some_and(|t| t.ignore_failures) {
                    return State::Failed("release has test in failed phase".into());
                }
            }
            State::InSync
        }
        other => State::Unmanaged(format!("release with status '{other}'")),
    }
}

/// The next action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    Nothing,
    Unlock,
    Install,
    Upgrade,
    Test,
    /// Roll back to the previous successful release.
    Rollback,
    /// Uninstall to remediate a failure.
    UninstallRemediation,
    /// Retries are exhausted: `Failed to <action> after N attempt(s)`.
    ExceededMaxRetries(String),
}

/// The install or upgrade remediation settings in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remediation {
    pub retries: i64,
    pub remediate_last_failure: bool,
    /// `rollback` or `uninstall`.
    pub strategy: String,
    pub retry_strategy: bool,
    pub failures: i64,
    /// `install` or `upgrade`.
    pub action: String,
}

impl Remediation {
    /// Retries used up: Flux's `RetriesExhausted`.
    pub fn exhausted(&self) -> bool {
        self.retries >= 0 && self.failures > self.retries
    }

    /// Which remediation applies: install's when the last attempted action was an install.
    pub fn active(spec: &HelmReleaseSpec, status: &HelmReleaseStatus) -> Remediation {
        if status.last_attempted_release_action.as_deref() == Some("upgrade") {
            let u = spec.upgrade.clone().unwrap_or_default();
            let r = u.remediation.unwrap_or_default();
            let retries = r.retries.unwrap_or(0);
            Remediation {
                retries,
                remediate_last_failure: r.remediate_last_failure.unwrap_or(retries > 0),
                strategy: r.strategy.unwrap_or_else(|| "rollback".into()),
                retry_strategy: u.strategy.is_some_and(|s| s.name == "RetryOnFailure"),
                failures: status.upgrade_failures,
                action: "upgrade".into(),
            }
        } else {
            let i = spec.install.clone().unwrap_or_default();
            let r = i.remediation.unwrap_or_default();
            Remediation {
                retries: r.retries.unwrap_or(0),
                remediate_last_failure: r.remediate_last_failure.unwrap_or(false),
                strategy: "uninstall".into(),
                retry_strategy: i.strategy.is_some_and(|s| s.name == "RetryOnFailure"),
                failures: status.install_failures,
                action: "install".into(),
            }
        }
    }

    fn exceeded(&self) -> Next {
        Next::ExceededMaxRetries(format!(
            "Failed to {} after {} attempt(s)",
            self.action, self.failures
        ))
    }
}

/// Helm-controller's `actionForState`.
pub fn next(
    state: &State,
    spec: &HelmReleaseSpec,
    status: &HelmReleaseStatus,
    forced: bool,
    previous_in_storage: bool,
) -> Next {
    match state {
        State::InSync => {
            if forced {
                Next::Upgrade
            } else {
                Next::Nothing
            }
        }
        State::Locked(_) => Next::Unlock,
        State::Absent(_) => {
            let install = Remediation::active(
                spec,
                &HelmReleaseStatus {
                    last_attempted_release_action: Some("install".into()),
                    ..status.clone()
                },
            );
            if install.exhausted() && !forced && !install.retry_strategy {
                return Next::ExceededMaxRetries("cannot install release".into());
            }
            Next::Install
        }
        State::Unmanaged(_) => Next::Upgrade,
        State::OutOfSync(_) => {
            let upgrade = Remediation::active(
                spec,
                &HelmReleaseStatus {
                    last_attempted_release_action: Some("upgrade".into()),
                    ..status.clone()
                },
            );
            if status.last_attempted_release_action.as_deref() == Some("upgrade")
                && upgrade.exhausted()
                && !forced
                && !upgrade.retry_strategy
            {
                return upgrade.exceeded();
            }
            Next::Upgrade
        }
        State::Untested(_) => Next::Test,
        State::Failed(_) => {
            let r = Remediation::active(spec, status);
            if r.retry_strategy || r.failures <= 0 || forced {
                return Next::Upgrade;
            }
            if r.exhausted() && !r.remediate_last_failure {
                return r.exceeded();
            }
            if r.action == "upgrade" && r.strategy == "rollback" {
                if !previous_in_storage {
                    return Next::ExceededMaxRetries("missing target release for rollback".into());
                }
                return Next::Rollback;
            }
            Next::UninstallRemediation
        }
    }
}
