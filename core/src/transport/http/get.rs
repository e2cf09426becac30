//! GET and DELETE on the Streamable HTTP endpoint: GET opens a session's stream for
//! server-initiated messages or resumes a dropped one from `Last-Event-ID`; DELETE ends the
//! session.

use std::time::Instant;

use http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::body::Incoming;

use super::{
    body::{self, Body},
    headers, shared,
    sse::SseEvent,
};
use crate::{jsonrpc::codes, protocol::ProtocolVersion};

use super::{
    post::empty_rx,
    server::{State, accepts, header_str, refuse},
};

/// GET: the session's stream for server-initiated messages, or a resumed one.
pub(super) async fn get(state: &State, req: Request<Incoming>) -> Response<Body> {
    let headers = req.headers();
    if !accepts(headers, "text/event-stream") {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            codes::INVALID_REQUEST,
            "Not Acceptable: GET needs text/event-stream",
        );
    }
    let version =
        header_str(headers, &headers::MCP_PROTOCOL_VERSION).and_then(ProtocolVersion::parse);
    if state.options.stateless || version.is_some_and(ProtocolVersion::is_stateless) {
        let mut r = body::empty(StatusCode::METHOD_NOT_ALLOWED);
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    let Some(id) = header_str(headers, &headers::MCP_SESSION_ID) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        );
    };
    if let Some(store) = &state.options.shared_store {
        return match shared::find(state, store, id, headers).await {
            Ok(session) => {
                *session.last_active.lock() = Instant::now();
                shared::get_stream(state, store, session, id, headers).await
            }
            Err(response) => response,
        };
    }
    let Some(session) = state.sessions.lock().get(id).cloned() else {
        return refuse(
            StatusCode::NOT_FOUND,
            codes::INVALID_REQUEST,
            "Session not found",
        );
    };
    *session.last_active.lock() = Instant::now();
    let retry = Some(state.options.sse_retry.as_millis() as u64);
    if let Some(last) = header_str(headers, &headers::LAST_EVENT_ID) {
        return match session.streams.resume(last).await {
            Some(resumed) => {
                let prelude = resumed
                    .replayed
                    .iter()
                    .map(|d| SseEvent::message(Some(d.event_id.clone()), &d.json))
                    .collect();
                match resumed.live {
                    Some(rx) => body::sse(StatusCode::OK, prelude, rx, None, false),
                    None => body::sse(StatusCode::OK, prelude, empty_rx(), None, true),
                }
            }
            None => refuse(
                StatusCode::NOT_FOUND,
                codes::INVALID_REQUEST,
                format!("No stream to resume at `{last}`"),
            ),
        };
    }
    match session.streams.open_standalone() {
        Some(opened) => {
            let priming = SseEvent {
                id: Some(format!("{}-0", opened.stream)),
                retry,
                ..Default::default()
            };
            body::sse(StatusCode::OK, vec![priming], opened.rx, None, false)
        }
        None => refuse(
            StatusCode::CONFLICT,
            codes::INVALID_REQUEST,
            "Conflict: this session already has a GET stream",
        ),
    }
}

/// DELETE: ends the session named by `Mcp-Session-Id`.
pub(super) async fn delete(state: &State, req: Request<Incoming>) -> Response<Body> {
    if state.options.stateless {
        return body::empty(StatusCode::METHOD_NOT_ALLOWED);
    }
    let Some(id) = header_str(req.headers(), &headers::MCP_SESSION_ID).map(str::to_owned) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        );
    };
    if let Some(store) = &state.options.shared_store {
        return shared::delete(state, store, &id, req.headers()).await;
    }
    let removed = state.sessions.lock().remove(&id);
    match removed {
        Some(session) => {
            session.engine.close().await;
            body::empty(StatusCode::OK)
        }
        None => refuse(
            StatusCode::NOT_FOUND,
            codes::INVALID_REQUEST,
            "Session not found",
        ),
    }
}
