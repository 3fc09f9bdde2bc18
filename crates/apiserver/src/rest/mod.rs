//! The REST verbs on resources: one file per verb, dispatched here.

mod connect;
mod create;
mod delete;
mod get;
mod list;
pub mod listoptions;
mod patch;
mod pods;
mod scale;
mod update;
mod watch;
pub(crate) mod write;

use crate::error::{ApiError, ApiResult};
use crate::http::{Negotiated, respond};
use crate::registry::storage_resource;
use crate::route::ResourcePath;
use crate::server::ServerState;
use crate::store::Key;
use axum::body::Body;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tidegate_schema::ResourceInfo;

/// One resource request, resolved against the catalogue.
pub struct Req {
    /// Server state.
    pub state: Arc<ServerState>,
    /// The resource addressed.
    pub res: Arc<ResourceInfo>,
    /// The parsed path.
    pub path: ResourcePath,
    /// Query parameters.
    pub query: HashMap<String, String>,
    /// Request headers.
    pub headers: HeaderMap,
    /// `Warning` headers to send with the response.
    pub warnings: std::sync::Mutex<Vec<String>>,
    /// What the client accepts.
    pub neg: Negotiated,
    /// Who sent the request.
    pub user: crate::auth::UserInfo,
}

impl Req {
    /// The storage resource (`group/plural`).
    pub fn storage(&self) -> String {
        storage_resource(&self.res)
    }

    /// The namespace of this request ("" for cluster-scoped).
    pub fn namespace(&self) -> &str {
        if self.res.namespaced {
            self.path.namespace.as_deref().unwrap_or("")
        } else {
            ""
        }
    }

    /// The key of the named object.
    pub fn key(&self, name: &str) -> Key {
        Key::new(&self.storage(), self.namespace(), name)
    }

