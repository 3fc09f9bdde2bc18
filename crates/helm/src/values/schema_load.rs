//! The documents a `values.schema.json` refers to, loaded as Helm 4 loads them before it
//! validates: `$ref`s to `http(s)://` URLs fetched (15 s timeout, proxy from the
//! environment), `file://` URLs read, each document's relative `$ref`s resolved against its
//! `$id` or its own URL. A document that cannot be loaded fails validation with Helm's
//! `failing loading "URL": …`. Fetched documents are kept for a while, so rendering a
//! chart again does not fetch them again.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use url::Url;

/// Where Helm places a chart's own schema.
pub const ROOT_URL: &str = "file:///values.schema.json";

/// How long a fetched document is reused, and how many are kept.
const CACHE_TTL: Duration = Duration::from_secs(600);
const CACHE_MAX: usize = 256;
/// The largest schema document accepted, and the most documents one schema may pull in.
const MAX_DOCUMENT_BYTES: u64 = 16 << 20;
const MAX_DOCUMENTS: usize = 1000;

/// Fetches the documents `$ref`s point to.
pub trait SchemaLoader: Send + Sync {
    /// The JSON at `url` (no fragment), or the loader's error text.
    fn load(&self, url: &Url) -> Result<Json, String>;
}

/// Helm's loaders: `http`/`https` over the network, `file` from the local disk.
pub struct DefaultLoader;

type Cache = Mutex<BTreeMap<String, (Instant, Arc<Json>)>>;
static CACHE: LazyLock<Cache> = LazyLock::new(|| Mutex::new(BTreeMap::new()));

impl SchemaLoader for DefaultLoader {
    fn load(&self, url: &Url) -> Result<Json, String> {
        match url.scheme() {
            "http" | "https" => {
                let key = url.as_str().to_string();
                if let Ok(cache) = CACHE.lock()
                    && let Some((at, doc)) = cache.get(&key)
                    && at.elapsed() < CACHE_TTL
                {
                    return Ok(Json::clone(doc));
                }
                let doc = fetch(url)?;
                if let Ok(mut cache) = CACHE.lock() {
                    cache.retain(|_, (at, _)| at.elapsed() < CACHE_TTL);
                    if cache.len() >= CACHE_MAX
                        && let Some(oldest) = cache
                            .iter()
                            .min_by_key(|(_, (at, _))| *at)
                            .map(|(k, _)| k.clone())
                    {
                        cache.remove(&oldest);
                    }
                    cache.insert(key, (Instant::now(), Arc::new(doc.clone())));
                }
                Ok(doc)
            }
            "file" => {
                let path = url
                    .to_file_path()
                    .map_err(|_| format!("invalid file url: {url}"))?;
                let data = std::fs::read(&path)
                    .map_err(|e| format!("open {}: {}", path.display(), go_io_error(&e)))?;
                serde_json::from_slice(&data).map_err(|e| e.to_string())
            }
            _ => Err(format!(
                "no URLLoader registered for {}",
                quote(url.as_str())
            )),
        }
    }
}

fn fetch(url: &Url) -> Result<Json, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(15)))
        .http_status_as_error(false)
        .proxy(ureq::Proxy::try_from_env())
        .user_agent("Helm/4.1.4")
        .build()
        .into();
    let mut response = agent
        .get(url.as_str())
        .call()
        .map_err(|e| format!("HTTP request failed for {url}: {e}"))?;
    let status = response.status();
    if status != 200 {
        return Err(format!(
            "HTTP request to {url} returned status {} ({})",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        ));
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_DOCUMENT_BYTES)
        .read_to_vec()
        .map_err(|e| format!("HTTP request failed for {url}: {e}"))?;
    serde_json::from_slice(&body).map_err(|e| e.to_string())
}

fn go_io_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

fn quote(s: &str) -> String {
    crate::template::quote::quote(s)
}

/// A schema document and the URL its relative `$ref`s resolve against.
pub struct Document {
    pub base: Url,
    pub json: Json,
}

/// Every document reachable from a chart's schema through `$ref`s, by URL (without fragment;
/// a document with an `$id` is found under both).
pub struct Documents {
    pub docs: Vec<Document>,
    by_url: BTreeMap<String, usize>,
}

