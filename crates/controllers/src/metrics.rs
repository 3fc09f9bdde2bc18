//! Prometheus metrics in Flux's names: `gotk_reconcile_duration_seconds` (histogram, labels
//! kind/name/namespace), `gotk_reconcile_condition` (gauge per condition status) and
//! `gotk_suspend_status`, and the HelmChart index cache's `gotk_cache_events_total`.

use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets_range};
use prometheus_client::registry::Registry;

/// Labels of an object.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ObjectLabels {
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
}

impl ObjectLabels {
    /// The labels of a toolkit object.
    pub fn of<K: kube::Resource<DynamicType = ()>>(obj: &K) -> Self {
        use kube::ResourceExt;
        ObjectLabels {
            kind: K::kind(&()).into_owned(),
            name: obj.name_any(),
            namespace: obj.namespace().unwrap_or_default(),
        }
    }
}

/// Labels of a condition.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ConditionLabels {
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Condition type.
    pub r#type: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
}

/// Labels of a cache event (Flux's `gotk_cache_events_total`).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CacheEventLabels {
    /// `cache_hit` or `cache_miss`.
    pub event_type: String,
    /// Name of the object the cached item belongs to.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
}

/// The controllers' metrics.
pub struct Metrics {
    /// Reconcile durations.
    pub duration: Family<ObjectLabels, Histogram>,
    /// Current condition status (1 for the current status, 0 for the others).
    pub condition: Family<ConditionLabels, Gauge>,
    /// 1 when suspended.
    pub suspend: Family<ObjectLabels, Gauge>,
    /// Index cache hits and misses.
    pub cache_events: Family<CacheEventLabels, Counter>,
    registry: Registry,
}

impl Metrics {
    /// Registers the metrics.
    pub fn new() -> Arc<Self> {
        let mut registry = Registry::default();
        let duration = Family::<ObjectLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets_range(0.01, 1800.0, 10))
        });
        let condition = Family::<ConditionLabels, Gauge>::default();
        let suspend = Family::<ObjectLabels, Gauge>::default();
        registry.register(
            "gotk_reconcile_duration_seconds",
            "The duration in seconds of a GitOps Toolkit resource reconciliation.",
            duration.clone(),
        );
        registry.register(
            "gotk_reconcile_condition",
            "The current condition status of a GitOps Toolkit resource reconciliation.",
            condition.clone(),
        );
        registry.register(
            "gotk_suspend_status",
            "The current suspend status of a GitOps Toolkit resource.",
            suspend.clone(),
        );
        let cache_events = Family::<CacheEventLabels, Counter>::default();
        registry.register(
            "gotk_cache_events",
            "Total number of cache retrieval events for a Gitops Toolkit resource reconciliation.",
            cache_events.clone(),
        );
        Arc::new(Metrics {
            duration,
            condition,
            suspend,
            cache_events,
            registry,
        })
    }

    /// Records one condition's status.
    pub fn record_condition(&self, obj: &ObjectLabels, type_: &str, status: &str) {
        for s in ["True", "False", "Unknown"] {
            let labels = ConditionLabels {
                kind: obj.kind.clone(),
                name: obj.name.clone(),
                namespace: obj.namespace.clone(),
                r#type: type_.to_string(),
                status: s.to_string(),
            };
            self.condition
                .get_or_create(&labels)
                .set(i64::from(s == status));
        }
    }

    /// Counts a cache hit (`hit`) or miss for the object `namespace/name`.
    pub fn record_cache_event(&self, hit: bool, name: &str, namespace: &str) {
        let labels = CacheEventLabels {
            event_type: if hit { "cache_hit" } else { "cache_miss" }.to_string(),
            name: name.to_string(),
            namespace: namespace.to_string(),
        };
        self.cache_events.get_or_create(&labels).inc();
    }

    /// The text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// Serves `/metrics` on a bound listener.
    pub async fn serve(self: Arc<Self>, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let app = axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let m = self.clone();
                async move { m.encode() }
            }),
        );
        axum::serve(listener, app).await
    }
}
