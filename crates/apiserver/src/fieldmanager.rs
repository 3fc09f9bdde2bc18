//! Field management: `metadata.managedFields` for every write and server-side apply, layered as
//! kube-apiserver layers it over structured merge (managers keyed by name, operation, version and
//! subresource; timestamps; stripped metadata; reset fields; `before-first-apply`; at most ten
//! update managers; the client-side-apply upgrade for `kubectl`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::{Map, Value, json};
use tidegate_merge::{
    Filter, Identity, ManagedFields, MergeError, Path, Roots, Schema, Set, TypeRef, Updater,
    VersionedSet,
};
use tidegate_schema::ResourceInfo;

use crate::error::{ApiError, ApiResult, Cause};

/// The schema and root type of one resource version.
pub struct Typed {
    schema: SchemaRef,
    root: TypeRef,
}

enum SchemaRef {
    Builtin(&'static Schema),
    Owned(Schema),
}

impl Typed {
    /// The schema.
    pub fn schema(&self) -> &Schema {
        match &self.schema {
            SchemaRef::Builtin(s) => s,
            SchemaRef::Owned(s) => s,
        }
    }

    /// The object's type.
    pub fn root(&self) -> &TypeRef {
        &self.root
    }

    fn of(res: &ResourceInfo) -> Typed {
        if res.custom {
            let (schema, root) = tidegate_merge::schema_for_crd(res.schema.as_ref());
            return Typed {
                schema: SchemaRef::Owned(schema),
                root,
            };
        }
        let schema = tidegate_merge::builtin_schema();
        let root = res
            .definition
            .as_deref()
            .and_then(|d| schema.type_ref(d))
            .unwrap_or_else(|| schema.deduced());
        Typed {
            schema: SchemaRef::Builtin(schema),
            root,
        }
    }
}

/// Typed schemas per resource version, rebuilt when the set of CRDs changes.
#[derive(Default)]
pub struct TypeCache {
    inner: Mutex<(u64, HashMap<String, Arc<Typed>>)>,
}

impl TypeCache {
    /// The typed schema of a resource, for registry generation `generation`.
    pub fn get(&self, res: &ResourceInfo, generation: u64) -> Arc<Typed> {
        let key = format!("{}/{}/{}", res.group, res.version, res.kind);
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if guard.0 != generation {
            guard.0 = generation;
            guard.1.clear();
        }
        guard
            .1
            .entry(key)
            .or_insert_with(|| Arc::new(Typed::of(res)))
            .clone()
    }
}

/// A manager's identity: name, operation, API version (updates only) and subresource.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ManagerId {
    manager: String,
    apply: bool,
    api_version: String,
    subresource: String,
}

impl ManagerId {
    fn key(&self) -> String {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert(
            "operation".into(),
            json!(if self.apply { "Apply" } else { "Update" }),
        );
        if !self.apply && !self.api_version.is_empty() {
            m.insert("apiVersion".into(), json!(self.api_version));
        }
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m).to_string()
    }

    fn from_key(key: &str) -> Option<ManagerId> {
        let v: Value = serde_json::from_str(key).ok()?;
        Some(ManagerId {
            manager: v.get("manager")?.as_str()?.to_string(),
            apply: v.get("operation")?.as_str()? == "Apply",
            api_version: v
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            subresource: v
                .get("subresource")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
    }

    /// How conflict messages name the manager.
    fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {:?}", self.subresource);
        }
        if !self.apply {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }
}

/// Decoded managed fields plus each manager's timestamp.
#[derive(Default)]
struct Managed {
    fields: ManagedFields,
    times: BTreeMap<String, Option<String>>,
}

