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

// This file holds the transport, its settings and the loop that sends each outbound
// message; the parts live beside it:
// - `request`: one HTTP request with the common headers and the authorization rounds;
// - `read`: the answer to a POST (JSON or SSE) turned into messages;
// - `session`: the GET stream and re-initialization after a lost session;
// - `legacy`: the 2024-11-05 HTTP+SSE fallback.
mod legacy;
mod read;
mod request;
mod session;

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{HeaderMap, HeaderName, Method, StatusCode, Uri};
use http_body_util::Full;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::{
    client::legacy::{Client as HyperClient, connect::HttpConnector},
    rt::TokioExecutor,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::{
    legacy::{legacy_connect, legacy_post},
    read::read_answer,
    request::{Call, message_headers, request},
    session::{reinitialize, start_get_stream, wait_for_get_stream},
};
use super::headers;
use crate::{
    Error,
    auth::AuthProvider,
    jsonrpc::{ErrorObject, Limits, RequestId, encode_error},
    protocol::{methods, param_headers::ParamHeaderTable},
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
            Call::new(Method::DELETE, &shared.url).session(Some(&id)),
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
                Call::post(&shared.url, body.clone())
                    .session(session.as_deref())
                    .headers(headers),
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

/// A response header's value, trimmed (`None`: absent or not text).
fn header(headers: &HeaderMap, name: &HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_owned())
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
