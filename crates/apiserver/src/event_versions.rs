//! Core `v1` Events and `events.k8s.io/v1` Events are one store seen through both, as in
//! kube-apiserver: objects are stored in the core form; reads through `events.k8s.io` convert
//! them, and its writes are converted back before they are stored.

use serde_json::{Map, Value};
use tidegate_schema::ResourceInfo;

/// Core field → `events.k8s.io/v1` field; the others (`reason`, `type`, `action`, `related`,
/// `reportingInstance`, `eventTime`, `series`, `metadata`) keep their names.
const RENAMES: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// Whether `r` is `events.k8s.io` Events (stored with the core ones).
pub fn is_events_v1(r: &ResourceInfo) -> bool {
    !r.custom && r.group == "events.k8s.io" && r.plural == "events"
}

fn rename(obj: &Value, to_v1: bool, api_version: &str) -> Value {
    let Value::Object(m) = obj else {
        return obj.clone();
    };
    let mut out = Map::with_capacity(m.len());
    for (k, v) in m {
        let name = RENAMES
            .iter()
            .find(|(core, v1)| if to_v1 { core == k } else { v1 == k })
            .map(|(core, v1)| if to_v1 { *v1 } else { *core })
            .unwrap_or(k.as_str());
        let v = if k == "apiVersion" {
            Value::String(api_version.into())
        } else {
            v.clone()
        };
        out.insert(name.into(), v);
    }
    Value::Object(out)
}

/// A core Event as `events.k8s.io/v1` shows it.
pub fn to_events_v1(core: &Value) -> Value {
    if core.get("apiVersion").and_then(Value::as_str) != Some("v1") {
        return core.clone();
    }
    rename(core, true, "events.k8s.io/v1")
}

/// An `events.k8s.io/v1` Event in the core form it is stored in.
pub fn to_core(v1: &Value) -> Value {
    if v1.get("apiVersion").and_then(Value::as_str) == Some("v1") {
        return v1.clone();
    }
    rename(v1, false, "v1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips() {
        let core = json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": "e"},
            "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "Started", "message": "hi",
            "count": 2, "reportingComponent": "kubelet", "type": "Normal"});
        let v1 = to_events_v1(&core);
        assert_eq!(v1["apiVersion"], "events.k8s.io/v1");
        assert_eq!(v1["regarding"]["name"], "p");
        assert_eq!(v1["note"], "hi");
        assert_eq!(v1["deprecatedCount"], 2);
        assert_eq!(v1["reportingController"], "kubelet");
        assert_eq!(to_core(&v1), core);
    }
}
