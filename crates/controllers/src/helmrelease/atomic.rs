//! helm-controller's `AtomicRelease`: determine the release state, run the action it asks for,
//! record the outcome in conditions, history and failure counters, and go round again until
//! the release is in sync, a remediation ran, or the same action would run twice.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use kube::ResourceExt;
use kube::api::PropagationPolicy;
use tidegate_api::HelmRelease;
use tidegate_api::conditions::{self, READY, RECONCILING, STALLED};
use tidegate_apply::jsondiff::{self, Diff};
use tidegate_helm::storage::Release;

use super::action::{Actor, Settings};
use super::render::Rendered;
use super::state::{self, Desired, Next, Remediation, State};
use super::storage::Storage;
use super::{Context, reconcile::StatusWriter};
use crate::events::EventType;

pub const RELEASED: &str = "Released";
pub const TEST_SUCCESS: &str = "TestSuccess";
pub const REMEDIATED: &str = "Remediated";
pub const DRIFTED: &str = "Drifted";
const DRIFT_DETECTED: &str = "DriftDetected";
/// A Warning event when a deprecated chart (`deprecated: true` in Chart.yaml) is rendered for
/// an install or an upgrade, where helm prints `this chart is deprecated`. Not one of Flux's
/// reasons: helm-controller says nothing about it.
pub const CHART_DEPRECATED: &str = "ChartDeprecated";
const PROGRESSING: &str = "Progressing";

/// Everything one reconcile's release work needs.
pub struct Run<'a> {
    pub hr: &'a HelmRelease,
    pub ctx: &'a Context,
    pub storage: Storage,
    pub manager: tidegate_apply::ResourceManager,
    /// The manager reaches a remote cluster (`spec.kubeConfig`).
    pub remote: bool,
    pub release_name: String,
    pub release_namespace: String,
    /// The desired release, as install and upgrade write it (version, manifest and hooks set
    /// by the action's render).
    pub target: Release,
    /// What a render needs.
    pub render: RenderInput,
    /// The render, and the (upgrade, revision) it was made for.
    pub rendered: Option<(Rendered, bool, i64)>,
    pub config_digest: String,
    pub oci_digest: String,
    pub forced: bool,
    pub render_changed: bool,
    /// The postRenderers and commonMetadata digests of the spec (empty without them), recorded
    /// as observed after a successful release action.
    pub render_digests: (String, String),
    /// The reconcile's worker permit, given back when an action starts to wait.
    pub permit: Option<tokio::sync::OwnedSemaphorePermit>,
    /// `healthCheckExprs`, compiled.
    pub custom_health: Option<std::sync::Arc<tidegate_apply::custom_health::CustomHealth>>,
}

/// The chart, values and post-renderers of the desired release.
pub struct RenderInput {
    pub chart: tidegate_helm::chart::Chart,
    pub values: serde_json::Map<String, serde_json::Value>,
    pub post: super::render::PostRender,
}

/// How the loop ended.
pub enum Outcome {
    /// In sync (or nothing more to do now): requeue after the interval.
    Done,
    /// Try again after this delay.
    Retry(Duration),
    /// Try again soon, with the failure backoff (Flux's `ErrMustRequeue`).
    Requeue,
    /// Retries exhausted: stalled until the spec changes.
    Stalled,
}

fn duration(s: Option<&str>) -> Option<Duration> {
    s.and_then(|s| tidegate_core::duration::parse(s).ok())
}

