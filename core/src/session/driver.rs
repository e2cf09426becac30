//! The driver task: reads inbound frames in order and routes each message without waiting on
//! any handler (where a new task would run on this same thread anyway — a current-thread
//! runtime, a host loop — it polls a new handler once, and gives it a task only if it is not
//! ready).

use std::{
    collections::hash_map::Entry,
    panic::AssertUnwindSafe,
    sync::{Arc, atomic::Ordering},
};

use bytes::Bytes;
use futures::FutureExt;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Dispatch, IncomingRequest, Inflight, Phase, RequestContext, Session};
use crate::{
    Error,
    embed::Join,
    jsonrpc::{
        Decoded, ErrorObject, ErrorResponse, Invalid, Limits, Message, Notification, Request,
        RequestId, Response, codes, decode, encode_error, encode_error_without_id, encode_response,
    },
    protocol::{
        CancelledNotificationParams, JsonObject, ProgressNotificationParams, ProtocolVersion, meta,
        methods,
    },
    transport::{HttpFrame, Inbound, Outbound, Route},
};

/// How long a transport may take to confirm it has shut down after `Close` (a child process
/// ladder takes at most about 4 s).
const CLOSE_CONFIRM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// How the transport cut a frame out of its input, which decides what becomes of bytes that
/// are not JSON.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// A line of a byte stream (stdio) or an HTTP body: not JSON is dropped (stdio: it may
    /// be a stray log line, and answering it could start two peers storming each other) or
    /// refused by the transport itself (HTTP answers 400 before the session sees it).
    Stream,
    /// A message the peer framed itself (WebSocket): not JSON is answered `-32700`, and the
    /// size cap is the transport's, already applied.
    Message,
}

/// Where the answer to one inbound request goes.
#[derive(Clone)]
enum ReplyTo {
    /// Straight to the transport.
    Direct,
    /// Into a batch being collected; `None` means "no answer" (cancelled).
    Batch(mpsc::UnboundedSender<Option<Vec<u8>>>),
}

pub(super) async fn drive(
    session: Session,
    mut inbound: mpsc::Receiver<Inbound>,
    dispatch: Arc<dyn Dispatch>,
) {
    let mut closing = false;
    // Once we ask the transport to close, it has this long to confirm.
    let mut close_deadline = None;
    // One waiter on the close token for the whole loop, rather than a registration with the
    // token (a lock and a list insert) per message.
    let close_requested = session.inner.close_requested.clone();
    let mut close_requested = std::pin::pin!(close_requested.cancelled());
    // Set once the transport stopped taking frames for good (its receiver is gone).
    let mut outbound_gone = false;
    let reason = loop {
        // A peer that sends but does not read fills the outbound queue; replies made where
        // nothing can wait (here, or by a finishing handler) then go out through a task of
        // their own each (`queue`). So while the queue is full, read nothing more: once a
        // slot frees, every frame queued before has gone in. What piles up is then bounded
        // by what one inbound frame and the requests in flight produce, and the peer's own
        // writes block as the transport's buffers fill.
        let backlogged = !closing && !outbound_gone && session.inner.outbound.capacity() == 0;
        let item = tokio::select! {
            biased;
            _ = &mut close_requested, if !closing => {
                closing = true;
                let deadline = tokio::time::Instant::now() + CLOSE_CONFIRM_TIMEOUT;
                close_deadline = Some(deadline);
                session.fail_pending(Error::closed("the session was closed locally"));
                session.cancel_inflight();
                // A transport whose queue is full (a peer that stopped reading) must not hold
                // the close hostage.
                let _ = tokio::time::timeout_at(deadline, session.inner.outbound.send(Outbound::Close)).await;
                continue;
            }
            _ = sleep_until_opt(close_deadline) => {
                tracing::error!(target: "oxmcp", "transport did not confirm close in {CLOSE_CONFIRM_TIMEOUT:?}");
                break None;
            }
            room = session.inner.outbound.reserve(), if backlogged => {
                outbound_gone = room.is_err();
                continue;
            }
            item = inbound.recv(), if !backlogged => item,
        };
        match item {
            Some(Inbound::Frame(bytes)) if !closing => {
                if let Some(lifecycle) = session.on_frame(bytes, None, &dispatch, Framing::Stream) {
                    let _ = lifecycle.await;
                }
            }
            Some(Inbound::FrameWithHeaders(frame)) if !closing => {
                if let Some(lifecycle) = session.on_http_frame(frame, &dispatch) {
                    let _ = lifecycle.await;
                }
            }
            Some(Inbound::Message(bytes)) if !closing => {
                if let Some(lifecycle) = session.on_frame(bytes, None, &dispatch, Framing::Message)
                {
                    let _ = lifecycle.await;
                }
            }
            Some(Inbound::Frame(_) | Inbound::FrameWithHeaders(..) | Inbound::Message(_)) => {}
            Some(Inbound::Oversized { len }) => session.log_dropped(&format!(
                "dropped an inbound message of {len} bytes (cap {})",
                session.inner.config.limits.max_message_bytes
            )),
            Some(Inbound::Closed(reason)) => break reason,
            None => break None,
        }
    };
    session.shut_down(reason, closing, &mut inbound).await;
    dispatch.closed(&session);
    session.inner.done.cancel();
}

