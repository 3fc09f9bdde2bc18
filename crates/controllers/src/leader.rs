//! Leader election on a `coordination.k8s.io/v1` Lease, as controller-runtime does it: only
//! the holder of the Lease runs the controllers; it renews the Lease, others wait for it to
//! expire. A leader that cannot renew before the lease runs out stops leading.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

/// The Lease the toolkit controllers hold while they run (`tidegate controllers
/// --enable-leader-election`, and `tidegate up` for its in-process controllers).
pub const LEASE_NAME: &str = "tidegate-controllers-leader-election";

/// The holder of a Lease whose last renewal is younger than its duration, if any.
pub fn live_holder(lease: &Lease) -> Option<String> {
    let spec = lease.spec.as_ref()?;
    let renewed = spec.renew_time.as_ref()?;
    let age = k8s_openapi::jiff::Timestamp::now().duration_since(renewed.0);
    let fresh = age.as_secs() < i64::from(spec.lease_duration_seconds?);
    spec.holder_identity.clone().filter(|_| fresh)
}

/// Lease timings (controller-runtime's defaults: 15s lease, 10s renew deadline, 2s retry).
#[derive(Debug, Clone)]
pub struct LeaseOptions {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// This process's identity.
    pub identity: String,
    /// How long a lease lasts without renewal.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up.
    pub renew_deadline: Duration,
    /// How often to try to acquire or renew.
    pub retry_period: Duration,
}

impl LeaseOptions {
    /// Defaults for a Lease `name` in `namespace`, identity from the host name and a random
    /// suffix.
    pub fn new(namespace: &str, name: &str) -> LeaseOptions {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "tidegate".into());
        LeaseOptions {
            namespace: namespace.into(),
            name: name.into(),
            identity: format!("{host}_{:08x}", rand::random::<u32>()),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

fn now() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

/// Tries once to take or renew the Lease; true when this process holds it afterwards.
async fn try_acquire(api: &Api<Lease>, o: &LeaseOptions) -> Result<bool, kube::Error> {
    let spec = |transitions: i32, acquired: Option<MicroTime>| LeaseSpec {
        holder_identity: Some(o.identity.clone()),
        lease_duration_seconds: Some(o.lease_duration.as_secs() as i32),
        acquire_time: Some(acquired.unwrap_or_else(now)),
        renew_time: Some(now()),
        lease_transitions: Some(transitions),
        ..Default::default()
    };
    let Some(mut lease) = api.get_opt(&o.name).await? else {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(o.name.clone()),
                namespace: Some(o.namespace.clone()),
                ..Default::default()
            },
            spec: Some(spec(0, None)),
        };
        return match api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(e),
        };
    };
    let current = lease.spec.clone().unwrap_or_default();
    let ours = current.holder_identity.as_deref() == Some(o.identity.as_str());
    let expired = match (&current.renew_time, current.lease_duration_seconds) {
        (Some(renewed), Some(secs)) => {
            let age = k8s_openapi::jiff::Timestamp::now().duration_since(renewed.0);
            age.as_secs() >= i64::from(secs)
        }
        _ => true,
    };
    if !ours && !expired && current.holder_identity.is_some() {
        return Ok(false);
    }
    let transitions = current.lease_transitions.unwrap_or(0) + i32::from(!ours);
    let acquired = if ours { current.acquire_time } else { None };
    lease.spec = Some(spec(transitions, acquired));
    // The update carries the resourceVersion read: a competing writer makes it fail.
    match api.replace(&o.name, &PostParams::default(), &lease).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Waits until this process holds the Lease.
pub async fn acquire(client: &Client, o: &LeaseOptions) {
    let api: Api<Lease> = Api::namespaced(client.clone(), &o.namespace);
    let mut logged = false;
    loop {
        match try_acquire(&api, o).await {
            Ok(true) => {
                tracing::info!(lease = %format!("{}/{}", o.namespace, o.name), identity = o.identity, "successfully acquired lease");
                return;
            }
            Ok(false) if !logged => {
                tracing::info!(lease = %format!("{}/{}", o.namespace, o.name), "attempting to acquire leader lease...");
                logged = true;
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "error acquiring the leader lease"),
        }
        tokio::time::sleep(o.retry_period).await;
    }
}

/// Renews the Lease until renewal fails for longer than the renew deadline; returns then
/// (leadership lost).
pub async fn keep(client: &Client, o: &LeaseOptions) {
    let api: Api<Lease> = Api::namespaced(client.clone(), &o.namespace);
    let mut last = std::time::Instant::now();
    loop {
        tokio::time::sleep(o.retry_period).await;
        match try_acquire(&api, o).await {
            Ok(true) => last = std::time::Instant::now(),
            Ok(false) => {
                tracing::error!(
                    identity = o.identity,
                    "leader lease taken by another holder"
                );
                return;
            }
            Err(e) => tracing::warn!(error = %e, "renewing the leader lease failed"),
        }
        if last.elapsed() > o.renew_deadline {
            tracing::error!("leader lease renewal deadline exceeded");
            return;
        }
    }
}