impl Documents {
    /// Loads `root` (found at [`ROOT_URL`]) and everything it refers to, depth first in
    /// document order; the first document that fails to load is the error.
    pub fn load(root: Json, loader: &dyn SchemaLoader) -> Result<Documents, String> {
        let mut set = Documents {
            docs: Vec::new(),
            by_url: BTreeMap::new(),
        };
        let root_url = Url::parse(ROOT_URL).map_err(|e| e.to_string())?;
        set.add(root_url, root);
        let mut i = 0;
        while i < set.docs.len() {
            let mut refs = Vec::new();
            collect_refs(&set.docs[i].json, &mut refs);
            let base = set.docs[i].base.clone();
            for r in refs {
                let Ok(mut target) = base.join(&r) else {
                    continue;
                };
                target.set_fragment(None);
                if set.by_url.contains_key(target.as_str()) {
                    continue;
                }
                if set.docs.len() >= MAX_DOCUMENTS {
                    return Err(format!(
                        "failing loading {}: more than {MAX_DOCUMENTS} schema documents",
                        quote(target.as_str())
                    ));
                }
                let json = loader
                    .load(&target)
                    .map_err(|e| format!("failing loading {}: {e}", quote(target.as_str())))?;
                set.add(target, json);
            }
            i += 1;
        }
        Ok(set)
    }

    fn add(&mut self, url: Url, json: Json) {
        let base = json
            .get("$id")
            .and_then(Json::as_str)
            .and_then(|id| url.join(id).ok())
            .map(|mut id| {
                id.set_fragment(None);
                id
            })
            .unwrap_or_else(|| url.clone());
        let index = self.docs.len();
        self.by_url.insert(url.as_str().to_string(), index);
        self.by_url
            .entry(base.as_str().to_string())
            .or_insert(index);
        self.docs.push(Document { base, json });
    }

    /// The schema `reference` names, seen from a document whose base is `base`, and the base
    /// of the document it is in.
    pub fn resolve(&self, base: &Url, reference: &str) -> Option<(&Json, &Url)> {
        let target = base.join(reference).ok()?;
        let fragment = target.fragment().unwrap_or("").to_string();
        let mut url = target;
        url.set_fragment(None);
        let doc = &self.docs[*self.by_url.get(url.as_str())?];
        let at = if fragment.is_empty() {
            &doc.json
        } else {
            let pointer: String = fragment
                .split('/')
                .map(|t| percent_decode(t).replace("~1", "/").replace("~0", "~"))
                .collect::<Vec<_>>()
                .join("/");
            doc.json.pointer(&pointer)?
        };
        Some((at, &doc.base))
    }
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every `$ref` string in `v`, in document order.
fn collect_refs(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::Object(m) => {
            for (k, v) in m {
                if k == "$ref"
                    && let Json::String(r) = v
                {
                    out.push(r.clone());
                } else {
                    collect_refs(v, out);
                }
            }
        }
        Json::Array(items) => items.iter().for_each(|i| collect_refs(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(BTreeMap<String, Json>);

    impl SchemaLoader for Fixed {
        fn load(&self, url: &Url) -> Result<Json, String> {
            self.0
                .get(url.as_str())
                .cloned()
                .ok_or_else(|| "not found".to_string())
        }
    }

    #[test]
    fn loads_referenced_documents_against_their_id() {
        let root = serde_json::json!({"$ref": "https://example.com/s/main.json"});
        let mut docs = BTreeMap::new();
        docs.insert(
            "https://example.com/s/main.json".to_string(),
            serde_json::json!({"$id": "https://example.com/s/main.json",
                "properties": {"a": {"$ref": "parts/a.json#/defs/x"}}}),
        );
        docs.insert(
            "https://example.com/s/parts/a.json".to_string(),
            serde_json::json!({"defs": {"x": {"type": "string"}}}),
        );
        let set = Documents::load(root, &Fixed(docs)).expect("loads");
        let main = Url::parse("https://example.com/s/main.json").expect("url");
        let (x, base) = set
            .resolve(&main, "parts/a.json#/defs/x")
            .expect("resolves");
        assert_eq!(x, &serde_json::json!({"type": "string"}));
        assert_eq!(base.as_str(), "https://example.com/s/parts/a.json");
        let missing = serde_json::json!({"$ref": "https://example.com/nope.json"});
        let err = Documents::load(missing, &Fixed(BTreeMap::new()))
            .err()
            .expect("fails");
        assert_eq!(
            err,
            "failing loading \"https://example.com/nope.json\": not found"
        );
    }
}
