//! The object store: SQLite (WAL) for durability, an in-memory index for reads, and a bounded
//! event log that feeds watches.
//!
//! One global revision counter is every object's `resourceVersion`. A write is acknowledged only
//! after its SQLite transaction has committed, so acknowledged writes survive `kill -9` (WAL with
//! `synchronous=NORMAL` is durable across process crashes; see `docs/architecture.md`).

use bytes::Bytes;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::{broadcast, watch};

/// Where an object lives: storage resource (`group/plural`), namespace (empty when
/// cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// `group/plural`, for example `apps/deployments` or `/configmaps`.
    pub resource: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl Key {
    /// Builds a key.
    pub fn new(resource: &str, namespace: &str, name: &str) -> Key {
        Key {
            resource: resource.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }
}

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Removed.
    Deleted,
}

impl EventType {
    /// The watch event type string.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as watches see it. Objects are held as their JSON encodings (the log keeps
/// many superseded versions; decoded values would cost several times more) and decoded on
/// demand.
#[derive(Debug)]
pub struct StoreEvent {
    /// The revision of the change.
    pub rv: u64,
    /// What happened.
    pub kind: EventType,
    /// Which object.
    pub key: Key,
    /// The object after the change (for deletions: its last state, stamped with the deletion's
    /// revision), encoded.
    pub json: Bytes,
    /// The object before the change, if it existed, encoded.
    pub prev_json: Option<Bytes>,
    /// What the event holds in memory: the encodings' lengths.
    pub bytes: usize,
}

impl StoreEvent {
    /// The object after the change, decoded.
    pub fn object(&self) -> Arc<Value> {
        decode(&self.json)
    }

    /// The object before the change, decoded.
    pub fn prev(&self) -> Option<Arc<Value>> {
        self.prev_json.as_deref().map(decode)
    }
}

/// A change as the server's own controllers receive it: the event, with its objects decoded
/// when they are small (the writer had them in hand). A large object (a Service's endpoints
/// listing hundreds of Pods) waits in the queue as its encoding only, and each consumer that
/// looks decodes it for the time it needs it: decoded, the queue of a busy namespace held
/// hundreds of MiB. Dereferences to the [`StoreEvent`].
#[derive(Debug)]
pub struct Notice {
    /// The logged event.
    pub event: Arc<StoreEvent>,
    object: Option<Arc<Value>>,
    prev: Option<Arc<Value>>,
}

/// Objects whose encoding is at most this long travel to the server's controllers decoded.
const NOTICE_DECODED_BYTES: usize = 16 << 10;

impl Notice {
    fn new(event: Arc<StoreEvent>, object: Arc<Value>, prev: Option<Arc<Value>>) -> Notice {
        let small = |json: &Bytes| json.len() <= NOTICE_DECODED_BYTES;
        Notice {
            object: small(&event.json).then_some(object),
            prev: prev.filter(|_| event.prev_json.as_ref().is_some_and(small)),
            event,
        }
    }

    /// The object after the change.
    pub fn object(&self) -> Arc<Value> {
        match &self.object {
            Some(o) => o.clone(),
            None => decode(&self.event.json),
        }
    }

    /// The object before the change, if it existed.
    pub fn prev(&self) -> Option<Arc<Value>> {
        match &self.prev {
            Some(p) => Some(p.clone()),
            None => self.event.prev_json.as_deref().map(decode),
        }
    }
}

impl std::ops::Deref for Notice {
    type Target = StoreEvent;
    fn deref(&self) -> &StoreEvent {
        &self.event
    }
}

/// Decodes a stored encoding. The store wrote it from a value, so it always decodes; a
/// failure would be a defect, logged and answered as `null`.
pub(crate) fn decode(json: &[u8]) -> Arc<Value> {
    Arc::new(serde_json::from_slice(json).unwrap_or_else(|e| {
        tracing::error!(error = %e, "a stored object did not decode");
        Value::Null
    }))
}

/// Puts `kind` and `apiVersion` first, in that order, as kube-apiserver writes objects (and so
/// that a reader can tell an encoding's version from its first bytes).
fn type_meta_first(value: Value) -> Value {
    let Value::Object(mut map) = value else {
        return value;
    };
    let mut keys = map.keys();
    if keys.next().map(String::as_str) == Some("kind")
        && keys.next().map(String::as_str) == Some("apiVersion")
    {
        return Value::Object(map);
    }
    let mut out = serde_json::Map::with_capacity(map.len());
    for k in ["kind", "apiVersion"] {
        if let Some(v) = map.remove(k) {
            out.insert(k.into(), v);
        }
    }
    out.extend(map);
    Value::Object(out)
}

/// What a mutation closure asks the store to do.
pub enum Change {
    /// Store this object (create or replace).
    Put(Value),
    /// Remove the object.
    Delete,
    /// Write nothing and keep the current object.
    Keep,
}

/// What a mutation did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The object now stored (`Put`), removed (`Delete`) or unchanged (`Keep`).
    pub object: Option<Arc<Value>>,
    /// Whether anything was written.
    pub written: bool,
    /// Whether the object did not exist before.
    pub created: bool,
}

