//! The receiver server (`--receiverAddr`, `:9292`): `/hook/<digest>` finds the Receiver whose
//! `status.webhookPath` it is, validates the request as its type says, and annotates each of
//! its resources with `reconcile.fluxcd.io/requestedAt`. Flux's status codes: 413 over 3 MiB,
//! 404 unknown path, 503 suspended or not ready, 400 invalid, 500 when an object could not be
//! annotated, 200.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::IntoResponse;
use kube::ResourceExt;
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::{Map, Value, json};
use tidegate_api::Receiver;
use tidegate_api::conditions::{READY, is_true};
use tidegate_api::receiver::ReceiverResource;
use tidegate_apply::cel::Expression;
use tidegate_apply::error::describe;
use tidegate_apply::resolve::Resolver;

use super::Context;
use super::validate::{Request, validate};

/// The largest body read.
const MAX_BODY: usize = 3 * 1024 * 1024;

/// Kinds whose `apiVersion` may be left out (Flux's `defaultFluxAPIVersions`).
fn default_api_version(kind: &str) -> Option<&'static str> {
    match kind {
        "Bucket" | "HelmChart" | "HelmRepository" | "GitRepository" | "OCIRepository" => {
            Some("source.toolkit.fluxcd.io/v1")
        }
        "ImageRepository" => Some("image.toolkit.fluxcd.io/v1"),
        "ArtifactGenerator" => Some("source.extensions.fluxcd.io/v1beta1"),
        _ => None,
    }
}

struct Server {
    ctx: Arc<Context>,
    resolver: Resolver,
    /// For fetching OIDC discovery documents and signing keys.
    http: reqwest::Client,
    /// OIDC issuers seen by `generic-oidc` Receivers.
    issuers: super::oidc::Issuers,
    /// Google's signing keys for `gcr` Receivers.
    google_keys: super::jwt::KeySets,
}

/// The router: every method on `/hook/…`.
pub fn router(ctx: Arc<Context>) -> axum::Router {
    let state = Arc::new(Server {
        resolver: Resolver::new(ctx.client.clone()),
        ctx,
        http: tidegate_source::tls::http_client(),
        issuers: Default::default(),
        google_keys: Default::default(),
    });
    axum::Router::new()
        .route("/hook/{*digest}", axum::routing::any(handle))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY + 1))
        .with_state(state)
}

