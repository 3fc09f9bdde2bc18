//! The write path shared by create, update and patch: identity checks, metadata rules,
//! generation, status handling, validation, and the commit.

use super::Req;
use crate::error::{ApiError, ApiResult, Cause};
use crate::hooks;
use crate::objects::{self, finalizers, meta_mut, meta_str};
use crate::store::{Change, Outcome};
use crate::validation::{name_rule, validate_metadata_maps, validate_name};
use serde_json::{Value, json};
use std::sync::Arc;

/// Which part of the object a write addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The object itself (status is kept when the resource has a status subresource).
    Main,
    /// The `status` subresource: only status changes.
    Status,
    /// A namespace's `finalize` subresource: only `spec.finalizers` changes.
    Finalize,
    /// A pod's `ephemeralcontainers` subresource: only `spec.ephemeralContainers` changes.
    EphemeralContainers,
}

impl Part {
    /// The part named by a subresource path segment.
    pub fn of(sub: Option<&str>) -> ApiResult<Part> {
        match sub {
            None => Ok(Part::Main),
            // A CertificateSigningRequest's approval changes its status conditions only.
            Some("status" | "approval") => Ok(Part::Status),
            Some("finalize") => Ok(Part::Finalize),
            Some("ephemeralcontainers") => Ok(Part::EphemeralContainers),
            Some(_) => Err(ApiError::method_not_allowed()),
        }
    }
}

/// How a write records field ownership.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracking {
    /// A non-apply write: the request's field manager becomes an `Update` manager.
    Update,
    /// A server-side apply: managedFields were already computed.
    Applied,
}

/// The field manager of a non-apply request: `fieldManager`, or the user agent up to its first
/// `/`, as kube-apiserver defaults it.
pub fn manager_name(req: &Req) -> ApiResult<String> {
    let name = match req.q("fieldManager") {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => {
            let ua = req
                .headers
                .get(axum::http::header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let prefix = ua.split('/').next().unwrap_or("");
            prefix.chars().take(128).collect()
        }
    };
    if name.len() > 128 {
        return Err(ApiError::bad_request(
            "fieldManager: Too long: may not be more than 128 bytes",
        ));
    }
    if name.chars().any(|c| c.is_control()) {
        return Err(ApiError::bad_request(
            "fieldManager: Invalid value: must only contain printable characters",
        ));
    }
    Ok(name)
}

fn subresource_of(part: Part) -> &'static str {
    match part {
        Part::Main => "",
        Part::Status => "status",
        Part::Finalize => "finalize",
        Part::EphemeralContainers => "ephemeralcontainers",
    }
}

/// Records an `Update` manager for a non-apply write.
fn track(req: &Req, subresource: &str, live: Option<&Value>, next: &mut Value) -> ApiResult<()> {
    let manager = manager_name(req)?;
    let typed = req
        .state
        .types
        .get(&req.res, req.state.registry.generation());
    let fm = crate::fieldmanager::FieldManager::new(&typed, &req.res, subresource);
    fm.update(live, next, &manager);
    Ok(())
}

/// Checks `apiVersion` and `kind` of a body against the endpoint, filling them when absent.
pub fn check_type(req: &Req, obj: &mut Value) -> ApiResult<()> {
    if !obj.is_object() {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): not a JSON object",
            req.res.kind
        )));
    }
    let want_av = req.res.api_version();
    match obj.get("apiVersion").and_then(Value::as_str) {
        None | Some("") => {
            obj["apiVersion"] = json!(want_av);
        }
        Some(av) if av == want_av => {}
        Some(av) => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({want_av})"
            )));
        }
    }
    match obj.get("kind").and_then(Value::as_str) {
        None | Some("") => {
            obj["kind"] = json!(req.res.kind);
        }
        Some(k) if k == req.res.kind => {}
        Some(k) => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                req.res.kind
            )));
        }
    }
    Ok(())
}

