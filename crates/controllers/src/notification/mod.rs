//! Flux's notification-controller, event side: the [`webhook`] every controller posts its
//! events through, and the event server that routes them to Providers by Alerts
//! ([`run_event_server`]). Receivers (the other direction) are in [`crate::receiver`].

mod alerts;
mod commit_status;
mod dispatch;
mod metadata;
pub mod notifier;
mod ratelimit;
mod server;
#[cfg(test)]
mod tables;
pub mod webhook;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::reflector::Store;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client};
use tidegate_api::{Alert, Provider};

use crate::events::Recorder;

pub use alerts::{Labels, Regexes, filter as filter_alerts};
pub use commit_status::default_context as default_commit_status;
pub use dispatch::{Skip, mask_token, routes};
pub use metadata::{cleanup as cleanup_metadata, combine as combine_metadata};
pub use ratelimit::{RateLimiter, event_key};

/// The event server's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only Alerts and Providers in this namespace.
    pub namespace: Option<String>,
    /// Refuse events from other namespaces than the Alert's (`--no-cross-namespace-refs`).
    pub no_cross_namespace_refs: bool,
    /// The duplicate-event window (`--rate-limit-interval`, default 5m).
    pub rate_limit_interval: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            namespace: None,
            no_cross_namespace_refs: false,
            rate_limit_interval: Duration::from_secs(300),
        }
    }
}

/// What the event handlers share.
pub struct EventServer {
    client: Client,
    recorder: Recorder,
    alerts: Store<Alert>,
    providers: Store<Provider>,
    limiter: RateLimiter,
    regexes: Regexes,
    clients: dispatch::Clients,
    sending: tokio::sync::Semaphore,
    options: Options,
}

/// Notifications being sent at once.
const SENDING: usize = 128;

/// The event server's router, with the Alert and Provider caches it reads (watched by
/// background tasks, returned so the caller can stop them). Requests wait until both caches
/// have synced.
pub fn event_router(
    client: Client,
    options: Options,
) -> (axum::Router, Vec<tokio::task::JoinHandle<()>>) {
    let (alerts, alert_writer) = reflector::store();
    let (providers, provider_writer) = reflector::store();
    let (alert_api, provider_api): (Api<Alert>, Api<Provider>) = match &options.namespace {
        Some(ns) => (
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client.clone(), ns),
        ),
        None => (Api::all(client.clone()), Api::all(client.clone())),
    };
    let tasks = vec![
        tokio::spawn(
            reflector::reflector(
                alert_writer,
                watcher(alert_api, watcher::Config::default()).default_backoff(),
            )
            .for_each(|_| async {}),
        ),
        tokio::spawn(
            reflector::reflector(
                provider_writer,
                watcher(provider_api, watcher::Config::default()).default_backoff(),
            )
            .for_each(|_| async {}),
        ),
    ];
    let server = Arc::new(EventServer {
        recorder: Recorder::new(client.clone(), crate::receiver::CONTROLLER),
        client,
        limiter: RateLimiter::new(options.rate_limit_interval),
        regexes: Regexes::default(),
        clients: dispatch::Clients::default(),
        sending: tokio::sync::Semaphore::new(SENDING),
        alerts,
        providers,
        options,
    });
    (server::router(server), tasks)
}

/// Serves events on `listener` until `shutdown`.
pub async fn run_event_server(
    client: Client,
    options: Options,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (app, tasks) = event_router(client, options);
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
    {
        tracing::error!(error = %e, "event server stopped");
    }
    for t in tasks {
        t.abort();
    }
}

impl EventServer {
    /// Waits until the Alert and Provider caches have synced.
    async fn synced(&self) {
        let _ = self.alerts.wait_until_ready().await;
        let _ = self.providers.wait_until_ready().await;
    }
}