impl Session {
    async fn shut_down(
        &self,
        reason: Option<Error>,
        already_closing: bool,
        inbound: &mut mpsc::Receiver<Inbound>,
    ) {
        let error = reason
            .clone()
            .unwrap_or_else(|| Error::closed("the peer closed the connection"));
        self.fail_pending(error);
        // A transport that dropped its outbound receiver can write nothing more (see the
        // contract in `transport`): no answer could reach the peer, so handlers are cancelled
        // at once rather than given the grace period.
        let can_write = !self.inner.outbound.is_closed();
        if !already_closing {
            // The peer stopped sending, but may still read: let in-flight handlers finish
            // (answers to pipelined requests must not be lost), within the grace period.
            if can_write {
                self.let_inflight_finish().await;
            }
            self.cancel_inflight();
            // Let the transport flush what the handlers wrote and release everything; it
            // confirms with one more `Closed`.
            if self.inner.outbound.send(Outbound::Close).await.is_ok() {
                let confirmed = async {
                    while let Some(item) = inbound.recv().await {
                        if matches!(item, Inbound::Closed(_)) {
                            break;
                        }
                    }
                };
                if tokio::time::timeout(CLOSE_CONFIRM_TIMEOUT, confirmed)
                    .await
                    .is_err()
                {
                    tracing::error!(target: "oxmcp", "transport did not confirm close in {CLOSE_CONFIRM_TIMEOUT:?}");
                }
            }
        }
        self.update_state(|s| s.phase = Phase::Closed);
        *self.inner.close_reason.lock() =
            Some(reason.unwrap_or_else(|| Error::closed("the session is closed")));
    }

    /// Waits until no request is in flight, or the grace period is over.
    async fn let_inflight_finish(&self) {
        let grace = tokio::time::Instant::now() + self.inner.config.shutdown_grace;
        loop {
            let drained = self.inner.inflight_drained.notified();
            if self.inner.inflight.lock().is_empty()
                && self.inner.batches_pending.load(Ordering::Acquire) == 0
            {
                return;
            }
            if tokio::time::timeout_at(grace, drained).await.is_err() {
                return;
            }
        }
    }

    fn fail_pending(&self, error: Error) {
        let entries = {
            let mut table = self.inner.pending.lock();
            table.closed.get_or_insert(error.clone());
            std::mem::take(&mut table.entries)
        };
        for (_, entry) in entries {
            let _ = entry.reply.send(Err(error.clone()));
        }
    }

