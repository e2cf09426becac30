//! The Streamable HTTP client transport, with the legacy HTTP+SSE fallback.
//!
//! Each outbound message is a POST on a pooled keep-alive connection; answers come back as
//! JSON or as an SSE stream, and a stream that ends before its answer is resumed with a GET
//! carrying `Last-Event-ID`, after the server's `retry:` delay. After the handshake the
//! session id and protocol version ride on every request, a GET stream carries
//! server-initiated messages, and a session the server forgot (404) is re-established
//! transparently by replaying `initialize`. A server that refuses the first `initialize`
//! POST with 400, 404 or 405 is tried as a 2024-11-05 HTTP+SSE server. Stateless
//! (2026-07-28) requests carry `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`.
//!
//! HTTP failures of a request are turned into a JSON-RPC error for that request, so the
//! caller gets an error at once instead of a timeout.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::{
    client::legacy::{Client as HyperClient, connect::HttpConnector},
    rt::TokioExecutor,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    answer, headers,
    sse::{SseItem, SseParser},
};
use crate::{
    Error,
    auth::{AuthProvider, Challenge},
    jsonrpc::{ErrorObject, Limits, RequestId, encode_error},
    protocol::{
        meta, methods,
        param_headers::{self, ParamHeaderTable},
    },
    sync::Mutex,
    transport::{Inbound, Link, OUTBOUND_QUEUE, Outbound, Transport},
};

/// Supplies a bearer token for each request (`None`: no `Authorization` header).
pub type TokenProvider = Arc<dyn Fn() -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// Client settings.
#[derive(Clone)]
pub struct HttpClientOptions {
    /// Extra headers on every request.
    pub headers: HeaderMap,
    /// Bearer tokens from a fixed source (ignored when `auth` is set).
    pub token: Option<TokenProvider>,
    /// Authorization that reacts to the server: the OAuth 2.1 flow of
    /// [`crate::auth::OAuthClient`] (a 401 or 403 `insufficient_scope` runs it, then the
    /// request is sent again).
    pub auth: Option<Arc<dyn AuthProvider>>,
    /// Largest message accepted (an SSE event or a JSON body).
    pub max_message_bytes: usize,
    /// Open the GET stream for server-initiated messages after the handshake.
    pub get_stream: bool,
    /// Try the legacy HTTP+SSE transport when `initialize` is refused.
    pub legacy_fallback: bool,
    /// How many times a dropped stream is resumed before the request fails.
    pub max_resumptions: u32,
    /// Root certificates (DER) trusted for `https://` besides the built-in and system ones
    /// (a private CA, a test server's self-signed certificate).
    pub extra_root_certificates: Vec<Vec<u8>>,
}

impl std::fmt::Debug for HttpClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientOptions")
            .field("get_stream", &self.get_stream)
            .field("legacy_fallback", &self.legacy_fallback)
            .finish_non_exhaustive()
    }
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        HttpClientOptions {
            headers: HeaderMap::new(),
            token: None,
            auth: None,
            max_message_bytes: Limits::CLIENT.max_message_bytes,
            get_stream: true,
            legacy_fallback: true,
            max_resumptions: 5,
            extra_root_certificates: Vec::new(),
        }
    }
}

/// A connection to a Streamable HTTP (or legacy HTTP+SSE) server.
#[derive(Debug)]
pub struct HttpClientTransport {
    url: Uri,
    options: HttpClientOptions,
    param_headers: ParamHeaderTable,
    tls: Arc<rustls::ClientConfig>,
}

impl HttpClientTransport {
    /// A transport for `url` (`http://` or `https://`).
    pub fn new(url: &str, options: HttpClientOptions) -> Result<Self, Error> {
        let uri: Uri = url
            .parse()
            .map_err(|e| Error::InvalidArgument(format!("invalid URL `{url}`: {e}")))?;
        match uri.scheme_str() {
            Some("http" | "https") => {}
            Some(other) => {
                return Err(Error::InvalidArgument(format!(
                    "unsupported URL scheme `{other}` (http or https)"
                )));
            }
            None => return Err(Error::InvalidArgument(format!("URL `{url}` has no scheme"))),
        }
        let tls = super::tls::client_config(&options.extra_root_certificates)?;
        Ok(HttpClientTransport {
            url: uri,
            options,
            param_headers: ParamHeaderTable::default(),
            tls,
        })
    }

