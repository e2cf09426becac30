//! What comes back from the server, turned into messages for the engine: the answer to a
//! POST (nothing, a JSON body, or an SSE stream resumed with `Last-Event-ID` when it drops
//! before the answer), and the events of any SSE stream. Answers are screened first, so a
//! malformed or stray one fails the requests it was meant for instead of leaving them to
//! time out.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use http::{Method, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::{
    Shared, fail, header,
    request::{Call, request},
    session::version_header,
};
use crate::{
    Error,
    jsonrpc::{ErrorObject, RequestId, encode_error},
    protocol::methods,
    transport::{
        Inbound,
        http::{
            answer,
            sse::{SseItem, SseParser},
        },
    },
};

/// Reads the answer to a POST: nothing (202), a JSON body, or an SSE stream (resumed if it
/// drops before the answer).
pub(super) async fn read_answer(
    shared: &Arc<Shared>,
    response: http::Response<hyper::body::Incoming>,
    ids: &[RequestId],
    method: &str,
) {
    let status = response.status();
    let content_type = header(response.headers(), &header::CONTENT_TYPE).unwrap_or_default();
    if ids.is_empty() && status.is_success() {
        return;
    }
    if status == StatusCode::ACCEPTED {
        // A server must answer a request: nothing more will come for it.
        let e = Error::Protocol(format!(
            "the server acknowledged `{method}` with 202 Accepted instead of answering it"
        ));
        return fail(shared, ids, &e).await;
    }
    if content_type.starts_with("text/event-stream") && status.is_success() {
        let mut waiting: Vec<RequestId> = ids.to_vec();
        let (mut last_id, mut retry) = read_sse(shared, response.into_body(), &mut waiting).await;
        tracing::debug!(target: "oxmcp::http", "{method} {ids:?}: stream ended, waiting {waiting:?}, last event {last_id:?}");
        let mut resumptions = 0;
        while !waiting.is_empty() && !shared.stop.is_cancelled() {
            let Some(from) = last_id.clone() else { break };
            if resumptions >= shared.options.max_resumptions {
                break;
            }
            resumptions += 1;
            tokio::time::sleep(retry.unwrap_or(Duration::from_secs(1))).await;
            let session = shared.conn.lock().session_id.clone();
            let headers = version_header(shared);
            match request(
                shared,
                Call::new(Method::GET, &shared.url)
                    .session(session.as_deref())
                    .headers(headers)
                    .resume_from(Some(&from)),
            )
            .await
            {
                Ok(r) if r.status().is_success() => {
                    let (l, r2) = read_sse(shared, r.into_body(), &mut waiting).await;
                    last_id = l.or(last_id);
                    retry = r2.or(retry);
                }
                _ => break,
            }
        }
        if !waiting.is_empty() {
            let e = Error::closed(format!(
                "the response stream of `{method}` ended before its answer"
            ));
            fail(shared, &waiting, &e).await;
        }
        return;
    }
    let bytes = match collect_limited(response.into_body(), shared.options.max_message_bytes).await
    {
        Ok(b) => b,
        Err(e) => return fail(shared, ids, &e).await,
    };
    // What answers our requests goes to the engine; what is left of them fails now, with the
    // server's own JSON-RPC error when it sent one (a refusal, a stateless error).
    if method == methods::INITIALIZE {
        remember_version(
            shared,
            serde_json::from_slice::<Value>(&bytes).ok().as_ref(),
        );
    }
    let screened = answer::screen(&bytes, shared.options.max_message_bytes);
    for frame in screened.forward {
        let _ = shared.inbound.send(Inbound::Frame(frame)).await;
    }
    let mut left: Vec<RequestId> = ids
        .iter()
        .filter(|id| !screened.answered.contains(id))
        .cloned()
        .collect();
    for (id, why) in &screened.malformed {
        if let Some(i) = left.iter().position(|w| w == id) {
            left.remove(i);
            let e = Error::Protocol(format!(
                "the server's answer to `{method}` is malformed: {why}"
            ));
            fail(shared, std::slice::from_ref(id), &e).await;
        }
    }
    if left.is_empty() {
        return;
    }
    let error = match screened.stray {
        Some(answer::Stray::ServerError(e)) => e,
        Some(stray) if status.is_success() => stray.into_error(),
        _ if status.is_success() => ErrorObject::new(
            crate::jsonrpc::codes::INTERNAL_ERROR,
            format!("HTTP transport: HTTP {status} without an answer to `{method}`"),
        ),
        // An HTTP error page, or JSON that is no JSON-RPC: the status says it all.
        _ => ErrorObject::new(
            crate::jsonrpc::codes::INTERNAL_ERROR,
            format!("HTTP {status}"),
        ),
    }
    .with_data(json!({ "transport": "http", "status": status.as_u16() }));
    for id in &left {
        let _ = shared
            .inbound
            .send(Inbound::Frame(Bytes::from(encode_error(Some(id), &error))))
            .await;
    }
}

