//! SOPS decryption for `spec.decryption.provider: sops`, as Flux's kustomize-controller does
//! it, in memory:
//!
//! - the keys come from `spec.decryption.secretRef` (`*.agekey` age identities or SSH keys,
//!   `*.asc` OpenPGP secret keys), or from the controller's `--sops-age-secret`;
//! - before the build, the files Flux decrypts in place (secret generator `files` and `envs`,
//!   `patches[].path`, found by walking `resources` and `components` from the built directory)
//!   are decrypted as they are read, in the format their name gives; so are encrypted resource
//!   files, whole, with their MAC checked before kustomize changes them;
//! - after the build, a resource that still carries `sops` is decrypted as Flux does (JSON, no
//!   MAC), and a Secret's `data` values that hold encrypted files are decrypted into the format
//!   their key names.
//!
//! Plaintext lives only in memory: nothing is written to the scratch directory, and messages
//! never quote values.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt};
use serde_json::Value;
use tidegate_api::Kustomization;
use tidegate_kustomize::{BuildRoot, ReadFilter};
use tidegate_sops::{Format, Keys};

use super::Context;
use super::build::BUILD_FAILED;
use super::reconcile::Failure;

/// The annotation that turns decryption off for one resource.
const DECRYPT_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/decrypt";
/// Flux's limit on a file it decrypts.
const MAX_FILE_SIZE: usize = 5 * 1024 * 1024;

/// A Kustomization's decryption keys and what identifies them (the Secret's
/// resourceVersion), for the build cache.
pub(super) struct Decryption {
    pub keys: Arc<Keys>,
    pub version: String,
}

/// The keys for `obj`, when it asks for SOPS decryption.
pub(super) async fn keys(
    obj: &Kustomization,
    ctx: &Context,
) -> Result<Option<Decryption>, Failure> {
    let Some(d) = obj
        .spec
        .decryption
        .as_ref()
        .filter(|d| d.provider == "sops")
    else {
        return Ok(None);
    };
    let ns = obj.namespace().unwrap_or_default();
    let (namespace, name, global) = match (&d.secret_ref, &ctx.options.sops_age_secret) {
        (Some(r), _) => (ns, r.name.clone(), false),
        (None, Some((gns, gname))) => (gns.clone(), gname.clone(), true),
        (None, None) => {
            return Ok(Some(Decryption {
                keys: Arc::new(Keys::new()),
                version: String::new(),
            }));
        }
    };
    let what = if global {
        "sops SOPS age decryption"
    } else {
        "sops decryption"
    };
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let secret = match api.get(&name).await {
        Ok(s) => s,
        Err(kube::Error::Api(e)) if e.code == 404 => {
            return Err(Failure::new(
                BUILD_FAILED,
                format!("secrets \"{name}\" not found"),
            ));
        }
        Err(e) => {
            return Err(Failure::new(
                BUILD_FAILED,
                format!("cannot get {what} Secret '{namespace}/{name}': {e}"),
            ));
        }
    };
    let mut keys = Keys::new();
    let mut entries: Vec<(&String, &k8s_openapi::ByteString)> =
        secret.data.iter().flatten().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (entry, value) in entries {
        let text = String::from_utf8_lossy(&value.0);
        let ext = Path::new(entry).extension().and_then(|e| e.to_str());
        let res = match ext {
            Some("agekey") => keys.add_age(&text).map_err(|e| e.to_string()),
            Some("asc") if !global => keys.add_pgp(&text).map_err(|e| e.to_string()),
            _ => continue,
        };
        if let Err(e) = res {
            return Err(Failure::new(
                BUILD_FAILED,
                format!(
                    "failed to import '{entry}' data from {what} Secret '{namespace}/{name}': {e}"
                ),
            ));
        }
    }
    Ok(Some(Decryption {
        keys: Arc::new(keys),
        version: secret.resource_version().unwrap_or_default(),
    }))
}

/// How a file is decrypted when the build reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    /// A generator source or patch: decrypted in the format its name gives, written back in
    /// the same format.
    Source(Format),
    /// A resource file: every encrypted document decrypted.
    Resource(Format),
}

/// The read filter that decrypts the files a build reads.
pub(super) struct SopsFilter {
    plan: HashMap<String, Purpose>,
    keys: Arc<Keys>,
}

impl SopsFilter {
    /// Walks the kustomizations from `dir` as Flux's `DecryptSources` does and notes which
    /// files to decrypt and how.
    pub(super) fn new(root: &Path, dir: &Path, keys: Arc<Keys>) -> SopsFilter {
        let mut plan = HashMap::new();
        if let Ok(root) = BuildRoot::new(root) {
            let mut visited = Vec::new();
            walk(&root, dir, &mut plan, &mut visited, true);
        }
        SopsFilter { plan, keys }
    }
}

const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