/// A failure of the store itself (not of the request).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("storage error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Stored data could not be decoded.
    #[error("corrupt stored object {0}: {1}")]
    Corrupt(String, String),
    /// A watch or list asked for history the log no longer holds.
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The revision asked for.
        requested: u64,
        /// The oldest revision still answerable (kube-apiserver prints its watch cache's list
        /// revision here).
        oldest: u64,
    },
    /// A read asked for a revision the store has not reached.
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLarge {
        /// The revision asked for.
        requested: u64,
        /// The store's revision.
        current: u64,
    },
}

/// Objects are kept as their JSON encodings (what was persisted): a decoded `serde_json::Value`
/// takes several times the memory, and reads that answer an object unchanged send the bytes
/// as they are. Readers that need the value decode it.
struct Index {
    objects: BTreeMap<Key, Bytes>,
    by_uid: HashMap<String, Key>,
    dependents: HashMap<String, BTreeSet<Key>>,
    per_namespace: HashMap<String, usize>,
    /// The revision of the last write to each resource written since the store opened.
    written: HashMap<String, u64>,
    rv: u64,
    /// Each resource's history, as kube-apiserver keeps a watch cache per resource: a flood
    /// of changes to one resource (a fleet's EndpointSlices) does not expire the watches of
    /// the others.
    log: HashMap<String, History>,
    /// The events all histories hold.
    log_events: usize,
    /// The sum of the logged events' `bytes`.
    log_bytes: usize,
    /// Where history starts: the floor of a resource with no history of its own yet.
    log_start: u64,
}

/// The logged changes of one resource, oldest first.
#[derive(Default)]
struct History {
    events: VecDeque<Arc<StoreEvent>>,
    bytes: usize,
    /// Every change of the resource at a revision above this one is in `events`.
    floor: u64,
}

impl Index {
    /// The revision above which `resource`'s history is complete.
    fn floor(&self, resource: &str) -> u64 {
        self.log.get(resource).map_or(self.log_start, |h| h.floor)
    }

    /// Drops the oldest events until the log is within `limits`, always from the history that
    /// holds the most (bytes when over the byte budget, else events), so a flood of one
    /// resource pays for itself. Each history keeps its newest event: when the largest holds
    /// only that, trimming stops there rather than emptying the others for it.
    fn trim(&mut self, limits: LogLimits) {
        loop {
            let over_bytes = self.log_bytes > limits.bytes;
            if !over_bytes && self.log_events <= limits.events {
                return;
            }
            let largest = self
                .log
                .values_mut()
                .max_by_key(|h| if over_bytes { h.bytes } else { h.events.len() });
            let Some(history) = largest.filter(|h| h.events.len() > 1) else {
                return;
            };
            let Some(e) = history.events.pop_front() else {
                return;
            };
            history.floor = e.rv;
            history.bytes -= e.bytes;
            self.log_bytes -= e.bytes;
            self.log_events -= 1;
        }
    }
}

/// A resource's current objects and the revision they are at.
pub type Snapshot = (Vec<(Key, Bytes)>, u64);

/// How much history the watch log keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLimits {
    /// At most this many events.
    pub events: usize,
    /// At most this many bytes (the objects' JSON length; see [`StoreEvent::bytes`]).
    pub bytes: usize,
}

