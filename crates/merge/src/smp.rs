//! Strategic merge patch application, as Kubernetes applies `application/strategic-merge-patch+json`
//! to built-in kinds: lists merged by `x-kubernetes-patch-merge-key`, primitive lists with the
//! `merge` strategy unioned, and the directives `$patch` (replace, delete, merge), `$retainKeys`,
//! `$setElementOrder/<field>` and `$deleteFromPrimitiveList/<field>`.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ORDER: &str = "$setElementOrder";
const DELETE_PRIMITIVE: &str = "$deleteFromPrimitiveList";

/// Why a patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SmpError(pub String);

fn err<T>(m: impl Into<String>) -> Result<T, SmpError> {
    Err(SmpError(m.into()))
}

/// Patch metadata lookup over OpenAPI v2 definitions.
#[derive(Clone, Copy)]
pub struct PatchSchema<'a> {
    defs: &'a Map<String, Value>,
    node: Option<&'a Value>,
}

/// Strategy and merge key of a field.
#[derive(Default, Clone, Debug)]
struct PatchMeta {
    strategies: Vec<String>,
    merge_key: String,
}

impl<'a> PatchSchema<'a> {
    /// The schema of definition `name` in `defs`.
    pub fn new(defs: &'a Map<String, Value>, name: &str) -> PatchSchema<'a> {
        PatchSchema {
            defs,
            node: defs.get(name),
        }
    }

    fn resolve(&self, v: Option<&'a Value>) -> Option<&'a Value> {
        let mut cur = v?;
        for _ in 0..32 {
            let r = cur.get("$ref").and_then(Value::as_str).or_else(|| {
                let all = cur.get("allOf")?.as_array()?;
                all.first()?.get("$ref")?.as_str()
            });
            match r {
                Some(r) => cur = self.defs.get(r.rsplit('/').next().unwrap_or(r))?,
                None => return Some(cur),
            }
        }
        Some(cur)
    }

    fn sub(&self, node: Option<&'a Value>) -> PatchSchema<'a> {
        PatchSchema {
            defs: self.defs,
            node: self.resolve(node),
        }
    }

    fn meta_of(prop: &Value) -> PatchMeta {
        PatchMeta {
            strategies: prop
                .get("x-kubernetes-patch-strategy")
                .and_then(Value::as_str)
                .map(|s| s.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
            merge_key: prop
                .get("x-kubernetes-patch-merge-key")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }
    }

    fn property(&self, key: &str) -> Option<&'a Value> {
        let node = self.resolve(self.node)?;
        node.get("properties").and_then(|p| p.get(key))
    }

    /// Sub-schema and patch metadata of a map-valued field.
    fn for_struct(&self, key: &str) -> (PatchSchema<'a>, PatchMeta) {
        if let Some(prop) = self.property(key) {
            return (self.sub(Some(prop)), Self::meta_of(prop));
        }
        let node = self.resolve(self.node);
        let additional = node.and_then(|n| n.get("additionalProperties"));
        (
            self.sub(additional.filter(|a| a.is_object())),
            PatchMeta::default(),
        )
    }

    /// Element schema and patch metadata of a list-valued field.
    fn for_slice(&self, key: &str) -> (PatchSchema<'a>, PatchMeta) {
        match self.property(key) {
            Some(prop) => {
                let element = match prop.get("items") {
                    Some(items) => items,
                    None => prop,
                };
                (self.sub(Some(element)), Self::meta_of(prop))
            }
            None => (self.sub(None), PatchMeta::default()),
        }
    }
}

/// Applies a strategic merge patch to a built-in object of OpenAPI definition `definition`.
pub fn apply_builtin(original: &Value, patch: &Value, definition: &str) -> Result<Value, SmpError> {
    let defs = tidegate_schema::builtin_definitions();
    apply(original, patch, PatchSchema::new(defs, definition))
}

/// Applies a strategic merge patch (a JSON object) to `original`.
pub fn apply(original: &Value, patch: &Value, schema: PatchSchema<'_>) -> Result<Value, SmpError> {
    let Value::Object(p) = patch else {
        return err("invalid JSON document: the patch must be a JSON object");
    };
    let o = match original {
        Value::Object(o) => o.clone(),
        Value::Null => Map::new(),
        _ => return err("invalid JSON document: the original must be a JSON object"),
    };
    Ok(Value::Object(merge_map(o, p.clone(), schema)?))
}

fn retain_strategy(strategies: &[String]) -> Result<String, SmpError> {
    let mut other = String::new();
    for s in strategies {
        match s.as_str() {
            "retainKeys" => {}
            "merge" | "replace" => {
                if !other.is_empty() {
                    return err(format!(
                        "unexpected patch strategy: {}",
                        strategies.join(",")
                    ));
                }
                other = s.clone();
            }
            _ => return err(format!("unexpected patch strategy: {s}")),
        }
    }
    Ok(other)
}

fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: PatchSchema<'_>,
) -> Result<Map<String, Value>, SmpError> {
    if let Some(d) = patch.get(DIRECTIVE) {
        return match d.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => err(format!("Unexpected patch type: {d}")),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    apply_set_element_order(&mut original, &mut patch, schema)?;
    for (key, pv) in patch {
        let (k, delete_list) = match key.strip_prefix(DELETE_PRIMITIVE) {
            Some(rest) => match rest.strip_prefix('/') {
                Some(k) => (k.to_string(), true),
                None => return err("Unable to find key in deleteFromPrimitiveList"),
            },
            None => (key, false),
        };
        if pv.is_null() {
            original.remove(&k);
            continue;
        }
        let Some(ov) = original.get(&k) else {
            if !delete_list {
                let mut pv = pv;
                discard_nulls(&mut pv);
                if let Some(v) = remove_directives(pv) {
                    original.insert(k, v);
                }
            }
            continue;
        };
        if !same_type(ov, &pv) {
            if !delete_list {
                let mut pv = pv;
                discard_nulls(&mut pv);
                match remove_directives(pv) {
                    Some(v) => {
                        original.insert(k, v);
                    }
                    None => {
                        original.remove(&k);
                    }
                }
            }
            continue;
        }
        let ov = original.remove(&k).unwrap_or(Value::Null);
        let merged = match (ov, pv) {
            (Value::Object(o), Value::Object(p)) => {
                let (sub, meta) = schema.for_struct(&k);
                if retain_strategy(&meta.strategies)? == "replace" {
                    Some(Value::Object(p))
                } else {
                    Some(Value::Object(merge_map(o, p, sub)?))
                }
            }
            (Value::Array(o), Value::Array(p)) => {
                let (sub, meta) = schema.for_slice(&k);
                let strategy = retain_strategy(&meta.strategies)?;
                if strategy == "merge" || delete_list {
                    Some(Value::Array(merge_slice(
                        o,
                        p,
                        sub,
                        &meta.merge_key,
                        delete_list,
                    )?))
                } else {
                    Some(Value::Array(p))
                }
            }
            (_, pv) => remove_directives(pv),
        };
        if let Some(v) = merged {
            original.insert(k, v);
        }
    }
    Ok(original)
}

fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

fn discard_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// Drops directive-bearing maps and directives; `None` when the value itself is a directive.
fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.contains_key(DIRECTIVE) {
                return None;
            }
            let mut out = Map::new();
            for (k, v) in m {
                if let Some(v) = remove_directives(v) {
                    out.insert(k, v);
                }
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), SmpError> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(list) = retain else {
        return err("invalid patch: $retainKeys must be a list of strings");
    };
    let keep: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
    for (k, v) in patch.iter() {
        if v.is_null() || k.starts_with(DELETE_PRIMITIVE) || k.starts_with(SET_ORDER) {
            continue;
        }
        if !keep.contains(&k.as_str()) {
            return err(
                "doesn't satisfy the retainKeys directive: every field of the patch must be listed in $retainKeys",
            );
        }
    }
    original.retain(|k, _| keep.contains(&k.as_str()));
    Ok(())
}

fn apply_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: PatchSchema<'_>,
) -> Result<(), SmpError> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let order = patch.remove(&key).unwrap_or(Value::Null);
        let Value::Array(order) = order else {
            return err("invalid patch: $setElementOrder must be a list");
        };
        let Some(field) = key
            .strip_prefix(SET_ORDER)
            .and_then(|r| r.strip_prefix('/'))
        else {
            return err("invalid patch: malformed $setElementOrder key");
        };
        let field = field.to_string();
        let original_list = match original.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(_) => return err(format!("invalid patch: {field} is not a list")),
        };
        let patch_list = match patch.get(&field) {
            None => None,
            Some(Value::Array(a)) => Some(a.clone()),
            Some(_) => return err(format!("invalid patch: {field} is not a list")),
        };
        let (sub, meta) = schema.for_slice(&field);
        let strategy = retain_strategy(&meta.strategies)?;
        validate_with_order(
            patch_list.as_deref().unwrap_or(&[]),
            &order,
            &meta.merge_key,
        )?;
        let mut server_view: Option<Vec<Value>> = None;
        let merged = match (original_list.clone(), patch_list.clone()) {
            (Some(o), None) => o,
            (None, Some(p)) => match remove_directives(Value::Array(p)) {
                Some(Value::Array(v)) => v,
                _ => continue,
            },
            (Some(o), Some(p)) => {
                if strategy == "merge" {
                    let (merged, view) = merge_slice_with_view(o, p, sub, &meta.merge_key, false)?;
                    server_view = Some(view);
                    merged
                } else {
                    p
                }
            }
            (None, None) => continue,
        };
        let (in_patch, server_only) = partition(&merged, &order, &meta.merge_key)?;
        let server_order = server_view.or(original_list).unwrap_or_default();
        let all = normalize_order(
            in_patch,
            server_only,
            &order,
            &server_order,
            &meta.merge_key,
        )?;
        original.insert(field.clone(), Value::Array(all));
        patch.remove(&field);
    }
    Ok(())
}

