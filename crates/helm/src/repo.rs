//! Chart repository indexes (`index.yaml`): loaded as Helm loads them (entries without a name or
//! with an invalid version skipped, versions sorted newest first), encoded as JSON as Helm's
//! `IndexFile` marshals, and a chart version selected by Flux's rules.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use tidegate_core::semver::{Constraints, Version};

/// An index that cannot be used. Messages are Helm's and Flux's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// Nothing in the file.
    #[error("empty index.yaml file")]
    Empty,
    /// Not YAML, or not an index.
    #[error("{0}")]
    Malformed(String),
    /// No `apiVersion`.
    #[error("no API version specified")]
    NoApiVersion,
    /// The chart is not in the index.
    #[error("no chart name found")]
    NoChartName,
    /// The chart has no versions.
    #[error("no chart version found")]
    NoChartVersion,
    /// No version satisfies the constraint.
    #[error("no '{name}' chart with version matching '{version}' found")]
    NoMatch {
        /// The chart.
        name: String,
        /// The constraint.
        version: String,
    },
    /// The constraint does not parse.
    #[error("{0}")]
    Constraint(String),
}

/// One version of a chart in an index.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartVersion {
    /// Every field as read (Chart.yaml metadata, `urls`, `created`, `digest`, …).
    pub fields: Map<String, Value>,
    /// The parsed `version`, when it parses.
    parsed: Option<Version>,
}

impl ChartVersion {
    fn text(&self, key: &str) -> &str {
        self.fields.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// `name`.
    pub fn name(&self) -> &str {
        self.text("name")
    }

    /// `version`.
    pub fn version(&self) -> &str {
        self.text("version")
    }

    /// `created` (RFC 3339), empty when absent.
    pub fn created(&self) -> &str {
        self.text("created")
    }

    /// `digest` (hex sha256 of the package), empty when absent.
    pub fn digest(&self) -> &str {
        self.text("digest")
    }

    /// `urls`.
    pub fn urls(&self) -> Vec<&str> {
        self.fields
            .get("urls")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// A loaded index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexFile {
    /// `apiVersion`.
    pub api_version: String,
    /// `generated`, as written.
    pub generated: Option<Value>,
    /// Versions by chart name, newest first.
    pub entries: BTreeMap<String, Vec<ChartVersion>>,
    /// `publicKeys`.
    pub public_keys: Option<Value>,
    /// `annotations`.
    pub annotations: Option<Value>,
}

/// The order Go's `encoding/json` writes a chart version's fields in (`repo.ChartVersion`,
/// its embedded `chart.Metadata` first).
const VERSION_FIELDS: &[&str] = &[
    "name",
    "home",
    "sources",
    "version",
    "description",
    "keywords",
    "maintainers",
    "icon",
    "apiVersion",
    "condition",
    "tags",
    "appVersion",
    "deprecated",
    "annotations",
    "kubeVersion",
    "dependencies",
    "type",
    "urls",
    "created",
    "removed",
    "digest",
];

/// Loads an index as Helm's `loadIndex` does.
pub fn load_index(data: &[u8]) -> Result<IndexFile, IndexError> {
    if data.iter().all(u8::is_ascii_whitespace) {
        return Err(IndexError::Empty);
    }
    let text = std::str::from_utf8(data)
        .map_err(|e| IndexError::Malformed(format!("index is not UTF-8: {e}")))?;
    let doc = crate::chart::read_yaml(text).map_err(IndexError::Malformed)?;
    let Value::Object(mut doc) = doc else {
        return Err(IndexError::Malformed(
            "error unmarshaling JSON: the index is not a mapping".into(),
        ));
    };
    let mut index = IndexFile {
        api_version: doc
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        generated: doc.remove("generated"),
        public_keys: doc.remove("publicKeys"),
        annotations: doc.remove("annotations"),
        ..Default::default()
    };
    if let Some(Value::Object(entries)) = doc.remove("entries") {
        for (name, versions) in entries {
            let Value::Array(versions) = versions else {
                continue;
            };
            let mut kept = Vec::with_capacity(versions.len());
            for v in versions {
                let Value::Object(mut fields) = v else {
                    continue; // a null entry, skipped as Helm skips it
                };
                if fields
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    fields.insert("apiVersion".into(), Value::String("v1".into()));
                }
                let name_ok = fields
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| !n.is_empty());
                let parsed = fields
                    .get("version")
                    .and_then(Value::as_str)
                    .and_then(|v| Version::parse(v).ok());
                // Helm skips (and logs) entries that fail validation.
                if !name_ok || parsed.is_none() {
                    continue;
                }
                kept.push(ChartVersion { fields, parsed });
            }
            sort_versions(&mut kept);
            index.entries.insert(name, kept);
        }
    }
    if index.api_version.is_empty() {
        return Err(IndexError::NoApiVersion);
    }
    Ok(index)
}

