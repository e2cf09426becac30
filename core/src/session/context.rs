//! What a handler gets with each request: who asked, the request's `_meta`, a cancellation
//! token, and a way to talk back (progress, related notifications, nested requests) that is
//! routed to the stream of this request.
//!
//! A request can also go on after its answer was sent (a task runs in the background): its
//! context is then [`Detached`], and what it sends either carries extra `_meta` tagging it
//! (a 2025-11-25 task's `related-task` key) or is not sent at all (a 2026-07-28 task, whose
//! request's connection is gone and which reports through the task instead).

use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{RequestOptions, Session};
use crate::{
    Result,
    jsonrpc::RequestId,
    protocol::{JsonObject, ProgressToken, ProtocolVersion, meta, methods},
    transport::Route,
};

/// The context of one inbound request. Cheap to clone and `Send`, so bindings can hand it to
/// host callbacks.
#[derive(Clone, Debug)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    id: RequestId,
    method: String,
    meta: Option<JsonObject>,
    cancel: CancellationToken,
    session: Session,
    headers: Option<Arc<http::HeaderMap>>,
    /// Set once the request goes on in the background after its answer.
    detached: Option<Arc<Detached>>,
}

/// How a request that goes on after its answer talks back; decided when it is detached.
#[derive(Debug, Default)]
pub struct Detached {
    how: OnceLock<DetachedAs>,
}

#[derive(Debug)]
enum DetachedAs {
    /// Sends nothing: notifications are dropped and requests refused.
    Silent,
    /// Sends as usual, with these `_meta` members added and no stream of its own.
    Tagged(JsonObject),
}

impl Detached {
    /// Not detached yet: the context behaves as any request's until [`Detached::silence`] or
    /// [`Detached::tag`].
    pub fn new() -> Arc<Self> {
        Arc::new(Detached::default())
    }

    /// From now on nothing is sent for this request.
    pub fn silence(&self) {
        let _ = self.how.set(DetachedAs::Silent);
    }

    /// From now on what is sent for this request carries `meta` in its `_meta`.
    pub fn tag(&self, meta: JsonObject) {
        let _ = self.how.set(DetachedAs::Tagged(meta));
    }

    fn route(&self, id: &RequestId) -> Route {
        match self.how.get() {
            // The request's own stream is closed once it is answered; the session's general
            // stream (Streamable HTTP's GET stream) carries what it says afterwards.
            Some(_) => Route::Unrelated,
            None => Route::Related(id.clone()),
        }
    }

    /// Adds the tag to `params` (`None` when silent).
    fn dress(&self, params: Option<Value>) -> Option<Option<Value>> {
        match self.how.get() {
            None => Some(params),
            Some(DetachedAs::Silent) => None,
            Some(DetachedAs::Tagged(extra)) => {
                let mut params = params.unwrap_or_else(|| json!({}));
                if let Value::Object(map) = &mut params
                    && let Value::Object(meta) = map.entry("_meta").or_insert_with(|| json!({}))
                {
                    for (k, v) in extra {
                        meta.insert(k.clone(), v.clone());
                    }
                }
                Some(Some(params))
            }
        }
    }
}

impl RequestContext {
    pub(crate) fn new(
        id: RequestId,
        method: String,
        meta: Option<JsonObject>,
        cancel: CancellationToken,
        session: Session,
        headers: Option<Arc<http::HeaderMap>>,
    ) -> Self {
        RequestContext {
            inner: Arc::new(Inner {
                headers,
                id,
                method,
                meta,
                cancel,
                session,
                detached: None,
            }),
        }
    }

    /// A context for the same request that may outlive its answer: it has its own
    /// cancellation token, and talks back as `detached` says once that is decided.
    pub(crate) fn detachable(&self, cancel: CancellationToken, detached: Arc<Detached>) -> Self {
        RequestContext {
            inner: Arc::new(Inner {
                id: self.inner.id.clone(),
                method: self.inner.method.clone(),
                meta: self.inner.meta.clone(),
                cancel,
                session: self.inner.session.clone(),
                headers: self.inner.headers.clone(),
                detached: Some(detached),
            }),
        }
    }