fn key_of<'v>(item: &'v Value, merge_key: &str) -> Option<&'v Value> {
    if merge_key.is_empty() {
        Some(item)
    } else {
        item.get(merge_key)
    }
}

fn validate_with_order(patch: &[Value], order: &[Value], merge_key: &str) -> Result<(), SmpError> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<&Value> = if merge_key.is_empty() {
        patch.iter().collect()
    } else {
        patch
            .iter()
            .filter(|v| v.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"))
            .collect()
    };
    let (mut pi, mut oi) = (0, 0);
    while pi < non_delete.len() && oi < order.len() {
        if non_delete[pi].get(DIRECTIVE).is_some() {
            pi += 1;
            continue;
        }
        let equal = if merge_key.is_empty() {
            non_delete[pi] == &order[oi]
        } else {
            match (non_delete[pi].get(merge_key), order[oi].get(merge_key)) {
                (Some(a), Some(b)) => a == b,
                _ => {
                    return err(format!(
                        "map: {} does not contain declared merge key: {merge_key}",
                        non_delete[pi]
                    ));
                }
            }
        };
        if equal {
            pi += 1;
        }
        oi += 1;
    }
    if pi < non_delete.len() && oi >= order.len() {
        return err("The order in patch list doesn't match $setElementOrder list");
    }
    Ok(())
}

