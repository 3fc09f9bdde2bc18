//! `patches`, `patchesStrategicMerge` and `patchesJson6902`.

use serde_json::{Map, Value};

use super::select::Matcher;
use super::smp::{self, Schema};
use crate::error::{Error, ErrorKind, Result};
use crate::kustomization::{Patch, Selector};
use crate::resmap::ResMap;
use crate::resource::{Gvk, ResId, Resource};
use crate::target::{Builder, Level};
use crate::yaml;

/// Patch text and where it came from.
struct Source {
    text: String,
    file: String,
}

fn source(b: &Builder, level: &Level, p: &Patch) -> Result<Source> {
    match (&p.path, &p.patch) {
        (Some(_), Some(_)) => Err(Error::in_file(
            ErrorKind::Invalid,
            level.file.clone(),
            "a patch has both path and patch; give one",
        )),
        (None, None) => Err(Error::in_file(
            ErrorKind::Invalid,
            level.file.clone(),
            "a patch needs a path or an inline patch",
        )),
        (Some(path), None) => {
            let (text, file) = b.read_text(level, path)?;
            Ok(Source { text, file })
        }
        (None, Some(text)) => Ok(Source {
            text: text.clone(),
            file: level.file.clone(),
        }),
    }
}

/// Parsed patch content: JSON 6902 operations or strategic merge documents.
enum Parsed {
    Json6902(Value),
    Strategic(Vec<(Map<String, Value>, usize)>),
}

fn parse(src: &Source) -> Result<Parsed> {
    let docs = yaml::parse_stream_as(&src.text, &src.file, yaml::Dialect::Patches)?;
    if docs.len() == 1 && docs[0].value.is_array() {
        // kustomize reads a JSON 6902 patch with YAML 1.1 rules.
        let ops = yaml::parse_stream_as(&src.text, &src.file, yaml::Dialect::Yaml11)?;
        return Ok(Parsed::Json6902(
            ops.into_iter().next().map_or(Value::Null, |d| d.value),
        ));
    }
    let mut out = Vec::new();
    for d in docs {
        match d.value {
            Value::Object(m) => out.push((m, d.line)),
            _ => {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    src.file.clone(),
                    "a patch must be a strategic merge patch (a map) or a JSON 6902 patch (a list of operations)",
                )
                .at_line(Some(d.line)));
            }
        }
    }
    Ok(Parsed::Strategic(out))
}

/// One `patches` entry.
pub fn patch(b: &Builder, level: &Level, p: &Patch, res: &mut ResMap) -> Result<()> {
    let src = source(b, level, p)?;
    let allow_name = p.options.get("allowNameChange").copied().unwrap_or(false);
    let allow_kind = p.options.get("allowKindChange").copied().unwrap_or(false);
    match parse(&src)? {
        Parsed::Json6902(ops) => {
            let Some(target) = &p.target else {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    src.file,
                    "a JSON 6902 patch must have a target",
                ));
            };
            let m = Matcher::new(target)?;
            let ops = decode_ops(&ops, &src.file)?;
            for r in res.resources.iter_mut().filter(|r| m.matches(r)) {
                // kustomize's internal annotations make metadata.annotations exist here.
                let added = !r.metadata().is_some_and(|m| m.contains_key("annotations"));
                if added {
                    r.metadata_mut()
                        .insert("annotations".into(), Value::Object(Map::new()));
                }
                json6902(r, &ops, &src.file, Json6902::Patches)?;
                if added
                    && let Some(meta) = r.obj.get_mut("metadata").and_then(Value::as_object_mut)
                    && meta
                        .get("annotations")
                        .is_some_and(|a| a.as_object().is_some_and(Map::is_empty))
                {
                    meta.remove("annotations");
                }
            }
            Ok(())
        }
        Parsed::Strategic(docs) => match &p.target {
            Some(target) => {
                let m = Matcher::new(target)?;
                let mut i = 0;
                while i < res.resources.len() {
                    if !m.matches(&res.resources[i]) {
                        i += 1;
                        continue;
                    }
                    let mut keep = true;
                    for (doc, _) in &docs {
                        if !strategic(
                            b.schema(),
                            &mut res.resources[i],
                            doc,
                            allow_name,
                            allow_kind,
                        )? {
                            keep = false;
                            break;
                        }
                    }
                    if keep {
                        i += 1;
                    } else {
                        res.resources.remove(i);
                    }
                }
                Ok(())
            }
            None => {
                for (doc, line) in &docs {
                    let id = patch_id(doc);
                    let idx = unique_target(res, &id, &src.file, *line, true)?;
                    if !strategic(
                        b.schema(),
                        &mut res.resources[idx],
                        doc,
                        allow_name,
                        allow_kind,
                    )? {
                        res.resources.remove(idx);
                    }
                }
                Ok(())
            }
        },
    }
}