    /// A query parameter.
    pub fn q(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str)
    }

    /// Whether `dryRun=All` was asked; other values are 400.
    pub fn dry_run(&self) -> ApiResult<bool> {
        match self.q("dryRun") {
            None | Some("") => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(ApiError::bad_request(format!(
                "Invalid dryRun value: \"{other}\": supported values: \"All\""
            ))),
        }
    }

    /// Decodes a request body (JSON, YAML, or Kubernetes protobuf for built-in kinds).
    pub fn decode_body(&self, body: &[u8]) -> ApiResult<Value> {
        let ct = crate::http::content_type(&self.headers);
        if ct != "application/vnd.kubernetes.protobuf" {
            return crate::http::decode_object(body, &ct);
        }
        if self.res.custom {
            return Err(ApiError::unsupported_media_type(&[
                "application/json",
                "application/yaml",
            ]));
        }
        crate::protobuf::decode(body, definition_of_gvk)
            .map_err(|e| ApiError::bad_request(format!("decoding protobuf body: {e}")))
    }

    /// Decodes an options body (`DeleteOptions`): empty means none; JSON, YAML or protobuf
    /// (client-go's typed clients send protobuf, also for custom resources' groups).
    pub fn decode_options(&self, body: &[u8], kind: &str) -> ApiResult<Value> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        let ct = crate::http::content_type(&self.headers);
        let decoded = if ct == "application/vnd.kubernetes.protobuf" {
            crate::protobuf::decode(body, definition_of_gvk)
                .map_err(|e| ApiError::bad_request(format!("decoding protobuf body: {e}")))?
        } else {
            crate::http::decode_object(body, &ct)?
        };
        match decoded.get("kind").and_then(Value::as_str) {
            None | Some("") => {}
            Some(k) if k == kind => {}
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "expected {kind}, got {other} in the request body"
                )));
            }
        }
        if !decoded.is_object() {
            return Err(ApiError::bad_request(format!(
                "invalid {kind}: not an object"
            )));
        }
        Ok(decoded)
    }

    /// How an encoding must begin for this request to show it as stored (JSON, no Table, the
    /// stored version); `None` when every object must be presented anew.
    pub fn stored_shape(&self) -> Option<StoredShape> {
        if self.neg.metadata_only || self.neg.table || self.neg.format != crate::http::Format::Json
        {
            return None;
        }
        let kind = Value::String(self.res.kind.clone());
        let api_version = Value::String(self.res.api_version());
        Some(StoredShape {
            prefixes: [
                format!(r#"{{"kind":{kind},"apiVersion":{api_version},"#).into_bytes(),
                format!(r#"{{"apiVersion":{api_version},"kind":{kind},"#).into_bytes(),
            ],
        })
    }

    /// The object as this request's version presents it.
    pub fn present(&self, obj: &Value) -> Value {
        if self.neg.metadata_only {
            return serde_json::json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata").cloned().unwrap_or_else(|| serde_json::json!({})),
            });
        }
        let mut out = if crate::event_versions::is_events_v1(&self.res) {
            crate::event_versions::to_events_v1(obj)
        } else {
            obj.clone()
        };
        if let Some(m) = out.as_object_mut() {
            m.insert("apiVersion".into(), Value::String(self.res.api_version()));
            m.insert("kind".into(), Value::String(self.res.kind.clone()));
        }
        out
    }

    /// kube-apiserver's 400 for a body its typed decoding refuses.
    fn undecodable(&self, obj: &Value, err: &str) -> ApiError {
        let (_, version) = tidegate_core::object_ref::split_api_version(
            obj.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
        );
        let kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or(&self.res.kind);
        ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {}: {err}",
            self.res.kind
        ))
    }

    /// Checks the result of a JSON or JSON merge patch as kube-apiserver's patcher decodes it:
    /// a value of the wrong type, or (under `Strict`) an unknown or duplicate field, is a 422
    /// on the field `patch` whose value is the patched object (`"" is invalid: patch: Invalid
    /// value: "{…}": …`).
    pub fn check_patched(&self, obj: &mut Value, body: Option<&[u8]>) -> ApiResult<()> {
        let patched = || serde_json::to_string(&*obj).unwrap_or_default();
        let invalid = |patched: String, why: &str| {
            let shown = Value::String(patched).to_string();
            ApiError::invalid(
                "",
                "",
                "",
                vec![crate::error::Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!("Invalid value: {shown}: {why}"),
                    field: "patch".into(),
                }],
            )
        };
        // A result that is no object at all is refused later, as the object unrecognized.
        if obj.is_object()
            && !self.res.custom
            && let Some(def) = self.res.definition.as_deref()
            && let Some(err) = crate::typecheck::first_error(def, obj)
        {
            return Err(invalid(patched(), &err));
        }
        let before = patched();
        match self.check_fields(obj, body, false) {
            Err(e) if e.code == 400 && e.message.starts_with("strict decoding error") => {
                Err(invalid(before, &e.message))
            }
            other => other,
        }
    }

    /// Drops fields the resource's schema does not declare and applies the request's
    /// `fieldValidation` directive to them and to duplicate fields of a JSON `body`.
    /// `whole_body`: the object is a request body (create, update), not a patch result.
    pub fn check_fields(
        &self,
        obj: &mut Value,
        body: Option<&[u8]>,
        whole_body: bool,
    ) -> ApiResult<()> {
        use crate::fieldvalidation as fv;
        let directive = fv::directive(self.q("fieldValidation"))?;
        // A value of the wrong type for its field is refused whatever the directive, as
        // kube-apiserver's typed decoding refuses it.
        if whole_body
            && !self.res.custom
            && let Some(def) = self.res.definition.as_deref()
            && let Some(err) = crate::typecheck::first_error(def, obj)
        {
            return Err(self.undecodable(obj, &err));
        }
        // Base64 fields are read as Go reads them (line breaks skipped) and stored canonical.
        if !self.res.custom
            && let Some(def) = self.res.definition.as_deref()
            && let Err(err) = crate::typecheck::normalize_bytes(def, obj)
        {
            return Err(self.undecodable(obj, &err));
        }
        let typed = self
            .state
            .types
            .get(&self.res, self.state.registry.generation());
        let unknown = fv::drop_unknown(&typed, obj);
        let json_body = body.filter(|b| b.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{'));
        let duplicate = json_body.map(fv::duplicate_fields).unwrap_or_default();
        let mut problems = fv::problems(&unknown, &duplicate);
        let yaml = matches!(
            crate::http::content_type(&self.headers).as_str(),
            "application/yaml" | "application/apply-patch+yaml"
        );
        if yaml
            && json_body.is_none()
            && let Some(dup) = body
                .and_then(|b| std::str::from_utf8(b).ok())
                .and_then(fv::yaml_duplicate)
        {
            problems.insert(0, dup);
        }
        if problems.is_empty() {
            return Ok(());
        }
        match directive {
            fv::Directive::Ignore => Ok(()),
            fv::Directive::Warn => {
                self.warnings
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(problems);
                Ok(())
            }
            fv::Directive::Strict => {
                let detail = format!("strict decoding error: {}", problems.join(", "));
                Err(ApiError::bad_request(if whole_body {
                    format!(
                        "{kind} in version \"{v}\" cannot be handled as a {kind}: {detail}",
                        kind = self.res.kind,
                        v = self.res.version
                    )
                } else {
                    detail
                }))
            }
        }
    }

    fn add_warnings(&self, mut resp: Response) -> Response {
        let warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        for w in warnings.iter() {
            if let Some(v) = warning_header(w) {
                resp.headers_mut().append(axum::http::header::WARNING, v);
            }
        }
        resp
    }

    /// Answers with one object, as a Table when asked for one.
    pub fn respond_object(&self, status: StatusCode, obj: &Value) -> Response {
        let resp = self.respond_object_plain(status, obj);
        self.add_warnings(resp)
    }

    fn respond_object_plain(&self, status: StatusCode, obj: &Value) -> Response {
        let shown = self.present(obj);
        if self.neg.table {
            let table = crate::table::to_table(
                &self.res,
                &[&shown],
                serde_json::json!({"resourceVersion": obj.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null)}),
                self.q("includeObject").unwrap_or("Metadata"),
                true,
            );
            return respond(status, &table, self.neg.format);
        }
        respond(status, &shown, self.neg.format)
    }
}

