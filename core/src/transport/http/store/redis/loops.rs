//! The loops that run beside the Redis store: one writer that appends log and stream
//! entries in order, a batch per round trip; tails that follow a log with blocking `XREAD`
//! on a connection of their own; the renewal of a GET-stream lease; and the listener of the
//! bus channel, reconnecting while Redis is away.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use futures::StreamExt;
use redis::{
    AsyncConnectionConfig, Client,
    aio::{ConnectionManager, MultiplexedConnection},
    streams::StreamReadReply,
};
use tokio::sync::mpsc;

use super::{RedisStoreOptions, event_id};
use crate::transport::http::store::{BusKind, BusMessage, Change, StoredEvent};

/// One entry for the writer: the stream key, the entry's sequence number within a POST
/// response stream and whether it ends that stream (`None` for the GET-stream log), and the
/// message.
pub(super) struct Write {
    pub(super) key: String,
    pub(super) seq: Option<(u64, bool)>,
    pub(super) json: Bytes,
}

/// What a tail reads: the GET-stream log, or one POST response stream after a point.
pub(super) enum Follow {
    Log { session: String },
    Stream { stream: u64, after: u64 },
}

impl Follow {
    /// The SSE event of an entry (`None`: skip it) and whether it is the last one.
    fn event(&self, entry: &redis::streams::StreamId) -> (Option<StoredEvent>, bool) {
        let json: Vec<u8> = entry.get("m").unwrap_or_default();
        match self {
            Follow::Log { session } => (
                Some(StoredEvent {
                    id: event_id(session, &entry.id),
                    json: Bytes::from(json),
                }),
                false,
            ),
            Follow::Stream { stream, after } => {
                let seq: u64 = entry.get("s").unwrap_or_default();
                let last = entry.get::<u8>("f") == Some(1);
                let event = (seq > *after && !json.is_empty()).then(|| StoredEvent {
                    id: format!("{stream}-{seq}"),
                    json: Bytes::from(json),
                });
                (event, last)
            }
        }
    }
}

/// Tail reads block this long, so a tail notices a departed client soon enough.
const BLOCK_MS: u64 = 1000;
/// Consecutive failures after which a tail or the bus gives up for now.
const TAIL_ATTEMPTS: u32 = 5;

/// Renews a GET-stream lease while it is ours (compare-and-set, so a takeover is noticed),
/// and gives it up when `stop` fires. `lost` fires when another replica has it, or when it
/// could not be renewed before it lapsed.
pub(super) async fn keep_lease(
    mut conn: ConnectionManager,
    key: String,
    holder: String,
    ttl: Duration,
    lost: tokio_util::sync::CancellationToken,
    stop: tokio_util::sync::CancellationToken,
) {
    const RENEW: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
        return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
    const RELEASE: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
        return redis.call('DEL', KEYS[1]) else return 0 end";
    let mut renewed = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = stop.cancelled() => {
                let mut release = redis::cmd("EVAL");
                release.arg(RELEASE).arg(1).arg(&key).arg(&holder);
                let _ = release.query_async::<i64>(&mut conn).await;
                return;
            }
            _ = tokio::time::sleep(ttl / 3) => {}
        }
        let mut renew = redis::cmd("EVAL");
        renew
            .arg(RENEW)
            .arg(1)
            .arg(&key)
            .arg(&holder)
            .arg(ttl.as_millis() as u64);
        match renew.query_async::<i64>(&mut conn).await {
            Ok(1) => renewed = tokio::time::Instant::now(),
            Ok(_) => {
                lost.cancel();
                return;
            }
            // Redis away: the lease may lapse meanwhile; past that, it is no longer ours.
            Err(_) if renewed.elapsed() < ttl => {}
            Err(_) => {
                lost.cancel();
                return;
            }
        }
    }
}

/// A connection for blocking reads: its response timeout outlasts the block.
pub(super) async fn reader(
    client: &Client,
    options: &RedisStoreOptions,
) -> redis::RedisResult<MultiplexedConnection> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(options.connect_timeout))
        .set_response_timeout(Some(
            options.response_timeout + Duration::from_millis(BLOCK_MS),
        ));
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
}

/// Sends the log of one GET stream after `after` to `tx`, in order, until the client goes
/// away or Redis stays unreachable (the SSE response then ends and the client resumes).
pub(super) async fn follow_log(
    client: Client,
    options: Arc<RedisStoreOptions>,
    mut conn: MultiplexedConnection,
    key: String,
    follow: Follow,
    mut after: String,
    tx: mpsc::Sender<StoredEvent>,
) {
    let mut failures = 0;
    while !tx.is_closed() {
        let read: redis::RedisResult<Option<StreamReadReply>> = redis::cmd("XREAD")
            .arg("COUNT")
            .arg(100)
            .arg("BLOCK")
            .arg(BLOCK_MS)
            .arg("STREAMS")
            .arg(&key)
            .arg(&after)
            .query_async(&mut conn)
            .await;
        match read {
            Ok(reply) => {
                failures = 0;
                let entries = reply.into_iter().flat_map(|r| r.keys).flat_map(|k| k.ids);
                for entry in entries {
                    after = entry.id.clone();
                    let (event, last) = follow.event(&entry);
                    if let Some(event) = event
                        && tx.send(event).await.is_err()
                    {
                        return;
                    }
                    if last {
                        return;
                    }
                }
            }
            Err(e) => {
                failures += 1;
                if failures >= TAIL_ATTEMPTS {
                    tracing::warn!(target: "oxmcp::http", "GET stream tail gives up: {e}");
                    return;
                }
                tokio::time::sleep(backoff(failures)).await;
                if let Ok(fresh) = reader(&client, &options).await {
                    conn = fresh;
                }
            }
        }
    }
}