fn partition(
    merged: &[Value],
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), SmpError> {
    let keys: HashSet<String> = by
        .iter()
        .filter_map(|b| key_of(b, merge_key))
        .map(canon)
        .collect();
    let mut in_patch = Vec::new();
    let mut server_only = Vec::new();
    for v in merged {
        let k = if merge_key.is_empty() {
            v
        } else {
            match v.get(merge_key) {
                Some(k) => k,
                None => {
                    return err(format!(
                        "map: {v} does not contain declared merge key: {merge_key}"
                    ));
                }
            }
        };
        if keys.contains(&canon(k)) {
            in_patch.push(v.clone());
        } else {
            server_only.push(v.clone());
        }
    }
    Ok((in_patch, server_only))
}

/// A value's identity for hashing: its JSON with object keys sorted (equality of values does
/// not depend on key order).
fn canon(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&m[k], out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for x in a {
                    write(x, out);
                    out.push(',');
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// Where items sit in an order list (`$setElementOrder`, the patch, the server's list): the
/// first position of each key, found in constant time (a linear search per comparison made
/// sorting long lists quadratic).
struct OrderIndex {
    by_key: HashMap<String, usize>,
    /// The first item that has no key (a non-map in a list of maps).
    keyless: Option<usize>,
}

impl OrderIndex {
    fn new(list: &[Value], merge_key: &str, maps: bool) -> OrderIndex {
        let mut by_key = HashMap::new();
        let mut keyless = None;
        for (i, v) in list.iter().enumerate() {
            match order_key(v, merge_key, maps) {
                Some(k) => {
                    by_key.entry(k).or_insert(i);
                }
                None => {
                    keyless.get_or_insert(i);
                }
            }
        }
        OrderIndex { by_key, keyless }
    }

    /// The first position holding the same key as `item` (as a linear search would find it).
    fn get(&self, item: &Value, merge_key: &str, maps: bool) -> Option<usize> {
        match order_key(item, merge_key, maps) {
            Some(k) => self.by_key.get(&k).copied(),
            None => self.keyless,
        }
    }
}

/// What an item is ordered by: its merge key's value (lists of maps) or itself.
fn order_key(v: &Value, merge_key: &str, maps: bool) -> Option<String> {
    if maps {
        v.as_object()
            .map(|m| canon(m.get(merge_key).unwrap_or(&Value::Null)))
    } else {
        Some(canon(v))
    }
}

fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    maps: bool,
) -> Result<Vec<Value>, SmpError> {
    let (keep, deletes): (Vec<Value>, Vec<Value>) = if maps {
        for v in items.iter().chain(order.iter()) {
            if v.get(merge_key).is_none() {
                return err(format!(
                    "map: {v} does not contain declared merge key: {merge_key}"
                ));
            }
        }
        items
            .into_iter()
            .partition(|v| v.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"))
    } else {
        (items, Vec::new())
    };
    // Go's stable insertion sort with its comparator ("less" is true whenever either index is
    // missing) moves an item left past items of a greater index only, never past one absent
    // from `order`: the absent items stay in place and split the list into runs, each sorted
    // stably by index. The same result in O(n log n) rather than O(n²).
    let index = OrderIndex::new(order, merge_key, maps);
    let mut out = Vec::with_capacity(keep.len() + deletes.len());
    let mut run: Vec<(usize, Value)> = Vec::new();
    for v in keep {
        match index.get(&v, merge_key, maps) {
            Some(i) => run.push((i, v)),
            None => {
                run.sort_by_key(|(i, _)| *i);
                out.extend(run.drain(..).map(|(_, v)| v));
                out.push(v);
            }
        }
    }
    run.sort_by_key(|(i, _)| *i);
    out.extend(run.into_iter().map(|(_, v)| v));
    out.extend(deletes);
    Ok(out)
}

fn normalize_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
) -> Result<Vec<Value>, SmpError> {
    let maps = !merge_key.is_empty();
    let patch = sort_by_order(patch, patch_order, merge_key, maps)?;
    let server_only = sort_by_order(server_only, server_order, merge_key, maps)?;
    let server_index = OrderIndex::new(server_order, merge_key, maps);
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(patch.len() + server_only.len());
    while i < server_only.len() || j < patch.len() {
        if i >= server_only.len() {
            out.push(patch[j].clone());
            j += 1;
        } else if j >= patch.len() {
            out.push(server_only[i].clone());
            i += 1;
        } else {
            let li = server_index.get(&server_only[i], merge_key, maps);
            let ri = server_index.get(&patch[j], merge_key, maps);
            match (li, ri) {
                (Some(a), Some(b)) if a < b => {
                    out.push(server_only[i].clone());
                    i += 1;
                }
                _ => {
                    out.push(patch[j].clone());
                    j += 1;
                }
            }
        }
    }
    Ok(out)
}

fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: PatchSchema<'_>,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>, SmpError> {
    Ok(merge_slice_with_view(original, patch, schema, merge_key, delete_list)?.0)
}

