//! The [`SharedStore`] on Redis (feature `redis`): session records as strings with a sliding
//! TTL, each session's GET-stream log as a Redis Stream (trimmed with `MAXLEN ~`), and the
//! bus as one pub/sub channel.
//!
//! Keys, under a prefix (default `oxmcp:`): `session:<id>` (JSON record), `events:<id>`
//! (stream; field `m` is the message), and the tasks' `task:<id>` (hash),
//! `task-running:<scope>` (counter) and `task-list:<scope>` (sorted set). Channel: `bus`.
//!
//! Commands go through one `ConnectionManager` (multiplexed, reconnects on the next command
//! after a failure) with connection and response timeouts and a few retries, so a request
//! never waits long on a dead Redis. A GET-stream tail blocks in `XREAD`, so each one has a
//! connection of its own.

// The store and its commands are here; the loops that run beside it (the stream writer, the
// tails, GET-stream lease renewal, the bus listener) are in `loops`, and the MCP tasks of the
// replicas in `task_store`.
mod loops;
mod task_store;

use std::{io, sync::Arc, time::Duration};

use bytes::Bytes;
use futures::future::BoxFuture;
use redis::{
    Client,
    aio::{ConnectionManager, ConnectionManagerConfig},
    streams::StreamRangeReply,
};
use sha2::Digest;
use tokio::sync::mpsc;

use super::{
    BusMessage, Change, GetLease, SessionRecord, SharedStore, StoreError, StoredEvent, Tail, hex,
};
use crate::{Error, sync::Mutex};
use loops::{Follow, Write, bus_payload, follow_log, keep_lease, listen, reader, write_events};

/// Settings of a [`RedisStore`].
#[derive(Clone, Debug)]
pub struct RedisStoreOptions {
    /// Prepended to every key and channel, so several servers can share one Redis.
    pub prefix: String,
    /// How long a session record lives without a request (match the server's idle timeout).
    pub session_ttl: Duration,
    /// About how many entries each GET-stream log keeps (`XADD MAXLEN ~`).
    pub events_per_stream: usize,
    /// How long one command may take before it fails (and the request gets 503).
    pub response_timeout: Duration,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// Retries of a command whose connection broke, before giving up.
    pub retries: usize,
    /// How long a replica's hold on a GET stream lasts unless renewed (renewed every third
    /// of it): how soon another replica may serve the stream after the holder dies.
    pub get_lease: Duration,
}

impl Default for RedisStoreOptions {
    fn default() -> Self {
        RedisStoreOptions {
            prefix: "oxmcp:".into(),
            session_ttl: Duration::from_secs(30 * 60),
            events_per_stream: 1000,
            response_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(2),
            retries: 2,
            get_lease: Duration::from_secs(5),
        }
    }
}

/// A [`SharedStore`] on Redis.
pub struct RedisStore {
    client: Client,
    conn: ConnectionManager,
    options: Arc<RedisStoreOptions>,
    /// This process, so it skips what it published itself.
    replica: String,
    writer: mpsc::UnboundedSender<Write>,
    bus: Mutex<Option<mpsc::UnboundedReceiver<BusMessage>>>,
    changes: Mutex<Option<mpsc::UnboundedReceiver<Change>>>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("replica", &self.replica)
            .field("prefix", &self.options.prefix)
            .finish_non_exhaustive()
    }
}

fn unavailable(e: redis::RedisError) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// Runs a command, again (a bounded number of times, briefly apart) when the connection was
/// lost: the first commands after Redis comes back find the old connection broken while the
/// manager reconnects, and the client should not pay for that with a 503.
async fn query<T: redis::FromRedisValue>(
    conn: &mut ConnectionManager,
    command: &redis::Cmd,
    retries: usize,
) -> Result<T, StoreError> {
    let mut attempt = 0;
    loop {
        match command.query_async(conn).await {
            Err(e)
                if attempt < retries
                    && (e.is_connection_dropped()
                        || e.is_io_error()
                        || e.is_connection_refusal()) =>
            {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
            }
            other => return other.map_err(unavailable),
        }
    }
}

