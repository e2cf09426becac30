//! POST on the Streamable HTTP endpoint: the body is read and judged by `post_rule`, then
//! served by the session it names (handshake era: its engine's answers delivered as JSON or
//! as an SSE stream that can be resumed) or by a session that lives only as long as the
//! request (the stateless era, 2026-07-28).

use std::{sync::Arc, time::Instant};

use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::sync::mpsc;

use super::{
    body::{self, Body, OnEnd},
    headers,
    post_rule::{self, Requests, Verdict},
    shared,
    sse::SseEvent,
    stateless,
    streams::{Delivery, Resumable, Streams},
};
use crate::{
    jsonrpc::{ErrorObject, codes},
    protocol::ProtocolVersion,
    session::Phase,
    transport::{HttpFrame, Inbound},
};

use super::server::{
    HttpSession, State, accepts, header_str, new_session_id, refuse, start_engine,
    too_many_sessions,
};

/// POST: one JSON-RPC message (or a 2025-03-26 batch), in either era.
pub(super) async fn post(state: &State, req: Request<Incoming>) -> Response<Body> {
    // Shared from here on: handlers see them through their request context.
    let (parts, body) = req.into_parts();
    let headers = Arc::new(parts.headers);
    if !(accepts(&headers, "application/json") && accepts(&headers, "text/event-stream")) {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            codes::INVALID_REQUEST,
            "Not Acceptable: the client must accept both application/json and text/event-stream",
        );
    }
    let frame = match post_rule::read_body(state, &headers, body).await {
        Ok(frame) => frame,
        Err(refusal) => return refusal,
    };
    let version_header = header_str(&headers, &headers::MCP_PROTOCOL_VERSION).map(str::to_owned);
    let handshake_header = version_header
        .as_deref()
        .and_then(ProtocolVersion::parse)
        .filter(|v| v.uses_handshake());
    match version_header {
        // A version that is not a handshake-era one selects the stateless era (an unknown
        // version is answered by the engine with the versions it speaks).
        Some(v) if handshake_header.is_none() => stateless_post(state, &headers, &v, frame).await,
        _ => session_post(state, &headers, handshake_header, frame).await,
    }
}

async fn session_post(
    state: &State,
    headers: &Arc<HeaderMap>,
    version: Option<ProtocolVersion>,
    frame: HttpFrame,
) -> Response<Body> {
    let decoded = &*frame.decoded;
    if state.options.stateless {
        // Each request stands alone; the handshake-era engine is told it is initialized.
        let revision = version.unwrap_or(ProtocolVersion::V2025_03_26);
        let requests = match post_rule::decide(decoded, Some(revision.as_str())) {
            Verdict::Refuse(r) => return r.into_response(),
            Verdict::Accept => Requests::none(),
            Verdict::Answer(requests) => requests,
        };
        let ready_at = (!requests.initialize).then_some(revision);
        return serve_alone(state, requests, frame, ready_at, false).await;
    }
    let session_id = header_str(headers, &headers::MCP_SESSION_ID).map(str::to_owned);
    let (id, session) = match (session_id, state.options.shared_store.clone()) {
        (None, _) if post_rule::is_initialize(decoded) => {
            let Some(slot) = state.reserve_slot() else {
                return too_many_sessions();
            };
            let id = new_session_id();
            let session = match &state.options.shared_store {
                Some(store) => shared::new_session(state, store, &id, slot),
                None => {
                    let resumable = state.event_store.clone().map(|store| Resumable {
                        store,
                        session: id.clone(),
                    });
                    let streams = Streams::new(resumable, state.options.json_response);
                    let (engine, inbound) = start_engine(state, &streams);
                    HttpSession::new(slot, engine, inbound, streams)
                }
            };
            state.sessions.lock().insert(id.clone(), session.clone());
            (id, session)
        }
        (None, _) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                codes::INVALID_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            );
        }
        (Some(id), Some(store)) => match shared::find(state, &store, &id, headers).await {
            Ok(session) => (id, session),
            Err(response) => return response,
        },
        (Some(id), None) => match state.sessions.lock().get(&id).cloned() {
            Some(session) if !session.engine.is_closed() => (id, session),
            _ => {
                return refuse(
                    StatusCode::NOT_FOUND,
                    codes::INVALID_REQUEST,
                    "Session not found",
                );
            }
        },
    };
    *session.last_active.lock() = Instant::now();
    if let Some(raw) = header_str(headers, &headers::MCP_PROTOCOL_VERSION)
        && ProtocolVersion::parse(raw).is_none()
    {
        return refuse(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            format!("Unsupported protocol version: {raw}"),
        );
    }
    let revision = session.engine.protocol_version();
    let requests = match post_rule::decide(decoded, revision.map(ProtocolVersion::as_str)) {
        Verdict::Refuse(r) => return r.into_response(),
        Verdict::Accept => Requests::none(),
        Verdict::Answer(requests) => requests,
    };
    // What carries no request (an answer to a server request, a cancel) may be for an engine
    // on another replica: every replica hears it on the store's bus.
    if requests.ids.is_empty()
        && let Some(store) = &state.options.shared_store
        && let Err(response) = shared::forward(store, &id, &frame.bytes).await
    {
        return response;
    }
    if session.streams.any_in_flight(&requests.ids) {
        let error = ErrorObject::invalid_request(
            "Invalid request: that id is already in use by a request in flight",
        );
        return body::rpc_error(StatusCode::BAD_REQUEST, requests.ids.first(), error);
    }
    let resumable = revision.is_some_and(|v| v >= ProtocolVersion::V2025_11_25);
    let priming = resumable.then(|| SseEvent {
        retry: Some(state.options.sse_retry.as_millis() as u64),
        ..Default::default()
    });
    let initialize = requests.initialize;
    let mut response = deliver(
        &session.streams,
        session.inbound.clone(),
        requests,
        frame,
        priming,
        None,
        false,
        state.options.json_response,
    )
    .await;
    if initialize
        && let Some(store) = &state.options.shared_store
        && let Err(e) = shared::record(store, &id, &session, headers).await
    {
        // A session other replicas cannot find would fail at the balancer's whim.
        state.sessions.lock().remove(&id);
        session.engine.request_close();
        return shared::store_unavailable(&e);
    }
    if initialize && let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(headers::MCP_SESSION_ID, v);
    }
    response
}