/// Merges two lists. Also returns the original list as apimachinery's caller sees it afterwards:
/// its merge deletes and appends in place, so a caller reading the original list for ordering
/// sees the shifted items (an observable part of how `$setElementOrder` orders server-only items).
fn merge_slice_with_view(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: PatchSchema<'_>,
    merge_key: &str,
    delete_list: bool,
) -> Result<(Vec<Value>, Vec<Value>), SmpError> {
    if original.is_empty() && patch.is_empty() {
        return Ok((original.clone(), original));
    }
    let maps = element_kind_is_map(&original, &patch)?;
    if !maps {
        if delete_list {
            let gone: HashSet<String> = patch.iter().map(canon).collect();
            let out = original
                .iter()
                .filter(|v| !gone.contains(&canon(v)))
                .cloned()
                .collect();
            return Ok((out, original));
        }
        let mut merged: Vec<Value> = Vec::new();
        let mut seen = HashSet::new();
        for v in original.iter().chain(patch.iter()) {
            if seen.insert(canon(v)) {
                merged.push(v.clone());
            }
        }
        let (in_patch, server_only) = partition(&merged, &patch, "")?;
        let out = normalize_order(in_patch, server_only, &patch, &original, "")?;
        return Ok((out, original));
    }
    if merge_key.is_empty() {
        return err("cannot merge lists without merge key");
    }
    let view_len = original.len();
    let (remaining, patch, mut backing, replaced) = special_elements(original, &patch, merge_key)?;
    let mut merged = remaining.clone();
    let mut len = merged.len();
    // The first item of each key, kept as items are appended.
    let mut at: HashMap<String, usize> = HashMap::new();
    for (i, o) in merged.iter().enumerate() {
        if let Some(k) = o.get(merge_key) {
            at.entry(canon(k)).or_insert(i);
        }
    }
    for v in &patch {
        let Some(mv) = v.get(merge_key) else {
            return err(format!(
                "map: {v} does not contain declared merge key: {merge_key}"
            ));
        };
        let key = canon(mv);
        match at.get(&key).copied() {
            Some(i) => {
                let o = match std::mem::take(&mut merged[i]) {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                let p = v.as_object().cloned().unwrap_or_default();
                merged[i] = Value::Object(merge_map(o, p, schema)?);
                if !replaced && i < backing.len() {
                    backing[i] = merged[i].clone();
                }
            }
            None => {
                at.insert(key, merged.len());
                merged.push(v.clone());
                if !replaced && len < view_len {
                    backing[len] = v.clone();
                }
                len += 1;
            }
        }
    }
    let (in_patch, server_only) = partition(&merged, &patch, merge_key)?;
    let out = normalize_order(in_patch, server_only, &patch, &remaining, merge_key)?;
    Ok((out, backing))
}

/// Handles `$patch: delete` and `$patch: replace` items of a list of maps. Returns the remaining
/// original items, the other patch items, the original list as seen in place after the deletions,
/// and whether the list was replaced.
#[allow(clippy::type_complexity)]
fn special_elements(
    original: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>, Vec<Value>, bool), SmpError> {
    let mut rest = Vec::new();
    let mut replace = false;
    // apimachinery deletes in place, shifting the rest left each time; the slot freed at the
    // end keeps the item that was last before the deletion (the view its caller orders by).
    // Simulated without the shifts: which items are gone, where each key sits, and the last
    // remaining item.
    let n = original.len();
    let mut gone = vec![false; n];
    let mut positions: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, o) in original.iter().enumerate() {
        if let Some(k) = o.get(merge_key) {
            positions.entry(canon(k)).or_default().push(i);
        }
    }
    let mut tail: Vec<Option<usize>> = vec![None; n];
    let mut len = n;
    let mut last = n.checked_sub(1);
    for v in patch {
        match v.get(DIRECTIVE) {
            None => rest.push(v.clone()),
            Some(d) => match d.as_str() {
                Some("delete") => {
                    let Some(mv) = v.get(merge_key) else {
                        return err(format!(
                            "map: {v} does not contain declared merge key: {merge_key}"
                        ));
                    };
                    for i in positions.remove(&canon(mv)).unwrap_or_default() {
                        let Some(l) = last else { break };
                        tail[len - 1] = Some(l);
                        gone[i] = true;
                        len -= 1;
                        while let Some(l) = last
                            && gone[l]
                        {
                            last = l.checked_sub(1);
                        }
                    }
                }
                Some("replace") => replace = true,
                Some("merge") => return err("merging lists cannot yet be specified in the patch"),
                _ => return err(format!("Unexpected patch type: {d}")),
            },
        }
    }
    let remaining: Vec<Value> = original
        .iter()
        .zip(&gone)
        .filter(|(_, g)| !**g)
        .map(|(v, _)| v.clone())
        .collect();
    let mut backing = remaining.clone();
    backing.extend(
        tail[len..]
            .iter()
            .map(|t| t.map(|i| original[i].clone()).unwrap_or(Value::Null)),
    );
    if replace {
        return Ok((rest, Vec::new(), backing, true));
    }
    Ok((remaining, rest, backing, false))
}

fn element_kind_is_map(original: &[Value], patch: &[Value]) -> Result<bool, SmpError> {
    let mut kind: Option<bool> = None;
    for v in original.iter().chain(patch.iter()) {
        if v.is_null() {
            continue;
        }
        let is_map = v.is_object();
        match kind {
            None => kind = Some(is_map),
            Some(k) if k != is_map => return err("mismatched element types in list"),
            _ => {}
        }
    }
    Ok(kind.unwrap_or(false))
}