/// Remembers the protocol revision the server chose, from its answer to `initialize`.
fn remember_version(shared: &Shared, result: Option<&Value>) {
    if let Some(v) = result
        .and_then(|r| r.pointer("/result/protocolVersion"))
        .and_then(Value::as_str)
    {
        shared.conn.lock().protocol_version = Some(v.to_owned());
    }
}

/// The whole body, refused past `max` bytes.
pub(super) async fn collect_limited(
    body: hyper::body::Incoming,
    max: usize,
) -> Result<Bytes, Error> {
    http_body_util::Limited::new(body, max)
        .collect()
        .await
        .map(|c| c.to_bytes())
        .map_err(|e| {
            Error::Protocol(format!(
                "reading the response body failed (cap {max} bytes): {e}"
            ))
        })
}

/// Forwards every message of an SSE body; removes answered ids from `waiting`. Returns the
/// last event id and the server's retry hint.
pub(super) async fn read_sse(
    shared: &Arc<Shared>,
    mut body: hyper::body::Incoming,
    waiting: &mut Vec<RequestId>,
) -> (Option<String>, Option<Duration>) {
    let mut parser = SseParser::new(shared.options.max_message_bytes);
    let mut retry = None;
    loop {
        let frame = tokio::select! {
            _ = shared.stop.cancelled() => break,
            f = body.frame() => f,
        };
        let Some(Ok(frame)) = frame else { break };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        for item in parser.push(&data) {
            match item {
                SseItem::Oversized { len } => {
                    tracing::warn!(target: "oxmcp::http", "dropped an SSE event of {len} bytes");
                }
                SseItem::Event(event) => {
                    if let Some(ms) = event.retry {
                        retry = Some(Duration::from_millis(ms));
                    }
                    if event.data.trim().is_empty()
                        || event.event.as_deref().is_some_and(|e| e != "message")
                    {
                        continue;
                    }
                    if let Ok(v) = serde_json::from_str::<Value>(&event.data)
                        && v.get("method").is_none()
                    {
                        remember_version(shared, Some(&v));
                    }
                    let screened =
                        answer::screen(event.data.as_bytes(), shared.options.max_message_bytes);
                    for frame in screened.forward {
                        let _ = shared.inbound.send(Inbound::Frame(frame)).await;
                    }
                    waiting.retain(|w| !screened.answered.contains(w));
                    for (id, why) in &screened.malformed {
                        waiting.retain(|w| w != id);
                        let e = Error::Protocol(format!("a malformed answer on the stream: {why}"));
                        fail(shared, std::slice::from_ref(id), &e).await;
                    }
                    if let Some(stray) = screened.stray {
                        if waiting.is_empty() {
                            tracing::debug!(target: "oxmcp::http", "dropped a stray SSE event: {stray:?}");
                            continue;
                        }
                        // This stream carries the answers of `waiting` and nothing else can
                        // be meant: they fail now, and the stream is given up.
                        let error = stray.into_error().with_data(json!({ "transport": "http" }));
                        for id in waiting.drain(..) {
                            let _ = shared
                                .inbound
                                .send(Inbound::Frame(Bytes::from(encode_error(Some(&id), &error))))
                                .await;
                        }
                        return (None, retry);
                    }
                }
            }
        }
    }
    (parser.last_event_id().map(str::to_owned), retry)
}