impl Run<'_> {
    fn timeout(&self, action: Option<&str>) -> Duration {
        duration(action)
            .or_else(|| duration(self.hr.spec.timeout.as_deref()))
            .unwrap_or(Duration::from_secs(300))
    }

    fn max_history(&self) -> i64 {
        self.hr.spec.max_history.unwrap_or(5)
    }

    fn install_settings(&self) -> Settings {
        let i = self.hr.spec.install.clone().unwrap_or_default();
        Settings {
            timeout: self.timeout(i.timeout.as_deref()),
            wait: !i.disable_wait,
            wait_for_jobs: !i.disable_wait_for_jobs,
            hooks: !i.disable_hooks,
            crds: if i.skip_crds {
                "Skip".into()
            } else {
                i.crds.unwrap_or_else(|| "Create".into())
            },
            create_namespace: i.create_namespace
                && self
                    .hr
                    .spec
                    .target_namespace
                    .as_deref()
                    .is_some_and(|n| !n.is_empty()),
            force: true,
            cleanup_on_fail: false,
            max_history: self.max_history(),
            custom_health: self.custom_health.clone(),
        }
    }

    fn upgrade_settings(&self) -> Settings {
        let u = self.hr.spec.upgrade.clone().unwrap_or_default();
        Settings {
            timeout: self.timeout(u.timeout.as_deref()),
            wait: !u.disable_wait,
            wait_for_jobs: !u.disable_wait_for_jobs,
            hooks: !u.disable_hooks,
            crds: u.crds.unwrap_or_else(|| "Skip".into()),
            create_namespace: false,
            force: true,
            cleanup_on_fail: u.cleanup_on_fail,
            max_history: self.max_history(),
            custom_health: self.custom_health.clone(),
        }
    }

    fn rollback_settings(&self) -> Settings {
        let r = self.hr.spec.rollback.clone().unwrap_or_default();
        Settings {
            timeout: self.timeout(r.timeout.as_deref()),
            wait: !r.disable_wait,
            wait_for_jobs: !r.disable_wait_for_jobs,
            hooks: !r.disable_hooks,
            crds: "Skip".into(),
            create_namespace: false,
            force: true,
            cleanup_on_fail: r.cleanup_on_fail,
            max_history: self.max_history(),
            custom_health: self.custom_health.clone(),
        }
    }

    /// The uninstall settings, keep-history and propagation.
    pub fn uninstall_settings(&self) -> (Settings, bool, PropagationPolicy) {
        uninstall_settings(self.hr)
    }

    fn chart_ref(&self) -> String {
        format!(
            "{}@{}",
            self.target.chart_name(),
            self.target.chart_version()
        )
    }

    fn full_name(&self) -> String {
        format!("{}/{}", self.release_namespace, self.release_name)
    }

    fn annotations(&self) -> Vec<(&'static str, String)> {
        let mut a = vec![
            (
                "helm.toolkit.fluxcd.io/revision",
                self.target.chart_version().to_string(),
            ),
            ("helm.toolkit.fluxcd.io/token", self.config_digest.clone()),
        ];
        if !self.target.app_version().is_empty() {
            a.push((
                "helm.toolkit.fluxcd.io/app-version",
                self.target.app_version().to_string(),
            ));
        }
        if !self.oci_digest.is_empty() {
            a.push(("helm.toolkit.fluxcd.io/oci-digest", self.oci_digest.clone()));
        }
        a
    }

    async fn event(&self, kind: EventType, reason: &str, message: &str) {
        let annotations = self.annotations();
        let refs: Vec<(&str, String)> = annotations.iter().map(|(k, v)| (*k, v.clone())).collect();
        self.ctx
            .recorder
            .publish(self.hr, kind, reason, message, &refs)
            .await;
    }

    fn add_snapshot(&self, w: &mut StatusWriter<'_>, r: &Release, action: &str) {
        let snap = state::snapshot(
            r,
            &super::values::digest(&r.config),
            &self.oci_digest,
            action,
        );
        let history = &mut w.st.history;
        if history
            .first()
            .is_some_and(|s| s.version == snap.version && s.name == snap.name)
        {
            history[0] = snap;
        } else {
            history.insert(0, snap);
        }
        let keep = usize::try_from(self.max_history().max(0)).unwrap_or(5);
        if keep > 0 && history.len() > keep {
            history.truncate(keep);
        }
    }

    /// Renders the desired release for an install (`upgrade` false, revision 1) or an upgrade
    /// to `revision`, once per kind of action; the manifest and hooks go into `target`.
    async fn render_for(&mut self, upgrade: bool, revision: i64) -> Result<(), String> {
        if self
            .rendered
            .as_ref()
            .is_some_and(|(_, u, r)| *u == upgrade && *r == revision)
        {
            return Ok(());
        }
        let caps = self.ctx.capabilities(&self.manager, self.remote).await?;
        let skip_schema = if upgrade {
            self.hr
                .spec
                .upgrade
                .as_ref()
                .is_some_and(|u| u.disable_schema_validation)
        } else {
            self.hr
                .spec
                .install
                .as_ref()
                .is_some_and(|i| i.disable_schema_validation)
        };
        let rendered = super::render::render(
            self.render.chart.clone(),
            self.render.values.clone(),
            tidegate_helm::engine::ReleaseOptions {
                name: self.release_name.clone(),
                namespace: self.release_namespace.clone(),
                revision,
                is_upgrade: upgrade,
                is_install: !upgrade,
            },
            caps,
            self.manager.client().clone(),
            self.render.post.clone(),
            skip_schema,
        )
        .await?;
        // What helm would print on standard error: the deprecation as a Warning event (once
        // per render, which precedes an install or an upgrade), the rest in the log.
        let meta = &self.render.chart.metadata;
        if meta.deprecated {
            let message = format!(
                "chart {}@{}: this chart is deprecated",
                meta.name, meta.version
            );
            self.event(EventType::Warning, CHART_DEPRECATED, &message)
                .await;
        }
        for line in &rendered.log {
            tracing::info!(release = %self.full_name(), "helm: {line}");
        }
        self.target.manifest = rendered.manifest.clone();
        self.target.hooks = rendered.hooks.clone();
        self.rendered = Some((rendered, upgrade, revision));
        Ok(())
    }

    /// Runs the loop.
    pub async fn reconcile(&mut self, w: &mut StatusWriter<'_>) -> Result<Outcome, String> {
        let mut ran: HashSet<&'static str> = HashSet::new();
        loop {
            // The newest release, from the cache while its record is unchanged; the whole
            // history is read only when an action follows.
            let newest = self.storage.last_cached(&self.release_name).await?;
            let desired = Desired {
                chart_name: self.target.chart_name(),
                chart_version: self.target.chart_version(),
                config_digest: &self.config_digest,
                render_changed: self.render_changed,
            };
            let mut st = state::determine(newest.as_ref(), &w.st, &self.hr.spec, &desired);
            let mut drift = None;
            if matches!(st, State::InSync)
                && let Some(r) = newest.as_ref()
                && let Some(set) = Box::pin(self.detect_drift(r)).await?
            {
                st = State::Drifted;
                drift = Some(set);
            }
            let history = if matches!(st, State::InSync | State::Drifted) && !self.forced {
                Vec::new()
            } else {
                self.storage.history(&self.release_name).await?
            };
            let last = history.last().or(newest.as_ref());
            let previous_in_storage = previous_deployed(&history).is_some();
            let next = state::next(&st, &self.hr.spec, &w.st, self.forced, previous_in_storage);
            tracing::debug!(release = %self.full_name(), ?st, ?next, "release state");
            if let Some(set) = &drift {
                self.drift_detected(w, set).await;
            } else if matches!(st, State::InSync) && !self.forced && self.detects_drift() {
                w.set(
                    DRIFTED,
                    "False",
                    "NoDriftDetected",
                    "No drift detected against the cluster state",
                );
            }
            if matches!(st, State::InSync) && next == Next::Nothing {
                // History down to the release in sync.
                if let Some(l) = last
                    && let Some(pos) = w.st.history.iter().position(|s| s.version == l.version)
                {
                    w.st.history.truncate(pos + 1);
                }
            }
            let name: &'static str = match &next {
                Next::Nothing => {
                    summarize(w, self.hr);
                    return Ok(Outcome::Done);
                }
                Next::ExceededMaxRetries(message) => {
                    w.set(STALLED, "True", "RetriesExceeded", message);
                    summarize(w, self.hr);
                    w.set(READY, "False", "RetriesExceeded", message);
                    return Ok(Outcome::Stalled);
                }
                Next::MissingRollbackTarget => {
                    let message = "missing target release for rollback";
                    w.set(STALLED, "True", "MissingRollbackTarget", message);
                    summarize(w, self.hr);
                    w.set(READY, "False", "MissingRollbackTarget", message);
                    return Ok(Outcome::Stalled);
                }
                Next::Unlock => "unlock",
                Next::Install => "install",
                Next::Upgrade => "upgrade",
                Next::Test => "test",
                Next::Rollback => "rollback",
                Next::UninstallRemediation => "uninstall",
                Next::CorrectDrift => "correct cluster drift",
            };
            if !ran.insert(name) {
                let r = Remediation::active(&self.hr.spec, &w.st);
                summarize(w, self.hr);
                if r.retry_strategy {
                    return Ok(Outcome::Retry(self.retry_interval()));
                }
                if !r.exhausted() {
                    return Ok(Outcome::Requeue);
                }
                return Ok(Outcome::Done);
            }
            let timeout = match next {
                Next::Install => self.install_settings().timeout,
                Next::Upgrade => self.upgrade_settings().timeout,
                Next::Rollback => self.rollback_settings().timeout,
                Next::Test => self.test_timeout(),
                _ => self.timeout(None),
            };
            let message = format!(
                "Running '{name}' action with timeout of {}",
                tidegate_core::duration::format(timeout)
            );
            w.set(RECONCILING, "True", PROGRESSING, &message);
            if matches!(next, Next::Install | Next::Upgrade) {
                w.set(READY, "Unknown", PROGRESSING, &message);
            }
            w.flush().await?;
            let last = last.cloned();
            let deployed = previous_deployed(&history).cloned();
            let current_deployed = history
                .iter()
                .rev()
                .find(|r| r.info.status == tidegate_helm::storage::status::DEPLOYED)
                .cloned();
            match next {
                Next::Unlock => {
                    if let Some(l) = last {
                        let chart = format!("{}@{}", l.chart_name(), l.chart_version());
                        let from = l.info.status.clone();
                        let unlocked = super::action::unlock(&self.storage, l).await?;
                        self.add_snapshot(w, &unlocked, "");
                        let msg = format!(
                            "Unlocked Helm release {}/{}.v{} with chart {chart} in {from} state",
                            unlocked.namespace, unlocked.name, unlocked.version
                        );
                        w.set(RELEASED, "False", "PendingRelease", &msg);
                        self.event(EventType::Normal, "PendingRelease", &msg).await;
                    }
                }
                Next::Install => Box::pin(self.install(w)).await?,
                Next::Upgrade => {
                    if matches!(st, State::Unmanaged(_)) {
                        w.st.history.clear();
                    }
                    match last {
                        Some(l) => Box::pin(self.upgrade(w, current_deployed, &l)).await?,
                        None => Box::pin(self.install(w)).await?,
                    }
                }
                Next::Test => Box::pin(self.test(w, last)).await?,
                Next::Rollback => {
                    let (Some(l), Some(prev)) = (last, deployed) else {
                        w.set(
                            STALLED,
                            "True",
                            "MissingRollbackTarget",
                            "missing target release for rollback",
                        );
                        return Ok(Outcome::Stalled);
                    };
                    Box::pin(self.rollback(w, current_deployed, &l, &prev)).await?;
                    return Ok(self.after_remediation(w));
                }
                Next::UninstallRemediation => {
                    if let Some(l) = last {
                        Box::pin(self.uninstall_remediation(w, l)).await?;
                    }
                    return Ok(self.after_remediation(w));
                }
                Next::CorrectDrift => {
                    if let Some(set) = drift.take() {
                        Box::pin(self.correct_drift(w, &set)).await;
                    }
                }
                Next::Nothing | Next::ExceededMaxRetries(_) | Next::MissingRollbackTarget => {}
            }
            w.flush().await?;
        }
    }

    fn detects_drift(&self) -> bool {
        self.hr
            .spec
            .drift_detection
            .as_ref()
            .is_some_and(|d| d.must_detect_changes())
    }

    /// With drift detection on, compares the release's objects with the cluster: the diffs
    /// when something drifted. Objects that could not be compared are logged when others
    /// drifted, and fail the reconcile when nothing else did.
    async fn detect_drift(&self, r: &Release) -> Result<Option<Vec<Diff>>, String> {
        let Some(dd) = self
            .hr
            .spec
            .drift_detection
            .as_ref()
            .filter(|d| d.must_detect_changes())
        else {
            return Ok(None);
        };
        let set = super::drift::diff(&self.manager, r, &dd.ignore).await?;
        let changes = jsondiff::has_changes(&set.diffs);
        if !set.errors.is_empty() {
            let errors = set.errors.join("\n");
            if !changes {
                return Err(format!("unable to determine cluster state: {errors}"));
            }
            tracing::error!(
                release = %self.full_name(),
                error = %errors,
                "diff of release against cluster state completed with error"
            );
        }
        Ok(changes.then_some(set.diffs))
    }

    /// Reports drift: the log, a `DriftDetected` warning and the `Drifted` condition.
    async fn drift_detected(&self, w: &mut StatusWriter<'_>, set: &[Diff]) {
        let release = self.latest_release_name(w);
        super::drift::log(&release, set);
        let message = format!(
            "Cluster state of release {release} has drifted from the desired state:\n{}",
            jsondiff::summarize(set)
        );
        self.ctx
            .recorder
            .publish(self.hr, EventType::Warning, DRIFT_DETECTED, &message, &[])
            .await;
        w.set(DRIFTED, "True", DRIFT_DETECTED, &message);
    }

    fn latest_release_name(&self, w: &StatusWriter<'_>) -> String {
        w.st.history
            .first()
            .map(|s| s.full_release_name())
            .unwrap_or_else(|| self.full_name())
    }

    /// helm-controller's `CorrectClusterDrift`: creates and patches, then an event saying
    /// what was corrected or what failed.
    async fn correct_drift(&self, w: &mut StatusWriter<'_>, set: &[Diff]) {
        w.set(READY, "Unknown", PROGRESSING, "correcting cluster drift");
        let c = super::drift::correct(&self.manager, set).await;
        let release = self.latest_release_name(w);
        let changes = c.changes.join("\n");
        if !c.errors.is_empty() {
            let mut message = format!(
                "Failed to {}correct cluster state of release {release}:\n{}",
                if c.changes.is_empty() {
                    ""
                } else {
                    "partially "
                },
                c.errors.join("\n")
            );
            if !c.changes.is_empty() {
                message.push_str("\n\nSuccessful corrections:\n");
                message.push_str(&changes);
            }
            self.event(EventType::Warning, "DriftCorrectionFailed", &message)
                .await;
        } else if !c.changes.is_empty() {
            let message =
                format!("Cluster state of release {release} has been corrected:\n{changes}");
            self.event(EventType::Normal, "DriftCorrected", &message)
                .await;
        }
    }

    fn retry_interval(&self) -> Duration {
        let from =
            |s: Option<tidegate_api::helmrelease::ActionStrategy>| s.and_then(|s| s.retry_interval);
        let r = from(self.hr.spec.upgrade.clone().and_then(|u| u.strategy))
            .or_else(|| from(self.hr.spec.install.clone().and_then(|i| i.strategy)));
        duration(r.as_deref()).unwrap_or(Duration::from_secs(300))
    }

    fn test_timeout(&self) -> Duration {
        self.timeout(
            self.hr
                .spec
                .test
                .as_ref()
                .and_then(|t| t.timeout.as_deref()),
        )
    }

    /// After a remediation the loop stops: retry, requeue while retries remain, or stall.
    fn after_remediation(&self, w: &mut StatusWriter<'_>) -> Outcome {
        let r = Remediation::active(&self.hr.spec, &w.st);
        summarize(w, self.hr);
        if r.retry_strategy {
            return Outcome::Retry(self.retry_interval());
        }
        if !r.exhausted() {
            return Outcome::Requeue;
        }
        let message = format!("Failed to {} after {} attempt(s)", r.action, r.failures);
        w.set(STALLED, "True", "RetriesExceeded", &message);
        Outcome::Stalled
    }

    fn record_failure(&self, w: &mut StatusWriter<'_>, action: &str, recorded: bool) {
        w.st.failures += 1;
        if recorded {
            if action == "install" {
                w.st.install_failures += 1;
            } else {
                w.st.upgrade_failures += 1;
            }
        }
    }

    async fn install(&mut self, w: &mut StatusWriter<'_>) -> Result<(), String> {
        let settings = self.install_settings();
        w.st.last_attempted_release_action = Some("install".into());
        let started = Instant::now();
        if let Err(e) = Box::pin(self.render_for(false, 1)).await {
            let failed = Err(super::action::ActionError::before_record(e));
            self.record(w, "install", started, failed).await;
            return Ok(());
        }
        let mut target = self.target.clone();
        target.version = 1;
        let Some((rendered, _, _)) = &self.rendered else {
            return Ok(());
        };
        let mut applied = self.ctx.take_applied(&self.hr_key());
        let result = Actor {
            manager: &self.manager,
            storage: &self.storage,
            applied: &mut applied,
            permit: &mut self.permit,
        }
        .install(target, rendered, &settings)
        .await;
        self.ctx.put_applied(&self.hr_key(), applied);
        self.record(w, "install", started, result).await;
        Ok(())
    }

    async fn upgrade(
        &mut self,
        w: &mut StatusWriter<'_>,
        current: Option<Release>,
        last: &Release,
    ) -> Result<(), String> {
        let settings = self.upgrade_settings();
        w.st.last_attempted_release_action = Some("upgrade".into());
        let started = Instant::now();
        if let Err(e) = Box::pin(self.render_for(true, last.version + 1)).await {
            let failed = Err(super::action::ActionError::before_record(e));
            self.record(w, "upgrade", started, failed).await;
            return Ok(());
        }
        let Some((rendered, _, _)) = &self.rendered else {
            return Ok(());
        };
        let mut applied = self.ctx.take_applied(&self.hr_key());
        let result = Actor {
            manager: &self.manager,
            storage: &self.storage,
            applied: &mut applied,
            permit: &mut self.permit,
        }
        .upgrade(current, last, self.target.clone(), rendered, &settings)
        .await;
        self.ctx.put_applied(&self.hr_key(), applied);
        self.record(w, "upgrade", started, result).await;
        Ok(())
    }

    /// Records an install's or upgrade's outcome: history, counters, `Released`, an event.
    async fn record(
        &mut self,
        w: &mut StatusWriter<'_>,
        action: &'static str,
        started: Instant,
        result: Result<Release, super::action::ActionError>,
    ) {
        let (ok_reason, failed_reason) = match action {
            "install" => ("InstallSucceeded", "InstallFailed"),
            _ => ("UpgradeSucceeded", "UpgradeFailed"),
        };
        w.st.last_attempted_release_action_duration =
            Some(tidegate_core::duration::format(started.elapsed()));
        match result {
            Ok(r) => {
                self.add_snapshot(w, &r, action);
                // The release now carries this spec's post-renderers and common metadata.
                let (post, meta) = &self.render_digests;
                w.st.observed_post_renderers_digest = Some(post.clone()).filter(|d| !d.is_empty());
                w.st.observed_common_metadata_digest = Some(meta.clone()).filter(|d| !d.is_empty());
                self.render_changed = false;
                conditions::delete(&mut w.st.conditions, REMEDIATED);
                conditions::delete(&mut w.st.conditions, TEST_SUCCESS);
                let msg = format!(
                    "Helm {action} succeeded for release {}.v{} with chart {}",
                    self.full_name(),
                    r.version,
                    self.chart_ref()
                );
                w.set(RELEASED, "True", ok_reason, &msg);
                w.st.last_release_revision = Some(r.version);
                self.event(EventType::Normal, ok_reason, &msg).await;
            }
            Err(e) => {
                if e.recorded
                    && let Ok(Some(r)) = self.storage.last(&self.release_name).await
                {
                    self.add_snapshot(w, &r, action);
                }
                self.record_failure(w, action, e.recorded);
                let msg = format!(
                    "Helm {action} failed for release {} with chart {}: {}",
                    self.full_name(),
                    self.chart_ref(),
                    e.message
                );
                w.set(RELEASED, "False", failed_reason, &msg);
                self.event(EventType::Warning, failed_reason, &msg).await;
            }
        }
    }

    async fn test(
        &mut self,
        w: &mut StatusWriter<'_>,
        last: Option<Release>,
    ) -> Result<(), String> {
        let Some(r) = last else { return Ok(()) };
        let filters = self
            .hr
            .spec
            .test
            .as_ref()
            .and_then(|t| t.filters.clone())
            .unwrap_or_default();
        let filter = move |name: &str| {
            let includes: Vec<_> = filters.iter().filter(|f| !f.exclude).collect();
            if filters.iter().any(|f| f.exclude && f.name == name) {
                return false;
            }
            includes.is_empty() || includes.iter().any(|f| f.name == name)
        };
        let mut applied = tidegate_apply::AppliedState::default();
        let timeout = self.test_timeout();
        let result = Actor {
            manager: &self.manager,
            storage: &self.storage,
            applied: &mut applied,
            permit: &mut self.permit,
        }
        .test(r, timeout, filter)
        .await;
        let (tested, err) = match result {
            Ok(r) => (r, None),
            Err((r, e)) => (r, Some(e)),
        };
        let hooks: std::collections::BTreeMap<String, tidegate_api::helmrelease::TestHookStatus> =
            tested
                .hooks
                .iter()
                .filter(|h| h.runs_on("test") && !h.last_run.phase.is_empty())
                .map(|h| {
                    (
                        h.name.clone(),
                        tidegate_api::helmrelease::TestHookStatus {
                            last_started: h.last_run.started_at.clone(),
                            last_completed: h.last_run.completed_at.clone(),
                            phase: h.last_run.phase.clone(),
                        },
                    )
                })
                .collect();
        let count = hooks.len();
        if let Some(s) = w.st.history.first_mut()
            && s.version == tested.version
        {
            // An empty map still says "tests ran".
            s.test_hooks = Some(hooks);
        }
        let release = format!("{}.v{}", self.full_name(), tested.version);
        match err {
            None => {
                let msg = format!(
                    "Helm test succeeded for release {release} with chart {}: {count} test hooks completed successfully",
                    self.chart_ref()
                );
                w.set(TEST_SUCCESS, "True", "TestSucceeded", &msg);
                self.event(EventType::Normal, "TestSucceeded", &msg).await;
            }
            Some(e) => {
                let msg = format!(
                    "Helm test failed for release {release} with chart {}: {e}",
                    self.chart_ref()
                );
                w.st.failures += 1;
                let ignore = self
                    .hr
                    .spec
                    .test
                    .as_ref()
                    .is_some_and(|t| t.ignore_failures);
                if !ignore {
                    let action =
                        w.st.last_attempted_release_action
                            .clone()
                            .unwrap_or_default();
                    self.record_failure(w, &action, true);
                    w.st.failures -= 1;
                }
                w.set(TEST_SUCCESS, "False", "TestFailed", &msg);
                self.event(EventType::Warning, "TestFailed", &msg).await;
            }
        }
        Ok(())
    }

    async fn rollback(
        &mut self,
        w: &mut StatusWriter<'_>,
        current: Option<Release>,
        last: &Release,
        previous: &Release,
    ) -> Result<(), String> {
        let settings = self.rollback_settings();
        let mut applied = self.ctx.take_applied(&self.hr_key());
        let result = Actor {
            manager: &self.manager,
            storage: &self.storage,
            applied: &mut applied,
            permit: &mut self.permit,
        }
        .rollback(current, last, previous, &settings)
        .await;
        self.ctx.put_applied(&self.hr_key(), applied);
        let prev_name = format!(
            "{}/{}.v{}",
            previous.namespace, previous.name, previous.version
        );
        let chart = format!("{}@{}", previous.chart_name(), previous.chart_version());
        match result {
            Ok(r) => {
                self.add_snapshot(w, &r, "");
                let msg = format!(
                    "Helm rollback to previous release {prev_name} with chart {chart} succeeded"
                );
                w.set(REMEDIATED, "True", "RollbackSucceeded", &msg);
                self.event(EventType::Normal, "RollbackSucceeded", &msg)
                    .await;
            }
            Err(e) => {
                let msg = format!(
                    "Helm rollback to previous release {prev_name} with chart {chart} failed: {}",
                    e.message
                );
                w.set(REMEDIATED, "False", "RollbackFailed", &msg);
                self.event(EventType::Warning, "RollbackFailed", &msg).await;
            }
        }
        Ok(())
    }

    async fn uninstall_remediation(
        &mut self,
        w: &mut StatusWriter<'_>,
        last: Release,
    ) -> Result<(), String> {
        let (settings, keep, propagation) = self.uninstall_settings();
        let release = format!("{}/{}.v{}", last.namespace, last.name, last.version);
        let chart = format!("{}@{}", last.chart_name(), last.chart_version());
        let mut applied = tidegate_apply::AppliedState::default();
        let result = Actor {
            manager: &self.manager,
            storage: &self.storage,
            applied: &mut applied,
            permit: &mut self.permit,
        }
        .uninstall(last, &settings, keep, propagation)
        .await;
        self.ctx
            .put_applied(&self.hr_key(), tidegate_apply::AppliedState::default());
        match result {
            Ok(()) => {
                if let Some(s) = w.st.history.first_mut() {
                    s.status = tidegate_helm::storage::status::UNINSTALLED.into();
                }
                let msg = format!(
                    "Helm uninstall remediation for release {release} with chart {chart} succeeded"
                );
                w.set(REMEDIATED, "True", "UninstallSucceeded", &msg);
                self.event(EventType::Normal, "UninstallSucceeded", &msg)
                    .await;
            }
            Err(e) => {
                let msg = format!(
                    "Helm uninstall remediation for release {release} with chart {chart} failed: {}",
                    e.message
                );
                w.set(REMEDIATED, "False", "UninstallFailed", &msg);
                self.event(EventType::Warning, "UninstallFailed", &msg)
                    .await;
            }
        }
        Ok(())
    }

    fn hr_key(&self) -> String {
        super::key(
            &self.hr.namespace().unwrap_or_default(),
            &self.hr.name_any(),
        )
    }
}