/// `url` with any password replaced by `***`, for messages and logs.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            format!("{scheme}://{user}:***@{host}{path}")
        }
        None => url.to_owned(),
    }
}

impl RedisStore {
    /// Connects to the Redis a URL names (`redis://HOST:PORT/DB`, `rediss://` for TLS) and
    /// starts the bus subscriber and the log writer.
    pub async fn connect(url: &str, options: RedisStoreOptions) -> crate::Result<RedisStore> {
        // Messages name the URL without its password (`redis://user:secret@host`).
        let shown = redacted(url);
        let client = Client::open(url)
            .map_err(|e| Error::InvalidArgument(format!("bad Redis URL `{shown}`: {e}")))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.connect_timeout))
            .set_response_timeout(Some(options.response_timeout))
            .set_number_of_retries(options.retries)
            .set_max_delay(Duration::from_millis(500));
        let conn = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|e| {
                Error::Io(Arc::new(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    format!("cannot reach Redis at {shown}: {e}"),
                )))
            })?;
        let options = Arc::new(options);
        let replica = crate::random::id128();
        let (writer, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_events(conn.clone(), options.clone(), queue));
        let (bus_tx, bus_rx) = mpsc::unbounded_channel();
        let (changes_tx, changes_rx) = mpsc::unbounded_channel();
        tokio::spawn(listen(
            client.clone(),
            options.clone(),
            replica.clone(),
            bus_tx,
            changes_tx,
        ));
        Ok(RedisStore {
            client,
            conn,
            options,
            replica,
            writer,
            bus: Mutex::new(Some(bus_rx)),
            changes: Mutex::new(Some(changes_rx)),
        })
    }

    fn key(&self, kind: &str, session: &str) -> String {
        format!("{}{kind}:{session}", self.options.prefix)
    }
}

/// The SSE event id of log entry `entry` of `session`: a tag of the session, then the entry.
fn event_id(session: &str, entry: &str) -> String {
    format!("{}:{entry}", session_tag(session))
}

fn session_tag(session: &str) -> String {
    hex(&sha2::Sha256::digest(session.as_bytes())[..8])
}

/// The log entry a `Last-Event-ID` names, if it is one of `session`'s.
fn entry_of(session: &str, last_event_id: &str) -> Result<String, StoreError> {
    let (tag, entry) = last_event_id
        .trim()
        .split_once(':')
        .ok_or(StoreError::ForeignEvent)?;
    let (ms, seq) = entry.split_once('-').ok_or(StoreError::ForeignEvent)?;
    if tag != session_tag(session) || ms.parse::<u64>().is_err() || seq.parse::<u64>().is_err() {
        return Err(StoreError::ForeignEvent);
    }
    Ok(entry.to_owned())
}

