//! The Streamable HTTP server's side of scale-out: what a replica does differently when its
//! sessions live in a [`SharedStore`] (see `store/` for the design and failure behaviour).
//!
//! Each function here replaces one step of the single-process path in `server.rs`: making a
//! session (numbered apart from other replicas, with a spill into the shared GET-stream log),
//! recording it after `initialize`, finding it on any replica (503 when the store is away),
//! forwarding client answers and cancels over the bus, serving the GET stream from the log,
//! and ending a session everywhere.

use std::sync::{Arc, Weak};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use tokio::sync::mpsc;

use super::{
    body::{self, Body},
    headers,
    server::{HttpSession, Slot, State, refuse, start_engine},
    sse::SseEvent,
    store::{BusKind, BusMessage, GetLease, SessionRecord, SharedStore, StoreError, principal_of},
    streams::{Delivery, Mirror, Spill, Streams, parse_event_id},
};
use crate::{
    jsonrpc::codes,
    protocol::{Implementation, ProtocolVersion},
    session::Phase,
    transport::Inbound,
};

/// 503 with a hint to retry: the store could not be reached.
pub(super) fn store_unavailable(error: &StoreError) -> Response<Body> {
    tracing::warn!(target: "oxmcp::http", "{error}");
    let mut r = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::INTERNAL_ERROR,
        format!("Service Unavailable: {error}; session requests cannot be served right now"),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

fn not_found() -> Response<Body> {
    refuse(
        StatusCode::NOT_FOUND,
        codes::INVALID_REQUEST,
        "Session not found",
    )
}

/// A random number in `[2^32, 2^52)`: where this replica's numbering starts (stream ids and
/// outgoing request ids), so that replicas serving one session never collide, and ids stay
/// exact in JavaScript.
fn random_base() -> u64 {
    let mut bytes = [0u8; 8];
    crate::random::fill(&mut bytes);
    (u64::from_le_bytes(bytes) >> 12) | (1 << 32)
}

/// A local engine for a session shared with other replicas.
pub(super) fn new_session(
    state: &State,
    store: &Arc<dyn SharedStore>,
    id: &str,
    slot: Slot,
) -> Arc<HttpSession> {
    let spill: Spill = {
        let store = store.clone();
        let id = id.to_owned();
        Arc::new(move |json: Bytes| store.append_event(&id, json))
    };
    // POST streams stay local: resumption of those happens in memory, here.
    let resumable = state
        .event_store
        .clone()
        .map(|store| super::streams::Resumable {
            store,
            session: id.to_owned(),
        });
    // JSON answers carry no event ids, so there is nothing to resume elsewhere.
    let mirror: Option<Mirror> = (!state.options.json_response).then(|| {
        let store = store.clone();
        let id = id.to_owned();
        Arc::new(move |stream: u64, seq: u64, json: &Bytes, last: bool| {
            store.append_stream_event(&id, stream, seq, json.clone(), last)
        }) as Mirror
    });
    let streams = Streams::shared(
        resumable,
        state.options.json_response,
        random_base(),
        Some(spill),
        mirror,
    );
    let (engine, inbound) = start_engine(state, &streams);
    engine.number_requests_from(random_base() as i64);
    HttpSession::new(slot, engine, inbound, streams)
}

fn authorization(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
}

/// Writes the record of a session that has just answered `initialize` (nothing when the
/// handshake failed). An error means the session cannot be shared: the caller answers 503.
pub(super) async fn record(
    store: &Arc<dyn SharedStore>,
    id: &str,
    session: &HttpSession,
    headers: &HeaderMap,
) -> Result<(), StoreError> {
    let s = session.engine.state();
    let Some(version) = s.protocol_version else {
        return Ok(());
    };
    let record = SessionRecord {
        protocol_version: version.as_str().to_owned(),
        client_info: s
            .peer_info
            .as_ref()
            .and_then(|i| serde_json::to_value(i).ok()),
        client_capabilities: s.peer_capabilities.clone(),
        principal: principal_of(authorization(headers)),
    };
    store.save_session(id, &record).await
}

/// The session `id` on this replica: checked against (and kept alive in) the store, rebuilt
/// from its record when another replica started it. `Err` is the response to give.
pub(super) async fn find(
    state: &State,
    store: &Arc<dyn SharedStore>,
    id: &str,
    headers: &HeaderMap,
) -> Result<Arc<HttpSession>, Response<Body>> {
    let record = match store.touch_session(id).await {
        Ok(Some(record)) => record,
        Ok(None) => {
            // Ended elsewhere, or expired: drop our copy too.
            if let Some(gone) = state.sessions.lock().remove(id) {
                gone.engine.request_close();
            }
            return Err(not_found());
        }
        Err(e) => return Err(store_unavailable(&e)),
    };
    // Someone else's session id is not enough to use it.
    if record.principal != principal_of(authorization(headers)) {
        return Err(not_found());
    }
    let local = state.sessions.lock().get(id).cloned();
    if let Some(session) = local
        && !session.engine.is_closed()
    {
        return Ok(session);
    }
    let Some(version) = ProtocolVersion::parse(&record.protocol_version) else {
        return Err(not_found());
    };
    let Some(slot) = state.reserve_slot() else {
        return Err(super::server::too_many_sessions());
    };
    let session = new_session(state, store, id, slot);
    session.engine.update_state(|s| {
        s.phase = Phase::Ready;
        s.protocol_version = Some(version);
        s.peer_info = record
            .client_info
            .and_then(|v| serde_json::from_value::<Implementation>(v).ok());
        s.peer_capabilities = record.client_capabilities;
    });
    // Two requests may rebuild at once; the first one in wins, the other engine closes.
    let kept = {
        let mut sessions = state.sessions.lock();
        match sessions.get(id) {
            Some(existing) if !existing.engine.is_closed() => existing.clone(),
            _ => {
                sessions.insert(id.to_owned(), session.clone());
                session.clone()
            }
        }
    };
    if !Arc::ptr_eq(&kept, &session) {
        session.engine.request_close();
    }
    Ok(kept)
}

/// Sends a body without requests (answers to the server's requests, cancels, other
/// notifications) to the other replicas holding the session; the engine waiting for it takes
/// it.
pub(super) async fn forward(
    store: &Arc<dyn SharedStore>,
    id: &str,
    bytes: &Bytes,
) -> Result<(), Response<Body>> {
    store
        .publish(id, bytes.clone())
        .await
        .map_err(|e| store_unavailable(&e))
}

/// The GET stream of a shared session: the log from `Last-Event-ID` on (or from now), as
/// long as the client listens and the session lives here.
pub(super) async fn get_stream(
    state: &State,
    store: &Arc<dyn SharedStore>,
    session: Arc<HttpSession>,
    id: &str,
    headers: &HeaderMap,
) -> Response<Body> {
    let last = headers
        .get(headers::LAST_EVENT_ID)
        .and_then(|v| v.to_str().ok());
    if let Some(last) = last
        && let Some((stream, seq)) = parse_event_id(last)
    {
        return resume_post_stream(store, session, id, last, stream, seq).await;
    }
    let lease = match store.claim_get(id, last.is_some()).await {
        Ok(Some(lease)) => lease,
        Ok(None) => {
            return refuse(
                StatusCode::CONFLICT,
                codes::INVALID_REQUEST,
                "Conflict: this session already has a GET stream",
            );
        }
        Err(e) => return store_unavailable(&e),
    };
    let tail = match store.tail(id, last).await {
        Ok(tail) => tail,
        Err(StoreError::ForeignEvent) => {
            return refuse(
                StatusCode::NOT_FOUND,
                codes::INVALID_REQUEST,
                format!(
                    "No stream to resume at `{}`: that event id is not one of this session's",
                    last.unwrap_or_default()
                ),
            );
        }
        Err(e) => return store_unavailable(&e),
    };
    let rx = relay(tail.events, session, Some(lease));
    let priming = SseEvent {
        id: Some(tail.start),
        retry: Some(state.options.sse_retry.as_millis() as u64),
        ..Default::default()
    };
    body::sse(StatusCode::OK, vec![priming], rx, None, false)
}

/// A POST response stream picked up again: from this replica's memory when the request ran
/// here, else from the store's copy (then live until the answer).
async fn resume_post_stream(
    store: &Arc<dyn SharedStore>,
    session: Arc<HttpSession>,
    id: &str,
    last: &str,
    stream: u64,
    seq: u64,
) -> Response<Body> {
    if let Some(resumed) = session.streams.resume(last).await {
        let prelude = resumed
            .replayed
            .iter()
            .map(|d| SseEvent::message(Some(d.event_id.clone()), &d.json))
            .collect();
        return match resumed.live {
            Some(rx) => body::sse(StatusCode::OK, prelude, rx, None, false),
            None => body::sse(
                StatusCode::OK,
                prelude,
                mpsc::unbounded_channel().1,
                None,
                true,
            ),
        };
    }
    match store.tail_stream(id, stream, seq).await {
        Ok(Some(events)) => body::sse(
            StatusCode::OK,
            Vec::new(),
            relay(events, session, None),
            None,
            false,
        ),
        Ok(None) => refuse(
            StatusCode::NOT_FOUND,
            codes::INVALID_REQUEST,
            format!("No stream to resume at `{last}`"),
        ),
        Err(e) => store_unavailable(&e),
    }
}

/// Moves stored events onto an SSE response while the client listens, the session lives
/// and (for the GET stream) this replica holds it; the lease is given up when it ends.
fn relay(
    mut events: mpsc::Receiver<super::store::StoredEvent>,
    session: Arc<HttpSession>,
    lease: Option<GetLease>,
) -> mpsc::UnboundedReceiver<Delivery> {
    let (tx, rx) = mpsc::unbounded_channel();
    let lost = lease.as_ref().map(|l| l.lost.clone()).unwrap_or_default();
    tokio::spawn(async move {
        let _lease = lease;
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { return };
                    let delivery = Delivery { event_id: event.id, json: event.json, is_final: false };
                    if tx.send(delivery).is_err() {
                        return;
                    }
                }
                _ = session.engine.closed() => return,
                _ = tx.closed() => return,
                _ = lost.cancelled() => return,
            }
        }
    });
    rx
}

/// DELETE: the session ends on every replica.
pub(super) async fn delete(
    state: &State,
    store: &Arc<dyn SharedStore>,
    id: &str,
    headers: &HeaderMap,
) -> Response<Body> {
    let session = match find(state, store, id, headers).await {
        Ok(s) => s,
        Err(response) => return response,
    };
    if let Err(e) = store.delete_session(id).await {
        return store_unavailable(&e);
    }
    state.sessions.lock().remove(id);
    session.engine.close().await;
    body::empty(StatusCode::OK)
}

/// Hands what other replicas publish to the local engines of their sessions.
pub(super) async fn bus_loop(state: Weak<State>, mut bus: mpsc::UnboundedReceiver<BusMessage>) {
    while let Some(message) = bus.recv().await {
        let Some(state) = state.upgrade() else { return };
        let local = state.sessions.lock().get(&message.session).cloned();
        let Some(session) = local else { continue };
        match message.kind {
            BusKind::Frame(frame) => {
                let _ = session.inbound.send(Inbound::Frame(frame)).await;
            }
            BusKind::Close => {
                state.sessions.lock().remove(&message.session);
                session.engine.request_close();
            }
        }
    }
}
