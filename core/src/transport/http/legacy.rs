//! The legacy HTTP+SSE transport (2024-11-05), served beside Streamable HTTP so that old
//! clients (and bridges such as `mcp-remote` in SSE mode) still connect.
//!
//! A client opens `GET /sse`; the first event, `endpoint`, names the URL it must POST its
//! messages to (`/messages?sessionId=…`). Every POST the engine can take is answered
//! `202 Accepted` at once and everything the server says (responses, requests,
//! notifications) travels on that one SSE stream; a body it cannot take is refused on the
//! POST itself, as `post_rule` says. The session lives exactly as long as the stream: when the client disconnects,
//! the session closes; when the server closes the session, the stream ends.

use std::{collections::HashMap, sync::Arc};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::sync::mpsc;

use super::{
    body::{self, Body, OnEnd},
    post_rule::{self, Verdict},
    server::{Slot, State, refuse, too_many_sessions},
    sse::SseEvent,
    streams::Delivery,
};
use crate::{
    jsonrpc::codes,
    protocol::ProtocolVersion,
    session::Session,
    sync::Mutex,
    transport::{Inbound, Link, OUTBOUND_QUEUE, Outbound},
};

/// The open legacy sessions, by the id in their endpoint URL.
#[derive(Default)]
pub(super) struct LegacySessions {
    by_id: Mutex<HashMap<String, Arc<LegacySession>>>,
}

pub(super) struct LegacySession {
    _slot: Slot,
    engine: Session,
    inbound: mpsc::Sender<Inbound>,
}

impl LegacySessions {
    pub(super) fn len(&self) -> usize {
        self.by_id.lock().len()
    }

    /// Closes every session (the server is shutting down).
    pub(super) async fn close_all(&self) {
        let all: Vec<_> = self.by_id.lock().drain().map(|(_, s)| s).collect();
        for s in all {
            s.engine.close().await;
        }
    }
}

/// `GET /sse`: opens a session and its stream.
pub(super) fn open(state: &Arc<State>, messages_path: &str) -> Response<Body> {
    let Some(slot) = state.reserve_slot() else {
        return too_many_sessions();
    };
    let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let engine = (state.factory)(Link {
        inbound: in_rx,
        outbound: out_tx,
    });
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    tokio::spawn(forward(out_rx, events_tx, in_tx.clone()));
    let id = crate::random::id128();
    state.legacy.by_id.lock().insert(
        id.clone(),
        Arc::new(LegacySession {
            _slot: slot,
            engine: engine.clone(),
            inbound: in_tx,
        }),
    );
    // The client going away ends the session: nothing else could ever reach it again.
    let sessions = state.clone();
    let forget = id.clone();
    let on_end: OnEnd = Box::new(move || {
        sessions.legacy.by_id.lock().remove(&forget);
        engine.request_close();
    });
    let endpoint = SseEvent {
        event: Some("endpoint".into()),
        data: format!("{messages_path}?sessionId={id}"),
        ..Default::default()
    };
    body::sse(
        StatusCode::OK,
        vec![endpoint],
        events_rx,
        Some(on_end),
        false,
    )
}

/// `POST /messages?sessionId=…`: hands the message to the session; the answer goes out on
/// the session's SSE stream.
pub(super) async fn post(state: &State, req: Request<Incoming>) -> Response<Body> {
    let Some(id) = session_param(req.uri().query().unwrap_or_default()) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            "Bad Request: the sessionId query parameter is required",
        );
    };
    let Some(session) = state.legacy.by_id.lock().get(&id).cloned() else {
        return refuse(
            StatusCode::NOT_FOUND,
            codes::INVALID_REQUEST,
            "Session not found",
        );
    };
    let (parts, body) = req.into_parts();
    let headers = Arc::new(parts.headers);
    let frame = match post_rule::read_body(state, &headers, body).await {
        Ok(frame) => frame,
        Err(refusal) => return refusal,
    };
    // The answer to whatever is handed over travels on the stream; a body that cannot be
    // handed over whole is refused here, where the client is waiting for this POST's status.
    let revision = session.engine.protocol_version();
    match post_rule::decide(&frame.decoded, revision.map(ProtocolVersion::as_str)) {
        Verdict::Refuse(r) => return r.into_response(),
        Verdict::Accept | Verdict::Answer(_) => {}
    }
    if let Some(r) = post_rule::refuse_incomplete_batch(&frame.decoded) {
        return r.into_response();
    }
    let frame = Inbound::FrameWithHeaders(frame);
    if session.inbound.send(frame).await.is_err() {
        return refuse(
            StatusCode::NOT_FOUND,
            codes::INVALID_REQUEST,
            "Session not found",
        );
    }
    body::empty(StatusCode::ACCEPTED)
}

/// `sessionId` (the TypeScript SDK's spelling) or `session_id` (the Python SDK's).
fn session_param(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (matches!(k, "sessionId" | "session_id") && !v.is_empty()).then(|| v.to_owned())
    })
}

/// Moves everything the engine sends onto the session's one stream, until it closes.
async fn forward(
    mut outbound: mpsc::Receiver<Outbound>,
    events: mpsc::UnboundedSender<Delivery>,
    inbound: mpsc::Sender<Inbound>,
) {
    while let Some(item) = outbound.recv().await {
        match item {
            Outbound::Frame(frame) => {
                let delivery = Delivery {
                    event_id: String::new(),
                    json: Bytes::from(frame.bytes),
                    is_final: false,
                };
                if events.send(delivery).is_err() {
                    // The stream is gone; the session is being closed by its end hook.
                    continue;
                }
            }
            Outbound::CloseStream(_) => {}
            Outbound::Close => break,
        }
    }
    drop(events);
    let _ = inbound.send(Inbound::Closed(None)).await;
}

#[cfg(test)]
mod tests {
    use super::session_param;

    #[test]
    fn reads_either_spelling_of_the_session_parameter() {
        assert_eq!(session_param("sessionId=abc").as_deref(), Some("abc"));
        assert_eq!(session_param("x=1&session_id=abc").as_deref(), Some("abc"));
        assert_eq!(session_param("sessionId="), None);
        assert_eq!(session_param("other=abc"), None);
        assert_eq!(session_param(""), None);
    }
}