fn walk(
    root: &BuildRoot,
    dir: &Path,
    plan: &mut HashMap<String, Purpose>,
    visited: &mut Vec<std::path::PathBuf>,
    top: bool,
) {
    let Ok(dir) = dir.canonicalize() else { return };
    if visited.contains(&dir) || !dir.starts_with(root.path()) || !dir.is_dir() {
        return;
    }
    visited.push(dir.clone());
    let file = KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file());
    let Some(file) = file else {
        // Flux generates a kustomization listing every manifest below the built directory.
        if top {
            manifests(root, &dir, plan);
        }
        return;
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return;
    };
    let Ok(k) = tidegate_core::yaml::parse_one(&text) else {
        return;
    };
    let shown = root.display(&file);
    let mut note = |reference: &str, purpose: Purpose| {
        if tidegate_kustomize::fs::is_remote(reference) {
            return;
        }
        if let Ok(p) = root.resolve(&dir, reference, &shown)
            && p.is_file()
        {
            plan.entry(root.display(&p)).or_insert(purpose);
        }
    };
    let strings = |v: Option<&Value>| -> Vec<String> {
        match v {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        }
    };
    for g in k
        .get("secretGenerator")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for f in strings(g.get("files")) {
            let (key, path) = match f.split_once('=') {
                Some((k, p)) => (k.to_string(), p.to_string()),
                None => (f.clone(), f.clone()),
            };
            note(&path, Purpose::Source(Format::from_path(&key)));
        }
        let mut envs = strings(g.get("envs"));
        envs.extend(strings(g.get("env")));
        for e in envs {
            let format = match Format::from_path(&e) {
                Format::Binary => Format::Dotenv,
                f => f,
            };
            note(&e, Purpose::Source(format));
        }
    }
    for p in k
        .get("patches")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(path) = p.get("path").and_then(Value::as_str) {
            note(path, Purpose::Source(resource_format(path)));
        }
    }
    let mut nested = strings(k.get("resources"));
    for r in &nested {
        note(r, Purpose::Resource(resource_format(r)));
    }
    nested.extend(strings(k.get("components")));
    for r in nested {
        if tidegate_kustomize::fs::is_remote(&r) {
            continue;
        }
        if let Ok(p) = root.resolve(&dir, &r, &shown)
            && p.is_dir()
        {
            walk(root, &p, plan, visited, false);
        }
    }
}

fn resource_format(name: &str) -> Format {
    match Format::from_path(name) {
        Format::Json => Format::Json,
        _ => Format::Yaml,
    }
}

/// Every YAML or JSON file below `dir` (what Flux's generated kustomization lists).
fn manifests(root: &BuildRoot, dir: &Path, plan: &mut HashMap<String, Purpose>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            manifests(root, &p, plan);
        } else if let Some(ext) = p.extension().and_then(|e| e.to_str())
            && matches!(ext, "yaml" | "yml" | "json")
        {
            plan.entry(root.display(&p))
                .or_insert(Purpose::Resource(resource_format(&p.to_string_lossy())));
        }
    }
}

impl ReadFilter for SopsFilter {
    fn filter(&self, path: &str, content: Vec<u8>) -> Result<Vec<u8>, String> {
        let Some(purpose) = self.plan.get(path) else {
            return Ok(content);
        };
        let format = match purpose {
            Purpose::Source(f) | Purpose::Resource(f) => *f,
        };
        if !format.is_encrypted(&content) {
            return Ok(content);
        }
        if content.len() > MAX_FILE_SIZE {
            return Err(format!(
                "error decrypting sources: cannot decrypt file with size ({} bytes) exceeding limit ({MAX_FILE_SIZE})",
                content.len()
            ));
        }
        let out = match purpose {
            Purpose::Source(f) => tidegate_sops::decrypt(&content, *f, *f, &self.keys),
            Purpose::Resource(Format::Json) => {
                tidegate_sops::decrypt(&content, Format::Json, Format::Json, &self.keys)
            }
            Purpose::Resource(_) => {
                tidegate_sops::decrypt_stream(&content, &self.keys, &|doc| !disabled(doc))
            }
        };
        out.map(|p| p.to_vec())
            .map_err(|e| format!("error decrypting sources: {e}"))
    }
}

/// Whether an object turns decryption off with Flux's annotation.
pub(super) fn disabled(obj: &Value) -> bool {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(DECRYPT_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|v| v.eq_ignore_ascii_case("disabled"))
}

/// kustomize's `Kind.version.group` name of an object, as Flux's messages print it.
fn gvk(obj: &Value) -> String {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let (group, version) = api.split_once('/').unwrap_or(("", api));
    let group = if group.is_empty() { "[noGrp]" } else { group };
    format!("{kind}.{version}.{group}")
}

/// Decrypts what the build left encrypted: whole resources still carrying `sops` (as Flux,
/// without the MAC, which the build's changes would break) and Secret `data` values holding
/// encrypted files (MAC checked).
pub(super) fn decrypt_built(objects: &mut [Value], keys: &Keys) -> Result<(), String> {
    for obj in objects.iter_mut() {
        if disabled(obj) {
            continue;
        }
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let failed = |what: String, e: tidegate_sops::DecryptError, obj: &Value| {
            format!(
                "decryption failed for '{}/{name}': failed to decrypt and format '{ns}/{name}' {what}: {e}",
                gvk(obj)
            )
        };
        let encrypted = obj
            .get("sops")
            .and_then(|s| s.get("mac"))
            .and_then(Value::as_str)
            .is_some_and(|m| !m.is_empty());
        if encrypted {
            let kind = obj
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            *obj = tidegate_sops::decrypt_object(obj, keys, false)
                .map_err(|e| failed(format!("{kind} data"), e, obj))?;
            continue;
        }
        if obj.get("kind").and_then(Value::as_str) != Some("Secret")
            || obj.get("apiVersion").and_then(Value::as_str) != Some("v1")
        {
            continue;
        }
        let snapshot = obj.clone();
        let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut) else {
            continue;
        };
        for (key, value) in data.iter_mut() {
            let Some(Ok(bytes)) = value.as_str().map(|s| STANDARD.decode(s.as_bytes())) else {
                continue;
            };
            let Some(input) = Format::detect(&bytes) else {
                continue;
            };
            let output = Format::from_path(key);
            let plain = tidegate_sops::decrypt(&bytes, input, output, keys)
                .map_err(|e| failed(format!("Secret field '{key}'"), e, &snapshot))?;
            *value = Value::String(STANDARD.encode(&*plain));
        }
    }
    Ok(())
}