    fn cancel_inflight(&self) {
        for (_, f) in self.inner.inflight.lock().drain() {
            f.cancel.cancel();
        }
        self.inner.inflight_drained.notify_waiters();
    }

    fn log_dropped(&self, what: &str) {
        // `what` quotes the peer (its error, a parse error's context): a log line is a
        // terminal too.
        let what = crate::sanitize::line(what);
        if let Some(suppressed) = self.inner.dropped_log.lock().admit() {
            if suppressed > 0 {
                tracing::warn!(target: "oxmcp", "{what} ({suppressed} similar messages suppressed)");
            } else {
                tracing::warn!(target: "oxmcp", "{what}");
            }
        }
    }

    /// Handles one frame; returns the handler task of a lifecycle request, which the driver
    /// awaits before reading on.
    fn on_frame(
        &self,
        bytes: Bytes,
        headers: Option<Arc<http::HeaderMap>>,
        dispatch: &Arc<dyn Dispatch>,
        framing: Framing,
    ) -> Option<Join> {
        let limits = match framing {
            Framing::Stream => self.inner.config.limits,
            Framing::Message => Limits {
                max_message_bytes: usize::MAX,
                ..self.inner.config.limits
            },
        };
        match decode(&bytes, &limits) {
            Err(e) if framing == Framing::Message => {
                let error = ErrorObject::new(codes::PARSE_ERROR, format!("Parse error: {e}"));
                self.reply_error(None, error, &ReplyTo::Direct);
            }
            Err(e) => self.log_dropped(&format!("dropped an unparseable message: {e}")),
            Ok(decoded) => return self.on_decoded(decoded, headers, dispatch),
        }
        None
    }

    /// A message the HTTP transport decoded already: used as it is when it was checked
    /// against caps no looser than this session's, decoded again under ours otherwise.
    fn on_http_frame(&self, frame: HttpFrame, dispatch: &Arc<dyn Dispatch>) -> Option<Join> {
        let ours = self.inner.config.limits;
        if frame.limits.max_message_bytes <= ours.max_message_bytes
            && frame.limits.max_depth <= ours.max_depth
        {
            self.on_decoded(*frame.decoded, Some(frame.headers), dispatch)
        } else {
            self.on_frame(frame.bytes, Some(frame.headers), dispatch, Framing::Stream)
        }
    }

    fn on_decoded(
        &self,
        decoded: Decoded,
        headers: Option<Arc<http::HeaderMap>>,
        dispatch: &Arc<dyn Dispatch>,
    ) -> Option<Join> {
        match decoded {
            Decoded::Single(Ok(Message::Request(request))) => {
                let sequential = dispatch.is_sequential(&request.method);
                let task = self.on_request(request, dispatch, &ReplyTo::Direct, headers);
                return task.filter(|_| sequential);
            }
            Decoded::Single(Ok(message)) => self.on_message(message, dispatch, &ReplyTo::Direct),
            Decoded::Single(Err(invalid)) => self.on_invalid(invalid, &ReplyTo::Direct),
            Decoded::Batch(items) => self.on_batch(items, dispatch),
        }
        None
    }

    fn on_invalid(&self, invalid: Invalid, reply_to: &ReplyTo) {
        match invalid.reply() {
            Some(reply) => self.reply_error(reply.id, reply.error, reply_to),
            None => self.log_dropped(&format!("dropped an invalid message: {}", invalid.reason)),
        }
    }

