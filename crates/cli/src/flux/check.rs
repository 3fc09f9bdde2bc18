//! `tidegate check [--pre]`: the Kubernetes version floor, then the controllers' Deployment
//! and the CRDs, as `flux check` reports them.

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DynamicObject};
use serde_json::Value;
use tidegate_controllers::leader::{LEASE_NAME, live_holder};

use super::{Global, action, failure, success};

/// The oldest Kubernetes minor version supported (Flux 2.x's floor).
pub const MIN_KUBERNETES: (u32, u32) = (1, 32);

/// Flags of `check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only the prerequisites (before an installation).
    #[arg(long)]
    pre: bool,
    #[command(flatten)]
    global: Global,
}

/// Runs `check`.
pub async fn run(a: Args) -> anyhow::Result<()> {
    let client = a.global.cluster.client().await?;
    let ns = &a.global.namespace;
    action("checking prerequisites");
    let info = client
        .apiserver_version()
        .await
        .map_err(|e| super::api_error(&e))?;
    let major: u32 = info.major.trim_end_matches('+').parse().unwrap_or(0);
    let minor: u32 = info.minor.trim_end_matches('+').parse().unwrap_or(0);
    let floor = format!(">={}.{}.0-0", MIN_KUBERNETES.0, MIN_KUBERNETES.1);
    let mut ok = true;
    if (major, minor) >= MIN_KUBERNETES {
        success(&format!(
            "Kubernetes {} {floor}",
            info.git_version.trim_start_matches('v')
        ));
    } else {
        failure(&format!(
            "Kubernetes {} does not match {floor}",
            info.git_version.trim_start_matches('v')
        ));
        ok = false;
    }
    if a.pre {
        if ok {
            success("prerequisites checks passed");
            return Ok(());
        }
        anyhow::bail!("prerequisites checks failed");
    }
    action("checking controllers");
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(client.clone(), ns);
    match deployments.get_opt(crate::install::DEPLOYMENT).await {
        Ok(Some(d)) => {
            let v = serde_json::to_value(&d)?;
            let health = tidegate_apply::health::compute(&v);
            if health.status == tidegate_apply::health::Status::Current {
                success(&format!("{}: deployment ready", crate::install::DEPLOYMENT));
            } else {
                failure(&format!(
                    "{}: deployment not ready ({})",
                    crate::install::DEPLOYMENT,
                    health.message
                ));
                ok = false;
            }
            for c in v
                .pointer("/spec/template/spec/containers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                action(c["image"].as_str().unwrap_or(""));
            }
        }
        Ok(None) => {
            // No Deployment: controllers running elsewhere (`tidegate up`) hold their Lease.
            let leases: Api<Lease> = Api::namespaced(client.clone(), ns);
            let lease = leases
                .get_opt(LEASE_NAME)
                .await
                .map_err(|e| super::api_error(&e))?;
            match lease.as_ref().and_then(live_holder) {
                Some(holder) => success(&format!(
                    "controllers: running without a deployment (lease {LEASE_NAME} held by {holder})"
                )),
                None => {
                    failure(&format!(
                        "{}: deployment not found in {ns} namespace",
                        crate::install::DEPLOYMENT
                    ));
                    ok = false;
                }
            }
        }
        Err(e) => return Err(super::api_error(&e)),
    }
    action("checking crds");
    let crds: Api<DynamicObject> = Api::all_with(client, &super::crd_resource());
    for name in tidegate_api::crds::names() {
        let established = crds
            .get_opt(name)
            .await
            .map_err(|e| super::api_error(&e))?
            .and_then(|c| {
                c.data
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .map(|cs| {
                        cs.iter()
                            .any(|x| x["type"] == "Established" && x["status"] == "True")
                    })
            })
            .unwrap_or(false);
        if established {
            success(name);
        } else {
            failure(&format!("{name} not established"));
            ok = false;
        }
    }
    if ok {
        success("all checks passed");
        Ok(())
    } else {
        anyhow::bail!("check failed")
    }
}
