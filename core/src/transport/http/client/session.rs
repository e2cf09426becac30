//! The session after the handshake: the GET stream that carries server-initiated messages
//! (opened once, resumed after drops, following the session when it is replaced), the short
//! wait of a session's first requests for that stream, and re-initialization when the
//! server forgot the session (404): `initialize` and `notifications/initialized` are
//! replayed, one request at a time.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::json;

use super::{
    Shared, header,
    read::{collect_limited, read_sse},
    request::{Call, request},
};
use crate::{Error, transport::http::headers};

/// The session's protocol revision as a header, for requests that carry no body to name it.
pub(super) fn version_header(shared: &Shared) -> HeaderMap {
    let mut h = HeaderMap::new();
    if let Some(v) = shared
        .conn
        .lock()
        .protocol_version
        .clone()
        .and_then(|v| HeaderValue::from_str(&v).ok())
    {
        h.insert(headers::MCP_PROTOCOL_VERSION, v);
    }
    h
}

/// How long a session's first requests wait for its GET stream to be answered. A server may
/// send a request it makes while handling ours (an elicitation in a tool call) on the GET
/// stream, and may drop it when that stream is not open yet (the TypeScript SDK's server
/// does); the GET is sent right after `initialize`, so this is one round trip at most.
const GET_READY_WAIT: Duration = Duration::from_secs(2);

/// Holds a request of a new session until its GET stream is answered (at most
/// [`GET_READY_WAIT`]).
pub(super) async fn wait_for_get_stream(shared: &Shared) {
    // Every request passes here: a subscription only when there is something to wait for.
    if *shared.get_ready.borrow() {
        return;
    }
    let mut ready = shared.get_ready.subscribe();
    if tokio::time::timeout(GET_READY_WAIT, ready.wait_for(|r| *r))
        .await
        .is_err()
    {
        tracing::debug!(target: "oxmcp::http", "the GET stream was not answered in time; sending anyway");
        // Only once: the requests after this one do not wait for it again.
        shared.get_ready.send_replace(true);
    }
}

/// Marks the GET stream answered when its task ends on any path.
struct GetReady(Arc<Shared>);

impl Drop for GetReady {
    fn drop(&mut self) {
        self.0.get_ready.send_replace(true);
    }
}

/// Opens the session's GET stream once, and keeps it open (resuming after drops) until the
/// transport closes or the server says it has none (405).
pub(super) fn start_get_stream(shared: &Arc<Shared>) {
    if !shared.options.get_stream
        || shared
            .get_started
            .swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        return;
    }
    shared.get_ready.send_replace(false);
    let shared = shared.clone();
    tokio::spawn(async move {
        let _ready_on_exit = GetReady(shared.clone());
        let mut last_id: Option<String> = None;
        let mut delay = Duration::from_millis(500);
        // The session the stream belongs to, and one the server said it no longer knows.
        let mut serving: Option<String> = None;
        let mut lost: Option<String> = None;
        while !shared.stop.is_cancelled() {
            let session = shared.conn.lock().session_id.clone();
            match session {
                // Between a lost session and its replacement: wait for the new one.
                Some(s) if lost.as_ref() == Some(&s) => {}
                None if serving.is_some() => {}
                None => {
                    shared
                        .get_started
                        .store(false, std::sync::atomic::Ordering::SeqCst);
                    return;
                }
                Some(s) => {
                    if serving.as_ref() != Some(&s) {
                        // Event ids belong to their session: never resume a new one with them.
                        last_id = None;
                        delay = Duration::from_millis(500);
                        serving = Some(s);
                    }
                }
            }
            let Some(session) = serving.clone().filter(|s| lost.as_ref() != Some(s)) else {
                tokio::select! {
                    _ = shared.stop.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
                continue;
            };
            let headers = version_header(&shared);
            let answered = request(
                &shared,
                Call::new(Method::GET, &shared.url)
                    .session(Some(&session))
                    .headers(headers)
                    .resume_from(last_id.as_deref()),
            )
            .await;
            // Answered (even refused): the requests waiting for the stream may go.
            shared.get_ready.send_replace(true);
            match answered {
                Ok(r) if r.status().is_success() => {
                    let mut none = Vec::new();
                    let (l, retry) = read_sse(&shared, r.into_body(), &mut none).await;
                    last_id = l.or(last_id);
                    delay = retry.unwrap_or(Duration::from_secs(1));
                }
                Ok(r)
                    if matches!(
                        r.status(),
                        StatusCode::METHOD_NOT_ALLOWED | StatusCode::CONFLICT
                    ) =>
                {
                    return;
                }
                // The server forgot the session; the next request starts a new one, and the
                // stream follows it there.
                Ok(r) if r.status() == StatusCode::NOT_FOUND => lost = Some(session.clone()),
                _ => delay = (delay * 2).min(Duration::from_secs(30)),
            }
            tokio::select! {
                _ = shared.stop.cancelled() => return,
                _ = tokio::time::sleep(delay) => {}
            }
        }
    });
}

/// Starts a new session after the server forgot ours: replays `initialize` and
/// `notifications/initialized`.
pub(super) async fn reinitialize(shared: &Arc<Shared>, lost: Option<&str>) -> Result<(), Error> {
    let _one_at_a_time = shared.reinit.lock().await;
    if shared.conn.lock().session_id.as_deref() != lost {
        // Another request already re-established it.
        return Ok(());
    }
    let (mut init, n) = {
        let mut conn = shared.conn.lock();
        conn.session_id = None;
        conn.reinits += 1;
        (
            conn.initialize
                .clone()
                .ok_or_else(|| Error::closed("the session was lost before initialize"))?,
            conn.reinits,
        )
    };
    init["id"] = json!(format!("oxmcp-reinitialize-{n}"));
    let body = Bytes::from(serde_json::to_vec(&init).unwrap_or_default());
    let r = request(shared, Call::post(&shared.url, body)).await?;
    if !r.status().is_success() {
        return Err(Error::closed(format!(
            "re-initializing after a lost session failed: HTTP {}",
            r.status()
        )));
    }
    let id = header(r.headers(), &headers::MCP_SESSION_ID);
    // Drain the answer (JSON or a short SSE stream) so the connection can be reused.
    let _ = collect_limited(r.into_body(), shared.options.max_message_bytes).await;
    shared.conn.lock().session_id = id.clone();
    let note = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let headers = version_header(shared);
    let _ = request(
        shared,
        Call::post(&shared.url, note)
            .session(id.as_deref())
            .headers(headers),
    )
    .await;
    tracing::info!(target: "oxmcp::http", "the server lost our session; a new one was started");
    // A stream loop that ended with the old session starts again for the new one.
    start_get_stream(shared);
    Ok(())
}