fn check_namespace_field(req: &Req, obj: &mut Value) -> ApiResult<()> {
    let url_ns = req.namespace().to_string();
    let meta = meta_mut(obj);
    if req.res.namespaced {
        match meta.get("namespace").and_then(Value::as_str) {
            None | Some("") => {
                meta.insert("namespace".into(), json!(url_ns));
            }
            Some(ns) if ns == url_ns => {}
            Some(_) => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
        }
    } else {
        meta.remove("namespace");
    }
    Ok(())
}

fn validate(req: &Req, obj: &Value, old: Option<&Value>) -> ApiResult<()> {
    // RBAC's storage refuses escalations before it validates.
    if req.state.authorization == crate::auth::AuthorizationMode::Rbac
        && !req.res.custom
        && req.res.group == "rbac.authorization.k8s.io"
    {
        crate::auth::escalation::check(
            &req.state.rbac_index(),
            &req.user,
            &req.res.plural,
            req.namespace(),
            req.path.name.as_deref().unwrap_or(""),
            obj,
            old,
        )?;
    }
    let name = meta_str(obj, "name").unwrap_or("").to_string();
    let mut causes = objects::metadata_type_causes(obj);
    if old.is_none() {
        causes.extend(validate_name(
            &name,
            name_rule(&req.res.group, &req.res.kind),
            "metadata.name",
        ));
    }
    if let Some(meta) = obj.get("metadata") {
        causes.extend(validate_metadata_maps(meta));
    }
    causes.extend(hooks::validate(&req.state, &req.res, obj, old));
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            &req.res.group,
            &req.res.kind,
            &name,
            causes,
        ))
    }
}

/// Creates an object (the body already decoded). Returns the stored (or, for dry runs, the
/// would-be) object.
pub fn create(req: &Req, obj: Value, tracking: Tracking) -> ApiResult<Arc<Value>> {
    let dry_run = req.dry_run()?;
    let (name, obj) = prepare_create(req, obj, tracking)?;
    let key = req.key(&name);
    if dry_run {
        if req.state.store.get(&key).is_some() {
            return Err(ApiError::already_exists(
                &req.res.group,
                &req.res.plural,
                &name,
            ));
        }
        return Ok(Arc::new(obj));
    }
    let obj = if crate::event_versions::is_events_v1(&req.res) {
        crate::event_versions::to_core(&obj)
    } else {
        obj
    };
    let out = req.state.store.mutate(&key, |cur| {
        if cur.is_some() {
            return Err(ApiError::already_exists(
                &req.res.group,
                &req.res.plural,
                &name,
            ));
        }
        Ok(Change::Put(obj))
    })?;
    let stored = out
        .object
        .ok_or_else(|| ApiError::internal("create stored no object"))?;
    hooks::after_write(&req.state, &req.res, &stored);
    Ok(stored)
}

