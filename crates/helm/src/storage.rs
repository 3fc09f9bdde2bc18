//! Helm's release records as its Secrets storage driver keeps them: the release JSON of Helm 4
//! (`pkg/release/v1`), gzip-compressed and base64-encoded into the Secret
//! `sh.helm.release.v1.<name>.v<version>` of type `helm.sh/release.v1`, with the labels Helm
//! queries by. Releases written by Helm 3 (empty time strings, uncompressed JSON) are read too.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::chart::Chart;
use crate::release::Hook;

/// The Secret type of a release record.
pub const SECRET_TYPE: &str = "helm.sh/release.v1";

/// The labels Helm's driver owns; a release's own labels never use them.
pub const SYSTEM_LABELS: &[&str] = &[
    "name",
    "owner",
    "status",
    "version",
    "createdAt",
    "modifiedAt",
];

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("failed to decode release: {0}")]
    Base64(String),
    #[error("failed to decompress release: {0}")]
    Gzip(String),
    #[error("failed to unmarshal release: {0}")]
    Json(String),
    #[error("failed to encode release: {0}")]
    Encode(String),
}

/// A release status (`pkg/release/common/status.go`).
pub mod status {
    pub const UNKNOWN: &str = "unknown";
    pub const DEPLOYED: &str = "deployed";
    pub const UNINSTALLED: &str = "uninstalled";
    pub const SUPERSEDED: &str = "superseded";
    pub const FAILED: &str = "failed";
    pub const UNINSTALLING: &str = "uninstalling";
    pub const PENDING_INSTALL: &str = "pending-install";
    pub const PENDING_UPGRADE: &str = "pending-upgrade";
    pub const PENDING_ROLLBACK: &str = "pending-rollback";

    /// Whether a release in this status is being worked on (a lock).
    pub fn is_pending(s: &str) -> bool {
        matches!(s, PENDING_INSTALL | PENDING_UPGRADE | PENDING_ROLLBACK)
    }
}

fn is_empty_str(s: &Option<String>) -> bool {
    s.as_deref().is_none_or(str::is_empty)
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// Times: Helm 4 leaves zero times out, Helm 3 writes them as `""`; both read as `None`.
fn de_time<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v: Option<String> = Option::deserialize(d)?;
    Ok(v.filter(|s| !s.is_empty() && !s.starts_with("0001-01-01")))
}

/// `release.Info`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Info {
    #[serde(
        default,
        deserialize_with = "de_time",
        skip_serializing_if = "is_empty_str"
    )]
    pub first_deployed: Option<String>,
    #[serde(
        default,
        deserialize_with = "de_time",
        skip_serializing_if = "is_empty_str"
    )]
    pub last_deployed: Option<String>,
    #[serde(
        default,
        deserialize_with = "de_time",
        skip_serializing_if = "is_empty_str"
    )]
    pub deleted: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rollback_revision: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Json>,
}

/// `release.HookExecution`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookExecution {
    #[serde(
        default,
        deserialize_with = "de_time",
        skip_serializing_if = "is_empty_str"
    )]
    pub started_at: Option<String>,
    #[serde(
        default,
        deserialize_with = "de_time",
        skip_serializing_if = "is_empty_str"
    )]
    pub completed_at: Option<String>,
    /// `Unknown`, `Running`, `Succeeded` or `Failed` (empty when never run).
    #[serde(default)]
    pub phase: String,
}

/// `release.Hook`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookRecord {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manifest: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    #[serde(default)]
    pub last_run: HookExecution,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub weight: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delete_policies: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_log_policies: Vec<String>,
}

impl HookRecord {
    /// A rendered hook, not yet run.
    pub fn from_hook(h: &Hook) -> HookRecord {
        HookRecord {
            name: h.name.clone(),
            kind: h.kind.clone(),
            path: h.path.clone(),
            manifest: h.manifest.clone(),
            events: h.events.clone(),
            last_run: HookExecution::default(),
            weight: h.weight,
            delete_policies: h.delete_policies.clone(),
            output_log_policies: h.output_log_policies.clone(),
        }
    }

    /// Whether the hook runs on `event`.
    pub fn runs_on(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == event)
    }
}

/// `release.Release` as stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Release {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default)]
    pub info: Info,
    /// The chart as Helm serialises it (metadata, lock, templates, values, schema, files).
    #[serde(default, skip_serializing_if = "Json::is_null")]
    pub chart: Json,
    /// The values the user supplied (not the chart's defaults).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub config: Map<String, Json>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manifest: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRecord>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub version: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// `ssa` or `csa` (Helm 4).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub apply_method: String,
    /// The release's own labels (stored as Secret labels, not in the JSON).
    #[serde(skip)]
    pub labels: BTreeMap<String, String>,
}