async fn handle(
    State(s): State<Arc<Server>>,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> impl IntoResponse {
    let body = match body {
        Ok(b) if b.len() <= MAX_BODY => b,
        Ok(_) => return StatusCode::PAYLOAD_TOO_LARGE,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return StatusCode::PAYLOAD_TOO_LARGE;
        }
        Err(_) => return StatusCode::BAD_REQUEST,
    };
    let wanted = uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let Some(receiver) = s.ctx.receivers.state().into_iter().find(|r| {
        r.status.as_ref().and_then(|st| st.webhook_path.as_deref()) == Some(wanted.as_str())
    }) else {
        return StatusCode::NOT_FOUND;
    };
    let ns = receiver.namespace().unwrap_or_default();
    let name = receiver.name_any();
    let ready = receiver
        .status
        .as_ref()
        .is_some_and(|st| is_true(&st.conditions, READY));
    if receiver.spec.suspend || !ready {
        tracing::error!(
            namespace = ns,
            name,
            "unable to process request: receiver is suspended or not ready"
        );
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let secret = match super::reconcile::secret_data(&s.ctx.client, &receiver).await {
        Ok(d) => d,
        Err(e) => {
            tracing::error!(namespace = ns, name, error = %e, "unable to validate payload");
            return StatusCode::BAD_REQUEST;
        }
    };
    let value = |key: &str| {
        secret
            .as_ref()
            .and_then(|d| d.get(key))
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default()
    };
    let authorization = headers
        .get("Authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mut claims = None;
    let mut body = body.to_vec();
    let validated = match receiver.spec.type_.as_str() {
        "generic-oidc" => super::oidc::validate(
            &s.issuers,
            &s.http,
            &receiver.spec.oidc_providers,
            authorization,
        )
        .await
        .map(|c| claims = Some(Value::Object(c))),
        "gcr" if secret.is_none() => Err("secretRef is required for GCR receivers".into()),
        "gcr" => {
            let (email, audience) = (value("email"), value("audience"));
            super::gcr::validate(
                &s.google_keys,
                &s.http,
                &s.ctx.options.google_certs,
                super::gcr::Expected {
                    email: &email,
                    audience: &audience,
                },
                authorization,
                &body,
            )
            .await
            .map(|unwrapped| body = unwrapped)
        }
        other => validate(
            other,
            &value("token"),
            &receiver.spec.events,
            &Request {
                headers: &headers,
                body: &body,
            },
        ),
    };
    if let Err(e) = validated {
        tracing::error!(namespace = ns, name, error = %e, "unable to validate payload");
        return StatusCode::BAD_REQUEST;
    }
    let req = Request {
        headers: &headers,
        body: &body,
    };
    let filters = match Filters::new(&receiver, &req, claims) {
        Ok(f) => f,
        Err(e) => {
            tracing::error!(namespace = ns, name, error = %e, "unable to create resource filters");
            return StatusCode::INTERNAL_SERVER_ERROR;
        }
    };
    let mut failed = false;
    for (i, resource) in receiver.spec.resources.iter().enumerate() {
        if let Err(e) = s.request(&receiver, resource, &filters, i).await {
            tracing::error!(namespace = ns, name, error = %e, "unable to request reconciliation");
            failed = true;
        }
    }
    if failed {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    }
}

/// The CEL filters of a Receiver, with the request body as `req` and, for `generic-oidc`,
/// the verified token claims as `claims`.
struct Filters {
    top: Option<Expression>,
    each: Vec<Option<Expression>>,
    req: Value,
    claims: Option<Value>,
}

impl Filters {
    fn new(
        receiver: &Receiver,
        request: &Request<'_>,
        claims: Option<Value>,
    ) -> Result<Filters, String> {
        let parse = |f: &Option<String>| -> Result<Option<Expression>, String> {
            match f.as_deref().filter(|f| !f.is_empty()) {
                Some(f) => Expression::parse(f).map(Some),
                None => Ok(None),
            }
        };
        let top = parse(&receiver.spec.resource_filter)?;
        let each = receiver
            .spec
            .resources
            .iter()
            .map(|r| parse(&r.filter))
            .collect::<Result<Vec<_>, _>>()?;
        let any = top.is_some() || each.iter().any(Option::is_some);
        let json_body = request.header("Content-Type").is_some_and(|c| {
            c.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
        let req = if any && json_body {
            serde_json::from_slice(request.body)
                .map_err(|e| format!("failed to parse request body as JSON: {e}"))?
        } else {
            json!({})
        };
        Ok(Filters {
            top,
            each,
            req,
            claims,
        })
    }

    /// Whether the object passes the Receiver's filter and the resource's.
    fn accepts(&self, i: usize, object: &Value) -> Result<bool, String> {
        let mut vars = Map::new();
        vars.insert("res".into(), object.clone());
        vars.insert("req".into(), self.req.clone());
        if let Some(c) = &self.claims {
            vars.insert("claims".into(), c.clone());
        }
        for f in [self.top.as_ref(), self.each.get(i).and_then(Option::as_ref)]
            .into_iter()
            .flatten()
        {
            if !f.evaluate_bool(&vars)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The time as Go's `metav1.Now().String()` prints it (without the monotonic reading).
fn go_now() -> String {
    let now = k8s_openapi::jiff::Timestamp::now();
    format!("{} +0000 UTC", now.strftime("%Y-%m-%d %H:%M:%S.%f"))
}

impl Server {
    async fn request(
        &self,
        receiver: &Receiver,
        resource: &ReceiverResource,
        filters: &Filters,
        index: usize,
    ) -> Result<(), String> {
        let own = receiver.namespace().unwrap_or_default();
        let namespace = match resource.namespace.as_deref().filter(|n| !n.is_empty()) {
            Some(n) if self.ctx.options.no_cross_namespace_refs && n != own => {
                return Err("cross-namespace references are not allowed".into());
            }
            Some(n) => n.to_string(),
            None => own,
        };
        let api_version = match resource.api_version.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => v.to_string(),
            None => default_api_version(&resource.kind)
                .ok_or_else(|| {
                    format!("apiVersion must be specified for kind {:?}", resource.kind)
                })?
                .to_string(),
        };
        let mut target = self
            .resolver
            .resolve(&api_version, &resource.kind)
            .await
            .map_err(|e| e.to_string())?;
        if target.is_none() {
            self.resolver.refresh().await.map_err(|e| e.to_string())?;
            target = self
                .resolver
                .resolve(&api_version, &resource.kind)
                .await
                .map_err(|e| e.to_string())?;
        }
        let Some(target) = target else {
            return Err(format!(
                "no matches for kind {:?} in version {api_version:?}",
                resource.kind
            ));
        };
        let api = target.api(&self.ctx.client, &namespace);
        let objects = if resource.name == "*" {
            let Some(labels) = &resource.match_labels else {
                return Err("matchLabels field not set when using wildcard '*' as name".into());
            };
            let selector: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let list = api
                .list_metadata(&ListParams::default().labels(&selector.join(",")))
                .await
                .map_err(|e| {
                    format!(
                        "failed listing resources in namespace {namespace:?} by matching labels: {}",
                        describe(&e)
                    )
                })?;
            if list.items.is_empty() {
                tracing::error!(
                    "no {:?} resources found with matching labels in {namespace:?} namespace",
                    resource.kind
                );
            }
            list.items
        } else {
            vec![api.get_metadata(&resource.name).await.map_err(|e| {
                format!(
                    "unable to read {} \"{namespace}/{}\" error: {}",
                    resource.kind,
                    resource.name,
                    describe(&e)
                )
            })?]
        };
        for o in objects {
            let mut res = serde_json::to_value(&o).unwrap_or_default();
            res["apiVersion"] = json!(api_version);
            res["kind"] = json!(resource.kind);
            if !filters.accepts(index, &res)? {
                tracing::debug!(
                    "resource '{}/{}.{namespace}' NOT annotated because CEL expression returned false",
                    resource.kind,
                    o.name_any()
                );
                continue;
            }
            let patch = json!({"metadata": {"annotations": {
                tidegate_api::meta::RECONCILE_REQUESTED_AT: go_now()}}});
            api.patch(
                &o.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(|e| {
                format!(
                    "failed to annotate resource: '{}/{}.{namespace}': {}",
                    resource.kind,
                    o.name_any(),
                    describe(&e)
                )
            })?;
            tracing::info!(
                "resource '{}/{}.{namespace}' annotated",
                resource.kind,
                o.name_any()
            );
        }
        Ok(())
    }
}