    /// The table of `x-mcp-header` declarations this transport mirrors into `Mcp-Param-*`
    /// headers; the client fills it from `tools/list`.
    pub fn param_headers(&self) -> ParamHeaderTable {
        self.param_headers.clone()
    }
}

type Http = HyperClient<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// How long sent bytes may stay unacknowledged before the connection is given up (Linux
/// `TCP_USER_TIMEOUT`).
const UNACKNOWLEDGED_LIMIT: Duration = Duration::from_secs(15);
/// How long establishing a TCP connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the client knows about the connection.
#[derive(Default)]
struct Conn {
    session_id: Option<String>,
    protocol_version: Option<String>,
    /// The `initialize` request, replayed when the server forgets the session.
    initialize: Option<Value>,
    /// Set once the server turned out to speak the legacy HTTP+SSE transport.
    legacy_endpoint: Option<Uri>,
    reinits: u64,
}

struct Shared {
    url: Uri,
    options: HttpClientOptions,
    http: Http,
    conn: Mutex<Conn>,
    inbound: mpsc::Sender<Inbound>,
    stop: CancellationToken,
    get_started: std::sync::atomic::AtomicBool,
    /// False from the GET stream's start until the server answered it (or the stream gave
    /// up): the first requests of a session wait for it, see `GET_READY_WAIT`.
    get_ready: tokio::sync::watch::Sender<bool>,
    /// Serializes re-initialization after a 404.
    reinit: tokio::sync::Mutex<()>,
    param_headers: ParamHeaderTable,
}

impl Transport for HttpClientTransport {
    fn into_link(self) -> Link {
        let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_keepalive(Some(Duration::from_secs(60)));
        // A request written into a connection whose other end is gone (a server restarted on
        // the same port can leave one behind) is never acknowledged; without this the kernel
        // retransmits for many minutes. Unacknowledged data never reached the server, so the
        // request is safely sent again on a new connection.
        connector.set_tcp_user_timeout(Some(UNACKNOWLEDGED_LIMIT));
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        // The TLS layer below needs the plain connector to pass `https://` through.
        connector.enforce_http(false);
        let connector = HttpsConnectorBuilder::new()
            .with_tls_config((*self.tls).clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        let http = HyperClient::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(connector);
        let shared = Arc::new(Shared {
            url: self.url,
            options: self.options,
            http,
            conn: Mutex::new(Conn::default()),
            inbound: in_tx,
            stop: CancellationToken::new(),
            get_started: std::sync::atomic::AtomicBool::new(false),
            get_ready: tokio::sync::watch::Sender::new(true),
            reinit: tokio::sync::Mutex::new(()),
            param_headers: self.param_headers,
        });
        tokio::spawn(drive(shared, out_rx));
        Link {
            inbound: in_rx,
            outbound: out_tx,
        }
    }
}

async fn drive(shared: Arc<Shared>, mut outbound: mpsc::Receiver<Outbound>) {
    // Messages are sent in order (a notification right after a request must not overtake
    // it), but their answers are awaited concurrently.
    while let Some(item) = outbound.recv().await {
        match item {
            Outbound::Frame(frame) => {
                let message: Value = serde_json::from_slice(&frame.bytes).unwrap_or(Value::Null);
                let is_request = !ids_of(&message).is_empty();
                let sent = send(&shared, Bytes::from(frame.bytes), message).await;
                if let Some(waiting) = sent {
                    if is_request {
                        tokio::spawn(waiting);
                    } else {
                        // A notification or a response is acknowledged (202) before the next
                        // message goes out, so `notifications/initialized` cannot be overtaken
                        // by the requests that follow it on another connection.
                        waiting.await;
                    }
                }
            }
            Outbound::CloseStream(_) => {}
            Outbound::Close => break,
        }
    }
    shared.stop.cancel();
    let session = shared.conn.lock().session_id.clone();
    if let Some(id) = session {
        // Tell the server the session is over (it may answer 405: it does not allow that).
        let _ = request(
            &shared,
            Method::DELETE,
            &shared.url,
            Some(&id),
            None,
            HeaderMap::new(),
            None,
        )
        .await;
    }
    let _ = shared.inbound.send(Inbound::Closed(None)).await;
}

fn ids_of(message: &Value) -> Vec<RequestId> {
    let one = |m: &Value| {
        if m.get("method").is_some() {
            m.get("id").and_then(RequestId::from_value)
        } else {
            None
        }
    };
    match message {
        Value::Array(items) => items.iter().filter_map(one).collect(),
        m => one(m).into_iter().collect(),
    }
}

/// Sends one message; returns the future that reads its answer, if it has one to read.
async fn send(shared: &Arc<Shared>, body: Bytes, message: Value) -> Option<BoxFuture<'static, ()>> {
    let ids = ids_of(&message);
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if method == methods::INITIALIZE {
        shared.conn.lock().initialize = Some(message.clone());
    }
    let legacy = shared.conn.lock().legacy_endpoint.clone();
    if let Some(endpoint) = legacy {
        if let Err(e) = legacy_post(shared, &endpoint, body).await {
            fail(shared, &ids, &e).await;
        }
        return None;
    }
    let shared = shared.clone();
    Some(Box::pin(async move {
        if !ids.is_empty() && method != methods::INITIALIZE {
            wait_for_get_stream(&shared).await;
        }
        let mut attempt = 0;
        loop {
            let headers = message_headers(&shared, &message);
            let session = shared.conn.lock().session_id.clone();
            let response = request(
                &shared,
                Method::POST,
                &shared.url,
                session.as_deref(),
                Some(body.clone()),
                headers,
                None,
            )
            .await;
            let response = match response {
                Ok(r) => r,
                Err(e) => return fail(&shared, &ids, &e).await,
            };
            let status = response.status();
            tracing::debug!(target: "oxmcp::http", "POST {method} {ids:?} (session {session:?}): HTTP {status}");
            if status == StatusCode::NOT_FOUND
                && session.is_some()
                && method != methods::INITIALIZE
                && attempt == 0
            {
                // The server forgot the session (a restart, an idle reap): start a new one and retry.
                attempt += 1;
                if let Err(e) = reinitialize(&shared, session.as_deref()).await {
                    return fail(&shared, &ids, &e).await;
                }
                continue;
            }
            if method == methods::INITIALIZE
                && shared.options.legacy_fallback
                && matches!(
                    status,
                    StatusCode::BAD_REQUEST
                        | StatusCode::NOT_FOUND
                        | StatusCode::METHOD_NOT_ALLOWED
                )
            {
                match legacy_connect(&shared).await {
                    Ok(endpoint) => {
                        if let Err(e) = legacy_post(&shared, &endpoint, body.clone()).await {
                            fail(&shared, &ids, &e).await;
                        }
                        return;
                    }
                    Err(e) => {
                        tracing::debug!(target: "oxmcp::http", "legacy SSE fallback failed: {e}")
                    }
                }
            }
            if method == methods::INITIALIZE
                && status.is_success()
                && let Some(id) = header(response.headers(), &headers::MCP_SESSION_ID)
            {
                shared.conn.lock().session_id = Some(id);
            }
            let initialized = method == methods::INITIALIZE && status.is_success();
            read_answer(&shared, response, &ids, &method).await;
            if initialized {
                start_get_stream(&shared);
            }
            return;
        }
    }))
}