fn decode(entries: Option<&Value>) -> Result<Managed, String> {
    let mut out = Managed::default();
    let Some(entries) = entries else {
        return Ok(out);
    };
    let list = match entries {
        Value::Null => return Ok(out),
        Value::Array(l) => l,
        _ => return Err("managedFields must be a list".into()),
    };
    for (i, e) in list.iter().enumerate() {
        let get = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
        let operation = get("operation");
        if operation != "Apply" && operation != "Update" {
            return Err(format!(
                "managedFields[{i}]: invalid operation {operation:?}"
            ));
        }
        let fields_type = get("fieldsType");
        if fields_type != "FieldsV1" {
            return Err(format!(
                "managedFields[{i}]: unsupported fieldsType {fields_type:?}"
            ));
        }
        let set = match e.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(v) => Set::from_fields_v1(v).map_err(|m| format!("managedFields[{i}]: {m}"))?,
        };
        let id = ManagerId {
            manager: get("manager").to_string(),
            apply: operation == "Apply",
            api_version: get("apiVersion").to_string(),
            subresource: get("subresource").to_string(),
        };
        let key = id.key();
        if out.fields.contains_key(&key) {
            return Err(format!("duplicate entries for manager {key}"));
        }
        out.times.insert(
            key.clone(),
            e.get("time").and_then(Value::as_str).map(str::to_string),
        );
        out.fields.insert(
            key,
            VersionedSet {
                set,
                api_version: get("apiVersion").to_string(),
                applied: operation == "Apply",
            },
        );
    }
    Ok(out)
}

fn encode(obj: &mut Value, managed: &Managed) {
    let mut entries: Vec<(ManagerId, &VersionedSet, Option<&String>)> = managed
        .fields
        .iter()
        .filter(|(_, vs)| !vs.set.is_empty())
        .filter_map(|(k, vs)| {
            let id = ManagerId::from_key(k)?;
            Some((id, vs, managed.times.get(k).and_then(Option::as_ref)))
        })
        .collect();
    entries.sort_by(|a, b| {
        (!a.0.apply)
            .cmp(&!b.0.apply)
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| a.0.manager.cmp(&b.0.manager))
            .then_with(|| a.1.api_version.cmp(&b.1.api_version))
            .then_with(|| a.0.subresource.cmp(&b.0.subresource))
    });
    let list: Vec<Value> = entries
        .into_iter()
        .map(|(id, vs, time)| {
            let mut m = Map::new();
            m.insert("manager".into(), json!(id.manager));
            m.insert(
                "operation".into(),
                json!(if id.apply { "Apply" } else { "Update" }),
            );
            m.insert("apiVersion".into(), json!(vs.api_version));
            if let Some(t) = time {
                m.insert("time".into(), json!(t));
            }
            m.insert("fieldsType".into(), json!("FieldsV1"));
            m.insert("fieldsV1".into(), vs.set.to_fields_v1());
            if !id.subresource.is_empty() {
                m.insert("subresource".into(), json!(id.subresource));
            }
            Value::Object(m)
        })
        .collect();
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if list.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(list));
    }
}

fn remove_managed_fields(obj: &mut Value) -> Option<Value> {
    obj.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("managedFields"))
}

/// `managedFields: []` or `[{}]` asks for the managed fields to be reset.
fn is_reset(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Array(a)) if a.is_empty() => true,
        Some(Value::Array(a)) if a.len() == 1 => a[0].as_object().is_some_and(|o| o.is_empty()),
        _ => false,
    }
}

/// Metadata no manager ever owns, built once.
fn strip_set() -> &'static Set {
    static SET: LazyLock<Set> = LazyLock::new(|| {
        let mut paths = vec![
            Path::fields(&["apiVersion"]),
            Path::fields(&["kind"]),
            Path::fields(&["metadata"]),
        ];
        for f in [
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        ] {
            paths.push(Path::fields(&["metadata", f]));
        }
        Set::from_paths(paths)
    });
    &SET
}

/// Fields a write through the main resource never owns when there is a status subresource.
static RESET_MAIN: LazyLock<Filter> =
    LazyLock::new(|| Filter::Exclude(Set::from_paths([Path::fields(&["status"])])));