impl Default for LogLimits {
    fn default() -> Self {
        LogLimits {
            events: 100_000,
            bytes: 16 << 20,
        }
    }
}

/// Events the broadcast to the server's own controllers buffers; a consumer that falls
/// further behind resynchronises from the index.
const BROADCAST_CAPACITY: usize = 4096;

/// The store. Cheap to share behind an `Arc`.
///
/// Memory is bounded by the objects themselves plus the watch log, which is bounded in events
/// and bytes: watches read the log (they are only told the revision moved on), so a watcher
/// that stops reading pins nothing, and one that falls behind the log is ended (its client
/// resumes, or re-lists on 410 Gone, as after an etcd compaction).
pub struct Store {
    writer: Mutex<Option<Connection>>,
    index: RwLock<Index>,
    events: broadcast::Sender<Arc<Notice>>,
    revision: watch::Sender<u64>,
    limits: LogLimits,
}

fn uid_of(v: &Value) -> Option<&str> {
    v.pointer("/metadata/uid").and_then(Value::as_str)
}

fn owner_uids(v: &Value) -> Vec<String> {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl Index {
    fn unlink(&mut self, key: &Key, old: &Value) {
        if let Some(n) = self.per_namespace.get_mut(&key.namespace) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_namespace.remove(&key.namespace);
            }
        }
        if let Some(uid) = uid_of(old) {
            self.by_uid.remove(uid);
        }
        for owner in owner_uids(old) {
            if let Some(set) = self.dependents.get_mut(&owner) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(&owner);
                }
            }
        }
    }

    fn link(&mut self, key: &Key, new: &Value) {
        *self.per_namespace.entry(key.namespace.clone()).or_default() += 1;
        if let Some(uid) = uid_of(new) {
            self.by_uid.insert(uid.to_string(), key.clone());
        }
        for owner in owner_uids(new) {
            self.dependents
                .entry(owner)
                .or_default()
                .insert(key.clone());
        }
    }
}

fn persist_put(conn: &Connection, key: &Key, rv: u64, data: &str) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    tx.prepare_cached(
        "INSERT OR REPLACE INTO objects (resource, namespace, name, rv, data) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![key.resource, key.namespace, key.name, rv as i64, data])?;
    tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES ('rv', ?1)")?
        .execute(params![rv as i64])?;
    tx.commit()
}

fn persist_delete(conn: &Connection, key: &Key, rv: u64) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    tx.prepare_cached("DELETE FROM objects WHERE resource = ?1 AND namespace = ?2 AND name = ?3")?
        .execute(params![key.resource, key.namespace, key.name])?;
    tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES ('rv', ?1)")?
        .execute(params![rv as i64])?;
    tx.commit()
}

/// Creates `path` empty if missing and makes it (and SQLite's journal files beside it, which
/// take the database's mode) readable by its owner only: the store holds every Secret in clear.
fn private_file(path: &Path) -> std::io::Result<()> {
    let mut open = std::fs::OpenOptions::new();
    open.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.mode(0o600);
    }
    open.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for suffix in ["", "-wal", "-shm"] {
            let p = path.with_file_name(format!(
                "{}{suffix}",
                path.file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("state.db")
            ));
            if p.exists() {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600))?;
            }
        }
    }
    Ok(())
}

