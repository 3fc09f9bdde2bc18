//! The accept loop: TLS and HTTP/1.1 or HTTP/2 on each connection, with what keeps strangers
//! from holding the door: a TLS handshake must finish within [`HANDSHAKE_TIMEOUT`], request
//! headers within [`HEADER_TIMEOUT`], one address holds at most [`Limits::per_source`]
//! connections and the server at most [`Limits::total`] (kept below the process's open-file
//! limit, so SQLite and clients never meet "too many open files"), connections that have not
//! finished their handshake hold at most [`Limits::handshaking`] of those (the rest stays for
//! clients that did; under pressure a handshake gets [`HANDSHAKE_TIMEOUT_UNDER_PRESSURE`]),
//! and a failing `accept` backs off instead of spinning.

use std::collections::{HashMap, VecDeque};
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
/// How long it has once half the handshake slots are taken.
pub const HANDSHAKE_TIMEOUT_UNDER_PRESSURE: Duration = Duration::from_secs(2);
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
    /// Of those, still in their handshake (TLS, or before the first request without TLS).
    pub handshaking: usize,
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
            handshaking: total / 2,
        }
    }
}

/// The soft limit on open files (`/proc/self/limits`), where it can be read.
fn open_file_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Open connections, in all and by address, and those still in their handshake (oldest
/// first, each with the means to end it).
#[derive(Default)]
struct Counts {
    total: usize,
    by_source: HashMap<IpAddr, usize>,
    handshaking: usize,
    pending: HashMap<u64, Arc<tokio::sync::Notify>>,
    order: VecDeque<u64>,
    next: u64,
}

impl Counts {
    /// Ends the oldest connection still in its handshake; false when there is none.
    fn evict_oldest(&mut self) -> bool {
        while let Some(id) = self.order.pop_front() {
            if let Some(end) = self.pending.remove(&id) {
                end.notify_one();
                return true;
            }
        }
        false
    }
}

/// A connection still in its handshake; counted until dropped. `ended` fires when a newer
/// connection needed its place.
struct Handshaking {
    counts: Arc<Mutex<Counts>>,
    id: u64,
    ended: Arc<tokio::sync::Notify>,
}

impl Drop for Handshaking {
    fn drop(&mut self) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.handshaking = c.handshaking.saturating_sub(1);
        c.pending.remove(&self.id);
        // Ids of finished handshakes are dropped from the queue now and then, not one by one.
        if c.order.len() > 2 * c.pending.len() + 64 {
            let Counts { order, pending, .. } = &mut *c;
            order.retain(|id| pending.contains_key(id));
        }
    }
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

/// A slot for a connection from `source`, and its handshake's place, with how long the
/// handshake may take; `None` when the limits are reached. When they are, the oldest
/// connection still in its handshake is ended to make room: whoever holds connections open
/// without completing them cannot keep a client that completes its handshake out.
fn admit(
    counts: &Arc<Mutex<Counts>>,
    limits: Limits,
    source: IpAddr,
) -> Option<(Slot, Handshaking, Duration)> {
    let mut c = counts.lock().unwrap_or_else(|e| e.into_inner());
    let from_source = c.by_source.get(&source).copied().unwrap_or(0);
    if (c.total >= limits.total
        || from_source >= limits.per_source
        || c.handshaking >= limits.handshaking.max(1))
        && !c.evict_oldest()
    {
        return None;
    }
    c.total += 1;
    c.handshaking += 1;
    *c.by_source.entry(source).or_default() += 1;
    let id = c.next;
    c.next += 1;
    let ended = Arc::new(tokio::sync::Notify::new());
    c.pending.insert(id, ended.clone());
    c.order.push_back(id);
    let deadline = if c.handshaking > limits.handshaking / 2 {
        HANDSHAKE_TIMEOUT_UNDER_PRESSURE
    } else {
        HANDSHAKE_TIMEOUT
    };
    Some((
        Slot {
            counts: counts.clone(),
            source,
        },
        Handshaking {
            counts: counts.clone(),
            id,
            ended,
        },
        deadline,
    ))
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
        let Some((slot, handshaking, deadline)) = admit(&counts, limits, peer.ip()) else {
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
            // Without TLS, a connection is in its handshake until its first request.
            let ended = handshaking.ended.clone();
            let pending = Arc::new(Mutex::new(Some(handshaking)));
            // Each request of a connection carries the identity of its verified client
            // certificate, read once per connection.
            let svc = |peer: Option<ClientCertificate>| {
                let pending = pending.clone();
                hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    pending.lock().unwrap_or_else(|e| e.into_inner()).take();
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
                    let tls = tokio::select! {
                        tls = tokio::time::timeout(deadline, acc.accept(tcp)) => tls,
                        _ = ended.notified() => return,
                    };
                    let Ok(Ok(tls)) = tls else {
                        return;
                    };
                    pending.lock().unwrap_or_else(|e| e.into_inner()).take();
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
                    // `ended` fires only while no request has come yet.
                    tokio::select! {
                        _ = conn => {},
                        _ = stop.changed() => {},
                        _ = ended.notified() => {},
                    }
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
            handshaking: 3,
        };
        let a: IpAddr = [10, 0, 0, 1].into();
        let b: IpAddr = [10, 0, 0, 2].into();
        // Connections past their handshake: only their slot is held.
        let done = |source| admit(&counts, limits, source).map(|(slot, _, _)| slot);
        let a1 = done(a).expect("a1");
        let _a2 = done(a).expect("a2");
        assert!(done(a).is_none(), "per source");
        let _b1 = done(b).expect("b1");
        assert!(done(b).is_none(), "in all");
        drop(a1);
        assert!(done(b).is_some(), "a slot came back");
    }

    #[test]
    fn connections_in_their_handshake_leave_room_for_those_done() {
        let counts = Arc::new(Mutex::new(Counts::default()));
        let limits = Limits {
            total: 8,
            per_source: 8,
            handshaking: 4,
        };
        let a: IpAddr = [127, 0, 0, 1].into();
        let idle: Vec<_> = (0..4).map(|_| admit(&counts, limits, a).unwrap()).collect();
        assert_eq!(idle[0].2, HANDSHAKE_TIMEOUT);
        assert_eq!(idle[3].2, HANDSHAKE_TIMEOUT_UNDER_PRESSURE);
        // A fifth ends the oldest handshake to take its place.
        let fifth = admit(&counts, limits, a).expect("room was made");
        let ended = idle[0].1.ended.clone();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(1), ended.notified())
                    .await
                    .expect("the oldest handshake was told to end")
            });
        // Connections past their handshake keep their slot: once every slot is held by one,
        // nothing more is admitted.
        let (slots, handshakes): (Vec<_>, Vec<_>) = std::iter::once(fifth)
            .chain(idle)
            .map(|(s, h, _)| (s, h))
            .unzip();
        drop(handshakes);
        let mut more = Vec::new();
        while let Some((slot, h, _)) = admit(&counts, limits, a) {
            drop(h);
            more.push(slot);
        }
        assert_eq!(slots.len() + more.len(), 8, "{} more", more.len());
    }

    #[test]
    fn the_open_file_limit_is_read_where_it_can_be() {
        if std::path::Path::new("/proc/self/limits").exists() {
            assert!(open_file_limit().is_some_and(|n| n > 0));
        }
        assert!(Limits::from_process().total >= 64);
    }
}