/// Newest first (Helm's `SortEntries`: versions that do not parse go last).
fn sort_versions(v: &mut [ChartVersion]) {
    v.sort_by(|a, b| match (&a.parsed, &b.parsed) {
        (Some(x), Some(y)) => y.cmp(x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
}

/// Parses a chart version as Flux's `version.ParseVersion`: three dot-separated parts.
fn flux_version(v: &str) -> Option<Version> {
    if v.splitn(3, '.').count() != 3 {
        return None;
    }
    Version::parse(v).ok()
}

impl IndexFile {
    /// Number of chart versions.
    pub fn version_count(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    /// The version of chart `name` that `version` selects, by Flux's rules: an exact match of
    /// the version text first; otherwise, for `""` or `*`, the latest stable version, else the
    /// highest satisfying the Masterminds constraint; equal versions are ordered by `created`,
    /// the later first.
    pub fn get(&self, name: &str, version: &str) -> Result<&ChartVersion, IndexError> {
        select(self.entries.get(name), name, version)
    }

    /// The index as Helm's `IndexFile` marshals to JSON (Flux stores this as the artifact).
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Map::new();
        out.insert("apiVersion".into(), Value::String(self.api_version.clone()));
        out.insert(
            "generated".into(),
            self.generated
                .clone()
                .unwrap_or_else(|| Value::String("0001-01-01T00:00:00Z".into())),
        );
        let mut entries = Map::new();
        for (name, versions) in &self.entries {
            let list: Vec<Value> = versions
                .iter()
                .map(|cv| {
                    let mut m = Map::new();
                    for key in VERSION_FIELDS {
                        match cv.fields.get(*key) {
                            Some(v) if !is_empty_json(v) => {
                                m.insert((*key).to_string(), v.clone());
                            }
                            // A time.Time is never empty to encoding/json.
                            _ if *key == "created" => {
                                m.insert(
                                    "created".into(),
                                    Value::String("0001-01-01T00:00:00Z".into()),
                                );
                            }
                            _ => {}
                        }
                    }
                    Value::Object(m)
                })
                .collect();
            entries.insert(name.clone(), Value::Array(list));
        }
        out.insert("entries".into(), Value::Object(entries));
        if let Some(k) = self.public_keys.as_ref().filter(|v| !is_empty_json(v)) {
            out.insert("publicKeys".into(), k.clone());
        }
        if let Some(a) = self.annotations.as_ref().filter(|v| !is_empty_json(v)) {
            out.insert("annotations".into(), a.clone());
        }
        serde_json::to_vec(&Value::Object(out)).unwrap_or_default()
    }
}

/// What version selection reads of an index entry.
trait Versioned {
    fn version_text(&self) -> &str;
    fn created_text(&self) -> &str;
}

impl Versioned for ChartVersion {
    fn version_text(&self) -> &str {
        self.version()
    }
    fn created_text(&self) -> &str {
        self.created()
    }
}

impl Versioned for IndexedVersion {
    fn version_text(&self) -> &str {
        &self.version
    }
    fn created_text(&self) -> &str {
        &self.created
    }
}

/// Flux's chart version selection over one chart's entries.
fn select<'a, T: Versioned>(
    versions: Option<&'a Vec<T>>,
    name: &str,
    version: &str,
) -> Result<&'a T, IndexError> {
    let versions = versions.ok_or(IndexError::NoChartName)?;
    if versions.is_empty() {
        return Err(IndexError::NoChartVersion);
    }
    if !version.is_empty()
        && let Some(v) = versions.iter().find(|v| v.version_text() == version)
    {
        return Ok(v);
    }
    let range = if version.is_empty() { "*" } else { version };
    let constraint =
        Constraints::parse(range).map_err(|e| IndexError::Constraint(e.to_string()))?;
    let mut best: Option<(Version, &T)> = None;
    for cv in versions {
        let Some(v) = flux_version(cv.version_text()) else {
            continue;
        };
        if !constraint.check(&v) {
            continue;
        }
        let better = match &best {
            None => true,
            Some((b, bcv)) => {
                v > *b || (v == *b && created_after(cv.created_text(), bcv.created_text()))
            }
        };
        if better {
            best = Some((v, cv));
        }
    }
    best.map(|(_, cv)| cv).ok_or_else(|| IndexError::NoMatch {
        name: name.to_string(),
        version: version.to_string(),
    })
}

/// One chart version as chart selection needs it: version, `created` and `urls`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedVersion {
    /// `version`.
    pub version: String,
    /// `created` (RFC 3339), empty when absent.
    pub created: String,
    /// `urls`.
    pub urls: Vec<String>,
}

