//! Response bodies and builders: JSON, JSON-RPC errors and SSE streams.

use std::convert::Infallible;

use bytes::Bytes;
use futures::stream;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::Frame;
use tokio::sync::mpsc;

use super::{headers, sse::SseEvent, streams::Delivery};
use crate::jsonrpc::{ErrorObject, RequestId, encode_error, encode_error_without_id};

/// The body of every response the server sends.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

pub(crate) fn empty(status: StatusCode) -> Response<Body> {
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = status;
    r
}

pub(crate) fn json(status: StatusCode, bytes: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(full(bytes));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// A JSON-RPC error as an HTTP response; without an id when the request's was unreadable.
pub(crate) fn rpc_error(
    status: StatusCode,
    id: Option<&RequestId>,
    error: ErrorObject,
) -> Response<Body> {
    let body = match id {
        Some(id) => encode_error(Some(id), &error),
        None => encode_error_without_id(&error),
    };
    json(status, body)
}

/// Something that must happen when an SSE response ends, however it ends (the client
/// disconnecting included): closing a one-request session, say.
pub(crate) type OnEnd = Box<dyn FnOnce() + Send>;

struct SseState {
    first: Option<Bytes>,
    rx: mpsc::UnboundedReceiver<Delivery>,
    done: bool,
    on_end: Option<OnEnd>,
}

impl Drop for SseState {
    fn drop(&mut self) {
        if let Some(f) = self.on_end.take() {
            f();
        }
    }
}

/// An SSE response: the `prelude` events (a priming event, a first delivery already read),
/// then every delivery until the final one or until the stream is cut.
pub(crate) fn sse(
    status: StatusCode,
    prelude: Vec<SseEvent>,
    rx: mpsc::UnboundedReceiver<Delivery>,
    on_end: Option<OnEnd>,
    already_final: bool,
) -> Response<Body> {
    let first: Bytes = prelude
        .iter()
        .flat_map(|e| e.to_bytes().to_vec())
        .collect::<Vec<u8>>()
        .into();
    let state = SseState {
        first: Some(first),
        rx,
        done: already_final,
        on_end,
    };
    let body = stream::unfold(state, |mut state| async move {
        if let Some(first) = state.first.take()
            && !first.is_empty()
        {
            return Some((Ok::<_, Infallible>(Frame::data(first)), state));
        }
        if state.done {
            return None;
        }
        let delivery = state.rx.recv().await?;
        state.done = delivery.is_final;
        // The legacy transport's events carry no id: it has no resumption.
        let id = (!delivery.event_id.is_empty()).then_some(delivery.event_id);
        let event = SseEvent::message(id, &delivery.json);
        Some((Ok(Frame::data(event.to_bytes())), state))
    });
    let mut r = Response::new(StreamBody::new(body).boxed_unsync());
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(headers::X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    r
}