impl Release {
    /// The chart metadata's `name`.
    pub fn chart_name(&self) -> &str {
        self.chart_metadata("name")
    }

    /// The chart metadata's `version`.
    pub fn chart_version(&self) -> &str {
        self.chart_metadata("version")
    }

    /// The chart metadata's `appVersion`.
    pub fn app_version(&self) -> &str {
        self.chart_metadata("appVersion")
    }

    fn chart_metadata(&self, key: &str) -> &str {
        self.chart
            .pointer(&format!("/metadata/{key}"))
            .and_then(Json::as_str)
            .unwrap_or("")
    }

    /// The Secret name: `sh.helm.release.v1.<name>.v<version>`.
    pub fn secret_name(&self) -> String {
        secret_name(&self.name, self.version)
    }

    /// The Secret's labels as Helm's driver sets them (`createdAt` on create, `modifiedAt`
    /// on update, in Unix seconds).
    pub fn secret_labels(&self, now_unix: i64, create: bool) -> BTreeMap<String, String> {
        let mut labels = self.labels.clone();
        labels.insert("name".into(), self.name.clone());
        labels.insert("owner".into(), "helm".into());
        labels.insert("status".into(), self.info.status.clone());
        labels.insert("version".into(), self.version.to_string());
        labels.insert(
            if create { "createdAt" } else { "modifiedAt" }.into(),
            now_unix.to_string(),
        );
        labels
    }
}

/// `sh.helm.release.v1.<name>.v<version>`.
pub fn secret_name(name: &str, version: i64) -> String {
    format!("sh.helm.release.v1.{name}.v{version}")
}

/// The value of a record's `release` key: base64(gzip(JSON)), as Helm's `encodeRelease`.
pub fn encode(release: &Release) -> Result<String, StorageError> {
    let json = serde_json::to_vec(release).map_err(|e| StorageError::Encode(e.to_string()))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&json)
        .map_err(|e| StorageError::Encode(e.to_string()))?;
    let compressed = gz
        .finish()
        .map_err(|e| StorageError::Encode(e.to_string()))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(compressed))
}

/// A record's `release` value back into a release (gzip optional, as Helm's `decodeRelease`).
pub fn decode(data: &[u8]) -> Result<Release, StorageError> {
    let trimmed: Vec<u8> = data
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&trimmed)
        .map_err(|e| StorageError::Base64(e.to_string()))?;
    let json = if raw.starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| StorageError::Gzip(e.to_string()))?;
        out
    } else {
        raw
    };
    serde_json::from_slice(&json).map_err(|e| StorageError::Json(e.to_string()))
}