/// An index reduced to what choosing and downloading a chart needs: a small fraction of the
/// memory of an [`IndexFile`], so it can be kept between reconciles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChartIndex {
    /// Versions by chart name.
    pub entries: BTreeMap<String, Vec<IndexedVersion>>,
}

impl ChartIndex {
    /// The version of chart `name` that `version` selects, by the rules of [`IndexFile::get`].
    pub fn get(&self, name: &str, version: &str) -> Result<&IndexedVersion, IndexError> {
        select(self.entries.get(name), name, version)
    }

    /// Roughly the bytes this index holds, for bounding a cache.
    pub fn approximate_size(&self) -> usize {
        let per_version = std::mem::size_of::<IndexedVersion>();
        self.entries
            .iter()
            .map(|(name, versions)| {
                name.len()
                    + versions
                        .iter()
                        .map(|v| {
                            per_version
                                + v.version.len()
                                + v.created.len()
                                + v.urls.iter().map(|u| u.len() + 24).sum::<usize>()
                        })
                        .sum::<usize>()
            })
            .sum()
    }
}

impl From<IndexFile> for ChartIndex {
    fn from(index: IndexFile) -> Self {
        let entries = index
            .entries
            .into_iter()
            .map(|(name, versions)| {
                let versions = versions
                    .iter()
                    .map(|cv| IndexedVersion {
                        version: cv.version().to_string(),
                        created: cv.created().to_string(),
                        urls: cv.urls().into_iter().map(str::to_string).collect(),
                    })
                    .collect();
                (name, versions)
            })
            .collect();
        ChartIndex { entries }
    }
}

#[derive(serde::Deserialize)]
struct StoredIndex {
    #[serde(rename = "apiVersion", default)]
    api_version: Option<Value>,
    #[serde(default)]
    entries: BTreeMap<String, Vec<Option<StoredVersion>>>,
}

#[derive(serde::Deserialize)]
struct StoredVersion {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    version: Option<Value>,
    #[serde(default)]
    created: Option<Value>,
    #[serde(default)]
    urls: Option<Vec<Value>>,
}

/// Reads an index for chart selection only. JSON (what the HelmRepository controller stores)
/// is read straight into the reduced form, skipping every other field, with the entry rules
/// of [`load_index`]; anything else goes through [`load_index`].
pub fn load_chart_index(data: &[u8]) -> Result<ChartIndex, IndexError> {
    let stored: StoredIndex = match serde_json::from_slice(data) {
        Ok(s) => s,
        Err(_) => return load_index(data).map(ChartIndex::from),
    };
    let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).unwrap_or("").to_string();
    if text(&stored.api_version).is_empty() {
        return Err(IndexError::NoApiVersion);
    }
    let mut entries = BTreeMap::new();
    for (name, versions) in stored.entries {
        let mut kept: Vec<(Version, IndexedVersion)> = versions
            .into_iter()
            .flatten()
            .filter(|v| !text(&v.name).is_empty())
            .filter_map(|v| {
                let version = text(&v.version);
                let parsed = Version::parse(&version).ok()?;
                Some((
                    parsed,
                    IndexedVersion {
                        version,
                        // Go's zero time, which the stored JSON writes for a missing `created`.
                        created: Some(text(&v.created))
                            .filter(|c| c != "0001-01-01T00:00:00Z")
                            .unwrap_or_default(),
                        urls: v
                            .urls
                            .unwrap_or_default()
                            .iter()
                            .filter_map(|u| u.as_str().map(str::to_string))
                            .collect(),
                    },
                ))
            })
            .collect();
        kept.sort_by(|a, b| b.0.cmp(&a.0));
        entries.insert(name, kept.into_iter().map(|(_, v)| v).collect());
    }
    Ok(ChartIndex { entries })
}

/// Go's `omitempty`: false, 0, "", null, and empty arrays and maps are left out.
fn is_empty_json(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
    }
}