/// Turns a create body into the object to store (name generated, server fields set, status
/// dropped, validated): everything a create decides before its commit.
fn prepare_create(req: &Req, mut obj: Value, tracking: Tracking) -> ApiResult<(String, Value)> {
    check_type(req, &mut obj)?;
    check_namespace_field(req, &mut obj)?;
    let mut name = meta_str(&obj, "name").unwrap_or("").to_string();
    if name.is_empty() {
        let generate = meta_str(&obj, "generateName").unwrap_or("").to_string();
        if generate.is_empty() {
            return Err(ApiError::invalid(
                &req.res.group,
                &req.res.kind,
                "",
                vec![Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value: name or generateName is required".into(),
                    field: "metadata.name".into(),
                }],
            ));
        }
        name = format!("{generate}{}", objects::random_suffix());
        meta_mut(&mut obj).insert("name".into(), json!(name));
    }
    {
        let meta = meta_mut(&mut obj);
        for f in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
        ] {
            meta.remove(f);
        }
    }
    if req.res.subresource("status").is_some()
        && let Some(m) = obj.as_object_mut()
    {
        m.remove("status");
    }
    {
        let tracks = objects::tracks_generation(&req.res);
        let meta = meta_mut(&mut obj);
        meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta.insert("creationTimestamp".into(), json!(objects::now()));
        if tracks {
            meta.insert("generation".into(), json!(1));
        }
    }
    if !req.res.custom && req.res.group == "apps" && req.res.kind == "DaemonSet" {
        objects::set_annotation(&mut obj, objects::DAEMONSET_TEMPLATE_GENERATION, "1");
    }
    crate::defaults::on_create(&req.res, &mut obj);
    // A CertificateSigningRequest records who asked, as its registry strategy does.
    if !req.res.custom && req.res.kind == "CertificateSigningRequest" && obj["spec"].is_object() {
        obj["spec"]["username"] = json!(req.user.username);
        obj["spec"]["groups"] = json!(req.user.groups);
        if !req.user.uid.is_empty() {
            obj["spec"]["uid"] = json!(req.user.uid);
        }
    }
    crate::defaults::apply(&req.res, &mut obj);
    if !req.res.custom && req.res.group.is_empty() && req.res.plural == "services" {
        crate::allocate::service(&req.state, &mut obj, None)?;
    }
    hooks::prepare_create(&req.res, &mut obj);
    if !req.res.custom && req.res.group.is_empty() && req.res.kind == "Pod" {
        crate::admission::pod(&req.state.store, req.namespace(), &mut obj)?;
    }
    validate(req, &obj, None)?;
    if req.res.namespaced {
        objects::check_namespace(&req.state.store, req.namespace(), &req.storage())?;
    }
    if tracking == Tracking::Update {
        track(req, "", None, &mut obj)?;
    }
    Ok((name, hooks::normalize(obj)))
}

/// Carries server-owned metadata from `old` into `new` and applies the part's rules.
fn merge_for_update(req: &Req, part: Part, old: &Value, mut new: Value) -> ApiResult<Value> {
    check_type(req, &mut new)?;
    let name = meta_str(old, "name").unwrap_or("").to_string();
    if let Some(n) = meta_str(&new, "name")
        && n != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        )));
    }
    check_namespace_field(req, &mut new)?;
    if let Some(rv) = meta_str(&new, "resourceVersion")
        && !rv.is_empty()
        && Some(rv) != meta_str(old, "resourceVersion")
    {
        return Err(ApiError::stale(&req.res.group, &req.res.plural, &name));
    }
    let mut next = match part {
        Part::Main => {
            let mut next = new;
            if req.res.subresource("status").is_some() {
                match old.get("status") {
                    Some(s) => next["status"] = s.clone(),
                    None => {
                        if let Some(m) = next.as_object_mut() {
                            m.remove("status");
                        }
                    }
                }
            }
            next
        }
        Part::Status => {
            let mut next = old.clone();
            match new.get("status") {
                Some(s) => next["status"] = s.clone(),
                None => {
                    if let Some(m) = next.as_object_mut() {
                        m.remove("status");
                    }
                }
            }
            next
        }
        Part::Finalize => {
            let mut next = old.clone();
            next["spec"]["finalizers"] = new
                .pointer("/spec/finalizers")
                .cloned()
                .unwrap_or(json!([]));
            next
        }
        Part::EphemeralContainers => {
            let mut next = old.clone();
            match new.pointer("/spec/ephemeralContainers") {
                Some(list) => next["spec"]["ephemeralContainers"] = list.clone(),
                None => {
                    if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
                        spec.remove("ephemeralContainers");
                    }
                }
            }
            let causes = crate::immutable::ephemeral_containers_update(&next, old);
            if !causes.is_empty() {
                return Err(ApiError::invalid(
                    &req.res.group,
                    &req.res.kind,
                    &name,
                    causes,
                ));
            }
            next
        }
    };
    // Ephemeral containers are added through their subresource only.
    if part == Part::Main && !req.res.custom && req.res.group.is_empty() && req.res.kind == "Pod" {
        match old.pointer("/spec/ephemeralContainers") {
            Some(list) if next.get("spec").is_some_and(Value::is_object) => {
                next["spec"]["ephemeralContainers"] = list.clone();
            }
            _ => {
                if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.remove("ephemeralContainers");
                }
            }
        }
    }
    {
        let old_meta = old.get("metadata").cloned().unwrap_or(json!({}));
        let meta = meta_mut(&mut next);
        meta.insert("name".into(), json!(name));
        for f in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ] {
            match old_meta.get(f) {
                Some(v) => {
                    meta.insert(f.into(), v.clone());
                }
                None => {
                    meta.remove(f);
                }
            }
        }
        meta.insert(
            "resourceVersion".into(),
            old_meta
                .get("resourceVersion")
                .cloned()
                .unwrap_or(Value::Null),
        );
    }
    if meta_str(old, "deletionTimestamp").is_some() {
        let before = finalizers(old);
        let added: Vec<String> = finalizers(&next)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !added.is_empty() {
            return Err(ApiError::invalid(
                &req.res.group,
                &req.res.kind,
                &name,
                vec![Cause::forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted",
                )],
            ));
        }
    }
    Ok(next)
}

