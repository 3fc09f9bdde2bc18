//! `cdevents` Receivers, as Flux checks them with the CDEvents Go SDK (spec v0.4): the body
//! must be a CDEvent of a type the spec defines (or a custom `dev.cdeventsx.` event), whose
//! major version matches, and which validates against the spec's JSON schema after being
//! read the way the SDK reads it into its Go types (unknown fields dropped, absent required
//! strings empty, an absent timestamp Go's zero time). `Ce-Type` is checked against
//! `events`.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{Map, Value};
use tidegate_helm::values::schema_load::SchemaLoader;

/// The spec's schemas, by `$id`.
static SCHEMAS: &[(&str, &str)] = &[
    (
        "https://cdevents.dev/0.4.1/schema/artifact-deleted-event",
        include_str!("cdevents-spec-0.4/schemas/artifactdeleted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/artifact-downloaded-event",
        include_str!("cdevents-spec-0.4/schemas/artifactdownloaded.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/artifact-packaged-event",
        include_str!("cdevents-spec-0.4/schemas/artifactpackaged.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/artifact-published-event",
        include_str!("cdevents-spec-0.4/schemas/artifactpublished.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/artifact-signed-event",
        include_str!("cdevents-spec-0.4/schemas/artifactsigned.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/branch-created-event",
        include_str!("cdevents-spec-0.4/schemas/branchcreated.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/branch-deleted-event",
        include_str!("cdevents-spec-0.4/schemas/branchdeleted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/build-finished-event",
        include_str!("cdevents-spec-0.4/schemas/buildfinished.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/build-queued-event",
        include_str!("cdevents-spec-0.4/schemas/buildqueued.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/build-started-event",
        include_str!("cdevents-spec-0.4/schemas/buildstarted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/change-abandoned-event",
        include_str!("cdevents-spec-0.4/schemas/changeabandoned.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/change-created-event",
        include_str!("cdevents-spec-0.4/schemas/changecreated.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/change-merged-event",
        include_str!("cdevents-spec-0.4/schemas/changemerged.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/change-reviewed-event",
        include_str!("cdevents-spec-0.4/schemas/changereviewed.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/change-updated-event",
        include_str!("cdevents-spec-0.4/schemas/changeupdated.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/custom",
        include_str!("cdevents-spec-0.4/custom/schema.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/environment-created-event",
        include_str!("cdevents-spec-0.4/schemas/environmentcreated.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/environment-deleted-event",
        include_str!("cdevents-spec-0.4/schemas/environmentdeleted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/environment-modified-event",
        include_str!("cdevents-spec-0.4/schemas/environmentmodified.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/incident-detected-event",
        include_str!("cdevents-spec-0.4/schemas/incidentdetected.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/incident-reported-event",
        include_str!("cdevents-spec-0.4/schemas/incidentreported.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/incident-resolved-event",
        include_str!("cdevents-spec-0.4/schemas/incidentresolved.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/links/embeddedlinkend",
        include_str!("cdevents-spec-0.4/schemas/links/embeddedlinkend.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/links/embeddedlinkpath",
        include_str!("cdevents-spec-0.4/schemas/links/embeddedlinkpath.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/links/embeddedlinkrelation",
        include_str!("cdevents-spec-0.4/schemas/links/embeddedlinkrelation.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/links/embeddedlinksarray",
        include_str!("cdevents-spec-0.4/schemas/links/embeddedlinksarray.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/links/linkend",
        include_str!("cdevents-spec-0.4/schemas/links/linkend.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/links/linkpath",
        include_str!("cdevents-spec-0.4/schemas/links/linkpath.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/links/linkrelation",
        include_str!("cdevents-spec-0.4/schemas/links/linkrelation.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/links/linkstart",
        include_str!("cdevents-spec-0.4/schemas/links/linkstart.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/pipeline-run-finished-event",
        include_str!("cdevents-spec-0.4/schemas/pipelinerunfinished.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/pipeline-run-queued-event",
        include_str!("cdevents-spec-0.4/schemas/pipelinerunqueued.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/pipeline-run-started-event",
        include_str!("cdevents-spec-0.4/schemas/pipelinerunstarted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/repository-created-event",
        include_str!("cdevents-spec-0.4/schemas/repositorycreated.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/repository-deleted-event",
        include_str!("cdevents-spec-0.4/schemas/repositorydeleted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/repository-modified-event",
        include_str!("cdevents-spec-0.4/schemas/repositorymodified.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/service-deployed-event",
        include_str!("cdevents-spec-0.4/schemas/servicedeployed.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/service-published-event",
        include_str!("cdevents-spec-0.4/schemas/servicepublished.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/service-removed-event",
        include_str!("cdevents-spec-0.4/schemas/serviceremoved.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/service-rolledback-event",
        include_str!("cdevents-spec-0.4/schemas/servicerolledback.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/service-upgraded-event",
        include_str!("cdevents-spec-0.4/schemas/serviceupgraded.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/task-run-finished-event",
        include_str!("cdevents-spec-0.4/schemas/taskrunfinished.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/task-run-started-event",
        include_str!("cdevents-spec-0.4/schemas/taskrunstarted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/test-case-run-finished-event",
        include_str!("cdevents-spec-0.4/schemas/testcaserunfinished.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/test-case-run-queued-event",
        include_str!("cdevents-spec-0.4/schemas/testcaserunqueued.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/test-case-run-skipped-event",
        include_str!("cdevents-spec-0.4/schemas/testcaserunskipped.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/test-case-run-started-event",
        include_str!("cdevents-spec-0.4/schemas/testcaserunstarted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/test-output-published-event",
        include_str!("cdevents-spec-0.4/schemas/testoutputpublished.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/test-suite-run-finished-event",
        include_str!("cdevents-spec-0.4/schemas/testsuiterunfinished.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/test-suite-run-queued-event",
        include_str!("cdevents-spec-0.4/schemas/testsuiterunqueued.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/test-suite-run-started-event",
        include_str!("cdevents-spec-0.4/schemas/testsuiterunstarted.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/ticket-closed-event",
        include_str!("cdevents-spec-0.4/schemas/ticketclosed.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/ticket-created-event",
        include_str!("cdevents-spec-0.4/schemas/ticketcreated.json"),
    ),
    (
        "https://cdevents.dev/0.4.1/schema/ticket-updated-event",
        include_str!("cdevents-spec-0.4/schemas/ticketupdated.json"),
    ),
];

/// The id of the custom-event schema.
const CUSTOM_SCHEMA: &str = "https://cdevents.dev/0.4.1/schema/custom";

/// A defined event type's schema and the version the spec gives it, by `subject.predicate`.
struct Known {
    schema: &'static str,
    version: String,
}

static KNOWN: LazyLock<HashMap<String, Known>> = LazyLock::new(|| {
    let mut known = HashMap::new();
    for (_, text) in SCHEMAS {
        let Ok(doc) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        let Some(t) = doc
            .pointer("/properties/context/properties/type/enum/0")
            .and_then(Value::as_str)
        else {
            continue;
        };
        if let Some(parsed) = EventType::parse(t) {
            known.insert(
                format!("{}.{}", parsed.subject, parsed.predicate),
                Known {
                    schema: text,
                    version: parsed.version,
                },
            );
        }
    }
    known
});

/// The SDK's schema registry: `$ref`s resolve among the spec's own documents only.
struct Registry;

impl SchemaLoader for Registry {
    fn load(&self, url: &url::Url) -> Result<Value, String> {
        SCHEMAS
            .iter()
            .find(|(id, _)| *id == url.as_str())
            .ok_or_else(|| format!("no schema {url} in the local registry"))
            .and_then(|(_, text)| serde_json::from_str(text).map_err(|e| e.to_string()))
    }
}

/// A parsed `context.type`: `dev.cdevents.<subject>.<predicate>.<version>`, or
/// `dev.cdeventsx.<tool>-<subject>.<predicate>.<version>` for a custom event.
#[derive(Debug, PartialEq)]
struct EventType {
    custom: Option<String>,
    subject: String,
    predicate: String,
    version: String,
}

fn lower_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase())
}

impl EventType {
    fn parse(t: &str) -> Option<EventType> {
        let (custom, rest) = if let Some(rest) = t.strip_prefix("dev.cdevents.") {
            (None, rest)
        } else {
            let rest = t.strip_prefix("dev.cdeventsx.")?;
            let (tool, rest) = rest.split_once('-')?;
            if !lower_word(tool) {
                return None;
            }
            (Some(tool.to_string()), rest)
        };
        let (subject, rest) = rest.split_once('.')?;
        let (predicate, version) = rest.split_once('.')?;
        (lower_word(subject) && lower_word(predicate)).then(|| EventType {
            custom,
            subject: subject.into(),
            predicate: predicate.into(),
            version: version.into(),
        })
    }
}

/// `golang.org/x/mod/semver.Major` of `"v" + version`: `v<major>`, or empty when the
/// version is not valid semantic versioning (shorthands `1` and `1.2` are valid).
fn semver_major(version: &str) -> String {
    let number = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
    };
    let (core, suffix) = match version.find(['-', '+']) {
        Some(i) => (&version[..i], &version[i..]),
        None => (version, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let ok = parts.iter().all(|p| number(p))
        && match parts.len() {
            1 | 2 => suffix.is_empty(),
            3 => suffix_ok(suffix),
            _ => false,
        };
    if ok {
        format!("v{}", parts[0])
    } else {
        String::new()
    }
}

/// A pre-release and build suffix as semver allows them.
fn suffix_ok(suffix: &str) -> bool {
    let idents = |s: &str, numeric_rule: bool| {
        s.split('.').all(|id| {
            !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !(numeric_rule
                    && id.len() > 1
                    && id.starts_with('0')
                    && id.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let (pre, build) = match suffix.split_once('+') {
        Some((p, b)) => (p, Some(b)),
        None => (suffix, None),
    };
    let pre_ok = pre.is_empty() || pre.strip_prefix('-').is_some_and(|p| idents(p, true));
    pre_ok && build.is_none_or(|b| idents(b, false))
}

/// The event as the SDK's Go types hold it and render it again: only the fields the
/// types have, required strings present (empty when absent), the timestamp Go's zero time
/// when absent, the subject's content restricted to what the schema names.
fn as_go_renders(event: &Map<String, Value>, schema: &Value) -> Result<Value, String> {
    let object = |v: Option<&Value>, what: &str| -> Result<Map<String, Value>, String> {
        match v {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(other) => Err(format!(
                "json: cannot unmarshal {} into Go struct field .{what} of type struct",
                tidegate_core::gojson::kind(other)
            )),
        }
    };
    let context = object(event.get("context"), "context")?;
    let subject = object(event.get("subject"), "subject")?;
    let mut out_context = Map::new();
    for (key, default) in [
        ("id", Value::from("")),
        ("source", Value::from("")),
        ("type", Value::from("")),
        ("timestamp", Value::from("0001-01-01T00:00:00Z")),
        ("version", Value::from("")),
    ] {
        let v = context.get(key).filter(|v| !v.is_null()).cloned();
        out_context.insert(key.into(), v.unwrap_or(default));
    }
    if let Some(Value::String(t)) = out_context.get("timestamp")
        && t.parse::<k8s_openapi::jiff::Timestamp>().is_err()
    {
        return Err(format!(
            "parsing time {t:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse"
        ));
    }
    for key in ["chainId", "links", "schemaUri"] {
        if let Some(v) = context.get(key).filter(|v| !empty(v)) {
            out_context.insert(key.into(), v.clone());
        }
    }
    let mut out_subject = Map::new();
    for key in ["id", "source", "type"] {
        match subject.get(key).filter(|v| !v.is_null()) {
            Some(v) if !(key == "source" && empty(v)) => {
                out_subject.insert(key.into(), v.clone());
            }
            Some(_) => {}
            None if key != "source" => {
                out_subject.insert(key.into(), Value::from(""));
            }
            None => {}
        }
    }
    let content_schema = schema.pointer("/properties/subject/properties/content");
    let mut content = object(subject.get("content"), "subject.content")?;
    let closed = content_schema
        .and_then(|s| s.get("additionalProperties"))
        .is_some_and(|a| a == &Value::Bool(false));
    if closed {
        let known = content_schema.and_then(|s| s.get("properties"));
        content.retain(|k, _| known.is_some_and(|p| p.get(k).is_some()));
    }
    out_subject.insert("content".into(), Value::Object(content));
    let mut out = Map::new();
    out.insert("context".into(), Value::Object(out_context));
    out.insert("subject".into(), Value::Object(out_subject));
    if let Some(v) = event.get("customData").filter(|v| !v.is_null()) {
        out.insert("customData".into(), v.clone());
    }
    if let Some(v) = event.get("customDataContentType").filter(|v| !empty(v)) {
        out.insert("customDataContentType".into(), v.clone());
    }
    Ok(Value::Object(out))
}

/// Go's `omitempty` emptiness.
fn empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// The SDK's `NewFromJsonBytes` then `Validate`.
fn validate_event(body: &[u8]) -> Result<(), String> {
    let event: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let Value::Object(event) = event else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type struct",
            tidegate_core::gojson::kind(&event)
        ));
    };
    let raw_type = match event.get("context").and_then(|c| c.get("type")) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field .context.type",
                tidegate_core::gojson::kind(other)
            ));
        }
    };
    let parsed = if raw_type.is_empty() {
        None
    } else {
        Some(
            EventType::parse(&raw_type)
                .ok_or_else(|| format!("cannot parse event type {raw_type}"))?,
        )
    };
    let schema_text = match &parsed {
        Some(t) if t.custom.is_some() => SCHEMAS
            .iter()
            .find(|(id, _)| *id == CUSTOM_SCHEMA)
            .map(|(_, text)| *text)
            .ok_or("the custom event schema is missing")?,
        Some(t) => {
            let known = KNOWN
                .get(&format!("{}.{}", t.subject, t.predicate))
                .ok_or_else(|| format!("unknown event type {raw_type}"))?;
            if semver_major(&t.version) != semver_major(&known.version) {
                return Err(format!(
                    "sdk event version {} not compatible with {}",
                    known.version, t.version
                ));
            }
            known.schema
        }
        None => {
            return Err(
                "unknown event type dev.cdevents.<undefined-subject>.<undefined-predicate>.<undefined-version>"
                    .into(),
            );
        }
    };
    let schema: Value = serde_json::from_str(schema_text).map_err(|e| e.to_string())?;
    let rendered = as_go_renders(&event, &schema)?;
    if parsed
        .as_ref()
        .is_some_and(|t| semver_major(&t.version).is_empty())
    {
        return Err("Key: 'CDEventType.Type' Error:Field validation for 'Type' failed".into());
    }
    tidegate_helm::values::schema::validate_single(&rendered, schema_text.as_bytes(), &Registry)
        .map_err(|e| {
            format!(
                "jsonschema validation failed with '{}'\n{e}",
                schema_id(&schema)
            )
        })?;
    if let Some(uri) = rendered
        .pointer("/context/schemaUri")
        .and_then(Value::as_str)
    {
        return Err(format!(
            "schema with id {uri} could not be found in the local registry"
        ));
    }
    Ok(())
}

fn schema_id(schema: &Value) -> &str {
    schema
        .get("$id")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Flux's `cdevents` case: the event validated, then `Ce-Type` against `events`.
pub fn validate(body: &[u8], ce_type: &str, events: &[String]) -> Result<(), String> {
    validate_event(body).map_err(|e| format!("unable to validate CDEvent event: {e}"))?;
    if !events.is_empty() && !events.iter().any(|e| e.eq_ignore_ascii_case(ce_type)) {
        return Err(format!("the CDEvent {ce_type:?} is not authorised"));
    }
    tracing::info!(event = ce_type, "handling CDEvent");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn queued(version: &str) -> Value {
        json!({
            "context": {
                "version": "0.4.1",
                "id": "271069a8-fc18-44f1-b38f-9d70a1695819",
                "source": "/event/source/123",
                "type": format!("dev.cdevents.pipelinerun.queued.{version}"),
                "timestamp": "2023-03-20T14:27:05.315384Z"
            },
            "subject": {
                "id": "mySubject123",
                "source": "/event/source/123",
                "type": "pipelineRun",
                "content": {"pipelineName": "myPipeline", "url": "https://www.example.com/mySubject123"}
            }
        })
    }

    fn check(v: &Value) -> Result<(), String> {
        validate_event(v.to_string().as_bytes())
    }

    #[test]
    fn every_schema_is_registered() {
        assert_eq!(SCHEMAS.len(), 54);
        // 45 defined event types: every schema but the custom one and the eight link ones.
        assert_eq!(KNOWN.len(), 45);
    }

    #[test]
    fn events_validate_as_the_sdk_does() {
        assert_eq!(check(&queued("0.2.0")), Ok(()));
        // Same major, other minor: the schema's type enum refuses it.
        assert!(
            check(&queued("0.1.0"))
                .unwrap_err()
                .starts_with("jsonschema validation failed")
        );
        assert_eq!(
            check(&queued("1.0.0")).unwrap_err(),
            "sdk event version 0.2.0 not compatible with 1.0.0"
        );
        let mut unknown = queued("0.2.0");
        unknown["context"]["type"] = json!("dev.cdevents.foo.bar.0.1.0");
        assert_eq!(
            check(&unknown).unwrap_err(),
            "unknown event type dev.cdevents.foo.bar.0.1.0"
        );
        unknown["context"]["type"] = json!("not-a-type");
        assert_eq!(
            check(&unknown).unwrap_err(),
            "cannot parse event type not-a-type"
        );
        // Unknown fields are dropped as Go's decoder drops them.
        let mut extra = queued("0.2.0");
        extra["context"]["extra"] = json!(1);
        extra["subject"]["content"]["extra"] = json!(1);
        assert_eq!(check(&extra), Ok(()));
        // A missing id renders empty and fails minLength; a missing timestamp is Go's zero.
        let mut no_id = queued("0.2.0");
        no_id["context"].as_object_mut().unwrap().remove("id");
        assert!(check(&no_id).is_err());
        let mut no_time = queued("0.2.0");
        no_time["context"]
            .as_object_mut()
            .unwrap()
            .remove("timestamp");
        assert_eq!(check(&no_time), Ok(()));
        no_time["context"]["timestamp"] = json!("yesterday");
        assert!(check(&no_time).unwrap_err().starts_with("parsing time"));
        let mut wrong_subject = queued("0.2.0");
        wrong_subject["subject"]["type"] = json!("taskRun");
        assert!(check(&wrong_subject).is_err());
        let mut custom_schema = queued("0.2.0");
        custom_schema["context"]["schemaUri"] = json!("https://example.com/s");
        assert_eq!(
            check(&custom_schema).unwrap_err(),
            "schema with id https://example.com/s could not be found in the local registry"
        );
        let custom = json!({
            "context": {"version": "0.4.1", "id": "x", "source": "/s",
                        "type": "dev.cdeventsx.mytool-resource.created.0.1.0",
                        "timestamp": "2023-03-20T14:27:05Z"},
            "subject": {"id": "r", "type": "mytool-resource", "content": {"any": {"thing": 1}}}
        });
        assert_eq!(check(&custom), Ok(()));
        assert!(validate_event(b"[]").is_err());
        assert!(validate_event(b"{").is_err());
    }

    #[test]
    fn links_are_checked_against_the_link_schemas() {
        let mut linked = queued("0.2.0");
        linked["context"]["links"] = json!([{"linkType": "END", "from": {"contextId": "a"}}]);
        assert_eq!(check(&linked), Ok(()));
        linked["context"]["links"] = json!([{"linkType": "SIDEWAYS"}]);
        assert!(check(&linked).is_err());
    }

    #[test]
    fn ce_type_is_checked_against_events() {
        let body = queued("0.2.0").to_string();
        let t = "dev.cdevents.pipelinerun.queued.0.2.0";
        assert_eq!(validate(body.as_bytes(), t, &[]), Ok(()));
        assert_eq!(validate(body.as_bytes(), t, &[t.to_uppercase()]), Ok(()));
        assert_eq!(
            validate(body.as_bytes(), t, &["dev.cdevents.other".into()]).unwrap_err(),
            format!("the CDEvent {t:?} is not authorised")
        );
        assert!(
            validate(b"{}", t, &[])
                .unwrap_err()
                .starts_with("unable to validate CDEvent event: ")
        );
    }

    #[test]
    fn go_semver_majors() {
        for (v, major) in [
            ("0.2.0", "v0"),
            ("1", "v1"),
            ("1.2", "v1"),
            ("1.0.0-rc.1+b", "v1"),
            ("01.0.0", ""),
            ("1.0", "v1"),
            ("1.0.0.0", ""),
            ("x", ""),
            ("1.2-rc", ""),
        ] {
            assert_eq!(semver_major(v), major, "{v}");
        }
    }
}

#[cfg(test)]
mod conformance {
    use super::*;

    /// The spec's conformance events (tests/data/cdevents-conformance, from cdevents/spec
    /// v0.4.1): each names a custom schema Flux has not registered, so the SDK refuses it
    /// after the event validated; without that reference each is accepted.
    #[test]
    fn the_spec_s_conformance_events() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/cdevents-conformance");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let mut event: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let uri = event["context"]["schemaUri"].as_str().unwrap().to_string();
            assert_eq!(
                validate_event(event.to_string().as_bytes()),
                Err(format!(
                    "schema with id {uri} could not be found in the local registry"
                )),
                "{}",
                path.display()
            );
            event["context"]
                .as_object_mut()
                .unwrap()
                .remove("schemaUri");
            assert_eq!(
                validate_event(event.to_string().as_bytes()),
                Ok(()),
                "{}",
                path.display()
            );
            seen += 1;
        }
        assert_eq!(seen, 45);
    }
}