fn patch_id(doc: &Map<String, Value>) -> ResId {
    let s = |k: &str| doc.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let meta = doc.get("metadata").and_then(Value::as_object);
    let m = |k: &str| {
        meta.and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    ResId {
        gvk: Gvk::from_api_version(&s("apiVersion"), &s("kind")),
        name: m("name"),
        namespace: m("namespace"),
    }
}

fn unique_target(
    res: &ResMap,
    id: &ResId,
    file: &str,
    line: usize,
    patches_field: bool,
) -> Result<usize> {
    let found = res.by_any_id(id);
    match found.as_slice() {
        [i] => Ok(*i),
        [] => {
            let shown = kustomize_id(id);
            let prefix = if patches_field {
                format!("no resource matches strategic merge patch \"{shown}\": ")
            } else {
                String::new()
            };
            Err(Error::in_file(
                ErrorKind::NoMatch,
                file,
                format!("{prefix}no matches for Id {shown}; failed to find unique target for patch {shown}"),
            )
            .at_line(Some(line)))
        }
        _ => Err(Error::in_file(
            ErrorKind::NoMatch,
            file,
            format!(
                "multiple matches for Id {}; failed to find unique target for patch",
                kustomize_id(id)
            ),
        )
        .at_line(Some(line))),
    }
}

/// kustomize's id text: `Kind.version.group/name.namespace`.
pub fn kustomize_id(id: &ResId) -> String {
    let or = |s: &str, p: &str| {
        if s.is_empty() {
            p.to_string()
        } else {
            s.to_string()
        }
    };
    format!(
        "{}.{}.{}/{}.{}",
        or(&id.gvk.kind, "[noKind]"),
        or(&id.gvk.version, "[noVer]"),
        or(&id.gvk.group, "[noGrp]"),
        or(&id.name, "[noName]"),
        or(&id.namespace, "[noNs]")
    )
}

/// Applies a strategic merge patch document to a resource, keeping its name and kind unless
/// allowed to change. Returns `false` when the patch deletes the resource.
fn strategic(
    schema: Option<&smp::CustomSchema>,
    r: &mut Resource,
    doc: &Map<String, Value>,
    allow_name: bool,
    allow_kind: bool,
) -> Result<bool> {
    let gvk = r.gvk();
    let name = r.name().to_string();
    let namespace = r.namespace().to_string();
    let had_namespace = r.metadata().is_some_and(|m| m.contains_key("namespace"));
    let schema = Schema::for_gvk(&gvk, schema);
    let mut patch = doc.clone();
    if !allow_kind {
        patch.remove("kind");
        patch.remove("apiVersion");
    }
    let mut obj = std::mem::take(&mut r.obj);
    let keep = smp::apply(&mut obj, &patch, schema)?;
    r.obj = obj;
    if !keep {
        return Ok(false);
    }
    // The patch's name and namespace identify the target; they never rename it unless allowed.
    let new_name = r.name().to_string();
    if let Some(meta) = r.obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("name".into(), Value::String(name.clone()));
        if had_namespace {
            meta.insert("namespace".into(), Value::String(namespace));
        } else {
            meta.remove("namespace");
        }
    }
    if allow_name && new_name != name {
        r.set_name(&new_name);
    }
    Ok(true)
}

/// `patchesStrategicMerge`: each entry a file or an inline patch, each document applied to the
/// resource its own id names.
pub fn strategic_merge_list(b: &Builder, level: &Level, res: &mut ResMap) -> Result<()> {
    strategic_merge_entries(b, level, &level.k.patches_strategic_merge, res)
}

