//! The accept loop: TLS and HTTP/1.1 or HTTP/2 on each connection, with what keeps strangers
//! from holding the door: a TLS handshake must finish within [`HANDSHAKE_TIMEOUT`], request
//! headers within [`HEADER_TIMEOUT`], one address holds at most [`Limits::per_source`]
//! connections and the server at most [`Limits::total`] (kept below the process's open-file
//! limit, so SQLite and clients never meet "too many open files"), and a failing `accept`
//! backs off instead of spinning.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use axum::response::Response;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// How long a client has to complete the TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client has to send a request's headers (HTTP/1.1).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// HTTP/2 keep-alive: a ping this often, the connection closed when unanswered.
const H2_PING: Duration = Duration::from_secs(30);
/// HTTP/2 streams one connection may have open at once (kube-apiserver's default).
const H2_MAX_STREAMS: u32 = 1000;

/// How many connections the server holds at once.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From all addresses.
    pub total: usize,
    /// From one address.
    pub per_source: usize,
}

impl Limits {
    /// Three quarters of the process's open-file limit in all (the rest is for the store,
    /// artifacts and outgoing connections), and all of that from one address: local use has
    /// every client on 127.0.0.1.
    pub fn from_process() -> Limits {
        let total = open_file_limit().map_or(4096, |n| (n / 4 * 3).max(64));
        Limits {
            total,
            per_source: total,
        }
    }
}

/// The soft limit on open files (`/proc/self/limits`), where it can be read.
fn open_file_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Open connections, in all and by address.
#[derive(Default)]
struct Counts {
    total: usize,
    by_source: HashMap<IpAddr, usize>,
}

/// One admitted connection; its slot is given back when dropped.
struct Slot {
    counts: Arc<Mutex<Counts>>,
    source: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.by_source.get_mut(&self.source) {
            *n -= 1;
            if *n == 0 {
                c.by_source.remove(&self.source);
            }
        }
    }
}

fn admit(counts: &Arc<Mutex<Counts>>, limits: Limits, source: IpAddr) -> Option<Slot> {
    let mut c = counts.lock().unwrap_or_else(|e| e.into_inner());
    let from_source = c.by_source.get(&source).copied().unwrap_or(0);
    if c.total >= limits.total || from_source >= limits.per_source {
        return None;
    }
    c.total += 1;
    *c.by_source.entry(source).or_default() += 1;
    Some(Slot {
        counts: counts.clone(),
        source,
    })
}

/// Serves `listener` until `shutdown` changes, each request answered by `handle`.
pub async fn serve<H, F>(
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    limits: Limits,
    mut shutdown: watch::Receiver<bool>,
    handle: H,
) where
    H: Fn(Request<Body>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let counts = Arc::new(Mutex::new(Counts::default()));
    let mut backoff = Duration::ZERO;
    let mut refused: u64 = 0;
    loop {
        let accepted = tokio::select! {
            _ = shutdown.changed() => return,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(a) => {
                backoff = Duration::ZERO;
                a
            }
            Err(e) => {
                // Out of file descriptors or memory: wait for connections to close rather than
                // spin on the error.
                backoff = (backoff * 2).clamp(Duration::from_millis(5), Duration::from_secs(1));
                tracing::warn!(error = %e, backoff = ?backoff, "accepting a connection failed");
                tokio::time::sleep(backoff).await;
                continue;
            }
        };
        let Some(slot) = admit(&counts, limits, peer.ip()) else {
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!(peer = %peer, refused, "connection limit reached, connection refused");
            }
            drop(tcp);
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let mut stop = shutdown.clone();
        let handle = handle.clone();
        tokio::spawn(async move {
            let _slot = slot;
            // Each request of a connection carries the identity of its verified client
            // certificate, read once per connection.
            let svc = |peer: Option<ClientCertificate>| {
                hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let handle = handle.clone();
                    let mut req = req.map(Body::new);
                    if let Some(p) = &peer {
                        req.extensions_mut().insert(p.clone());
                    }
                    async move { Ok::<_, std::convert::Infallible>(handle(req).await) }
                })
            };
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT);
            builder
                .http2()
                .timer(TokioTimer::new())
                // kube-apiserver's `--http2-max-streams-per-connection` default: one client
                // multiplexes every watch of its controllers over a connection, and at hyper's
                // default (200) a process running all the toolkit's controllers saw its
                // requests queue behind the watches.
                .max_concurrent_streams(H2_MAX_STREAMS)
                .keep_alive_interval(Some(H2_PING))
                .keep_alive_timeout(H2_PING);
            match acceptor {
                Some(acc) => {
                    let Ok(Ok(tls)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acc.accept(tcp)).await
                    else {
                        return;
                    };
                    let peer = tls
                        .get_ref()
                        .1
                        .peer_certificates()
                        .and_then(|c| c.first())
                        .and_then(|c| crate::tls::client_identity(c.as_ref()))
                        .map(|(user, groups)| ClientCertificate(Arc::new((user, groups))));
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), svc(peer));
                    tokio::select! { _ = conn => {}, _ = stop.changed() => {} }
                }
                None => {
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tcp), svc(None));
                    tokio::select! { _ = conn => {}, _ = stop.changed() => {} }
                }
            }
        });
    }
}

/// The user and groups of the verified client certificate a connection presented, as a
/// request extension.
#[derive(Debug, Clone)]
pub struct ClientCertificate(pub Arc<(String, Vec<String>)>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_and_given_back() {
        let counts = Arc::new(Mutex::new(Counts::default()));
        let limits = Limits {
            total: 3,
            per_source: 2,
        };
        let a: IpAddr = [10, 0, 0, 1].into();
        let b: IpAddr = [10, 0, 0, 2].into();
        let a1 = admit(&counts, limits, a).expect("a1");
        let _a2 = admit(&counts, limits, a).expect("a2");
        assert!(admit(&counts, limits, a).is_none(), "per source");
        let _b1 = admit(&counts, limits, b).expect("b1");
        assert!(admit(&counts, limits, b).is_none(), "in all");
        drop(a1);
        assert!(admit(&counts, limits, b).is_some(), "a slot came back");
    }

    #[test]
    fn the_open_file_limit_is_read_where_it_can_be() {
        if std::path::Path::new("/proc/self/limits").exists() {
            assert!(open_file_limit().is_some_and(|n| n > 0));
        }
        assert!(Limits::from_process().total >= 64);
    }
}