impl Store {
    /// Opens (or creates) a store in `dir/state.db`, or an in-memory store when `dir` is `None`.
    pub fn open(dir: Option<&Path>) -> Result<Store, StoreError> {
        let mut index = Index {
            objects: BTreeMap::new(),
            by_uid: HashMap::new(),
            dependents: HashMap::new(),
            per_namespace: HashMap::new(),
            written: HashMap::new(),
            rv: 0,
            log: HashMap::new(),
            log_events: 0,
            log_bytes: 0,
            log_start: 0,
        };
        let conn = match dir {
            None => None,
            Some(dir) => {
                let path = dir.join("state.db");
                private_file(&path)
                    .map_err(|e| StoreError::Corrupt(path.display().to_string(), e.to_string()))?;
                let conn = Connection::open(&path)?;
                conn.pragma_update(None, "journal_mode", "WAL")?;
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                conn.execute_batch(
                    "CREATE TABLE IF NOT EXISTS objects (
                        resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
                        rv INTEGER NOT NULL, data TEXT NOT NULL,
                        PRIMARY KEY (resource, namespace, name));
                     CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);",
                )?;
                let rv: Option<i64> = conn
                    .query_row("SELECT value FROM meta WHERE key = 'rv'", [], |r| r.get(0))
                    .optional()?;
                index.rv = rv.unwrap_or(0) as u64;
                {
                    let mut stmt =
                        conn.prepare("SELECT resource, namespace, name, data FROM objects")?;
                    let rows = stmt.query_map([], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, String>(3)?,
                        ))
                    })?;
                    for row in rows {
                        let (resource, namespace, name, data) = row?;
                        let key = Key {
                            resource,
                            namespace,
                            name,
                        };
                        let value: Value = serde_json::from_str(&data).map_err(|e| {
                            StoreError::Corrupt(
                                format!("{}/{}/{}", key.resource, key.namespace, key.name),
                                e.to_string(),
                            )
                        })?;
                        index.link(&key, &value);
                        index.objects.insert(key, Bytes::from(data));
                    }
                }
                Some(conn)
            }
        };
        index.log_start = index.rv;
        let (events, _) = broadcast::channel(BROADCAST_CAPACITY);
        let (revision, _) = watch::channel(index.rv);
        Ok(Store {
            writer: Mutex::new(conn),
            index: RwLock::new(index),
            events,
            revision,
            limits: LogLimits::default(),
        })
    }

    /// Sets how much history the watch log keeps (older revisions answer 410 Gone).
    pub fn with_log_limits(mut self, limits: LogLimits) -> Store {
        self.limits = LogLimits {
            events: limits.events.max(1),
            bytes: limits.bytes,
        };
        self
    }

    /// The events and bytes the watch log holds now.
    pub fn log_usage(&self) -> (usize, usize) {
        let idx = self.read();
        (idx.log_events, idx.log_bytes)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        // A poisoned lock means a panic while holding it; the index itself is only changed
        // after a successful commit, so its contents are still consistent.
        self.index.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The current revision.
    pub fn revision(&self) -> u64 {
        self.read().rv
    }

    /// The revision of the last write to any of `resources` since the store opened (0 when
    /// none was written): it changes exactly when one of them did.
    pub fn last_written(&self, resources: &[&str]) -> u64 {
        let idx = self.read();
        resources
            .iter()
            .filter_map(|r| idx.written.get(*r))
            .max()
            .copied()
            .unwrap_or(0)
    }

    /// One object.
    pub fn get(&self, key: &Key) -> Option<Arc<Value>> {
        self.get_json(key).as_deref().map(decode)
    }

    /// The JSON encoding of the object at `key`.
    pub fn get_json(&self, key: &Key) -> Option<Bytes> {
        self.read().objects.get(key).cloned()
    }

    /// The key of the object with this uid, if it exists.
    pub fn key_of_uid(&self, uid: &str) -> Option<Key> {
        self.read().by_uid.get(uid).cloned()
    }

    /// Keys of objects whose ownerReferences name this uid.
    pub fn dependents_of(&self, uid: &str) -> Vec<Key> {
        self.read()
            .dependents
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Objects of one resource, in one namespace or (namespace `None`) all, in key order,
    /// starting after `after` (a name-qualified key) when given; with the current revision.
    pub fn list(
        &self,
        resource: &str,
        namespace: Option<&str>,
        after: Option<&Key>,
    ) -> (Vec<(Key, Arc<Value>)>, u64) {
        let mut encoded = Vec::new();
        let rv = self.visit(resource, namespace, after, |k, json| {
            encoded.push((k.clone(), json.clone()));
            true
        });
        let items = encoded.into_iter().map(|(k, j)| (k, decode(&j))).collect();
        (items, rv)
    }

    /// Visits the objects [`Store::list`] would return, with their JSON encodings, under the
    /// index's read lock (no copies); `visit` returns false to stop. Returns the revision.
    pub fn visit(
        &self,
        resource: &str,
        namespace: Option<&str>,
        after: Option<&Key>,
        mut visit: impl FnMut(&Key, &Bytes) -> bool,
    ) -> u64 {
        let idx = self.read();
        let start = match after {
            Some(k) => std::ops::Bound::Excluded(k.clone()),
            None => std::ops::Bound::Included(Key::new(resource, namespace.unwrap_or(""), "")),
        };
        for (k, s) in idx.objects.range((start, std::ops::Bound::Unbounded)) {
            if k.resource != resource || namespace.is_some_and(|ns| k.namespace != ns) {
                break;
            }
            if !visit(k, s) {
                break;
            }
        }
        idx.rv
    }

    /// As [`visit`](Store::visit), but the objects as they were at revision `at` (kube-apiserver's
    /// `resourceVersionMatch=Exact` and the pages after a continue token): the current objects
    /// with every change logged after `at` undone. `Expired` when the log no longer reaches back
    /// to `at`; `TooLarge` when `at` is ahead of the store. Returns `at`.
    pub fn visit_at(
        &self,
        resource: &str,
        namespace: Option<&str>,
        after: Option<&Key>,
        at: u64,
        mut visit: impl FnMut(&Key, &Bytes) -> bool,
    ) -> Result<u64, StoreError> {
        let idx = self.read();
        if at > idx.rv {
            return Err(StoreError::TooLarge {
                requested: at,
                current: idx.rv,
            });
        }
        let floor = idx.floor(resource);
        if at < floor {
            return Err(StoreError::Expired {
                requested: at,
                oldest: floor,
            });
        }
        let in_scope = |k: &Key| {
            k.resource == resource
                && namespace.is_none_or(|ns| k.namespace == ns)
                && after.is_none_or(|a| k > a)
        };
        // The state at `at` of every object changed since: what the first later change found.
        let mut then: BTreeMap<&Key, Option<&Bytes>> = BTreeMap::new();
        if let Some(history) = idx.log.get(resource) {
            let first = history.events.partition_point(|e| e.rv <= at);
            for e in history.events.range(first..) {
                if in_scope(&e.key) {
                    then.entry(&e.key).or_insert(e.prev_json.as_ref());
                }
            }
        }
        let start = match after {
            Some(k) => std::ops::Bound::Excluded(k.clone()),
            None => std::ops::Bound::Included(Key::new(resource, namespace.unwrap_or(""), "")),
        };
        let mut now = idx
            .objects
            .range((start, std::ops::Bound::Unbounded))
            .take_while(|(k, _)| {
                k.resource == resource && namespace.is_none_or(|ns| k.namespace == ns)
            })
            .filter(|(k, _)| !then.contains_key(k))
            .peekable();
        let mut old = then
            .iter()
            .filter_map(|(k, v)| v.map(|v| (*k, v)))
            .peekable();
        // Both are in key order: merge them.
        loop {
            let take_now = match (now.peek(), old.peek()) {
                (Some((a, _)), Some((b, _))) => *a < *b,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (k, v) = if take_now { now.next() } else { old.next() }
                .unwrap_or_else(|| unreachable!("peeked"));
            if !visit(k, v) {
                break;
            }
        }
        Ok(at)
    }

    /// Number of objects of a resource (all namespaces).
    pub fn count(&self, resource: &str) -> usize {
        self.read()
            .objects
            .range(Key::new(resource, "", "")..)
            .take_while(|(k, _)| k.resource == resource)
            .count()
    }

    /// Atomically reads the object at `key`, lets `decide` choose a change, and commits it.
    /// `decide` runs with the store's write lock held: it sees the latest state.
    pub fn mutate<E: From<StoreError>>(
        &self,
        key: &Key,
        decide: impl FnOnce(Option<&Arc<Value>>) -> Result<Change, E>,
    ) -> Result<Outcome, E> {
        let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let current_json = self.get_json(key);
        let current = current_json.as_deref().map(decode);
        let change = decide(current.as_ref())?;
        let rv = self.read().rv + 1;
        match change {
            Change::Keep => Ok(Outcome {
                object: current,
                written: false,
                created: false,
            }),
            Change::Put(value) => {
                let mut value = type_meta_first(value);
                if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
                }
                let text = value.to_string();
                if let Some(conn) = writer.as_ref() {
                    persist_put(conn, key, rv, &text).map_err(StoreError::from)?;
                }
                let value = Arc::new(value);
                let created = current.is_none();
                self.publish(
                    key,
                    rv,
                    if created {
                        EventType::Added
                    } else {
                        EventType::Modified
                    },
                    (value.clone(), Bytes::from(text)),
                    current.zip(current_json),
                );
                Ok(Outcome {
                    object: Some(value),
                    written: true,
                    created,
                })
            }
            Change::Delete => {
                let Some(old) = current else {
                    return Ok(Outcome {
                        object: None,
                        written: false,
                        created: false,
                    });
                };
                if let Some(conn) = writer.as_ref() {
                    persist_delete(conn, key, rv).map_err(StoreError::from)?;
                }
                let mut last = (*old).clone();
                if let Some(meta) = last.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
                }
                let text = last.to_string();
                let last = Arc::new(last);
                let prev = current_json.map(|j| (old, j));
                self.publish(
                    key,
                    rv,
                    EventType::Deleted,
                    (last.clone(), Bytes::from(text)),
                    prev,
                );
                Ok(Outcome {
                    object: Some(last),
                    written: true,
                    created: false,
                })
            }
        }
    }

    /// Commits a change to the index and the log: `new` and `prev` are each an object with its
    /// encoding.
    fn publish(
        &self,
        key: &Key,
        rv: u64,
        kind: EventType,
        new: (Arc<Value>, Bytes),
        prev: Option<(Arc<Value>, Bytes)>,
    ) {
        let (object, json) = new;
        let (prev, prev_json) = prev.unzip();
        let mut idx = self.index.write().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = &prev {
            idx.unlink(key, old);
        }
        if kind == EventType::Deleted {
            idx.objects.remove(key);
        } else {
            idx.link(key, &object);
            idx.objects.insert(key.clone(), json.clone());
        }
        idx.rv = rv;
        match idx.written.get_mut(&key.resource) {
            Some(at) => *at = rv,
            None => {
                idx.written.insert(key.resource.clone(), rv);
            }
        }
        let bytes = json.len() + prev_json.as_ref().map_or(0, Bytes::len);
        let event = Arc::new(StoreEvent {
            rv,
            kind,
            key: key.clone(),
            json,
            prev_json,
            bytes,
        });
        let start = idx.log_start;
        let history = idx
            .log
            .entry(key.resource.clone())
            .or_insert_with(|| History {
                floor: start,
                ..History::default()
            });
        history.events.push_back(event.clone());
        history.bytes += bytes;
        idx.log_bytes += bytes;
        idx.log_events += 1;
        idx.trim(self.limits);
        // Sent while the index lock is held, so a consumer that subscribes under the read lock
        // sees each event exactly once: either in the index it reads or from the channel.
        let _ = self.events.send(Arc::new(Notice::new(event, object, prev)));
        self.revision.send_replace(rv);
    }

    /// The logged events of `resource` after revision `from`, oldest first, at most `limit` of
    /// them, and the revision the reader has then seen everything of `resource` up to: the
    /// store's revision when nothing is left, else the last event's. Fails with `Expired` when
    /// the resource's history no longer reaches back to `from`.
    pub fn events_after(
        &self,
        resource: &str,
        from: u64,
        limit: usize,
    ) -> Result<(Vec<Arc<StoreEvent>>, u64), StoreError> {
        let idx = self.read();
        let floor = idx.floor(resource);
        if from < floor {
            return Err(StoreError::Expired {
                requested: from,
                oldest: floor,
            });
        }
        let Some(history) = idx.log.get(resource) else {
            return Ok((Vec::new(), idx.rv.max(from)));
        };
        let first = history.events.partition_point(|e| e.rv <= from);
        let events: Vec<_> = history.events.range(first..).take(limit).cloned().collect();
        let seen = if first + events.len() == history.events.len() {
            idx.rv.max(from)
        } else {
            events.last().map_or(from, |e| e.rv)
        };
        Ok((events, seen))
    }

    /// Forgets the history logged so far: watches and reads at revisions up to now answer
    /// 410 Expired from here on. The server calls it when it starts serving, after writing its
    /// bootstrap objects, as kube-apiserver's watch cache begins at the revision it was
    /// initialised with.
    pub fn start_history(&self) {
        let mut idx = self.index.write().unwrap_or_else(|e| e.into_inner());
        idx.log_start = idx.rv;
        idx.log.clear();
        idx.log_events = 0;
        idx.log_bytes = 0;
    }

    /// Tells when the revision moves on: watches wait on it, then read
    /// [`events_after`](Store::events_after). Take it before reading what a watch starts from.
    pub fn revision_changes(&self) -> watch::Receiver<u64> {
        self.revision.subscribe()
    }

    /// A snapshot of one resource's objects and the revision it is at: the start of watches
    /// that begin with the current state.
    pub fn snapshot(&self, resource: &str, namespace: Option<&str>) -> Snapshot {
        let idx = self.read();
        let items = idx
            .objects
            .range(Key::new(resource, namespace.unwrap_or(""), "")..)
            .take_while(|(k, _)| {
                k.resource == resource && namespace.is_none_or(|ns| k.namespace == ns)
            })
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        (items, idx.rv)
    }

    /// A receiver for every change from now on (for the server's own controllers).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Notice>> {
        self.events.subscribe()
    }

    /// How many objects live in a namespace.
    pub fn namespace_count(&self, namespace: &str) -> usize {
        self.read()
            .per_namespace
            .get(namespace)
            .copied()
            .unwrap_or(0)
    }

    /// All keys of a namespace's objects, across resources (for namespace deletion).
    pub fn keys_in_namespace(&self, namespace: &str) -> Vec<Key> {
        self.read()
            .objects
            .keys()
            .filter(|k| k.namespace == namespace)
            .cloned()
            .collect()
    }

    /// All keys of one resource (for CRD deletion).
    pub fn keys_of_resource(&self, resource: &str) -> Vec<Key> {
        self.read()
            .objects
            .range(Key::new(resource, "", "")..)
            .take_while(|(k, _)| k.resource == resource)
            .map(|(k, _)| k.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CM: &str = "/configmaps";

    fn put(store: &Store, name: &str, data: &str) -> Outcome {
        store
            .mutate::<StoreError>(&Key::new("/configmaps", "default", name), |_| {
                Ok(Change::Put(
                    json!({"metadata": {"name": name}, "data": {"k": data}}),
                ))
            })
            .expect("put")
    }

    #[test]
    fn revisions_grow_and_persist() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let store = Store::open(Some(dir.path())).expect("open");
            assert!(put(&store, "a", "1").created);
            assert!(!put(&store, "a", "2").created);
            put(&store, "b", "1");
            store
                .mutate::<StoreError>(&Key::new("/configmaps", "default", "b"), |_| {
                    Ok(Change::Delete)
                })
                .expect("delete");
            assert_eq!(store.revision(), 4);
        }
        let store = Store::open(Some(dir.path())).expect("reopen");
        assert_eq!(store.revision(), 4);
        let a = store
            .get(&Key::new("/configmaps", "default", "a"))
            .expect("a survives");
        assert_eq!(a["metadata"]["resourceVersion"], "2");
        assert_eq!(a["data"]["k"], "2");
        assert!(
            store
                .get(&Key::new("/configmaps", "default", "b"))
                .is_none()
        );
    }

    #[test]
    fn watch_reads_the_log_after_a_revision() {
        let store = Store::open(None).expect("open");
        let mut changes = store.revision_changes();
        put(&store, "a", "1");
        put(&store, "b", "1");
        let backlog = store.events_after(CM, 1, usize::MAX).expect("watch").0;
        assert_eq!(backlog.len(), 1);
        assert_eq!(backlog[0].key.name, "b");
        assert!(changes.has_changed().expect("open"));
        changes.borrow_and_update();
        put(&store, "c", "1");
        assert_eq!(*changes.borrow_and_update(), 3);
        let e = store.events_after(CM, 2, usize::MAX).expect("log").0;
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].rv, 3);
        assert_eq!(e[0].kind, EventType::Added);
        assert!(
            store
                .events_after(CM, 3, usize::MAX)
                .expect("log")
                .0
                .is_empty()
        );
    }

    #[test]
    fn expired_history_is_reported() {
        let store = Store::open(None).expect("open").with_log_limits(LogLimits {
            events: 2,
            bytes: 1 << 20,
        });
        for i in 0..5 {
            put(&store, &format!("o{i}"), "x");
        }
        assert!(matches!(
            store.events_after(CM, 1, usize::MAX),
            Err(StoreError::Expired { requested: 1, .. })
        ));
        assert!(store.events_after(CM, 3, usize::MAX).is_ok());
    }

    #[test]
    fn history_is_bounded_by_bytes() {
        // 200 rewrites of a 1 MiB object: the log keeps what fits in 8 MiB, not 200 MiB.
        let limit = 8 << 20;
        let store = Store::open(None).expect("open").with_log_limits(LogLimits {
            events: 100_000,
            bytes: limit,
        });
        let big = "x".repeat(1 << 20);
        for _ in 0..200 {
            put(&store, "big", &big);
        }
        let (events, bytes) = store.log_usage();
        assert!(bytes <= limit, "{bytes} bytes in the log");
        assert!((3..10).contains(&events), "{events} events in the log");
        assert!(matches!(
            store.events_after(CM, 100, usize::MAX),
            Err(StoreError::Expired { .. })
        ));
        assert_eq!(
            store
                .events_after(CM, 199, usize::MAX)
                .expect("recent")
                .0
                .len(),
            1
        );
        // One object larger than the whole budget is still logged (the newest event stays).
        let huge = "y".repeat(9 << 20);
        put(&store, "big", &huge);
        assert_eq!(store.log_usage().0, 1);
        assert_eq!(
            store
                .events_after(CM, 200, usize::MAX)
                .expect("newest")
                .0
                .len(),
            1
        );
    }

    #[test]
    fn a_flood_of_one_resource_does_not_expire_the_history_of_others() {
        let store = Store::open(None).expect("open").with_log_limits(LogLimits {
            events: 100_000,
            bytes: 64 << 10,
        });
        let deployment = Key::new("apps/deployments", "bench", "k1-podinfo");
        let write_deployment = |replicas: u64| {
            store
                .mutate::<StoreError>(&deployment, |_| {
                    Ok(Change::Put(json!({"metadata": {"name": "k1-podinfo"},
                        "status": {"readyReplicas": replicas}})))
                })
                .expect("deployment")
        };
        write_deployment(0);
        let watched_from = store.revision();
        write_deployment(1);
        // Large, frequent rewrites of another resource: far more than the whole budget.
        let slice = "x".repeat(16 << 10);
        for i in 0..200 {
            put(&store, &format!("slice-{}", i % 7), &slice);
        }
        let (events, seen) = store
            .events_after("apps/deployments", watched_from, usize::MAX)
            .expect("the deployments' history still reaches back");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].object()["status"]["readyReplicas"], json!(1));
        // Caught up: everything of the resource up to the store's revision has been seen.
        assert_eq!(seen, store.revision());
        // The flooded resource paid for its own flood, and the budget held.
        assert!(matches!(
            store.events_after(CM, watched_from, usize::MAX),
            Err(StoreError::Expired { .. })
        ));
        let (_, bytes) = store.log_usage();
        assert!(
            bytes <= (64 << 10) + 2 * (16 << 10) + 1024,
            "{bytes} bytes logged"
        );
        // A page read at a revision of the quiet resource's history is still served.
        let mut names = Vec::new();
        store
            .visit_at("apps/deployments", None, None, watched_from, |k, json| {
                names.push((
                    k.name.clone(),
                    decode(json)["status"]["readyReplicas"].clone(),
                ));
                true
            })
            .expect("at a revision");
        assert_eq!(names, vec![("k1-podinfo".to_string(), json!(0))]);
        // One event larger than the whole budget stays alone, and takes nobody's history.
        put(&store, "huge", &"y".repeat(128 << 10));
        let (events, _) = store
            .events_after("apps/deployments", watched_from, usize::MAX)
            .expect("still reaches back");
        assert_eq!(events.len(), 1);
    }
}