/// Fields a write through the status subresource never owns.
static RESET_STATUS: LazyLock<Filter> = LazyLock::new(|| {
    Filter::Exclude(Set::from_paths([
        Path::fields(&["spec"]),
        Path::fields(&["metadata", "labels"]),
        Path::fields(&["metadata", "annotations"]),
    ]))
});

/// Update managers kept before the oldest are merged into `ancient-changes`.
const MAX_UPDATE_MANAGERS: usize = 10;

/// The field manager for one request: the resource's types, its version, and the subresource.
pub struct FieldManager<'a> {
    typed: &'a Typed,
    api_version: String,
    subresource: String,
    reset: Option<&'static Filter>,
}

fn now() -> String {
    crate::objects::now()
}

impl<'a> FieldManager<'a> {
    /// A field manager for writes to `res` (`subresource` empty for the main resource).
    pub fn new(typed: &'a Typed, res: &ResourceInfo, subresource: &str) -> FieldManager<'a> {
        let has_status = res.subresource("status").is_some();
        let reset: Option<&'static Filter> = match subresource {
            "" if has_status => Some(&RESET_MAIN),
            "status" => Some(&RESET_STATUS),
            _ => None,
        };
        FieldManager {
            typed,
            api_version: res.api_version(),
            subresource: subresource.to_string(),
            reset,
        }
    }

