//! Core `v1` Events, as the controllers the simulator stands in for record them
//! (`ScalingReplicaSet`, `SuccessfulCreate`, `Scheduled`, `Started`, …).

use crate::objects::{meta_str, now};
use crate::server::ServerState;
use crate::store::Key;
use serde_json::{Value, json};

/// One event to record.
pub struct Event {
    component: &'static str,
    type_: &'static str,
    reason: &'static str,
    message: String,
}

impl Event {
    /// A `Normal` event from `component`.
    pub fn normal(component: &'static str, reason: &'static str, message: String) -> Event {
        Event {
            component,
            type_: "Normal",
            reason,
            message,
        }
    }
}

/// Stores `event` about `involved` in its namespace (`default` for cluster-scoped objects).
pub fn record(state: &ServerState, involved: &Value, event: Event) {
    let name = meta_str(involved, "name").unwrap_or("");
    let ns = meta_str(involved, "namespace")
        .filter(|n| !n.is_empty())
        .unwrap_or("default");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let event_name = format!("{name}.{nanos:x}");
    let time = now();
    let obj = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name, "namespace": ns},
        "involvedObject": {
            "apiVersion": involved.get("apiVersion").cloned().unwrap_or(Value::Null),
            "kind": involved.get("kind").cloned().unwrap_or(Value::Null),
            "name": name,
            "namespace": meta_str(involved, "namespace").unwrap_or(""),
            "uid": meta_str(involved, "uid").unwrap_or(""),
            "resourceVersion": meta_str(involved, "resourceVersion").unwrap_or(""),
        },
        "reason": event.reason,
        "message": event.message,
        "source": {"component": event.component},
        "firstTimestamp": time,
        "lastTimestamp": time,
        "count": 1,
        "type": event.type_,
        "eventTime": null,
        "reportingComponent": event.component,
        "reportingInstance": "",
    });
    let key = Key::new("/events", ns, &event_name);
    if let Err(e) = crate::objects::create_if_missing(&state.store, &key, obj) {
        tracing::warn!(error = %e, "recording an event");
    }
}