/// What an update decides from the current object: the change to commit, and the object's
/// last state when the update completes a deletion.
fn decide_update(
    req: &Req,
    name: &str,
    part: Part,
    tracking: Tracking,
    subresource: &str,
    cur: Option<&Arc<Value>>,
    propose: impl Fn(&Value) -> ApiResult<Value>,
) -> ApiResult<(Change, Option<Value>)> {
    let Some(cur) = cur else {
        return Err(ApiError::not_found(&req.res.group, &req.res.plural, name));
    };
    let proposal = propose(cur)?;
    let mut next = merge_for_update(req, part, cur, proposal)?;
    crate::defaults::apply(&req.res, &mut next);
    if !req.res.custom && req.res.group.is_empty() && req.res.plural == "services" {
        crate::allocate::service(&req.state, &mut next, Some(cur))?;
    }
    hooks::prepare_update(&req.res, cur, &mut next);
    objects::bump_generation(&req.res, cur, &mut next);
    objects::daemonset_template_generation(&req.res, cur, &mut next);
    validate(req, &next, Some(cur))?;
    if tracking == Tracking::Update {
        track(req, subresource, Some(cur), &mut next)?;
    }
    let next = hooks::normalize(next);
    if next == **cur {
        return Ok((Change::Keep, None));
    }
    if meta_str(&next, "deletionTimestamp").is_some()
        && finalizers(&next).is_empty()
        && !hooks::blocks_removal(&req.res, &next)
    {
        return Ok((Change::Delete, Some(next)));
    }
    Ok((Change::Put(next), None))
}

/// Updates an object: `propose` turns the current object into the client's proposal (a PUT
/// body, or the result of applying a patch); the server's rules are applied on top.
pub fn update(
    req: &Req,
    name: &str,
    part: Part,
    tracking: Tracking,
    subresource: Option<&str>,
    propose: impl Fn(&Value) -> ApiResult<Value>,
) -> ApiResult<Arc<Value>> {
    upsert(
        req,
        name,
        part,
        tracking,
        subresource,
        None::<fn() -> _>,
        propose,
    )
    .map(|(stored, _)| stored)
}

/// Attempts to commit a change computed outside the store's lock before computing it under the
/// lock instead.
const OPTIMISTIC_ATTEMPTS: usize = 3;