    fn updater(&self) -> Updater<'_> {
        let mut ignore = BTreeMap::new();
        if let Some(f) = self.reset {
            ignore.insert(self.api_version.clone(), f.clone());
        }
        Updater {
            schema: self.typed.schema(),
            roots: Roots::Same(self.typed.root()),
            converter: &Identity,
            ignore,
            return_input_on_noop: false,
        }
    }

    fn update_id(&self, manager: &str) -> ManagerId {
        ManagerId {
            manager: manager.to_string(),
            apply: false,
            api_version: self.api_version.clone(),
            subresource: self.subresource.clone(),
        }
    }

    /// Records a non-apply write (create, update, patch) by `manager` in `new`'s managedFields.
    /// `live` is `None` on create. Failures drop managedFields, as kube-apiserver does.
    pub fn update(&self, live: Option<&Value>, new: &mut Value, manager: &str) {
        if self.try_update(live, new, manager).is_err() {
            remove_managed_fields(new);
        }
    }

    fn try_update(&self, live: Option<&Value>, new: &mut Value, manager: &str) -> Result<(), ()> {
        let live_managed = || decode(live.and_then(|l| l.pointer("/metadata/managedFields")));
        let proposed = new.pointer("/metadata/managedFields").cloned();
        let mut managed = if !self.subresource.is_empty() {
            live_managed().unwrap_or_default()
        } else if is_reset(proposed.as_ref()) {
            Managed::default()
        } else {
            match decode(proposed.as_ref()) {
                Ok(m) if !m.fields.is_empty() => m,
                _ => live_managed().unwrap_or_default(),
            }
        };
        remove_managed_fields(new);
        // An existing object nobody manages stays unmanaged until someone applies.
        if managed.fields.is_empty() && live.is_some() {
            return Ok(());
        }
        let mut live_clean = live.cloned().unwrap_or_else(|| json!({}));
        remove_managed_fields(&mut live_clean);
        self.record_update(&live_clean, new, &mut managed, &self.update_id(manager))
            .map_err(|_| ())?;
        encode(new, &managed);
        Ok(())
    }

    fn record_update(
        &self,
        live: &Value,
        new: &Value,
        managed: &mut Managed,
        id: &ManagerId,
    ) -> Result<(), MergeError> {
        const CURRENT: &str = "current-operation";
        let fields = std::mem::take(&mut managed.fields);
        let mut fields = self
            .updater()
            .update(live, new, &self.api_version, fields, CURRENT)?;
        if let Some(vs) = fields.remove(CURRENT) {
            let key = id.key();
            let set = match fields.get(&key) {
                Some(prev) => vs.set.union(&prev.set),
                None => vs.set,
            };
            fields.insert(
                key.clone(),
                VersionedSet {
                    set,
                    api_version: vs.api_version,
                    applied: false,
                },
            );
            managed.times.insert(key, Some(now()));
        }
        managed.fields = fields;
        cap_update_managers(managed);
        strip(managed);
        Ok(())
    }

    /// Server-side apply of `patch` by `manager` over `live` (`None` when the object does not
    /// exist yet). Returns the object to write.
    pub fn apply(
        &self,
        res: &ResourceInfo,
        live: Option<&Value>,
        patch: &Value,
        manager: &str,
        force: bool,
    ) -> ApiResult<Value> {
        let patch_av = patch
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let patch_kind = patch.get("kind").and_then(Value::as_str).unwrap_or("");
        if patch_av != self.api_version || patch_kind != res.kind {
            let (g, v) = match patch_av.split_once('/') {
                Some((g, v)) => (g, v),
                None => ("", patch_av),
            };
            return Err(ApiError::bad_request(format!(
                "invalid object type: {g}/{v}, Kind={patch_kind}"
            )));
        }
        if patch.pointer("/metadata/managedFields").is_some() {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        let mut managed = decode(live.and_then(|l| l.pointer("/metadata/managedFields")))
            .map_err(|e| ApiError::bad_request(format!("failed to decode managed fields: {e}")))?;
        let mut live_clean = live.cloned().unwrap_or_else(|| json!({}));
        remove_managed_fields(&mut live_clean);
        if managed.fields.is_empty() && live.is_some() {
            let id = ManagerId {
                manager: "before-first-apply".into(),
                apply: false,
                api_version: self.api_version.clone(),
                subresource: self.subresource.clone(),
            };
            self.record_update(&json!({}), &live_clean, &mut managed, &id)
                .map_err(|e| self.merge_error(res, e))?;
        }
        let id = ManagerId {
            manager: manager.to_string(),
            apply: true,
            api_version: String::new(),
            subresource: self.subresource.clone(),
        };
        let key = id.key();
        let fields = std::mem::take(&mut managed.fields);
        let result = self.updater().apply(
            &live_clean,
            patch,
            &self.api_version,
            fields.clone(),
            &key,
            force,
        );
        let (object, fields) = match result {
            Err(MergeError::Conflicts(c)) if manager == "kubectl" && !force => {
                // Upgrading from client-side apply: conflicts on fields the last-applied
                // configuration declares with the live value are allowed.
                let allowed = self.allowed_by_last_applied(&live_clean);
                let remaining: Vec<_> =
                    c.0.iter()
                        .filter(|x| !allowed.as_ref().is_some_and(|s| s.has(&x.path.0)))
                        .cloned()
                        .collect();
                if !remaining.is_empty() {
                    return Err(conflict_error(&tidegate_merge::Conflicts(remaining)));
                }
                self.updater()
                    .apply(&live_clean, patch, &self.api_version, fields, &key, true)
                    .map_err(|e| self.merge_error(res, e))?
            }
            Err(e) => return Err(self.merge_error(res, e)),
            Ok(r) => r,
        };
        managed.fields = fields;
        let mut object = match object {
            Some(o) => {
                managed.times.insert(key, Some(now()));
                o
            }
            None => live_clean.clone(),
        };
        strip(&mut managed);
        if object.get("metadata").is_none() {
            object["metadata"] = json!({});
        }
        if manager == "kubectl" {
            update_last_applied(&mut object, patch);
        }
        encode(&mut object, &managed);
        Ok(object)
    }

    fn allowed_by_last_applied(&self, live: &Value) -> Option<Set> {
        let text = live
            .pointer("/metadata/annotations")?
            .get(LAST_APPLIED)?
            .as_str()?;
        let last: Value = serde_json::from_str(text).ok()?;
        let (s, tr) = (self.typed.schema(), self.typed.root());
        let last_set = tidegate_merge::to_field_set(s, tr, &last).ok()?;
        let cmp = tidegate_merge::compare(s, tr, &last, live).ok()?;
        Some(last_set.difference(&cmp.modified))
    }

    fn merge_error(&self, res: &ResourceInfo, e: MergeError) -> ApiError {
        match e {
            MergeError::Conflicts(c) => conflict_error(&c),
            MergeError::Invalid { context, errors } => ApiError::invalid(
                &res.group,
                &res.kind,
                "",
                errors
                    .0
                    .iter()
                    .map(|e| Cause {
                        reason: "FieldValueInvalid".into(),
                        message: format!("{context}: {}", e.message),
                        field: e.path.trim_start_matches('.').to_string(),
                    })
                    .collect(),
            ),
            MergeError::Convert(m) => ApiError::internal(m),
        }
    }
}