/// The headers a stateless (2026-07-28) request needs: its version, `Mcp-Method`, `Mcp-Name`
/// and the `Mcp-Param-*` mirrors of its arguments. (A session's version is added to every
/// request by `request`.)
fn message_headers(shared: &Shared, message: &Value) -> HeaderMap {
    let mut h = HeaderMap::new();
    let params = message.get("params");
    let declared = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(meta::PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let (Some(version), Some(method)) = (declared, message.get("method").and_then(Value::as_str))
    else {
        return h;
    };
    // Values that cannot travel as plain ASCII go base64-encoded (SEP-2243).
    let mut set = |name: HeaderName, value: &str| {
        if let Ok(v) = HeaderValue::from_str(&param_headers::encode(value)) {
            h.insert(name, v);
        }
    };
    set(headers::MCP_PROTOCOL_VERSION, version);
    set(headers::MCP_METHOD, method);
    let named = match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => params.and_then(|p| p.get("name")),
        methods::RESOURCES_READ => params.and_then(|p| p.get("uri")),
        _ => None,
    };
    let Some(name) = named.and_then(Value::as_str) else {
        return h;
    };
    set(headers::MCP_NAME, name);
    if method == methods::TOOLS_CALL {
        let arguments = params.and_then(|p| p.get("arguments"));
        for (header, value) in shared
            .param_headers
            .headers_for(name, arguments.unwrap_or(&Value::Null))
        {
            if let (Ok(n), Ok(v)) = (HeaderName::try_from(header), HeaderValue::from_str(&value)) {
                h.insert(n, v);
            }
        }
    }
    h
}