/// Hands the body to the engine and answers with what comes back on its stream: 202 for
/// notifications and responses; for requests, JSON when the answer comes first (or JSON is
/// forced), SSE when anything comes before it.
#[allow(clippy::too_many_arguments)]
async fn deliver(
    streams: &Arc<Streams>,
    inbound: mpsc::Sender<Inbound>,
    requests: Requests,
    frame: HttpFrame,
    priming: Option<SseEvent>,
    on_end: Option<OnEnd>,
    stateless: bool,
    json_only: bool,
) -> Response<Body> {
    let frame = Inbound::FrameWithHeaders(frame);
    if requests.ids.is_empty() {
        if inbound.send(frame).await.is_err() {
            return refuse(
                StatusCode::NOT_FOUND,
                codes::INVALID_REQUEST,
                "Session not found",
            );
        }
        if let Some(f) = on_end {
            f();
        }
        return body::empty(StatusCode::ACCEPTED);
    }
    let opened = streams.open(&requests.ids, requests.batch);
    let stream = opened.stream;
    let mut rx = opened.rx;
    if inbound.send(frame).await.is_err() {
        return refuse(
            StatusCode::NOT_FOUND,
            codes::INVALID_REQUEST,
            "Session not found",
        );
    }
    // The guard closes a one-request session if the client goes away while we wait.
    struct Guard(Option<OnEnd>);
    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    let mut guard = Guard(on_end);
    if json_only {
        let mut last = None;
        while let Some(d) = rx.recv().await {
            if d.is_final {
                last = Some(d);
                break;
            }
        }
        return match last {
            Some(d) => {
                let status = if stateless {
                    stateless::status_of(&d.json)
                } else {
                    StatusCode::OK
                };
                body::json(status, d.json)
            }
            None => refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                codes::INTERNAL_ERROR,
                "the session closed before answering",
            ),
        };
    }
    let first = rx.recv().await;
    match first {
        Some(d) if d.is_final => {
            let status = if stateless {
                stateless::status_of(&d.json)
            } else {
                StatusCode::OK
            };
            body::json(status, d.json)
        }
        Some(d) => {
            let mut prelude = Vec::new();
            if let Some(mut p) = priming {
                p.id = Some(format!("{stream}-0"));
                prelude.push(p);
            }
            prelude.push(SseEvent::message(Some(d.event_id), &d.json));
            body::sse(StatusCode::OK, prelude, rx, guard.0.take(), false)
        }
        None if !streams.is_finished(stream) => {
            // The server ended the stream before answering (SEP-1699 polling): a priming event
            // tells the client where to resume.
            let prelude = match priming {
                Some(mut p) => {
                    p.id = Some(format!("{stream}-0"));
                    vec![p]
                }
                None => Vec::new(),
            };
            body::sse(StatusCode::OK, prelude, empty_rx(), guard.0.take(), true)
        }
        None => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::INTERNAL_ERROR,
            "the session closed before answering",
        ),
    }
}

pub(super) fn empty_rx() -> mpsc::UnboundedReceiver<Delivery> {
    mpsc::unbounded_channel().1
}

async fn stateless_post(
    state: &State,
    headers: &Arc<HeaderMap>,
    version: &str,
    frame: HttpFrame,
) -> Response<Body> {
    let requests = match post_rule::decide(&frame.decoded, Some(version)) {
        Verdict::Refuse(r) => return r.into_response(),
        Verdict::Accept => Requests::none(),
        Verdict::Answer(requests) => requests,
    };
    // A single message by now: the rule refuses batches in this era.
    let message: serde_json::Value = serde_json::from_slice(&frame.bytes).unwrap_or_default();
    if let Err((status, error)) = stateless::check(headers, version, &message) {
        return body::rpc_error(status, requests.ids.first(), error);
    }
    if requests.ids.is_empty() {
        // Notifications have no request to belong to in a stateless exchange.
        return body::empty(StatusCode::ACCEPTED);
    }
    serve_alone(state, requests, frame, None, true).await
}

/// Serves one POST with an engine of its own that lives as long as its answer: a stateless
/// server's handshake-era requests (`ready_at`: the revision the engine is told it was
/// initialized with) and 2026-07-28 requests (`stateless`: errors carry their HTTP status).
async fn serve_alone(
    state: &State,
    requests: Requests,
    frame: HttpFrame,
    ready_at: Option<ProtocolVersion>,
    stateless: bool,
) -> Response<Body> {
    let Some(slot) = state.reserve_slot() else {
        return too_many_sessions();
    };
    let streams = Streams::new(None, state.options.json_response);
    let (engine, inbound) = start_engine(state, &streams);
    if let Some(v) = ready_at {
        engine.update_state(|s| {
            s.phase = Phase::Ready;
            s.protocol_version = Some(v);
        });
    }
    let on_end: OnEnd = Box::new(move || {
        drop(slot);
        engine.request_close();
    });
    deliver(
        &streams,
        inbound,
        requests,
        frame,
        None,
        Some(on_end),
        stateless,
        state.options.json_response,
    )
    .await
}