    fn on_batch(&self, items: Vec<Result<Message, Invalid>>, dispatch: &Arc<dyn Dispatch>) {
        let version = self.protocol_version();
        if !version.is_some_and(ProtocolVersion::allows_batches) {
            let why = match version {
                Some(v) => format!("JSON-RPC batches are not supported in protocol version {v}"),
                None => "JSON-RPC batches are only supported after initialize negotiates 2025-03-26 or earlier".into(),
            };
            self.reply_error(None, ErrorObject::invalid_request(why), &ReplyTo::Direct);
            return;
        }
        let answers = items
            .iter()
            .filter(|i| match i {
                Ok(Message::Request(_)) => true,
                Err(invalid) => invalid.needs_reply(),
                _ => false,
            })
            .count();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let reply_to = ReplyTo::Batch(tx);
        let mut ids = Vec::new();
        for item in items {
            match item {
                Ok(message) => {
                    if let Message::Request(r) = &message {
                        ids.push(r.id.clone());
                    }
                    self.on_message(message, dispatch, &reply_to);
                }
                Err(invalid) => self.on_invalid(invalid, &reply_to),
            }
        }
        drop(reply_to);
        if answers == 0 {
            return;
        }
        let session = self.clone();
        self.inner.batches_pending.fetch_add(1, Ordering::AcqRel);
        self.inner.spawner.detach(async move {
            let mut parts = Vec::with_capacity(answers);
            for _ in 0..answers {
                match rx.recv().await {
                    Some(Some(part)) => parts.push(part),
                    Some(None) => {}
                    None => break,
                }
            }
            if !parts.is_empty() {
                session.send_batch(parts, ids).await;
            }
            session.inner.batches_pending.fetch_sub(1, Ordering::AcqRel);
            session.inner.inflight_drained.notify_waiters();
        });
    }