/// The release's own labels from a Secret's labels (the driver's labels removed).
pub fn release_labels(labels: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    labels
        .iter()
        .filter(|(k, _)| !SYSTEM_LABELS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The chart as Helm 4 serialises `chart.Chart` into a release: subcharts are not written.
pub fn chart_json(chart: &Chart) -> Json {
    let b64 = |d: &[u8]| Json::String(base64::engine::general_purpose::STANDARD.encode(d));
    let files = |fs: &[crate::chart::File]| {
        Json::Array(
            fs.iter()
                .map(|f| {
                    let mut o = Map::new();
                    o.insert("name".into(), Json::String(f.name.clone()));
                    o.insert("data".into(), b64(&f.data));
                    Json::Object(o)
                })
                .collect(),
        )
    };
    let mut m = Map::new();
    m.insert("metadata".into(), chart.metadata.to_json());
    m.insert("lock".into(), lock_json(chart.lock.as_deref()));
    m.insert("templates".into(), files(&chart.templates));
    m.insert("values".into(), Json::Object(chart.values.clone()));
    m.insert(
        "schema".into(),
        chart.schema.as_deref().map(b64).unwrap_or(Json::Null),
    );
    m.insert(
        "schemamodtime".into(),
        Json::String("0001-01-01T00:00:00Z".into()),
    );
    m.insert("files".into(), files(&chart.files));
    Json::Object(m)
}

/// `Chart.lock` as Helm's `chart.Lock` JSON, `null` without one.
fn lock_json(lock: Option<&[u8]>) -> Json {
    let Some(bytes) = lock else {
        return Json::Null;
    };
    let text = std::str::from_utf8(bytes).unwrap_or_default();
    if tidegate_core::yaml::check_nesting(text).is_err() {
        return Json::Null;
    }
    let Ok(parsed) = yaml_serde::from_str::<Json>(text) else {
        return Json::Null;
    };
    let mut o = Map::new();
    o.insert(
        "generated".into(),
        parsed
            .get("generated")
            .cloned()
            .unwrap_or(Json::String("0001-01-01T00:00:00Z".into())),
    );
    o.insert(
        "digest".into(),
        parsed
            .get("digest")
            .cloned()
            .unwrap_or(Json::String(String::new())),
    );
    o.insert(
        "dependencies".into(),
        parsed.get("dependencies").cloned().unwrap_or(Json::Null),
    );
    Json::Object(o)
}

/// The current time as Go's `time.Time` marshals it (RFC 3339 with nanoseconds, UTC).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Release {
        Release {
            name: "podinfo".into(),
            info: Info {
                first_deployed: Some("2026-11-26T10:00:00.123Z".into()),
                last_deployed: Some("2026-11-26T10:00:00.123Z".into()),
                status: status::DEPLOYED.into(),
                description: "Install complete".into(),
                ..Default::default()
            },
            chart: serde_json::json!({"metadata": {"name": "podinfo", "version": "6.5.0", "appVersion": "6.5.0"}}),
            config: serde_json::from_str(r#"{"replicaCount": 2}"#).unwrap(),
            manifest: "---\n# Source: podinfo/templates/svc.yaml\nkind: Service\n".into(),
            hooks: Vec::new(),
            version: 1,
            namespace: "default".into(),
            apply_method: "ssa".into(),
            labels: BTreeMap::new(),
        }
    }

    #[test]
    fn round_trips_through_the_record_encoding() {
        let r = sample();
        let enc = encode(&r).unwrap();
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&enc)
            .unwrap();
        assert_eq!(&raw[..3], &[0x1f, 0x8b, 0x08], "gzip magic");
        let back = decode(enc.as_bytes()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.chart_name(), "podinfo");
        assert_eq!(back.chart_version(), "6.5.0");
        assert_eq!(back.secret_name(), "sh.helm.release.v1.podinfo.v1");
    }

    #[test]
    fn json_keys_in_helms_order_and_zero_times_left_out() {
        let json = serde_json::to_string(&sample()).unwrap();
        let keys = [
            "\"name\"",
            "\"info\"",
            "\"chart\"",
            "\"config\"",
            "\"manifest\"",
            "\"version\"",
            "\"namespace\"",
            "\"apply_method\"",
        ];
        let mut at = 0;
        for k in keys {
            let found = json[at..]
                .find(k)
                .unwrap_or_else(|| panic!("{k} in {json}"));
            at += found;
        }
        assert!(!json.contains("\"deleted\""), "{json}");
        assert!(!json.contains("\"hooks\""), "{json}");
    }

    #[test]
    fn reads_helm3_records_with_empty_times_and_no_gzip() {
        let helm3 = r#"{"name":"x","info":{"first_deployed":"2024-01-01T00:00:00Z","last_deployed":"2024-01-01T00:00:00Z","deleted":"","description":"Install complete","status":"deployed"},"chart":{"metadata":{"name":"x","version":"1.0.0"}},"manifest":"","hooks":[{"name":"t","kind":"Pod","path":"x/templates/t.yaml","manifest":"","events":["test"],"last_run":{"started_at":"","completed_at":"","phase":""}}],"version":3,"namespace":"ns"}"#;
        let enc = base64::engine::general_purpose::STANDARD.encode(helm3);
        let r = decode(enc.as_bytes()).unwrap();
        assert_eq!(r.info.deleted, None);
        assert_eq!(r.version, 3);
        assert_eq!(r.hooks[0].last_run.started_at, None);
        assert!(r.hooks[0].runs_on("test"));
    }

    #[test]
    fn bad_records_name_the_step_that_failed() {
        let e = decode(b"!!!").unwrap_err().to_string();
        assert!(e.starts_with("failed to decode release"), "{e}");
        let e = decode(
            base64::engine::general_purpose::STANDARD
                .encode("{not json")
                .as_bytes(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("failed to unmarshal release"), "{e}");
    }

    #[test]
    fn labels_as_helms_driver_sets_them() {
        let mut r = sample();
        r.labels.insert("team".into(), "a".into());
        let l = r.secret_labels(1700000000, true);
        assert_eq!(l["owner"], "helm");
        assert_eq!(l["status"], "deployed");
        assert_eq!(l["version"], "1");
        assert_eq!(l["createdAt"], "1700000000");
        assert_eq!(release_labels(&l), r.labels);
    }
}
