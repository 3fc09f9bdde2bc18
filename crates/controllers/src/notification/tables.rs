//! Flux's event-handler table tests, ported as data (`tests/data/notification/`, transcribed
//! from notification-controller's `event_handlers_test.go`): source matching, alert
//! filtering, and the metadata merge with its conflict warnings.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tidegate_api::Alert;
use tidegate_api::event::{Event, ObjectReference};

use super::alerts::{Labels, Regexes, filter};
use super::metadata::combine;

/// Labels from the objects a case has in its fake cluster.
struct Objects(Vec<Value>);

impl Labels for Objects {
    async fn labels(&self, o: &ObjectReference) -> Result<BTreeMap<String, String>, String> {
        self.0
            .iter()
            .find(|v| {
                v["kind"] == o.kind.as_str()
                    && v["metadata"]["name"] == o.name.as_str()
                    && v["metadata"]["namespace"] == o.namespace.as_str()
            })
            .map(|v| serde_json::from_value(v["metadata"]["labels"].clone()).unwrap_or_default())
            .ok_or_else(|| format!("{} \"{}\" not found", o.kind, o.name))
    }
}

fn cases(file: &str) -> Vec<Value> {
    let path = format!(
        "{}/tests/data/notification/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn alert(namespace: &str, name: &str, spec: Value) -> Arc<Alert> {
    Arc::new(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        }))
        .unwrap(),
    )
}

#[tokio::test]
async fn event_matches_alert_as_flux() {
    let all = cases("event_matches_alert.json");
    assert_eq!(all.len(), 10);
    for c in all {
        let name = c["name"].as_str().unwrap();
        let mut spec =
            serde_json::json!({"providerRef": {"name": "p"}, "eventSources": [c["source"]]});
        if let Some(s) = c["alertSeverity"].as_str() {
            spec["eventSeverity"] = Value::from(s);
        }
        let a = alert(c["alertNamespace"].as_str().unwrap(), "test-alert", spec);
        let event: Event = serde_json::from_value(c["event"].clone()).unwrap();
        let objects = Objects(c["objects"].as_array().cloned().unwrap_or_default());
        let (matched, _) = filter(&[a], &event, &objects, &Regexes::default()).await;
        assert_eq!(!matched.is_empty(), c["want"].as_bool().unwrap(), "{name}");
    }
}

#[tokio::test]
async fn filter_alerts_for_event_as_flux() {
    let all = cases("filter_alerts_for_event.json");
    assert_eq!(all.len(), 9);
    for c in all {
        let name = c["name"].as_str().unwrap();
        let alerts: Vec<Arc<Alert>> = c["alerts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                alert(
                    a["namespace"].as_str().unwrap(),
                    a["name"].as_str().unwrap(),
                    a["spec"].clone(),
                )
            })
            .collect();
        let event: Event = serde_json::from_value(c["event"].clone()).unwrap();
        let objects = Objects(c["objects"].as_array().cloned().unwrap_or_default());
        let (matched, _) = filter(&alerts, &event, &objects, &Regexes::default()).await;
        let got: Vec<String> = matched
            .iter()
            .map(|a| super::dispatch::alert_key(a))
            .collect();
        let want: Vec<String> = serde_json::from_value(c["wantAlerts"].clone()).unwrap();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn combine_event_metadata_as_flux() {
    let all = cases("combine_event_metadata.json");
    assert_eq!(all.len(), 6);
    for c in all {
        let name = c["name"].as_str().unwrap();
        let event: Event = serde_json::from_value(c["event"].clone()).unwrap();
        let mut spec = serde_json::json!({"providerRef": {"name": "p"}});
        for k in ["eventMetadata", "summary"] {
            if !c["alert"][k].is_null() {
                spec[k] = c["alert"][k].clone();
            }
        }
        let a = alert(c["alert"]["namespace"].as_str().unwrap_or(""), "a", spec);
        let (metadata, conflicts) = combine(&event, &a);
        let want: BTreeMap<String, String> =
            serde_json::from_value(c["wantMetadata"].clone()).unwrap_or_default();
        assert_eq!(metadata, want, "{name}");
        let want: BTreeMap<String, String> =
            serde_json::from_value(c["wantConflicts"].clone()).unwrap();
        assert_eq!(conflicts, want, "{name}");
        // Flux's recorder prints the annotations as a Go map (sorted keys).
        let event_text = if conflicts.is_empty() {
            String::new()
        } else {
            let pairs: Vec<String> = conflicts.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!(
                "Warning MetadataAppendFailed metadata key conflicts detected (please refer to the Alert API docs and Flux RFC 0008 for more information) map[{}]",
                pairs.join(" ")
            )
        };
        assert_eq!(event_text, c["wantEvent"].as_str().unwrap(), "{name}");
    }
}