/// The first bytes of the encodings a request shows unchanged: its kind and apiVersion (the
/// store writes them first; objects persisted before it did may have them the other way round).
pub struct StoredShape {
    prefixes: [Vec<u8>; 2],
}

impl StoredShape {
    /// Whether `json` is shown as it is stored.
    pub fn matches(&self, json: &[u8]) -> bool {
        self.prefixes.iter().any(|p| json.starts_with(p))
    }
}

/// The built-in OpenAPI definition of `apiVersion` + `kind`.
fn definition_of_gvk(api_version: &str, kind: &str) -> Option<String> {
    let (group, version) = tidegate_core::object_ref::split_api_version(api_version);
    tidegate_schema::builtin_definitions()
        .iter()
        .find(|(_, d)| {
            d.get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
                .is_some_and(|gvks| {
                    gvks.iter().any(|g| {
                        g["group"] == group && g["version"] == version && g["kind"] == kind
                    })
                })
        })
        .map(|(name, _)| name.clone())
}

fn require_verb(res: &ResourceInfo, verb: &str) -> ApiResult<()> {
    if res.has_verb(verb) {
        Ok(())
    } else {
        Err(ApiError::method_not_allowed())
    }
}

/// Runs a write handler on the blocking pool: decoding, merging and validating a body takes
/// time proportional to the body, and other clients' requests are served meanwhile instead of
/// waiting for an executor thread.
async fn off_executor(
    work: impl FnOnce() -> ApiResult<Response> + Send + 'static,
) -> ApiResult<Response> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(ApiError::internal(format!("request handler failed: {e}"))))
}

/// Handles one resource request; a request to a deprecated CRD version is answered with its
/// deprecation warning (`Warning: 299 - "…"`), success or not.
pub async fn handle(req: Req, method: Method, body: Body) -> ApiResult<Response> {
    let warning = req.res.deprecation_warning.clone();
    let result = handle_verb(req, method, body).await;
    let Some(w) = warning else {
        return result;
    };
    let Some(value) = warning_header(&w) else {
        return result;
    };
    let mut resp = result.unwrap_or_else(axum::response::IntoResponse::into_response);
    resp.headers_mut()
        .append(axum::http::header::WARNING, value);
    Ok(resp)
}

/// A `Warning` header as kube-apiserver writes one: code 299, no agent, the text quoted.
fn warning_header(text: &str) -> Option<axum::http::HeaderValue> {
    let quoted = text.replace('\\', "\\\\").replace('"', "\\\"");
    axum::http::HeaderValue::from_str(&format!("299 - \"{quoted}\"")).ok()
}