fn header(headers: &HeaderMap, name: &HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_owned())
}

/// How many times one request may send the user through authorization (a server that
/// keeps refusing must not loop us forever).
const MAX_AUTH_ROUNDS: usize = 3;

/// One HTTP request with the common headers; a 401 (or 403 `insufficient_scope`) goes to the
/// auth provider, and the request is sent again when it says so.
async fn request(
    shared: &Shared,
    method: Method,
    uri: &Uri,
    session: Option<&str>,
    body: Option<Bytes>,
    extra: HeaderMap,
    last_event_id: Option<&str>,
) -> Result<http::Response<hyper::body::Incoming>, Error> {
    let Some(auth) = &shared.options.auth else {
        let token = match &shared.options.token {
            Some(provider) => provider().await,
            None => None,
        };
        return request_once(
            shared,
            method,
            uri,
            session,
            body,
            extra,
            last_event_id,
            token,
        )
        .await;
    };
    let mut rounds = 0;
    loop {
        let token = auth.token().await?;
        let response = request_once(
            shared,
            method.clone(),
            uri,
            session,
            body.clone(),
            extra.clone(),
            last_event_id,
            token.clone(),
        )
        .await?;
        let status = response.status();
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let step_up = status == StatusCode::FORBIDDEN
            && challenge
                .as_deref()
                .and_then(crate::auth::BearerChallenge::parse)
                .is_some_and(|c| c.insufficient_scope());
        if !(status == StatusCode::UNAUTHORIZED || step_up) {
            return Ok(response);
        }
        if rounds == MAX_AUTH_ROUNDS {
            return Err(Error::Auth(format!(
                "the server still answers HTTP {status} after {MAX_AUTH_ROUNDS} authorizations"
            )));
        }
        rounds += 1;
        drop(response);
        auth.challenged(&Challenge {
            status: status.as_u16(),
            www_authenticate: challenge,
            server: shared.url.clone(),
            token,
        })
        .await?;
    }
}

#[allow(clippy::too_many_arguments)]
async fn request_once(
    shared: &Shared,
    method: Method,
    uri: &Uri,
    session: Option<&str>,
    body: Option<Bytes>,
    extra: HeaderMap,
    last_event_id: Option<&str>,
    token: Option<String>,
) -> Result<http::Response<hyper::body::Incoming>, Error> {
    let mut builder = Request::builder().method(method.clone()).uri(uri.clone());
    let h = builder
        .headers_mut()
        .ok_or_else(|| Error::InvalidArgument("bad request parts".into()))?;
    for (k, v) in &shared.options.headers {
        h.insert(k, v.clone());
    }
    h.extend(extra);
    // Every request after the handshake names the revision (2025-06-18 on), GET and DELETE too.
    if !h.contains_key(headers::MCP_PROTOCOL_VERSION) {
        let version = shared.conn.lock().protocol_version.clone();
        if let Some(v) = version.and_then(|v| HeaderValue::from_str(&v).ok()) {
            h.insert(headers::MCP_PROTOCOL_VERSION, v);
        }
    }
    if method == Method::POST {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    } else {
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
    }
    if let Some(id) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
        h.insert(headers::MCP_SESSION_ID, id);
    }
    if let Some(id) = last_event_id.and_then(|s| HeaderValue::from_str(s).ok()) {
        h.insert(headers::LAST_EVENT_ID, id);
    }
    // The token goes to the MCP endpoint's own origin only (a legacy endpoint is checked to
    // be same-origin; redirects are never followed).
    if let Some(token) = token
        && let Ok(mut v) = HeaderValue::from_str(&format!("Bearer {token}"))
    {
        v.set_sensitive(true);
        h.insert(header::AUTHORIZATION, v);
    }
    let sent_headers = h.clone();
    let body = body.unwrap_or_default();
    let req = builder
        .body(Full::new(body.clone()))
        .map_err(|e| Error::InvalidArgument(format!("could not build the HTTP request: {e}")))?;
    let failed = |e: hyper_util::client::legacy::Error| Error::ConnectionClosed {
        reason: format!("HTTP request to {uri} failed: {e}"),
        stderr: None,
    };
    match shared.http.request(req).await {
        Ok(r) => Ok(r),
        // A pooled keep-alive connection the server had already closed (a restart, an idle
        // timeout) fails before the server saw the request: send it once more on a new one.
        Err(e) if stale_connection(&e) => {
            let mut retry = Request::builder().method(method).uri(uri.clone());
            if let Some(h) = retry.headers_mut() {
                *h = sent_headers;
            }
            let req = retry.body(Full::new(body)).map_err(|e| {
                Error::InvalidArgument(format!("could not build the HTTP request: {e}"))
            })?;
            shared.http.request(req).await.map_err(failed)
        }
        Err(e) => Err(failed(e)),
    }
}