    async fn send_batch(&self, parts: Vec<Vec<u8>>, ids: Vec<RequestId>) {
        {
            let mut frame =
                Vec::with_capacity(parts.iter().map(|p| p.len() + 1).sum::<usize>() + 1);
            frame.push(b'[');
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    frame.push(b',');
                }
                frame.extend_from_slice(part);
            }
            frame.push(b']');
            let _ = self.send_frame(frame, Route::BatchResponse(ids)).await;
        }
    }

    fn on_message(&self, message: Message, dispatch: &Arc<dyn Dispatch>, reply_to: &ReplyTo) {
        match message {
            Message::Request(request) => {
                self.on_request(request, dispatch, reply_to, None);
            }
            Message::Notification(n) => self.on_notification(n, dispatch),
            Message::Response(Response { id, result }) => self.resolve(&id, Ok(result)),
            Message::Error(ErrorResponse {
                id: Some(id),
                error,
            }) => self.resolve(&id, Err(typed(error))),
            Message::Error(ErrorResponse { id: None, error }) => self.log_dropped(&format!(
                "the peer reported an error about an unknown message: {error}"
            )),
        }
    }

    fn resolve(&self, id: &RequestId, reply: Result<Box<RawValue>, Error>) {
        let entry = self.inner.pending.lock().entries.remove(id);
        match entry {
            Some(entry) => {
                let _ = entry.reply.send(reply);
            }
            // A response after a timeout or cancel is expected now and then: not worth a warning.
            None => {
                tracing::debug!(target: "oxmcp", "response for unknown or finished request {id}")
            }
        }
    }

    fn on_request(
        &self,
        request: Request,
        dispatch: &Arc<dyn Dispatch>,
        reply_to: &ReplyTo,
        headers: Option<Arc<http::HeaderMap>>,
    ) -> Option<Join> {
        let Request { id, method, params } = request;
        let meta = extract_meta(params.as_deref());
        let stateless = meta
            .as_ref()
            .and_then(|m| m.get(meta::PROTOCOL_VERSION))
            .and_then(|v| v.as_str())
            .and_then(ProtocolVersion::parse)
            .is_some_and(ProtocolVersion::is_stateless);
        let cancel = CancellationToken::new();
        {
            let mut inflight = self.inner.inflight.lock();
            // Checked before any shortcut: even a `ping` may not reuse an id in flight, or its
            // answer would be taken for the other request's.
            // One lookup for the check and the insert.
            let slot = match inflight.entry(id.clone()) {
                Entry::Vacant(slot) => slot,
                Entry::Occupied(_) => {
                    drop(inflight);
                    let error = ErrorObject::invalid_request(format!(
                        "Invalid request `{method}`: id {id} is already in use by a request in flight"
                    ));
                    self.reply_error(Some(id), error, reply_to);
                    return None;
                }
            };
            if method == methods::PING && !stateless {
                drop(slot);
                drop(inflight);
                self.reply_result(id, Ok(empty_result()), reply_to);
                return None;
            }
            slot.insert(Inflight {
                cancel: cancel.clone(),
                initialize: method == methods::INITIALIZE,
            });
        }
        let ctx = RequestContext::new(
            id.clone(),
            method.clone(),
            meta,
            cancel.clone(),
            self.clone(),
            headers,
        );
        let mut handler =
            AssertUnwindSafe(dispatch.request(IncomingRequest { method, params }, ctx))
                .catch_unwind();
        // Most handlers answer without waiting on anything: poll once here and give the
        // request a task of its own only if it has to wait. That saves, per request, a spawn,
        // a hand-off through the scheduler and a registration with the cancellation token.
        // The first poll uses a waker that does nothing: a handler that is not ready is
        // polled again at once by its task, and registers that task's waker then.
        if self.inner.poll_inline && !cancel.is_cancelled() {
            let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
            if let std::task::Poll::Ready(result) = handler.poll_unpin(&mut cx) {
                let outcome = (!cancel.is_cancelled()).then_some(result);
                self.finish_request(id, outcome, reply_to);
                return None;
            }
        }
        let session = self.clone();
        let reply_to = reply_to.clone();
        Some(self.inner.spawner.spawn(async move {
            let outcome = tokio::select! {
                biased;
                _ = cancel.cancelled() => None,
                result = &mut handler => Some(result),
            };
            // The cancel can land (on another thread) between the two polls above, and a
            // handler that watches its token then ends at once, with a result: the peer that
            // cancelled must still not get it.
            let outcome = outcome.filter(|_| !cancel.is_cancelled());
            session.finish_request(id, outcome, &reply_to);
        }))
    }

    /// Answers a request whose handler finished (`None`: it was cancelled) and takes it off
    /// the in-flight table.
    fn finish_request(
        &self,
        id: RequestId,
        outcome: Option<std::thread::Result<super::HandlerResult>>,
        reply_to: &ReplyTo,
    ) {
        let finished = {
            let mut inflight = self.inner.inflight.lock();
            inflight.remove(&id);
            inflight.is_empty()
        };
        match outcome {
            // Cancelled: the peer must not hear about this request again.
            None => self.no_reply(reply_to),
            Some(Ok(result)) => self.reply_result(id, result, reply_to),
            Some(Err(_panic)) => self.reply_result(
                id,
                Err(ErrorObject::internal(
                    "Internal error: the handler panicked",
                )),
                reply_to,
            ),
        }
        if finished {
            self.inner.inflight_drained.notify_waiters();
        }
    }

    fn on_notification(&self, notification: Notification, dispatch: &Arc<dyn Dispatch>) {
        match notification.method.as_str() {
            methods::CANCELLED => {
                let Some(params) = parse_params::<CancelledNotificationParams>(&notification)
                else {
                    return self.log_dropped("ignored a malformed notifications/cancelled");
                };
                let Some(id) = params.request_id else { return };
                let inflight = self.inner.inflight.lock();
                match inflight.get(&id) {
                    // `initialize` must not be cancelled; a cancel for it is ignored.
                    Some(f) if !f.initialize => f.cancel.cancel(),
                    _ => {
                        tracing::debug!(target: "oxmcp", "ignored cancel for unknown request {id}")
                    }
                }
            }
            methods::PROGRESS => {
                let Some(params) = parse_params::<ProgressNotificationParams>(&notification) else {
                    return self.log_dropped("ignored a malformed notifications/progress");
                };
                let table = self.inner.pending.lock();
                if let Some(inbox) = table
                    .entries
                    .get(&params.progress_token)
                    .and_then(|e| e.progress.as_ref())
                {
                    inbox.push(params);
                }
            }
            _ => dispatch.notification(notification, self),
        }
    }

    fn reply_result(
        &self,
        id: RequestId,
        result: Result<Box<RawValue>, ErrorObject>,
        reply_to: &ReplyTo,
    ) {
        match result {
            Ok(raw) => self.deliver(encode_response(&id, &raw), id, reply_to),
            Err(error) => self.reply_error(Some(id), error, reply_to),
        }
    }

    fn reply_error(&self, id: Option<RequestId>, error: ErrorObject, reply_to: &ReplyTo) {
        let frame = match (&id, self.protocol_version()) {
            // Up to 2025-06-18 MCP defers to JSON-RPC 2.0: an unreadable id is answered as null.
            (None, Some(v)) if v < ProtocolVersion::V2025_11_25 => encode_error(None, &error),
            // From 2025-11-25 on (and before any handshake) the id is omitted instead.
            (None, _) => encode_error_without_id(&error),
            (Some(id), _) => encode_error(Some(id), &error),
        };
        match id {
            Some(id) => self.deliver(frame, id, reply_to),
            None => match reply_to {
                ReplyTo::Batch(tx) => {
                    let _ = tx.send(Some(frame));
                }
                ReplyTo::Direct => self.queue(frame, Route::Unrelated),
            },
        }
    }

    fn deliver(&self, frame: Vec<u8>, id: RequestId, reply_to: &ReplyTo) {
        match reply_to {
            ReplyTo::Direct => self.queue(frame, Route::Response(id)),
            ReplyTo::Batch(tx) => {
                let _ = tx.send(Some(frame));
            }
        }
    }

    fn no_reply(&self, reply_to: &ReplyTo) {
        if let ReplyTo::Batch(tx) = reply_to {
            let _ = tx.send(None);
        }
    }

    /// Queues a frame from a context that cannot wait (the driver, a finishing handler).
    fn queue(&self, bytes: Vec<u8>, route: Route) {
        let frame = Outbound::Frame(crate::transport::OutFrame { bytes, route });
        if let Err(mpsc::error::TrySendError::Full(frame)) = self.inner.outbound.try_send(frame) {
            let tx = self.inner.outbound.clone();
            self.inner.spawner.detach(async move {
                let _ = tx.send(frame).await;
            });
        }
    }
}

