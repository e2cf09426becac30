//! A store shared by several replicas of one Streamable HTTP server, so that a load balancer
//! may send any request of a session to any replica (issue 12).
//!
//! Without it, a session lives in the memory of the replica that answered `initialize`, and
//! every other replica answers "Session not found". With a [`SharedStore`] (the Redis one:
//! [`connect`], feature `redis`):
//!
//! - **Session records.** After `initialize` the replica writes the negotiated revision, the
//!   client's capabilities and info, and a hash of its `Authorization` header. A replica that
//!   gets a request for a session it does not hold rebuilds an engine from the record. The
//!   record has a sliding TTL (the idle timeout), refreshed by every request; DELETE on one
//!   replica ends the session on all of them.
//! - **The GET stream** lives in the store: a message of the session that no local response
//!   stream carries (notifications unrelated to a request, the server's own requests, and in
//!   JSON-response mode the progress and logs of a request) is appended to the session's
//!   event log, and whichever replica holds the client's GET stream tails that log. The SSE
//!   event id names the log entry and the session, so `Last-Event-ID` resumes on any replica
//!   (a range read, then the live tail), and an id of another session is refused. One
//!   replica at a time holds a session's GET stream, under a lease it renews (`SET NX PX`,
//!   renewed by compare-and-set): a second GET elsewhere gets 409, a client resuming with
//!   `Last-Event-ID` takes the lease over (the old stream ends), and the lease of a replica
//!   that died lapses within seconds.
//! - **The bus.** What a client sends that is not a request (its answers to the server's
//!   sampling, elicitation and roots requests, `notifications/cancelled`,
//!   `notifications/initialized`) is delivered locally and published to every replica; the
//!   engine waiting for it takes it, the others drop it. Outgoing request ids of each engine
//!   start at a random point, so an answer names exactly one waiting engine, and no owner
//!   has to be found or reclaimed for these.
//!
//! - **POST response streams** are served by the replica running the request, and copied
//!   to the store as they go, so a client whose response stream was cut resumes it with
//!   `Last-Event-ID` on any replica (the copy, then the live rest, until the answer).
//!
//! - **Changes** (a list changed, a resource was updated) are published to every replica, which
//!   tells its own `subscriptions/listen` streams and sessions as if the change were local. A
//!   handshake-era session with engines on several replicas may hear a `list_changed` once per
//!   replica: the notification only says "fetch the list again", so that is harmless.
//!
//! Stateless (2026-07-28) requests touch the store only for that fan-out.
//!
//! **Failure behaviour.** When the store is unreachable, a session-bound request gets
//! 503 with `Retry-After` and a message saying so; stateless requests go on. Each store
//! operation is bounded (connection and response timeouts, a few retries); the bus
//! subscriber and the GET-stream tail reconnect with a capped backoff, and a tail that cannot
//! reach the store ends its SSE response so the client resumes with `Last-Event-ID`. An event
//! is acknowledged when the store has it; a replica killed afterwards loses nothing of it.

#[cfg(feature = "redis")]
mod redis;

#[cfg(feature = "redis")]
pub use self::redis::{RedisStore, RedisStoreOptions};

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

/// What a replica needs to serve a session it did not start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The negotiated revision.
    pub protocol_version: String,
    /// `clientInfo` from `initialize`.
    pub client_info: Option<serde_json::Value>,
    /// `capabilities` from `initialize`.
    pub client_capabilities: Option<serde_json::Value>,
    /// SHA-256 (hex) of the `Authorization` header that opened the session, if any: a request
    /// with another one does not find the session.
    pub principal: Option<String>,
}

/// Why the store could not do something.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be reached (or did not answer in time).
    #[error("the session store is unreachable: {0}")]
    Unavailable(String),
    /// A `Last-Event-ID` that is not one of this session's.
    #[error("that event id does not belong to this session")]
    ForeignEvent,
}

/// A message for the replicas that hold a session.
#[derive(Clone, Debug)]
pub struct BusMessage {
    /// The session it is for.
    pub session: String,
    /// What to do with it.
    pub kind: BusKind,
}

/// What a [`BusMessage`] asks for.
#[derive(Clone, Debug)]
pub enum BusKind {
    /// A JSON-RPC message from the client, for the session's engines.
    Frame(Bytes),
    /// The session ended (DELETE on some replica).
    Close,
}

/// One entry of a session's GET-stream log: its SSE event id and its JSON.
#[derive(Clone, Debug)]
pub struct StoredEvent {
    /// Names the entry and the session; a client sends it back as `Last-Event-ID`.
    pub id: String,
    /// One JSON-RPC message.
    pub json: Bytes,
}

/// This replica's hold on a session's GET stream; dropping it gives the stream up.
pub struct GetLease {
    /// Cancelled when another replica took the stream over (or the lease could not be
    /// renewed in time): the stream held here must end.
    pub lost: tokio_util::sync::CancellationToken,
    /// Ends the renewal and gives the lease up, when dropped.
    pub release: Option<tokio_util::sync::DropGuard>,
}