async fn handle_verb(req: Req, method: Method, body: Body) -> ApiResult<Response> {
    if req.res.namespaced && req.path.namespace.is_none() {
        // Collections of namespaced resources can be listed and watched across namespaces;
        // everything else needs a namespace in the path.
        let cross_namespace_read = method == Method::GET && req.path.name.is_none();
        if !cross_namespace_read {
            return Err(ApiError::not_found_path());
        }
    }
    if !req.res.namespaced && req.path.namespace.is_some() {
        return Err(ApiError::not_found_path());
    }
    let name = req.path.name.clone();
    let sub = req.path.subresource.clone();
    if let Some(s) = &sub
        && req.res.subresource(s).is_none()
    {
        return Err(ApiError::not_found_path());
    }
    let watching = req.path.watch_prefix || req.q("watch").is_some_and(listoptions::go_bool);
    match (method.as_str(), name, sub.as_deref()) {
        ("GET", None, None) if watching => {
            require_verb(&req.res, "watch")?;
            watch::watch(req).await
        }
        ("GET", None, None) => {
            require_verb(&req.res, "list")?;
            list::list(&req)
        }
        ("GET", Some(name), None) if watching => {
            require_verb(&req.res, "watch")?;
            let mut req = req;
            let sel = format!("metadata.name={name}");
            let merged = match req.query.get("fieldSelector") {
                Some(existing) if !existing.is_empty() => format!("{existing},{sel}"),
                _ => sel,
            };
            req.query.insert("fieldSelector".into(), merged);
            req.path.name = None;
            watch::watch(req).await
        }
        ("GET", Some(name), None) => {
            require_verb(&req.res, "get")?;
            get::get(&req, &name)
        }
        ("GET", Some(name), Some("status" | "approval" | "ephemeralcontainers")) => {
            get::get(&req, &name)
        }
        ("GET", Some(name), Some("scale")) => scale::get(&req, &name),
        ("GET" | "POST", Some(name), Some("exec" | "attach" | "portforward")) => {
            connect::pod(&req, &name)
        }
        (_, Some(name), Some("proxy")) if req.res.plural == "services" => {
            connect::service_proxy(&req, &name)
        }
        ("GET", Some(name), Some("log")) => pods::log(&req, &name),
        ("POST", Some(name), Some("eviction")) => {
            let body = crate::http::read_body(body).await?;
            off_executor(move || pods::eviction(&req, &name, &body)).await
        }
        ("POST", Some(name), Some("binding")) => {
            let body = crate::http::read_body(body).await?;
            off_executor(move || pods::binding(&req, &name, &body)).await
        }
        ("POST", Some(name), Some("token")) => {
            let body = crate::http::read_body(body).await?;
            off_executor(move || crate::auth::review::token_request(&req, &name, &body)).await
        }
        ("POST", None, None) => {
            require_verb(&req.res, "create")?;
            let body = crate::http::read_body(body).await?;
            off_executor(move || create::create(&req, &body)).await
        }
        ("PUT", Some(name), sub) => {
            if sub.is_none() {
                require_verb(&req.res, "update")?;
            }
            let body = crate::http::read_body(body).await?;
            let sub = sub.map(str::to_string);
            off_executor(move || match sub.as_deref() {
                Some("scale") => scale::update(&req, &name, &body),
                _ => update::update(&req, &name, sub.as_deref(), &body),
            })
            .await
        }
        ("PATCH", Some(name), sub) => {
            if sub.is_none() {
                require_verb(&req.res, "patch")?;
            }
            let body = crate::http::read_body(body).await?;
            let sub = sub.map(str::to_string);
            off_executor(move || match sub.as_deref() {
                Some("scale") => scale::patch(&req, &name, &body),
                _ => patch::patch(&req, &name, sub.as_deref(), &body),
            })
            .await
        }
        ("DELETE", Some(name), None) => {
            require_verb(&req.res, "delete")?;
            let body = crate::http::read_body(body).await?;
            off_executor(move || delete::delete(&req, &name, &body)).await
        }
        ("DELETE", None, None) => {
            require_verb(&req.res, "deletecollection")?;
            let body = crate::http::read_body(body).await?;
            off_executor(move || delete::delete_collection(&req, &body)).await
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}
