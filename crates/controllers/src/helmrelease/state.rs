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
    /// The release is as desired but the cluster's objects drifted from its manifest (found
    /// by drift detection, after `determine` said in sync).
    Drifted,
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
            if let Some(test) = spec.test.as_ref().filter(|t| t.enable) {
                if !has_been_tested(latest) {
                    return State::Untested("release has not been tested".into());
                }
                let ignore = Remediation::ignores_test_failures(spec, status, test.ignore_failures);
                if !ignore && latest.has_test_in_phase_failed() {
                    return State::Failed("release has test in failed phase".into());
                }
            }
            State::InSync
        }
        other => State::Unmanaged(format!("release with status '{other}'")),
    }
}

/// Flux's `HasBeenTested`: test results recorded, and every test hook succeeded unless one
/// failed (a run with no test hooks counts as tested).
fn has_been_tested(s: &Snapshot) -> bool {
    let Some(hooks) = &s.test_hooks else {
        return false;
    };
    hooks.is_empty()
        || hooks.values().any(|h| h.phase == "Failed")
        || hooks.values().all(|h| h.phase == "Succeeded")
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
    /// A rollback is due but no earlier release is left in storage.
    MissingRollbackTarget,
    /// Drift detection is `enabled` and found drift: correct it.
    CorrectDrift,
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

    /// Flux's `MustIgnoreTestFailures`: the active remediation's `ignoreTestFailures`, else
    /// `spec.test.ignoreFailures`.
    pub fn ignores_test_failures(
        spec: &HelmReleaseSpec,
        status: &HelmReleaseStatus,
        test_ignore: bool,
    ) -> bool {
        let set = if status.last_attempted_release_action.as_deref() == Some("upgrade") {
            spec.upgrade
                .as_ref()
                .and_then(|u| u.remediation.as_ref())
                .and_then(|r| r.ignore_test_failures)
        } else {
            spec.install
                .as_ref()
                .and_then(|i| i.remediation.as_ref())
                .and_then(|r| r.ignore_test_failures)
        };
        set.unwrap_or(test_ignore)
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
        State::Drifted => {
            let enabled = spec
                .drift_detection
                .as_ref()
                .is_some_and(|d| d.mode() == "enabled");
            if enabled {
                Next::CorrectDrift
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
            if upgrade.exhausted() && !forced && !upgrade.retry_strategy {
                return Next::ExceededMaxRetries("cannot upgrade release".into());
            }
            Next::Upgrade
        }
        State::Untested(_) => Next::Test,
        State::Failed(_) => {
            // No action attempted yet: no remediation is active.
            if status
                .last_attempted_release_action
                .as_deref()
                .is_none_or(str::is_empty)
            {
                return Next::Upgrade;
            }
            let r = Remediation::active(spec, status);
            if r.retry_strategy || r.failures <= 0 || forced {
                return Next::Upgrade;
            }
            if r.exhausted() && !r.remediate_last_failure {
                return r.exceeded();
            }
            if r.action == "upgrade" && r.strategy == "rollback" {
                if !previous_in_storage {
                    return Next::MissingRollbackTarget;
                }
                return Next::Rollback;
            }
            Next::UninstallRemediation
        }
    }
}

/// helm-controller's `Test_DetermineReleaseState` cases (internal/reconcile/state_test.go),
/// as data: the releases in storage, the spec and status, the desired chart and values, and
/// the state expected. Drift cases wait for drift detection.
#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use tidegate_api::helmrelease::{Test, TestHookStatus};
    use tidegate_helm::storage::{HookExecution, HookRecord};

    fn release(version: i64, status: &str, config: Option<(&str, &str)>) -> Release {
        let mut c = serde_json::Map::new();
        if let Some((k, v)) = config {
            c.insert(k.into(), Value::String(v.into()));
        }
        Release {
            name: "release".into(),
            namespace: "mock-ns".into(),
            version,
            info: Info {
                first_deployed: Some("2026-01-01T00:00:00Z".into()),
                last_deployed: Some("2026-01-01T00:00:00Z".into()),
                status: status.into(),
                ..Default::default()
            },
            chart: serde_json::json!({"metadata": {"name": "hello", "version": "0.1.0"}}),
            config: c,
            manifest: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n".into(),
            ..Default::default()
        }
    }

    fn with_test_hook(mut r: Release, name: &str, phase: &str) -> Release {
        r.hooks.push(HookRecord {
            name: name.into(),
            kind: "Pod".into(),
            events: vec!["test".into()],
            last_run: HookExecution {
                phase: phase.into(),
                ..Default::default()
            },
            ..Default::default()
        });
        r
    }

    fn snap(r: &Release) -> Snapshot {
        snapshot(r, &super::super::values::digest(&r.config), "", "install")
    }

    fn hooks(entries: &[(&str, &str)]) -> Option<BTreeMap<String, TestHookStatus>> {
        Some(
            entries
                .iter()
                .map(|(n, p)| {
                    (
                        n.to_string(),
                        TestHookStatus {
                            phase: p.to_string(),
                            ..Default::default()
                        },
                    )
                })
                .collect(),
        )
    }

    fn foo_bar() -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("foo".into(), Value::String("bar".into()));
        m
    }

    struct Case {
        name: &'static str,
        last: Option<Release>,
        history: Vec<Snapshot>,
        test: Option<Test>,
        last_action: Option<&'static str>,
        values: serde_json::Map<String, Value>,
        chart_version: &'static str,
        render_changed: bool,
        want: &'static str,
    }

    fn kind(s: &State) -> &'static str {
        match s {
            State::Absent(_) => "Absent",
            State::Locked(_) => "Locked",
            State::Unmanaged(_) => "Unmanaged",
            State::OutOfSync(_) => "OutOfSync",
            State::Untested(_) => "Untested",
            State::Failed(_) => "Failed",
            State::InSync => "InSync",
            State::Drifted => "Drifted",
        }
    }

    fn case(
        name: &'static str,
        last: Option<Release>,
        history: Vec<Snapshot>,
        want: &'static str,
    ) -> Case {
        Case {
            name,
            last,
            history,
            test: None,
            last_action: None,
            values: foo_bar(),
            chart_version: "0.1.0",
            render_changed: false,
            want,
        }
    }

    #[test]
    fn determine_release_state_as_helm_controller() {
        let deployed = release(1, status::DEPLOYED, Some(("foo", "bar")));
        let tested_failed = with_test_hook(
            release(2, status::DEPLOYED, Some(("foo", "bar"))),
            "failure-tests",
            "Failed",
        );
        let mut cases = vec![
            case(
                "in-sync release",
                Some(deployed.clone()),
                vec![snap(&deployed)],
                "InSync",
            ),
            case("no release in storage", None, vec![], "Absent"),
            case(
                "release disappeared from storage",
                None,
                vec![snap(&deployed)],
                "Absent",
            ),
            case(
                "existing release without current",
                Some(deployed.clone()),
                vec![],
                "Unmanaged",
            ),
            case(
                "release digest parse error",
                Some(deployed.clone()),
                vec![Snapshot {
                    digest: "sha256:invalid".into(),
                    ..snap(&deployed)
                }],
                "Unmanaged",
            ),
            case(
                "release digest mismatch",
                Some(deployed.clone()),
                vec![Snapshot {
                    digest:
                        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
                            .into(),
                    ..snap(&deployed)
                }],
                "Unmanaged",
            ),
            case(
                "release in pending state",
                Some(release(1, status::PENDING_INSTALL, Some(("foo", "bar")))),
                vec![],
                "Locked",
            ),
        ];
        let mut untested = case(
            "untested release",
            Some(deployed.clone()),
            vec![snap(&deployed)],
            "Untested",
        );
        untested.test = Some(Test {
            enable: true,
            ..Default::default()
        });
        cases.push(untested);
        let mut incomplete = case(
            "incomplete test result",
            Some(deployed.clone()),
            vec![Snapshot {
                test_hooks: hooks(&[("passing-test", "Succeeded"), ("never-run-test", "")]),
                ..snap(&deployed)
            }],
            "Untested",
        );
        incomplete.test = Some(Test {
            enable: true,
            ..Default::default()
        });
        incomplete.last_action = Some("upgrade");
        cases.push(incomplete);
        let mut failed_test = case(
            "failed test",
            Some(tested_failed.clone()),
            vec![Snapshot {
                test_hooks: hooks(&[("failure-tests", "Failed")]),
                ..snap(&tested_failed)
            }],
            "Failed",
        );
        failed_test.test = Some(Test {
            enable: true,
            ..Default::default()
        });
        failed_test.last_action = Some("upgrade");
        cases.push(failed_test);
        let deployed2 = release(2, status::DEPLOYED, Some(("foo", "bar")));
        let mut unstarted = case(
            "failed test with unstarted remaining test hooks",
            Some(deployed2.clone()),
            vec![Snapshot {
                test_hooks: hooks(&[("failure-tests", "Failed"), ("never-run-test", "")]),
                ..snap(&deployed2)
            }],
            "Failed",
        );
        unstarted.test = Some(Test {
            enable: true,
            ..Default::default()
        });
        unstarted.last_action = Some("upgrade");
        cases.push(unstarted);
        let mut ignored = case(
            "failed test with ignore failures set",
            Some(tested_failed.clone()),
            vec![Snapshot {
                test_hooks: hooks(&[("failure-tests", "Failed")]),
                ..snap(&tested_failed)
            }],
            "InSync",
        );
        ignored.test = Some(Test {
            enable: true,
            ignore_failures: true,
            ..Default::default()
        });
        ignored.last_action = Some("install");
        cases.push(ignored);
        let mut not_ours = case(
            "failed test is ignored when not made by controller",
            Some(tested_failed.clone()),
            vec![snap(&tested_failed)],
            "Untested",
        );
        not_ours.test = Some(Test {
            enable: true,
            ..Default::default()
        });
        cases.push(not_ours);
        let failed = release(2, status::FAILED, Some(("foo", "bar")));
        let mut failed_release = case(
            "failed release",
            Some(failed.clone()),
            vec![snap(&failed), snap(&release(1, status::SUPERSEDED, None))],
            "Failed",
        );
        failed_release.values = serde_json::Map::new();
        cases.push(failed_release);
        let uninstalled = release(1, status::UNINSTALLED, Some(("foo", "bar")));
        let mut un = case(
            "uninstalled release",
            Some(uninstalled.clone()),
            vec![snap(&uninstalled)],
            "Absent",
        );
        un.values = serde_json::Map::new();
        cases.push(un);
        let mut un2 = case(
            "uninstalled release without current",
            Some(uninstalled.clone()),
            vec![],
            "Absent",
        );
        un2.values = serde_json::Map::new();
        cases.push(un2);
        let mut chart_changed = case(
            "chart changed",
            Some(deployed.clone()),
            vec![snap(&deployed)],
            "OutOfSync",
        );
        chart_changed.chart_version = "0.2.0";
        cases.push(chart_changed);
        let mut values_changed = case(
            "values changed",
            Some(deployed.clone()),
            vec![snap(&deployed)],
            "OutOfSync",
        );
        values_changed.values = serde_json::Map::new();
        cases.push(values_changed);
        let mut post = case(
            "postRenderers changed",
            Some(deployed.clone()),
            vec![snap(&deployed)],
            "OutOfSync",
        );
        post.render_changed = true;
        cases.push(post);

        for c in cases {
            let spec = HelmReleaseSpec {
                test: c.test.clone(),
                ..Default::default()
            };
            let st = HelmReleaseStatus {
                history: c.history.clone(),
                last_attempted_release_action: c.last_action.map(str::to_string),
                ..Default::default()
            };
            let digest = super::super::values::digest(&c.values);
            let desired = Desired {
                chart_name: "hello",
                chart_version: c.chart_version,
                config_digest: &digest,
                render_changed: c.render_changed,
            };
            let got = determine(c.last.as_ref(), &st, &spec, &desired);
            assert_eq!(kind(&got), c.want, "{}: {got:?}", c.name);
        }
    }

    /// helm-controller's `TestAtomicRelease_actionForState` cases.
    #[test]
    fn action_for_state_as_helm_controller() {
        use tidegate_api::helmrelease::{ActionStrategy, Install, Remediation as R, Upgrade};
        let retry = |name: &str| ActionStrategy {
            name: name.into(),
            retry_interval: None,
        };
        struct C {
            name: &'static str,
            state: State,
            spec: HelmReleaseSpec,
            status: HelmReleaseStatus,
            forced: bool,
            previous: bool,
            want: Next,
        }
        let c = |name, state, want| C {
            name,
            state,
            spec: HelmReleaseSpec::default(),
            status: HelmReleaseStatus::default(),
            forced: false,
            previous: false,
            want,
        };
        let st = |action: &str, install: i64, upgrade: i64| HelmReleaseStatus {
            last_attempted_release_action: (!action.is_empty()).then(|| action.to_string()),
            install_failures: install,
            upgrade_failures: upgrade,
            ..Default::default()
        };
        let exceeded = |m: &str| Next::ExceededMaxRetries(m.into());
        let drift_mode = |mode: &str| HelmReleaseSpec {
            drift_detection: Some(tidegate_api::helmrelease::DriftDetection {
                mode: Some(mode.into()),
                ignore: vec![],
            }),
            ..Default::default()
        };
        let cases = vec![
            c(
                "in-sync release does not trigger any action",
                State::InSync,
                Next::Nothing,
            ),
            C {
                forced: true,
                ..c(
                    "in-sync release with force annotation triggers upgrade action",
                    State::InSync,
                    Next::Upgrade,
                )
            },
            C {
                spec: drift_mode("enabled"),
                ..c(
                    "drifted release triggers correction if enabled",
                    State::Drifted,
                    Next::CorrectDrift,
                )
            },
            C {
                spec: drift_mode("warn"),
                ..c(
                    "drifted release only triggers event if mode is warn",
                    State::Drifted,
                    Next::Nothing,
                )
            },
            c(
                "locked release triggers unlock action",
                State::Locked(String::new()),
                Next::Unlock,
            ),
            c(
                "absent release triggers install action",
                State::Absent(String::new()),
                Next::Install,
            ),
            C {
                forced: true,
                status: st("", 1, 0),
                ..c(
                    "absent release without remaining retries and force annotation triggers install",
                    State::Absent(String::new()),
                    Next::Install,
                )
            },
            C {
                status: st("", 1, 0),
                ..c(
                    "absent release without remaining retries returns error",
                    State::Absent(String::new()),
                    exceeded("cannot install release"),
                )
            },
            c(
                "unmanaged release triggers upgrade",
                State::Unmanaged(String::new()),
                Next::Upgrade,
            ),
            c(
                "out-of-sync release triggers upgrade",
                State::OutOfSync(String::new()),
                Next::Upgrade,
            ),
            C {
                forced: true,
                status: st("", 0, 1),
                ..c(
                    "out-of-sync release with no remaining retries and force annotation triggers upgrade",
                    State::OutOfSync(String::new()),
                    Next::Upgrade,
                )
            },
            C {
                status: st("", 0, 1),
                ..c(
                    "out-of-sync release with no remaining retries returns error",
                    State::OutOfSync(String::new()),
                    exceeded("cannot upgrade release"),
                )
            },
            c(
                "untested release triggers test action",
                State::Untested(String::new()),
                Next::Test,
            ),
            C {
                status: st("", 1, 0),
                ..c(
                    "failed release without active remediation triggers upgrade",
                    State::Failed(String::new()),
                    Next::Upgrade,
                )
            },
            C {
                status: st("upgrade", 0, 0),
                ..c(
                    "failed release without failure count triggers upgrade",
                    State::Failed(String::new()),
                    Next::Upgrade,
                )
            },
            C {
                forced: true,
                status: st("upgrade", 0, 1),
                ..c(
                    "failed release with exhausted retries and force annotation triggers upgrade",
                    State::Failed(String::new()),
                    Next::Upgrade,
                )
            },
            C {
                status: st("upgrade", 0, 1),
                ..c(
                    "failed release with exhausted retries returns error",
                    State::Failed(String::new()),
                    exceeded("Failed to upgrade after 1 attempt(s)"),
                )
            },
            C {
                spec: HelmReleaseSpec {
                    install: Some(Install {
                        remediation: Some(R {
                            retries: Some(3),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                status: st("install", 2, 0),
                ..c(
                    "failed release with active install remediation triggers uninstall",
                    State::Failed(String::new()),
                    Next::UninstallRemediation,
                )
            },
            C {
                spec: HelmReleaseSpec {
                    install: Some(Install {
                        strategy: Some(retry("RetryOnFailure")),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                status: st("install", 2, 0),
                ..c(
                    "failed release with active install retry triggers upgrade",
                    State::Failed(String::new()),
                    Next::Upgrade,
                )
            },
            C {
                spec: HelmReleaseSpec {
                    upgrade: Some(Upgrade {
                        remediation: Some(R {
                            retries: Some(2),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                status: st("upgrade", 0, 1),
                previous: true,
                ..c(
                    "failed release with active upgrade remediation triggers rollback",
                    State::Failed(String::new()),
                    Next::Rollback,
                )
            },
            C {
                spec: HelmReleaseSpec {
                    upgrade: Some(Upgrade {
                        strategy: Some(retry("RetryOnFailure")),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                status: st("upgrade", 0, 1),
                previous: true,
                ..c(
                    "failed release with active upgrade retry triggers upgrade",
                    State::Failed(String::new()),
                    Next::Upgrade,
                )
            },
            C {
                spec: HelmReleaseSpec {
                    upgrade: Some(Upgrade {
                        remediation: Some(R {
                            retries: Some(2),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                status: st("upgrade", 0, 1),
                previous: false,
                ..c(
                    "failed release with active upgrade remediation and no previous release triggers error",
                    State::Failed(String::new()),
                    Next::MissingRollbackTarget,
                )
            },
        ];
        for k in cases {
            let got = next(&k.state, &k.spec, &k.status, k.forced, k.previous);
            assert_eq!(got, k.want, "{}", k.name);
        }
    }
}