/// A GET stream read from the log: where it starts, then every entry after that, in order.
pub struct Tail {
    /// The event id of the point the stream starts after (for the priming event).
    pub start: String,
    /// The entries; closed when the tail cannot go on (the client then resumes).
    pub events: mpsc::Receiver<StoredEvent>,
}

/// The shared state of a scaled-out server. Methods return quickly or are bounded in time.
pub trait SharedStore: Send + Sync + 'static {
    /// Stores the record of a new session.
    fn save_session(
        &self,
        session: &str,
        record: &SessionRecord,
    ) -> BoxFuture<'static, Result<(), StoreError>>;

    /// The record of `session`, refreshing its TTL; `None` when there is no such session.
    fn touch_session(
        &self,
        session: &str,
    ) -> BoxFuture<'static, Result<Option<SessionRecord>, StoreError>>;

    /// Ends `session` everywhere: its record and log go, and every replica is told.
    fn delete_session(&self, session: &str) -> BoxFuture<'static, Result<(), StoreError>>;

    /// Appends one message to the session's GET-stream log. Called in order on the hot path:
    /// it must not block (the write happens behind, in order).
    fn append_event(&self, session: &str, json: Bytes);

    /// Copies event `seq` of the POST response stream `stream` (`last`: it ends the stream),
    /// in order, without blocking, so the stream can be resumed on another replica.
    fn append_stream_event(&self, session: &str, stream: u64, seq: u64, json: Bytes, last: bool);

    /// The events of POST response stream `stream` after `seq` (ids `<stream>-<seq>`), then
    /// the live ones until the one that ends it; `None` when the session has no such stream.
    fn tail_stream(
        &self,
        session: &str,
        stream: u64,
        seq: u64,
    ) -> BoxFuture<'static, Result<Option<mpsc::Receiver<StoredEvent>>, StoreError>>;

    /// Claims the session's GET stream for this replica: `None` while another replica holds
    /// it, unless `takeover` (a client resuming with `Last-Event-ID` has left the old one,
    /// whose holder may be dead). The lease lives while it is kept and renewed; it is given
    /// up when dropped, and reclaimable once its holder stops renewing it.
    fn claim_get(
        &self,
        session: &str,
        takeover: bool,
    ) -> BoxFuture<'static, Result<Option<GetLease>, StoreError>>;

    /// Reads the session's GET-stream log after `last_event_id` (or from now on).
    fn tail(
        &self,
        session: &str,
        last_event_id: Option<&str>,
    ) -> BoxFuture<'static, Result<Tail, StoreError>>;

    /// Sends a client message to every other replica holding `session`.
    fn publish(&self, session: &str, frame: Bytes) -> BoxFuture<'static, Result<(), StoreError>>;

    /// The messages other replicas publish; the server takes it once, when it starts.
    fn subscribe(&self) -> Option<mpsc::UnboundedReceiver<BusMessage>>;

    /// Tells every other replica that something changed here (a list, or a resource).
    fn publish_change(&self, change: Change) -> BoxFuture<'static, Result<(), StoreError>>;

    /// The changes other replicas publish; the server role takes it once.
    fn subscribe_changes(&self) -> Option<mpsc::UnboundedReceiver<Change>>;

    /// Where the replicas keep their tasks, so any of them serves any task (`None`: each
    /// replica keeps its own).
    fn task_store(&self) -> Option<Arc<dyn crate::task_store::TaskStore>> {
        None
    }
}

/// A change made on one replica that the clients of all of them may be listening for
/// (`subscriptions/listen`, `list_changed`, `resources/updated`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The notification's method (`notifications/tools/list_changed`, …).
    pub method: String,
    /// The resource, for `notifications/resources/updated`.
    pub uri: Option<String>,
}

/// Connects to the store a URL names (`redis://HOST:PORT/` or `rediss://…`), for servers and
/// bindings that take the store as a string.
pub async fn connect(url: &str) -> crate::Result<Arc<dyn SharedStore>> {
    #[cfg(feature = "redis")]
    {
        if url.starts_with("redis://") || url.starts_with("rediss://") {
            let store = RedisStore::connect(url, RedisStoreOptions::default()).await?;
            return Ok(Arc::new(store));
        }
    }
    Err(crate::Error::InvalidArgument(format!(
        "unsupported session store `{url}`: expected redis://HOST:PORT/ (and oxmcp built with \
         the `redis` feature)"
    )))
}

/// The hash a [`SessionRecord`] keeps of an `Authorization` header.
pub(crate) fn principal_of(authorization: Option<&str>) -> Option<String> {
    use sha2::Digest;
    authorization.map(|a| hex(&sha2::Sha256::digest(a.as_bytes())))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