impl SharedStore for RedisStore {
    fn save_session(
        &self,
        session: &str,
        record: &SessionRecord,
    ) -> BoxFuture<'static, Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        let retries = self.options.retries;
        let key = self.key("session", session);
        let ttl = self.options.session_ttl.as_millis() as u64;
        let json = serde_json::to_string(record).unwrap_or_default();
        Box::pin(async move {
            let mut command = redis::cmd("SET");
            command.arg(&key).arg(json).arg("PX").arg(ttl);
            query::<()>(&mut conn, &command, retries).await
        })
    }

    fn touch_session(
        &self,
        session: &str,
    ) -> BoxFuture<'static, Result<Option<SessionRecord>, StoreError>> {
        let mut conn = self.conn.clone();
        let retries = self.options.retries;
        let key = self.key("session", session);
        let ttl = self.options.session_ttl.as_millis() as u64;
        Box::pin(async move {
            let mut command = redis::cmd("GETEX");
            command.arg(&key).arg("PX").arg(ttl);
            let json: Option<String> = query(&mut conn, &command, retries).await?;
            // A record that does not parse (another version wrote it, say) is no session.
            Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
        })
    }

    fn delete_session(&self, session: &str) -> BoxFuture<'static, Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        let keys = [self.key("session", session), self.key("events", session)];
        let channel = format!("{}bus", self.options.prefix);
        let note = bus_payload(&self.replica, session, "close", None);
        Box::pin(async move {
            redis::pipe()
                .atomic()
                .del(&keys)
                .ignore()
                .publish(&channel, note)
                .ignore()
                .query_async::<()>(&mut conn)
                .await
                .map_err(unavailable)
        })
    }

    fn append_event(&self, session: &str, json: Bytes) {
        let write = Write {
            key: self.key("events", session),
            seq: None,
            json,
        };
        if self.writer.send(write).is_err() {
            tracing::warn!(target: "oxmcp::http", "the event writer has stopped; an event was dropped");
        }
    }

    fn append_stream_event(&self, session: &str, stream: u64, seq: u64, json: Bytes, last: bool) {
        let write = Write {
            key: format!("{}:{stream}", self.key("events", session)),
            seq: Some((seq, last)),
            json,
        };
        if self.writer.send(write).is_err() {
            tracing::warn!(target: "oxmcp::http", "the event writer has stopped; an event was dropped");
        }
    }

    fn tail_stream(
        &self,
        session: &str,
        stream: u64,
        seq: u64,
    ) -> BoxFuture<'static, Result<Option<mpsc::Receiver<StoredEvent>>, StoreError>> {
        let client = self.client.clone();
        let mut conn = self.conn.clone();
        let options = self.options.clone();
        let retries = options.retries;
        let key = format!("{}:{stream}", self.key("events", session));
        Box::pin(async move {
            // The stream's opening mark is written behind, at most moments before a client
            // can know the stream's id: look again briefly before calling it unknown.
            let mut command = redis::cmd("EXISTS");
            command.arg(&key);
            let mut looks = 0;
            while !query::<bool>(&mut conn, &command, retries).await? {
                looks += 1;
                if looks > 3 {
                    return Ok(None);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let reader = reader(&client, &options).await.map_err(unavailable)?;
            let (tx, events) = mpsc::channel(256);
            let follow = Follow::Stream { stream, after: seq };
            tokio::spawn(follow_log(
                client,
                options,
                reader,
                key,
                follow,
                "0-0".into(),
                tx,
            ));
            Ok(Some(events))
        })
    }

    fn claim_get(
        &self,
        session: &str,
        takeover: bool,
    ) -> BoxFuture<'static, Result<Option<GetLease>, StoreError>> {
        let mut conn = self.conn.clone();
        let retries = self.options.retries;
        let key = self.key("get", session);
        let ttl = self.options.get_lease;
        let holder = crate::random::id128();
        Box::pin(async move {
            let mut command = redis::cmd("SET");
            command
                .arg(&key)
                .arg(&holder)
                .arg("PX")
                .arg(ttl.as_millis() as u64);
            if !takeover {
                command.arg("NX");
            }
            let set: Option<String> = query(&mut conn, &command, retries).await?;
            if set.is_none() {
                return Ok(None);
            }
            let lost = tokio_util::sync::CancellationToken::new();
            let stop = tokio_util::sync::CancellationToken::new();
            tokio::spawn(keep_lease(
                conn,
                key,
                holder,
                ttl,
                lost.clone(),
                stop.clone(),
            ));
            Ok(Some(GetLease {
                lost,
                release: Some(stop.drop_guard()),
            }))
        })
    }

    fn tail(
        &self,
        session: &str,
        last_event_id: Option<&str>,
    ) -> BoxFuture<'static, Result<Tail, StoreError>> {
        let after = last_event_id.map(|id| entry_of(session, id));
        let client = self.client.clone();
        let mut conn = self.conn.clone();
        let options = self.options.clone();
        let retries = options.retries;
        let key = self.key("events", session);
        let session = session.to_owned();
        Box::pin(async move {
            let after = match after {
                Some(entry) => entry?,
                // From now on: the newest entry so far (or the very start).
                None => {
                    let mut command = redis::cmd("XREVRANGE");
                    command.arg(&key).arg("+").arg("-").arg("COUNT").arg(1);
                    let newest: StreamRangeReply = query(&mut conn, &command, retries).await?;
                    newest
                        .ids
                        .first()
                        .map_or_else(|| "0-0".to_owned(), |e| e.id.clone())
                }
            };
            let reader = reader(&client, &options).await.map_err(unavailable)?;
            let (tx, events) = mpsc::channel(256);
            let start = event_id(&session, &after);
            let follow = Follow::Log { session };
            tokio::spawn(follow_log(client, options, reader, key, follow, after, tx));
            Ok(Tail { start, events })
        })
    }

    fn publish(&self, session: &str, frame: Bytes) -> BoxFuture<'static, Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        let retries = self.options.retries;
        let channel = format!("{}bus", self.options.prefix);
        let payload = bus_payload(&self.replica, session, "frame", Some(&frame));
        Box::pin(async move {
            let mut command = redis::cmd("PUBLISH");
            command.arg(&channel).arg(payload);
            query::<()>(&mut conn, &command, retries).await
        })
    }

    fn subscribe(&self) -> Option<mpsc::UnboundedReceiver<BusMessage>> {
        self.bus.lock().take()
    }

    fn publish_change(&self, change: Change) -> BoxFuture<'static, Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        let retries = self.options.retries;
        let channel = format!("{}bus", self.options.prefix);
        let payload = serde_json::json!({
            "from": self.replica, "s": "", "k": "change", "m": change.method, "u": change.uri
        })
        .to_string();
        Box::pin(async move {
            let mut command = redis::cmd("PUBLISH");
            command.arg(&channel).arg(payload);
            query::<()>(&mut conn, &command, retries).await
        })
    }

    fn subscribe_changes(&self) -> Option<mpsc::UnboundedReceiver<Change>> {
        self.changes.lock().take()
    }

    fn task_store(&self) -> Option<Arc<dyn crate::task_store::TaskStore>> {
        Some(Arc::new(task_store::RedisTaskStore::new(
            self.conn.clone(),
            self.options.prefix.clone(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_messages_never_show_a_password() {
        for (url, shown) in [
            (
                "redis://:s3cret@10.0.0.1:6379/0",
                "redis://:***@10.0.0.1:6379/0",
            ),
            ("rediss://ada:s3cret@cache/1", "rediss://ada:***@cache/1"),
            ("redis://s3cret@cache", "redis://s3cret:***@cache"),
            ("redis://a:b@c@host/", "redis://a:***@host/"),
            ("redis://127.0.0.1:6379/", "redis://127.0.0.1:6379/"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redacted(url), shown);
        }
    }

    #[tokio::test]
    async fn an_unreachable_redis_is_named_without_its_password() {
        let options = RedisStoreOptions {
            connect_timeout: Duration::from_millis(300),
            retries: 0,
            ..RedisStoreOptions::default()
        };
        let Err(err) = RedisStore::connect("redis://:hunter2@127.0.0.1:1/", options).await else {
            panic!("nothing listens on port 1");
        };
        let text = err.to_string();
        assert!(
            text.contains("127.0.0.1:1") && !text.contains("hunter2"),
            "{text}"
        );
    }

    #[test]
    fn event_ids_are_bound_to_their_session() {
        let id = event_id("abc", "1700000000000-3");
        assert_eq!(
            entry_of("abc", &id).ok().as_deref(),
            Some("1700000000000-3")
        );
        assert!(matches!(
            entry_of("abd", &id),
            Err(StoreError::ForeignEvent)
        ));
        for bad in [
            "",
            "1-2",
            "x:1-2",
            &format!("{}:1-", session_tag("abc")),
            &format!("{}:a-b", session_tag("abc")),
        ] {
            assert!(
                matches!(entry_of("abc", bad), Err(StoreError::ForeignEvent)),
                "{bad}"
            );
        }
    }
}