/// Updates an object, or, when it does not exist and `create` is given, creates the object
/// `create` proposes: server-side apply's create-or-update. Returns the stored object and
/// whether it was created.
///
/// The change is computed from a snapshot, outside the store's write lock (merging and
/// validating a large body takes time, and other writers should not wait for it), and
/// committed only if the object is still the one the change was computed from — as
/// kube-apiserver's optimistic `GuaranteedUpdate` does; otherwise it is computed again. After a
/// few lost races the change is computed under the lock, so a write always completes. Either
/// way, which of create or update happens is decided together with the write: a concurrent
/// delete or create cannot make it answer 404 or 409 where kube-apiserver would write.
pub fn upsert(
    req: &Req,
    name: &str,
    part: Part,
    tracking: Tracking,
    subresource: Option<&str>,
    create: Option<impl Fn() -> ApiResult<Value>>,
    propose: impl Fn(&Value) -> ApiResult<Value>,
) -> ApiResult<(Arc<Value>, bool)> {
    let subresource = subresource.unwrap_or(subresource_of(part));
    let dry_run = req.dry_run()?;
    let key = req.key(name);
    // events.k8s.io Events are decided in their own form and stored in the core one.
    let events_v1 = crate::event_versions::is_events_v1(&req.res);
    let decide = |cur: Option<&Arc<Value>>| -> ApiResult<(Change, Option<Value>)> {
        let want = req.res.api_version();
        let shown = match cur {
            Some(c) if events_v1 => Some(Arc::new(crate::event_versions::to_events_v1(c))),
            // Stored as written in another version of the same kind (a custom resource with
            // conversion `None`): seen in the request's version, as reads show it, so patches
            // and updates apply to the object in the version the client speaks.
            Some(c) if c.get("apiVersion").and_then(Value::as_str) != Some(want.as_str()) => {
                let mut shown = (**c).clone();
                if let Some(m) = shown.as_object_mut() {
                    m.insert("apiVersion".into(), Value::String(want.clone()));
                }
                Some(Arc::new(shown))
            }
            other => other.cloned(),
        };
        let (change, last) = match (shown.as_ref(), &create) {
            (None, Some(create)) if part == Part::Main => {
                let (_, obj) = prepare_create(req, create()?, tracking)?;
                (Change::Put(obj), None)
            }
            (cur, _) => decide_update(req, name, part, tracking, subresource, cur, &propose)?,
        };
        Ok(match change {
            Change::Put(v) if events_v1 => (Change::Put(crate::event_versions::to_core(&v)), last),
            change => (change, last),
        })
    };
    if dry_run {
        let cur = req.state.store.get(&key);
        let created = cur.is_none();
        return match decide(cur.as_ref())? {
            (Change::Put(v), _) => Ok((Arc::new(v), created)),
            (Change::Delete, Some(v)) => Ok((Arc::new(v), false)),
            _ => cur
                .map(|c| (c, false))
                .ok_or_else(|| ApiError::not_found(&req.res.group, &req.res.plural, name)),
        };
    }
    let mut committed = None;
    for _ in 0..OPTIMISTIC_ATTEMPTS {
        let snapshot = req.state.store.get(&key);
        let (change, _) = decide(snapshot.as_ref())?;
        let mut change = Some(change);
        let out = req.state.store.mutate(&key, |now| {
            let unchanged = match (now, &snapshot) {
                (None, None) => true,
                // Every read decodes a fresh value, so the same version is recognised by its
                // resourceVersion (unique per write), not by identity.
                (Some(a), Some(b)) => {
                    a.pointer("/metadata/resourceVersion") == b.pointer("/metadata/resourceVersion")
                }
                _ => false,
            };
            if !unchanged {
                // Lost a race: write nothing, compute again.
                return Ok::<_, ApiError>(Change::Keep);
            }
            Ok(change.take().unwrap_or(Change::Keep))
        })?;
        if change.is_none() {
            committed = Some(out);
            break;
        }
    }
    let out: Outcome = match committed {
        Some(out) => out,
        None => req.state.store.mutate(&key, |cur| {
            let (change, _) = decide(cur)?;
            Ok::<_, ApiError>(change)
        })?,
    };
    let stored = out
        .object
        .ok_or_else(|| ApiError::internal("update stored no object"))?;
    if out.written {
        hooks::after_write(&req.state, &req.res, &stored);
    }
    Ok((stored, out.created))
}