/// Strategic merge patch entries (files or inline patches) applied to the resources their
/// documents name.
pub fn strategic_merge_entries(
    b: &Builder,
    level: &Level,
    entries: &[String],
    res: &mut ResMap,
) -> Result<()> {
    for entry in entries {
        let looks_inline = entry.contains('\n') || entry.trim_start().starts_with('{');
        let src = if looks_inline {
            Source {
                text: entry.clone(),
                file: level.file.clone(),
            }
        } else {
            let (text, file) = b.read_text(level, entry)?;
            Source { text, file }
        };
        let docs = yaml::parse_stream_as(&src.text, &src.file, yaml::Dialect::Patches)?;
        for d in docs {
            let Value::Object(doc) = d.value else {
                return Err(Error::in_file(
                    ErrorKind::Invalid,
                    src.file.clone(),
                    "a strategic merge patch must be a map",
                )
                .at_line(Some(d.line)));
            };
            let id = patch_id(&doc);
            let idx = unique_target(res, &id, &src.file, d.line, false)?;
            if !strategic(b.schema(), &mut res.resources[idx], &doc, false, false)? {
                res.resources.remove(idx);
            }
        }
    }
    Ok(())
}

/// One `patchesJson6902` entry.
pub fn json6902_entry(b: &Builder, level: &Level, p: &Patch, res: &mut ResMap) -> Result<()> {
    let src = source(b, level, p)?;
    let Some(target) = &p.target else {
        return Err(Error::in_file(
            ErrorKind::Invalid,
            src.file,
            "a patchesJson6902 entry must have a target",
        ));
    };
    let value = yaml::parse_stream_as(&src.text, &src.file, yaml::Dialect::Yaml11)?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Array(Vec::new()));
    let ops = decode_ops(&value, &src.file)?;
    let m = Matcher::new(&Selector {
        label_selector: String::new(),
        annotation_selector: String::new(),
        ..target.clone()
    })?;
    for r in res.resources.iter_mut().filter(|r| m.matches(r)) {
        json6902(r, &ops, &src.file, Json6902::Legacy)?;
    }
    Ok(())
}

/// After a JSON patch kustomize holds annotation values as the text of their JSON form:
/// `416`, `true`, `null`, and nothing for a list or a map.
fn annotations_as_text(r: &mut Resource) {
    let Some(annotations) = r
        .obj
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for v in annotations.values_mut() {
        let text = match v {
            Value::String(_) => continue,
            Value::Number(n) => yaml::go_json_number(n),
            Value::Bool(b) => b.to_string(),
            Value::Null => "null".to_string(),
            Value::Array(_) | Value::Object(_) => String::new(),
        };
        *v = Value::String(text);
    }
}

fn decode_ops(v: &Value, file: &str) -> Result<json_patch::Patch> {
    serde_json::from_value(v.clone()).map_err(|e| {
        Error::in_file(
            ErrorKind::Invalid,
            file,
            format!("invalid JSON 6902 patch: {e}"),
        )
    })
}

/// Which of kustomize's two JSON 6902 transformers applies a patch.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Json6902 {
    /// `patches`: the id is stored before every patch, so a name or a namespace the patch
    /// writes is followed by the references to the resource (a subject gets the namespace).
    Patches,
    /// `patchesJson6902`: only a rename is followed.
    Legacy,
}

fn json6902(r: &mut Resource, ops: &json_patch::Patch, file: &str, how: Json6902) -> Result<()> {
    let name = r.name().to_string();
    if how == Json6902::Patches {
        r.store_previous_id();
    }
    let mut v = Value::Object(std::mem::take(&mut r.obj));
    // Operation by operation: like evanphx/json-patch, `replace` of a missing map key adds it.
    let mut result = Ok(());
    for op in &ops.0 {
        let one = json_patch::Patch(vec![op.clone()]);
        let mut outcome = json_patch::patch(&mut v, &one);
        if outcome.is_err()
            && let json_patch::PatchOperation::Replace(rep) = op
        {
            let add = json_patch::Patch(vec![json_patch::PatchOperation::Add(
                json_patch::AddOperation {
                    path: rep.path.clone(),
                    value: rep.value.clone(),
                },
            )]);
            outcome = json_patch::patch(&mut v, &add);
        }
        if let Err(e) = outcome {
            result = Err(e);
            break;
        }
    }
    r.obj = match v {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    annotations_as_text(r);
    result.map_err(|e| {
        Error::in_file(
            ErrorKind::Invalid,
            file,
            format!("JSON 6902 patch failed on {}: {e}", r.describe()),
        )
    })?;
    let new_name = r.name().to_string();
    if how == Json6902::Legacy && new_name != name {
        if let Some(meta) = r.obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("name".into(), Value::String(name));
        }
        r.set_name(&new_name);
    }
    Ok(())
}