    /// The request's id, as the peer sent it.
    pub fn id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The HTTP headers the request arrived with, on Streamable HTTP.
    pub fn http_headers(&self) -> Option<&http::HeaderMap> {
        self.inner.headers.as_deref()
    }

    /// The request's method.
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&JsonObject> {
        self.inner.meta.as_ref()
    }

    /// Fires when the peer cancels the request or the connection closes.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the request is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// The session the request arrived on.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// The progress token the caller attached, if any.
    pub fn progress_token(&self) -> Option<ProgressToken> {
        self.meta()?
            .get(meta::PROGRESS_TOKEN)
            .and_then(RequestId::from_value)
    }

    /// The protocol version the request declared in `_meta` (2026-07-28 style), as sent.
    pub fn declared_protocol_version(&self) -> Option<&str> {
        self.meta()?.get(meta::PROTOCOL_VERSION)?.as_str()
    }

    /// Whether this request is a stateless (2026-07-28) request rather than part of a
    /// handshake-era session.
    pub fn is_stateless(&self) -> bool {
        self.declared_protocol_version()
            .and_then(ProtocolVersion::parse)
            .is_some_and(ProtocolVersion::is_stateless)
    }

    /// The revision this request is served under: the one it declares if it is stateless,
    /// otherwise the session's negotiated one.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        match self
            .declared_protocol_version()
            .and_then(ProtocolVersion::parse)
        {
            Some(v) if v.is_stateless() => Some(v),
            _ => self.session().protocol_version(),
        }
    }

    /// The capabilities of the client for this request: from `_meta` on a stateless request,
    /// from the handshake otherwise.
    pub fn client_capabilities(&self) -> Option<Value> {
        if self.is_stateless() {
            self.meta()?.get(meta::CLIENT_CAPABILITIES).cloned()
        } else {
            self.session().with_state(|s| s.peer_capabilities.clone())
        }
    }

    /// Sends `notifications/progress` for this request. Does nothing if the caller did not
    /// ask for progress or the request was cancelled.
    pub async fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<()> {
        let Some(token) = self.progress_token() else {
            return Ok(());
        };
        if self.is_cancelled() {
            return Ok(());
        }
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.notify(methods::PROGRESS, Some(params)).await
    }

    /// Ends this request's response stream without its answer (Streamable HTTP; the client
    /// reconnects with `Last-Event-ID` and gets the answer there). Lets a long call release
    /// its connection; no-op on transports without per-request streams, and for a stateless
    /// request, whose stream is its only link to the client (there is nothing to resume).
    pub async fn close_stream(&self) {
        if self.is_stateless() {
            return;
        }
        let _ = self
            .session()
            .outbound()
            .send(crate::transport::Outbound::CloseStream(self.id().clone()))
            .await;
    }

    /// Sends a notification related to this request (routed to its stream on HTTP).
    /// Nothing is sent once the request is cancelled: the peer must not hear about it again.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        if self.is_cancelled() {
            return Ok(());
        }
        let (params, route) = match &self.inner.detached {
            None => (params, Route::Related(self.id().clone())),
            Some(d) => match d.dress(params) {
                None => return Ok(()),
                Some(params) => (params, d.route(self.id())),
            },
        };
        self.session().notify_routed(method, params, route).await
    }

    /// Sends a request to the peer on behalf of this request (a server asking its client for
    /// sampling, say). Cancelled if this request is cancelled.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        mut options: RequestOptions,
    ) -> Result<Value> {
        let (params, route) = match &self.inner.detached {
            None => (params, Route::Related(self.id().clone())),
            Some(d) => match d.dress(params) {
                None => {
                    return Err(crate::Error::InvalidArgument(format!(
                        "cannot send `{method}`: this request runs in the background and its \
                         client is reached through the task, not the connection"
                    )));
                }
                Some(params) => (params, d.route(self.id())),
            },
        };
        options.route = route;
        if options.cancel.is_none() {
            options.cancel = Some(self.inner.cancel.clone());
        }
        self.session().request(method, params, options).await
    }
}