fn backoff(failures: u32) -> Duration {
    Duration::from_millis((100u64 << failures.min(5)).min(2000))
}

/// Writes queued log entries in order, a batch per round trip. An entry that cannot be
/// written after the bounded retries is dropped (it was never acknowledged to anyone).
pub(super) async fn write_events(
    mut conn: ConnectionManager,
    options: Arc<RedisStoreOptions>,
    mut queue: mpsc::UnboundedReceiver<Write>,
) {
    let ttl = options.session_ttl.as_millis() as u64;
    let mut batch = Vec::new();
    while queue.recv_many(&mut batch, 64).await > 0 {
        let mut pipe = redis::pipe();
        for write in &batch {
            let add = pipe
                .cmd("XADD")
                .arg(&write.key)
                .arg("MAXLEN")
                .arg("~")
                .arg(options.events_per_stream)
                .arg("*")
                .arg("m")
                .arg(write.json.as_ref());
            if let Some((seq, last)) = write.seq {
                add.arg("s").arg(seq).arg("f").arg(u8::from(last));
            }
            add.ignore()
                .cmd("PEXPIRE")
                .arg(&write.key)
                .arg(ttl)
                .ignore();
        }
        let mut attempt = 0;
        loop {
            match pipe.query_async::<()>(&mut conn).await {
                Ok(()) => break,
                Err(e) if attempt < options.retries => {
                    attempt += 1;
                    tracing::debug!(target: "oxmcp::http", "event write failed, retrying: {e}");
                    tokio::time::sleep(backoff(attempt as u32)).await;
                }
                Err(e) => {
                    tracing::warn!(target: "oxmcp::http", "{} events dropped: Redis is unreachable ({e})", batch.len());
                    break;
                }
            }
        }
        batch.clear();
    }
}

pub(super) fn bus_payload(
    replica: &str,
    session: &str,
    kind: &str,
    frame: Option<&Bytes>,
) -> String {
    let frame: Option<&serde_json::value::RawValue> =
        frame.and_then(|f| serde_json::from_slice(f).ok());
    serde_json::json!({ "from": replica, "s": session, "k": kind, "f": frame }).to_string()
}

/// Receives what other replicas publish, reconnecting with a capped backoff while Redis is
/// away (messages published meanwhile are lost, as pub/sub does).
pub(super) async fn listen(
    client: Client,
    options: Arc<RedisStoreOptions>,
    replica: String,
    bus: mpsc::UnboundedSender<BusMessage>,
    changes: mpsc::UnboundedSender<Change>,
) {
    #[derive(serde::Deserialize)]
    struct Wire<'a> {
        from: &'a str,
        s: String,
        k: &'a str,
        f: Option<&'a serde_json::value::RawValue>,
        m: Option<String>,
        u: Option<String>,
    }
    let channel = format!("{}bus", options.prefix);
    let mut failures = 0;
    while !bus.is_closed() {
        let subscribed = async {
            let mut pubsub =
                tokio::time::timeout(options.connect_timeout, client.get_async_pubsub())
                    .await
                    .map_err(|_| "timed out".to_owned())?
                    .map_err(|e| e.to_string())?;
            pubsub
                .subscribe(&channel)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(pubsub)
        }
        .await;
        let mut pubsub = match subscribed {
            Ok(p) => p,
            Err(e) => {
                failures += 1;
                tracing::debug!(target: "oxmcp::http", "bus subscribe failed ({e}); retrying");
                tokio::time::sleep(backoff(failures)).await;
                continue;
            }
        };
        failures = 0;
        let mut messages = pubsub.on_message();
        while let Some(msg) = messages.next().await {
            let Ok(wire) = serde_json::from_slice::<Wire>(msg.get_payload_bytes()) else {
                continue;
            };
            if wire.from == replica {
                continue;
            }
            if wire.k == "change" {
                if let Some(method) = wire.m {
                    // Nobody may be taking changes (a server without the server role's
                    // fan-out): that is fine.
                    let _ = changes.send(Change {
                        method,
                        uri: wire.u,
                    });
                }
                continue;
            }
            let kind = match (wire.k, wire.f) {
                ("close", _) => BusKind::Close,
                ("frame", Some(f)) => BusKind::Frame(Bytes::copy_from_slice(f.get().as_bytes())),
                _ => continue,
            };
            if bus
                .send(BusMessage {
                    session: wire.s,
                    kind,
                })
                .is_err()
            {
                return;
            }
        }
        tracing::debug!(target: "oxmcp::http", "bus connection lost; resubscribing");
        tokio::time::sleep(backoff(1)).await;
    }
}