/// The newest `deployed` or `superseded` release before the newest one: the rollback target.
fn previous_deployed(history: &[Release]) -> Option<&Release> {
    let (_, older) = history.split_last()?;
    older.iter().rev().find(|r| {
        r.info.status == tidegate_helm::storage::status::DEPLOYED
            || r.info.status == tidegate_helm::storage::status::SUPERSEDED
    })
}

/// The uninstall settings of `hr`, keep-history and propagation.
pub fn uninstall_settings(hr: &HelmRelease) -> (Settings, bool, PropagationPolicy) {
    let u = hr.spec.uninstall.clone().unwrap_or_default();
    let timeout = duration(u.timeout.as_deref())
        .or_else(|| duration(hr.spec.timeout.as_deref()))
        .unwrap_or(Duration::from_secs(300));
    let propagation = match u.deletion_propagation.as_deref() {
        Some("foreground") => PropagationPolicy::Foreground,
        Some("orphan") => PropagationPolicy::Orphan,
        _ => PropagationPolicy::Background,
    };
    (
        Settings {
            timeout,
            wait: !u.disable_wait,
            wait_for_jobs: true,
            hooks: !u.disable_hooks,
            crds: "Skip".into(),
            create_namespace: false,
            force: false,
            cleanup_on_fail: false,
            max_history: 0,
            custom_health: None,
        },
        u.keep_history,
        propagation,
    )
}

/// Flux's `summarize`: Ready from the highest-priority of Remediated, TestSuccess (when tests
/// count) and Released; a Remediated summary is never ready.
pub fn summarize(w: &mut StatusWriter<'_>, hr: &HelmRelease) {
    let tests_count = hr
        .spec
        .test
        .as_ref()
        .is_some_and(|t| t.enable && !t.ignore_failures);
    let pick = |t: &str| conditions::get(&w.st.conditions, t).cloned();
    let source = pick(REMEDIATED)
        .or_else(|| {
            if tests_count {
                pick(TEST_SUCCESS)
            } else {
                None
            }
        })
        .or_else(|| pick(RELEASED));
    if let Some(c) = source {
        let status = if c.type_ == REMEDIATED {
            "False".to_string()
        } else {
            c.status.clone()
        };
        w.set(READY, &status, &c.reason, &c.message);
        if status == "True" {
            conditions::delete(&mut w.st.conditions, STALLED);
        }
    }
    conditions::delete(&mut w.st.conditions, RECONCILING);
}