/// The annotation `kubectl apply` keeps its last configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn update_last_applied(object: &mut Value, patch: &Value) {
    let has = object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .is_some();
    if !has {
        return;
    }
    let mut applied = patch.clone();
    if let Some(a) = applied
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove(LAST_APPLIED);
        if a.is_empty()
            && let Some(m) = applied
                .pointer_mut("/metadata")
                .and_then(Value::as_object_mut)
        {
            m.remove("annotations");
        }
    }
    if let Some(a) = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.insert(LAST_APPLIED.into(), json!(applied.to_string()));
    }
}

fn strip(managed: &mut Managed) {
    let s = strip_set();
    for vs in managed.fields.values_mut() {
        vs.set = vs.set.difference(s);
    }
    managed.fields.retain(|_, vs| !vs.set.is_empty());
    managed.times.retain(|k, _| managed.fields.contains_key(k));
}

fn cap_update_managers(managed: &mut Managed) {
    let mut updates: Vec<(Option<String>, String)> = managed
        .fields
        .iter()
        .filter(|(_, vs)| !vs.applied)
        .map(|(k, _)| (managed.times.get(k).cloned().flatten(), k.clone()))
        .collect();
    if updates.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updates.sort();
    let excess = updates.len() - MAX_UPDATE_MANAGERS + 1;
    let mut merged = Set::new();
    let mut version = String::new();
    for (_, k) in updates.into_iter().take(excess) {
        if let Some(vs) = managed.fields.remove(&k) {
            merged.union_in_place(&vs.set);
            version = vs.api_version;
        }
        managed.times.remove(&k);
    }
    let id = ManagerId {
        manager: "ancient-changes".into(),
        apply: false,
        api_version: version.clone(),
        subresource: String::new(),
    };
    let key = id.key();
    let entry = managed.fields.entry(key.clone()).or_insert(VersionedSet {
        set: Set::new(),
        api_version: version,
        applied: false,
    });
    entry.set.union_in_place(&merged);
    managed.times.entry(key).or_insert(None);
}

/// The 409 an apply conflict answers with, worded as kube-apiserver words it.
fn conflict_error(c: &tidegate_merge::Conflicts) -> ApiError {
    let describe = |m: &str| {
        ManagerId::from_key(m)
            .map(|id| id.describe())
            .unwrap_or_else(|| format!("{m:?}"))
    };
    let message = if c.0.len() == 1 {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            describe(&c.0[0].manager),
            c.0[0].path
        )
    } else {
        let mut by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for x in &c.0 {
            by.entry(&x.manager).or_default().push(x.path.to_string());
        }
        let mut lines = Vec::new();
        for (m, paths) in by {
            lines.push(format!("conflicts with {}:", describe(m)));
            lines.extend(paths.into_iter().map(|p| format!("- {p}")));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            c.0.len(),
            lines.join("\n")
        )
    };
    let causes =
        c.0.iter()
            .map(|x| Cause {
                reason: "FieldManagerConflict".into(),
                message: format!("conflict with {}", describe(&x.manager)),
                field: x.path.to_string(),
            })
            .collect();
    ApiError::apply_conflict(message, causes)
}
