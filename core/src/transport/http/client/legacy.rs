//! The 2024-11-05 HTTP+SSE transport, tried when a server refuses the first `initialize`
//! POST: a GET opens the SSE stream, its `endpoint` event names (on the same origin) where
//! messages are POSTed, and the answers come back on the stream.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use http::{Method, Uri, header};
use http_body_util::BodyExt;

use super::{
    Shared, header,
    read::{collect_limited, read_sse},
    request::{Call, request},
};
use crate::{
    Error,
    transport::{
        Inbound,
        http::sse::{SseItem, SseParser},
    },
};

/// Legacy HTTP+SSE: GET the SSE endpoint, wait for its `endpoint` event, and keep reading
/// the stream for answers.
pub(super) async fn legacy_connect(shared: &Arc<Shared>) -> Result<Uri, Error> {
    let r = request(shared, Call::new(Method::GET, &shared.url)).await?;
    let content_type = header(r.headers(), &header::CONTENT_TYPE).unwrap_or_default();
    if !r.status().is_success() || !content_type.starts_with("text/event-stream") {
        return Err(Error::Protocol(format!(
            "not a legacy SSE endpoint (HTTP {})",
            r.status()
        )));
    }
    let mut body = r.into_body();
    let mut parser = SseParser::new(shared.options.max_message_bytes);
    let endpoint = loop {
        let Some(Ok(frame)) = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .ok()
            .flatten()
        else {
            return Err(Error::Protocol(
                "the SSE stream sent no endpoint event".into(),
            ));
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let found = parser.push(&data).into_iter().find_map(|item| match item {
            SseItem::Event(e) if e.event.as_deref() == Some("endpoint") => Some(e.data),
            _ => None,
        });
        if let Some(e) = found {
            break e;
        }
    };
    let endpoint = resolve_same_origin(&shared.url, endpoint.trim())?;
    shared.conn.lock().legacy_endpoint = Some(endpoint.clone());
    let reader = shared.clone();
    tokio::spawn(async move {
        let mut none = Vec::new();
        // Continue with the same parser state by feeding the rest of this body.
        let _ = read_sse(&reader, body, &mut none).await;
        if !reader.stop.is_cancelled() {
            let _ = reader
                .inbound
                .send(Inbound::Closed(Some(Error::closed(
                    "the legacy SSE stream ended",
                ))))
                .await;
        }
    });
    Ok(endpoint)
}

/// The endpoint event's URL, which must be on the same origin as the SSE URL (a server must
/// not redirect our messages elsewhere).
fn resolve_same_origin(base: &Uri, endpoint: &str) -> Result<Uri, Error> {
    let resolved: Uri = if endpoint.starts_with('/') {
        let authority = base.authority().map(|a| a.as_str()).unwrap_or_default();
        format!(
            "{}://{authority}{endpoint}",
            base.scheme_str().unwrap_or("http")
        )
        .parse()
        .map_err(|e| Error::Protocol(format!("bad endpoint `{endpoint}`: {e}")))?
    } else {
        endpoint
            .parse()
            .map_err(|e| Error::Protocol(format!("bad endpoint `{endpoint}`: {e}")))?
    };
    if resolved.scheme() != base.scheme() || resolved.authority() != base.authority() {
        return Err(Error::Protocol(format!(
            "the legacy endpoint `{endpoint}` is on another origin"
        )));
    }
    Ok(resolved)
}

/// Sends one message to the legacy endpoint; its answer comes on the SSE stream.
pub(super) async fn legacy_post(
    shared: &Arc<Shared>,
    endpoint: &Uri,
    body: Bytes,
) -> Result<(), Error> {
    let r = request(shared, Call::post(endpoint, body)).await?;
    if !r.status().is_success() {
        return Err(Error::Protocol(format!(
            "the legacy endpoint answered HTTP {}",
            r.status()
        )));
    }
    let _ = collect_limited(r.into_body(), shared.options.max_message_bytes).await;
    Ok(())
}