fn empty_result() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("`{}` is valid JSON")
}

fn parse_params<T: serde::de::DeserializeOwned>(n: &Notification) -> Option<T> {
    serde_json::from_str(n.params.as_deref()?.get()).ok()
}

/// Reads `_meta` out of request params without decoding the rest.
fn extract_meta(params: Option<&RawValue>) -> Option<JsonObject> {
    #[derive(Deserialize)]
    struct MetaOnly {
        #[serde(rename = "_meta")]
        meta: Option<JsonObject>,
    }
    let text = params?.get();
    if !text.contains("\"_meta\"") {
        return None;
    }
    serde_json::from_str::<MetaOnly>(text).ok()?.meta
}

/// A request the transport itself failed arrives as a local JSON-RPC error naming the
/// transport and the error's kind; an authorization failure is typed back into
/// [`Error::Auth`], so callers (and the bindings' error mappers) see `auth`, not a peer error.
fn typed(error: crate::jsonrpc::ErrorObject) -> Error {
    let data = error.data.as_ref();
    let from_transport = data.is_some_and(|d| d.get("transport").is_some());
    let kind = data.and_then(|d| d.get("kind")).and_then(|k| k.as_str());
    if from_transport && kind == Some("auth") {
        let reason = error
            .message
            .trim_start_matches("HTTP transport: ")
            .trim_start_matches("authorization failed: ");
        return Error::Auth(reason.to_owned());
    }
    Error::Rpc(error)
}
