//! Event metadata as Flux's event server shapes it: on arrival only the keys under
//! `event.toolkit.fluxcd.io/` or the object's API group are kept (never its `checksum` or
//! `digest`), the `token` is dropped before dispatch, and for each Alert the metadata a
//! provider sees is combined (RFC 0008) from, lowest first: the event group's keys, the
//! Alert's `eventMetadata`, its `summary`, the object group's keys, all without prefixes.

use std::collections::BTreeMap;

use tidegate_api::Alert;
use tidegate_api::event::{self, Event};

/// Keeps only the keys the event server uses.
pub fn cleanup(event: &mut Event) {
    let event_prefix = format!("{}/", event::GROUP);
    let group = event.involved_object.group().to_string();
    let object_prefix = format!("{group}/");
    let excluded = [
        format!("{object_prefix}{}", event::META_CHECKSUM).to_lowercase(),
        format!("{object_prefix}{}", event::META_DIGEST).to_lowercase(),
    ];
    event.metadata.retain(|k, _| {
        !excluded.contains(&k.to_lowercase())
            && (k.starts_with(&event_prefix) || k.starts_with(&object_prefix))
    });
}

/// Drops the object group's `token` (used only for rate limiting).
pub fn exclude_internal(event: &mut Event) {
    let key = format!("{}/{}", event.involved_object.group(), event::META_TOKEN);
    event.metadata.remove(&key);
}

/// The metadata the Alert's provider sees, and the keys set by more than one source with the
/// sources' names (for the `MetadataAppendFailed` warning).
pub fn combine(
    event: &Event,
    alert: &Alert,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    const EVENT_GROUP: &str = "involved object annotations";
    const ALERT_METADATA: &str = "Alert object .spec.eventMetadata";
    const ALERT_SUMMARY: &str = "Alert object .spec.summary";
    const OBJECT_GROUP: &str = "involved object controller metadata";
    let mut metadata = BTreeMap::new();
    let mut sources: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut put = |k: &str, v: &str, source: &'static str| {
        metadata.insert(k.to_string(), v.to_string());
        sources.entry(k.to_string()).or_default().push(source);
    };
    let event_prefix = format!("{}/", event::GROUP);
    for (k, v) in &event.metadata {
        if let Some(key) = k.strip_prefix(&event_prefix) {
            put(key, v, EVENT_GROUP);
        }
    }
    for (k, v) in alert.spec.event_metadata.iter().flatten() {
        put(k, v, ALERT_METADATA);
    }
    if let Some(summary) = alert.spec.summary.as_deref().filter(|s| !s.is_empty()) {
        put("summary", summary, ALERT_SUMMARY);
    }
    let object_prefix = format!("{}/", event.involved_object.group());
    for (k, v) in &event.metadata {
        if let Some(key) = k.strip_prefix(&object_prefix) {
            put(key, v, OBJECT_GROUP);
        }
    }
    let conflicts = sources
        .into_iter()
        .filter(|(_, s)| s.len() > 1)
        .map(|(k, s)| (k, s.join(", ")))
        .collect();
    if metadata.is_empty() {
        return (event.metadata.clone(), conflicts);
    }
    (metadata, conflicts)
}
