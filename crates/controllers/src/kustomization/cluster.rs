//! Which cluster and identity a Kustomization applies with: the controller's own cluster, or
//! the one in `spec.kubeConfig.secretRef`; as the controller, or impersonating
//! `spec.serviceAccountName` (Flux's `--default-service-account` when unset).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client, ResourceExt};
use sha2::{Digest, Sha256};
use tidegate_api::Kustomization;
use tidegate_apply::live::Mode;
use tidegate_apply::{ManagerOptions, Owner, ResourceManager};

use super::{Context, FIELD_MANAGER};

/// The owner-label prefix of Kustomizations.
pub(super) const OWNER_GROUP: &str = tidegate_api::kustomization::GROUP;

/// The user a service account acts as.
pub(super) fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// The service account to impersonate, if any.
fn service_account(obj: &Kustomization, ctx: &Context) -> Option<String> {
    obj.spec
        .service_account_name
        .clone()
        .filter(|s| !s.is_empty())
        .or_else(|| ctx.options.default_service_account.clone())
}

/// `config` acting as `user` (the `Impersonate-User` header on every request).
pub(super) fn impersonating(mut config: kube::Config, user: &str) -> kube::Config {
    config.auth_info.impersonate = Some(user.to_string());
    config
}

/// The manager to apply `obj` with, owner labels set to it.
pub(super) async fn manager_for(
    obj: &Kustomization,
    ctx: &Context,
) -> Result<ResourceManager, String> {
    let namespace = obj.namespace().unwrap_or_default();
    let owner = Some(Owner {
        group: OWNER_GROUP.into(),
        name: obj.name_any(),
        namespace: namespace.clone(),
    });
    let user = service_account(obj, ctx).map(|sa| service_account_user(&namespace, &sa));
    let Some(kube_config) = &obj.spec.kube_config else {
        let Some(user) = user else {
            return Ok(ctx.manager.derive_shared(owner));
        };
        let cache_key = format!("impersonate:{user}");
        let cached = ctx
            .remotes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&cache_key)
            .map(|m| m.client().clone());
        let client = match cached {
            Some(c) => c,
            None => {
                let client = Client::try_from(impersonating(ctx.config.clone(), &user))
                    .map_err(|e| format!("failed to build kube client: {e}"))?;
                let manager = Arc::new(ctx.manager.derive(client.clone(), None));
                ctx.remotes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(cache_key, manager);
                client
            }
        };
        return Ok(ctx.manager.derive(client, owner));
    };
    let Some(secret_ref) = &kube_config.secret_ref else {
        return Err(
            "failed to build kube client: spec.kubeConfig.configMapRef (workload identity) is not supported by Tidegate yet"
                .into(),
        );
    };
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let secret = secrets.get(&secret_ref.name).await.map_err(|e| {
        format!(
            "failed to build kube client: unable to read KubeConfig secret '{namespace}/{}' error: {}",
            secret_ref.name,
            tidegate_apply::error::describe(&e)
        )
    })?;
    let data = secret.data.unwrap_or_default();
    let keys: Vec<&str> = match secret_ref.key.as_deref().filter(|k| !k.is_empty()) {
        Some(k) => vec![k],
        None => vec!["value", "value.yaml"],
    };
    let Some(bytes) = keys.iter().find_map(|k| data.get(*k)) else {
        return Err(format!(
            "failed to build kube client: KubeConfig secret '{namespace}/{}' does not contain a '{}' key with a kubeconfig",
            secret_ref.name,
            keys.join("' or '")
        ));
    };
    let mut h = Sha256::new();
    h.update(&bytes.0);
    h.update(user.as_deref().unwrap_or("").as_bytes());
    let cache_key = format!("{:x}", h.finalize());
    let cached = ctx
        .remotes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&cache_key)
        .cloned();
    let base = match cached {
        Some(m) => m,
        None => {
            let manager = Arc::new(remote_manager(&bytes.0, user.as_deref(), ctx).await?);
            ctx.remotes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(cache_key, manager.clone());
            manager
        }
    };
    Ok(base.derive(base.client().clone(), owner))
}

async fn remote_manager(
    kubeconfig: &[u8],
    user: Option<&str>,
    ctx: &Context,
) -> Result<ResourceManager, String> {
    let text = std::str::from_utf8(kubeconfig)
        .map_err(|_| "failed to build kube client: the kubeconfig is not UTF-8".to_string())?;
    let kc = kube::config::Kubeconfig::from_yaml(text)
        .map_err(|e| format!("failed to build kube client: invalid kubeconfig: {e}"))?;
    let mut config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .map_err(|e| format!("failed to build kube client: {e}"))?;
    if let Some(user) = user {
        config = impersonating(config, user);
    }
    let client =
        Client::try_from(config).map_err(|e| format!("failed to build kube client: {e}"))?;
    // A remote cluster's objects are listed per apply rather than watched: its manager may be
    // replaced when the secret changes, and a list leaves nothing running behind.
    Ok(ResourceManager::new(
        client,
        ManagerOptions {
            field_manager: FIELD_MANAGER.into(),
            concurrency: ctx.options.apply_concurrency.max(1),
            live_mode: Mode::List,
            ..Default::default()
        },
    ))
}