/// Whether RFC 3339 time `a` is after `b` (unparsable times count as the zero time).
fn created_after(a: &str, b: &str) -> bool {
    let t = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .map(|d| d.timestamp_nanos_opt().unwrap_or(i64::MIN))
            .unwrap_or(i64::MIN)
    };
    t(a) > t(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = r#"apiVersion: v1
entries:
  nginx:
    - urls:
        - https://charts.example.com/nginx-0.2.0.tgz
      name: nginx
      description: string
      version: 0.2.0
      home: https://github.com/something/else
      digest: "sha256:1234567890abcdef"
      keywords: [popular, web server, proxy]
      apiVersion: v2
    - urls:
        - https://charts.example.com/nginx-0.1.0.tgz
      name: nginx
      version: 0.1.0
      created: "2016-10-06T16:23:20.499814565-06:00"
  alpine:
    - urls: [https://charts.example.com/alpine-1.0.0.tgz]
      name: alpine
      version: 1.0.0
      created: "2018-01-01T00:00:00Z"
    - urls: [https://charts.example.com/alpine-1.0.0-b.tgz]
      name: alpine
      version: 1.0.0
      created: "2019-01-01T00:00:00Z"
    - name: alpine
      version: 2.0.0-rc.1
    - name: alpine
      version: not-a-version
    - version: 3.0.0
    - null
  empty: []
generated: "2016-10-06T16:23:20.499029981-06:00"
"#;

    #[test]
    fn loads_sorts_and_skips_as_helm() {
        let i = load_index(INDEX.as_bytes()).unwrap();
        let v: Vec<&str> = i.entries["nginx"].iter().map(|c| c.version()).collect();
        assert_eq!(v, ["0.2.0", "0.1.0"]);
        let v: Vec<&str> = i.entries["alpine"].iter().map(|c| c.version()).collect();
        assert_eq!(v, ["2.0.0-rc.1", "1.0.0", "1.0.0"]);
        assert_eq!(i.entries["nginx"][1].fields["apiVersion"], "v1");
        assert_eq!(i.version_count(), 5);
        assert_eq!(
            load_index(b"  \n").unwrap_err().to_string(),
            "empty index.yaml file"
        );
        assert_eq!(
            load_index(b"entries: {}\n").unwrap_err().to_string(),
            "no API version specified"
        );
        assert!(load_index(b"apiVersion: v1\nentries: [").is_err());
    }

    #[test]
    fn reduced_index_selects_as_the_full_one() {
        let full = load_index(INDEX.as_bytes()).unwrap();
        let stored = full.to_json();
        let reduced = load_chart_index(&stored).unwrap();
        assert_eq!(reduced, ChartIndex::from(full.clone()));
        assert_eq!(load_chart_index(INDEX.as_bytes()).unwrap(), reduced);
        for (name, version) in [
            ("nginx", ""),
            ("nginx", "0.1.0"),
            ("alpine", "*"),
            ("nope", ""),
        ] {
            assert_eq!(
                reduced
                    .get(name, version)
                    .map(|v| v.version.clone())
                    .map_err(|e| e.to_string()),
                full.get(name, version)
                    .map(|v| v.version().to_string())
                    .map_err(|e| e.to_string()),
                "{name} {version}"
            );
        }
        assert!(reduced.approximate_size() > 0);
    }

    #[test]
    fn selects_as_flux() {
        let i = load_index(INDEX.as_bytes()).unwrap();
        assert_eq!(i.get("nginx", "").unwrap().version(), "0.2.0");
        assert_eq!(i.get("nginx", "*").unwrap().version(), "0.2.0");
        assert_eq!(i.get("nginx", "<0.2.0").unwrap().version(), "0.1.0");
        // Exact text first, then latest stable; equal versions: the later created.
        assert_eq!(
            i.get("alpine", "2.0.0-rc.1").unwrap().version(),
            "2.0.0-rc.1"
        );
        let latest = i.get("alpine", "*").unwrap();
        assert_eq!(
            latest.urls(),
            ["https://charts.example.com/alpine-1.0.0-b.tgz"]
        );
        assert_eq!(
            i.get("nginx", ">=1.0.0").unwrap_err().to_string(),
            "no 'nginx' chart with version matching '>=1.0.0' found"
        );
        assert_eq!(
            i.get("missing", "*").unwrap_err().to_string(),
            "no chart name found"
        );
        assert_eq!(
            i.get("empty", "*").unwrap_err().to_string(),
            "no chart version found"
        );
    }

    #[test]
    fn json_in_go_field_order() {
        let i = load_index(INDEX.as_bytes()).unwrap();
        let json = String::from_utf8(i.to_json()).unwrap();
        assert!(json.starts_with(r#"{"apiVersion":"v1","generated":"2016-10-06T16:23:20.499029981-06:00","entries":{"alpine":"#), "{json}");
        assert!(json.contains(r#"{"name":"nginx","home":"https://github.com/something/else","version":"0.2.0","description":"string","keywords":["popular","web server","proxy"],"apiVersion":"v2","urls":["https://charts.example.com/nginx-0.2.0.tgz"],"created":"0001-01-01T00:00:00Z","digest":"sha256:1234567890abcdef"}"#), "{json}");
    }
}