/// Whether a request failed because its pooled connection was already dead: closed before a
/// response began, or reset by the peer while the request was going out.
fn stale_connection(error: &hyper_util::client::legacy::Error) -> bool {
    use std::io::ErrorKind;
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(e) = source {
        if let Some(h) = e.downcast_ref::<hyper::Error>()
            && (h.is_canceled() || h.is_closed() || h.is_incomplete_message())
        {
            return true;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::BrokenPipe
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::TimedOut
            );
        }
        source = e.source();
    }
    false
}

/// Fails the requests `ids` with a local JSON-RPC error describing `error`.
async fn fail(shared: &Shared, ids: &[RequestId], error: &Error) {
    for id in ids {
        let e = ErrorObject::new(
            crate::jsonrpc::codes::INTERNAL_ERROR,
            format!("HTTP transport: {error}"),
        )
        .with_data(json!({ "transport": "http", "kind": error.kind().as_str() }));
        let _ = shared
            .inbound
            .send(Inbound::Frame(Bytes::from(encode_error(Some(id), &e))))
            .await;
    }
}

/// Reads the answer to a POST: nothing (202), a JSON body, or an SSE stream (resumed if it
/// drops before the answer).
async fn read_answer(
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
                Method::GET,
                &shared.url,
                session.as_deref(),
                None,
                headers,
                Some(&from),
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

fn version_header(shared: &Shared) -> HeaderMap {
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

fn remember_version(shared: &Shared, result: Option<&Value>) {
    if let Some(v) = result
        .and_then(|r| r.pointer("/result/protocolVersion"))
        .and_then(Value::as_str)
    {
        shared.conn.lock().protocol_version = Some(v.to_owned());
    }
}

async fn collect_limited(body: hyper::body::Incoming, max: usize) -> Result<Bytes, Error> {
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
async fn read_sse(
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

/// How long a session's first requests wait for its GET stream to be answered. A server may
/// send a request it makes while handling ours (an elicitation in a tool call) on the GET
/// stream, and may drop it when that stream is not open yet (the TypeScript SDK's server
/// does); the GET is sent right after `initialize`, so this is one round trip at most.
const GET_READY_WAIT: Duration = Duration::from_secs(2);

async fn wait_for_get_stream(shared: &Shared) {
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
fn start_get_stream(shared: &Arc<Shared>) {
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
                Method::GET,
                &shared.url,
                Some(&session),
                None,
                headers,
                last_id.as_deref(),
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
async fn reinitialize(shared: &Arc<Shared>, lost: Option<&str>) -> Result<(), Error> {
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
    let r = request(
        shared,
        Method::POST,
        &shared.url,
        None,
        Some(body),
        HeaderMap::new(),
        None,
    )
    .await?;
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
        Method::POST,
        &shared.url,
        id.as_deref(),
        Some(note),
        headers,
        None,
    )
    .await;
    tracing::info!(target: "oxmcp::http", "the server lost our session; a new one was started");
    // A stream loop that ended with the old session starts again for the new one.
    start_get_stream(shared);
    Ok(())
}

/// Legacy HTTP+SSE: GET the SSE endpoint, wait for its `endpoint` event, and keep reading
/// the stream for answers.
async fn legacy_connect(shared: &Arc<Shared>) -> Result<Uri, Error> {
    let r = request(
        shared,
        Method::GET,
        &shared.url,
        None,
        None,
        HeaderMap::new(),
        None,
    )
    .await?;
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

async fn legacy_post(shared: &Arc<Shared>, endpoint: &Uri, body: Bytes) -> Result<(), Error> {
    let r = request(
        shared,
        Method::POST,
        endpoint,
        None,
        Some(body),
        HeaderMap::new(),
        None,
    )
    .await?;
    if !r.status().is_success() {
        return Err(Error::Protocol(format!(
            "the legacy endpoint answered HTTP {}",
            r.status()
        )));
    }
    let _ = collect_limited(r.into_body(), shared.options.max_message_bytes).await;
    Ok(())
}
