//! The Streamable HTTP server: one endpoint, both eras, secure by default.
//!
//! - **Handshake era** (2025-03-26 … 2025-11-25): `initialize` opens a session with a
//!   128-bit random id; POSTs carry requests, answered as JSON or an SSE stream; GET opens the
//!   session's stream for server-initiated messages, or resumes a dropped stream with
//!   `Last-Event-ID`; DELETE ends the session. Sessions are capped and reaped when idle.
//! - **Stateless era** (2026-07-28): a request declaring the revision in
//!   `MCP-Protocol-Version` is served on its own, by a session that lives as long as the
//!   request; closing its response stream cancels it.
//! - **WebSocket** (when [`HttpServerOptions::websocket`] is set): a `GET` with
//!   `Upgrade: websocket` on the same path becomes one socket carrying one session (see
//!   [`crate::transport::ws`]), after the same checks as every other request.
//! - **Security**: `Host` and `Origin` are checked before anything else (403), the server binds
//!   127.0.0.1 by default and refuses a non-loopback address without an explicit allowlist or
//!   an authentication hook, bodies over the cap are refused with 413 before parsing, headers
//!   must arrive within a timeout, and every socket has TCP_NODELAY (Nagle plus delayed ACK
//!   otherwise costs 40 ms per call).

use std::{
    collections::HashMap,
    convert::Infallible,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{net::TcpListener, sync::mpsc};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use super::{
    body::{self, Body},
    event_store::{EventStore, InMemoryEventStore},
    legacy::{self, LegacySessions},
    security::HostPolicy,
    shared,
    store::SharedStore,
    streams::{self, Streams},
};
use crate::{
    Error,
    jsonrpc::{ErrorObject, Limits, codes},
    session::Session,
    sync::Mutex,
    transport::{
        Inbound, Link, OUTBOUND_QUEUE,
        ws::{self, WsSessions, WsSettings},
    },
};

/// Starts the engine for one session over the given link (the server role's `serve`).
pub type SessionFactory = Arc<dyn Fn(Link) -> Session + Send + Sync>;

/// Decides whether a request may proceed; `Err` is the status and message to answer with.
pub type AuthHook = Arc<dyn Fn(&HeaderMap) -> Result<(), (StatusCode, String)> + Send + Sync>;

/// Server settings. Defaults follow DESIGN §6.
#[derive(Clone)]
pub struct HttpServerOptions {
    /// Where to listen (default 127.0.0.1, a free port).
    pub bind: SocketAddr,
    /// The MCP endpoint's path.
    pub path: String,
    /// Host names accepted in `Host` (default: the loopback names).
    pub allowed_hosts: Option<Vec<String>>,
    /// Full origins accepted in `Origin` (default: http(s) origins of the allowed hosts).
    pub allowed_origins: Option<Vec<String>>,
    /// Authenticates each request.
    pub auth: Option<AuthHook>,
    /// OAuth bearer tokens: serves the protected-resource metadata and refuses requests
    /// without a valid token (401/403 with `WWW-Authenticate`).
    pub resource_server: Option<Arc<crate::auth::ResourceServer>>,
    /// Largest request body (413 beyond it, before parsing).
    pub max_body_bytes: usize,
    /// Most sessions at once, counting the one-request sessions of stateless requests in
    /// flight (503 beyond it).
    pub max_sessions: usize,
    /// A session with no request for this long is closed.
    pub session_idle_timeout: Duration,
    /// Serve the handshake era without sessions (each request stands alone).
    pub stateless: bool,
    /// Answer with JSON only, never SSE (progress and logs of a request are then dropped).
    pub json_response: bool,
    /// The `retry:` hint on priming events.
    pub sse_retry: Duration,
    /// Events the default in-memory store keeps per stream for `Last-Event-ID` resumption
    /// (0 disables resumption).
    pub resumable_events: usize,
    /// Where events are kept for resumption, instead of the default in-memory store.
    pub event_store: Option<Arc<dyn EventStore>>,
    /// How long a client may take to send its request headers.
    pub header_read_timeout: Duration,
    /// Where old (2024-11-05) clients open the legacy HTTP+SSE transport's stream (`None`
    /// turns that transport off).
    pub legacy_sse_path: Option<String>,
    /// Where legacy clients POST their messages (named in the stream's `endpoint` event).
    pub legacy_messages_path: String,
    /// Shares sessions with other replicas of this server (scale-out; see
    /// [`store`](super::store)). `None`: sessions live in this process only.
    pub shared_store: Option<Arc<dyn SharedStore>>,
    /// Also accept WebSocket upgrades on `path` (`None`, the default: refused as a plain
    /// `GET`). Each socket is one session; the checks above apply to the upgrade request.
    pub websocket: Option<WsSettings>,
}

impl std::fmt::Debug for HttpServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServerOptions")
            .field("bind", &self.bind)
            .field("path", &self.path)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("stateless", &self.stateless)
            .field("websocket", &self.websocket)
            .finish_non_exhaustive()
    }
}

impl Default for HttpServerOptions {
    fn default() -> Self {
        HttpServerOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            path: "/mcp".into(),
            allowed_hosts: None,
            allowed_origins: None,
            auth: None,
            resource_server: None,
            max_body_bytes: Limits::SERVER.max_message_bytes,
            max_sessions: 10_000,
            session_idle_timeout: Duration::from_secs(30 * 60),
            stateless: false,
            json_response: false,
            sse_retry: Duration::from_secs(1),
            resumable_events: 256,
            event_store: None,
            header_read_timeout: Duration::from_secs(10),
            legacy_sse_path: Some("/sse".into()),
            legacy_messages_path: "/messages".into(),
            shared_store: None,
            websocket: None,
        }
    }
}

impl HttpServerOptions {
    /// Listens on `port` of 127.0.0.1.
    pub fn port(port: u16) -> Self {
        HttpServerOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], port)),
            ..Default::default()
        }
    }
}

/// A running server.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    path: String,
    stop: CancellationToken,
    state: Arc<State>,
    /// The accept loop and every connection it serves: `shutdown` waits for them, so no
    /// request is answered by a server whose `shutdown` has returned.
    tasks: TaskTracker,
}

pub(super) struct HttpSession {
    pub(super) _slot: Slot,
    pub(super) engine: Session,
    pub(super) inbound: mpsc::Sender<Inbound>,
    pub(super) streams: Arc<Streams>,
    pub(super) last_active: Mutex<Instant>,
}

impl HttpSession {
    /// A session active as of now, holding its place (`slot`) against `max_sessions`.
    pub(super) fn new(
        slot: Slot,
        engine: Session,
        inbound: mpsc::Sender<Inbound>,
        streams: Arc<Streams>,
    ) -> Arc<HttpSession> {
        Arc::new(HttpSession {
            _slot: slot,
            engine,
            inbound,
            streams,
            last_active: Mutex::new(Instant::now()),
        })
    }
}

pub(super) struct State {
    pub(super) options: HttpServerOptions,
    policy: HostPolicy,
    pub(super) factory: SessionFactory,
    pub(super) sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    pub(super) legacy: LegacySessions,
    /// Sessions of every kind alive now, against `max_sessions`.
    slots_used: Arc<AtomicUsize>,
    pub(super) event_store: Option<Arc<dyn EventStore>>,
    /// Open WebSocket sessions.
    ws_sessions: Arc<WsSessions>,
    /// Serving WebSocket only ([`crate::server::Server::serve_ws`]): a plain request on the
    /// endpoint is told to upgrade.
    ws_only: bool,
}

/// One of the `max_sessions` places, given back when dropped.
pub(super) struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl State {
    /// The shared state of a server with these options (already checked by `bind`).
    pub(super) fn new(options: HttpServerOptions, factory: SessionFactory) -> Arc<State> {
        State::serving(options, factory, false)
    }

    fn serving(options: HttpServerOptions, factory: SessionFactory, ws_only: bool) -> Arc<State> {
        let loopback = options.bind.ip().is_loopback();
        let policy = match &options.allowed_hosts {
            Some(hosts) => HostPolicy::new(hosts.clone(), options.allowed_origins.clone()),
            // Reachable from the network and authenticating every request: whatever name the
            // clients use for it is fine.
            None if !loopback => HostPolicy::any_host(options.allowed_origins.clone()),
            None => HostPolicy::new(
                super::security::LOOPBACK_HOSTS
                    .iter()
                    .map(|s| (*s).to_owned()),
                options.allowed_origins.clone(),
            ),
        };
        let event_store = match (&options.event_store, options.resumable_events) {
            (Some(store), _) => Some(store.clone()),
            (None, 0) => None,
            (None, n) => Some(Arc::new(InMemoryEventStore::new(n)) as Arc<dyn EventStore>),
        };
        Arc::new(State {
            options,
            policy,
            factory,
            sessions: Mutex::new(HashMap::new()),
            legacy: LegacySessions::default(),
            slots_used: Arc::new(AtomicUsize::new(0)),
            event_store,
            ws_sessions: Arc::default(),
            ws_only,
        })
    }

    /// Takes a session place, or `None` at the cap; taking and counting are one atomic step,
    /// so concurrent `initialize`s cannot overshoot it.
    pub(super) fn reserve_slot(&self) -> Option<Slot> {
        let max = self.options.max_sessions;
        self.slots_used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(self.slots_used.clone()))
    }

    /// Open sessions of every transport (they share the cap).
    pub(super) fn session_count(&self) -> usize {
        self.sessions.lock().len() + self.legacy.len() + self.ws_sessions.len()
    }

    /// Closes every session of every transport.
    async fn close_all(&self) {
        let sessions: Vec<_> = self.sessions.lock().drain().map(|(_, s)| s).collect();
        for s in sessions {
            s.engine.close().await;
        }
        self.legacy.close_all().await;
        self.ws_sessions.close_all().await;
    }
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State").finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Binds and starts serving. Refuses a non-loopback address unless the options name the
    /// hosts to accept or an authentication hook.
    pub async fn bind(
        options: HttpServerOptions,
        factory: SessionFactory,
    ) -> Result<HttpServer, Error> {
        HttpServer::bind_serving(options, factory, false).await
    }

    /// Binds a server that answers WebSocket upgrades only (`options.websocket` set).
    pub(crate) async fn bind_ws_only(
        options: HttpServerOptions,
        factory: SessionFactory,
    ) -> Result<HttpServer, Error> {
        HttpServer::bind_serving(options, factory, true).await
    }

    async fn bind_serving(
        options: HttpServerOptions,
        factory: SessionFactory,
        ws_only: bool,
    ) -> Result<HttpServer, Error> {
        let loopback = options.bind.ip().is_loopback();
        if !loopback
            && options.allowed_hosts.is_none()
            && options.auth.is_none()
            && options.resource_server.is_none()
        {
            return Err(Error::InvalidArgument(format!(
                "refusing to listen on {} without `allowed_hosts` or an `auth` hook: a server reachable from the \
                 network must say which Host names it answers to (DNS rebinding) or authenticate its clients",
                options.bind
            )));
        }
        let listener = TcpListener::bind(options.bind).await?;
        let addr = listener.local_addr()?;
        let path = options.path.clone();
        let state = State::serving(options, factory, ws_only);
        let stop = CancellationToken::new();
        if let Some(bus) = state
            .options
            .shared_store
            .as_ref()
            .and_then(|s| s.subscribe())
        {
            tokio::spawn(shared::bus_loop(Arc::downgrade(&state), bus));
        }
        let tasks = TaskTracker::new();
        tasks.spawn(accept_loop(
            listener,
            state.clone(),
            stop.clone(),
            tasks.clone(),
        ));
        tokio::spawn(reap_idle(state.clone(), stop.clone()));
        Ok(HttpServer {
            addr,
            path,
            stop,
            state,
            tasks,
        })
    }

    /// The address listened on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// The endpoint's URL for WebSocket clients (`ws://`), when upgrades are accepted.
    pub fn ws_url(&self) -> String {
        format!("ws://{}{}", self.addr, self.path)
    }

    /// How many sessions are open (Streamable HTTP and legacy HTTP+SSE).
    pub fn session_count(&self) -> usize {
        self.state.session_count()
    }

    /// Stops accepting and closes every session.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        self.state.close_all().await;
        // Each connection task ends at its next poll (it watches `stop` first); waiting for
        // them means a request racing the shutdown is never answered by this server after
        // this returns, and the listener is closed so the port can be bound again.
        self.tasks.close();
        self.tasks.wait().await;
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
        // An upgraded socket no longer belongs to any HTTP connection: close it here.
        self.state.ws_sessions.request_close_all();
    }
}

async fn accept_loop(
    listener: TcpListener,
    state: Arc<State>,
    stop: CancellationToken,
    connections: TaskTracker,
) {
    loop {
        let (stream, _peer) = tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(target: "oxmcp::http", "accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        connections.spawn(serve_connection(state.clone(), stream, stop.clone()));
    }
}

/// Serves HTTP/1.1 on one connection until it closes or the server stops.
async fn serve_connection<IO>(state: Arc<State>, io: IO, stop: CancellationToken)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let header_timeout = state.options.header_read_timeout;
    let service = service_fn(move |req| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(handle(&state, req).await) }
    });
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(Some(header_timeout))
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service)
        // A WebSocket upgrade takes the connection over once its 101 is out.
        .with_upgrades();
    tokio::select! {
        // A stopped server answers nothing more, even a request already readable.
        biased;
        _ = stop.cancelled() => {}
        _ = conn => {}
    }
}

/// A server with no listener, fed connections by hand: the fuzz target drives the request
/// handler through an in-memory pipe with it, exactly as a socket would.
pub(crate) struct InMemoryServer {
    state: Arc<State>,
    stop: CancellationToken,
}

impl InMemoryServer {
    pub(crate) fn new(options: HttpServerOptions, factory: SessionFactory) -> Self {
        InMemoryServer {
            state: State::new(options, factory),
            stop: CancellationToken::new(),
        }
    }

    /// Serves one connection whose other end is returned.
    pub(crate) fn connect(&self) -> tokio::io::DuplexStream {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        tokio::spawn(serve_connection(
            self.state.clone(),
            ours,
            self.stop.clone(),
        ));
        theirs
    }

    /// Closes every session and stops every connection.
    pub(crate) async fn shutdown(&self) {
        self.stop.cancel();
        self.state.close_all().await;
    }
}

/// Closes sessions that have been idle too long.
async fn reap_idle(state: Arc<State>, stop: CancellationToken) {
    let every = (state.options.session_idle_timeout / 4)
        .clamp(Duration::from_millis(50), Duration::from_secs(60));
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
        let idle = state.options.session_idle_timeout;
        let expired: Vec<Arc<HttpSession>> = {
            let mut sessions = state.sessions.lock();
            let dead: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| {
                    s.engine.is_closed()
                        || (s.last_active.lock().elapsed() > idle && !s.streams.any_live())
                })
                .map(|(id, _)| id.clone())
                .collect();
            dead.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for s in expired {
            s.engine.request_close();
        }
    }
}

async fn handle(state: &Arc<State>, req: Request<Incoming>) -> Response<Body> {
    // Decided before the body is read: DNS rebinding, routing, authentication.
    if let Err(refusal) = state.policy.check_request(req.uri(), req.headers()) {
        return body::rpc_error(
            refusal.status,
            None,
            ErrorObject::new(codes::INVALID_REQUEST, refusal.reason),
        );
    }
    let path = req.uri().path();
    if let Some(rs) = &state.options.resource_server
        && path == rs.metadata_path()
    {
        return match *req.method() {
            Method::GET => body::json(StatusCode::OK, rs.metadata_json()),
            _ => not_allowed("GET"),
        };
    }
    let endpoint = if path == state.options.path {
        Endpoint::Mcp
    } else if state.options.legacy_sse_path.as_deref() == Some(path) {
        Endpoint::LegacyStream
    } else if state.options.legacy_sse_path.is_some() && path == state.options.legacy_messages_path
    {
        Endpoint::LegacyMessages
    } else {
        return body::empty(StatusCode::NOT_FOUND);
    };
    if let Some(auth) = &state.options.auth
        && let Err((status, message)) = auth(req.headers())
    {
        return body::rpc_error(
            status,
            None,
            ErrorObject::new(codes::INVALID_REQUEST, message),
        );
    }
    let mut req = req;
    if let Some(rs) = &state.options.resource_server {
        if let Err(refusal) = rs.authorize(req.headers()).await {
            let mut r = body::rpc_error(
                refusal.status,
                None,
                ErrorObject::new(codes::INVALID_REQUEST, refusal.message),
            );
            if let Ok(v) = HeaderValue::from_str(&refusal.www_authenticate) {
                r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
            }
            return r;
        }
        // Checked: the client's token goes no further (never upstream, never to a handler).
        req.headers_mut().remove(header::AUTHORIZATION);
    }
    match (endpoint, req.method().clone()) {
        (Endpoint::Mcp, _) => {
            if let Some(settings) = &state.options.websocket
                && ws::is_upgrade(req.headers())
            {
                return upgrade(state, req, settings);
            }
            if state.ws_only {
                let mut r = refuse(
                    StatusCode::UPGRADE_REQUIRED,
                    codes::INVALID_REQUEST,
                    "Upgrade Required: this endpoint speaks WebSocket only",
                );
                r.headers_mut()
                    .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
                return r;
            }
        }
        (Endpoint::LegacyStream, Method::GET) => {
            if !accepts(req.headers(), "text/event-stream") {
                return refuse(
                    StatusCode::NOT_ACCEPTABLE,
                    codes::INVALID_REQUEST,
                    "Not Acceptable: GET needs text/event-stream",
                );
            }
            return legacy::open(state, &state.options.legacy_messages_path);
        }
        (Endpoint::LegacyMessages, Method::POST) => return legacy::post(state, req).await,
        (Endpoint::LegacyStream, _) => return not_allowed("GET"),
        (Endpoint::LegacyMessages, _) => return not_allowed("POST"),
    }
    match *req.method() {
        Method::POST => super::post::post(state, req).await,
        Method::GET => super::get::get(state, req).await,
        Method::DELETE => super::get::delete(state, req).await,
        _ => {
            let mut r = body::empty(StatusCode::METHOD_NOT_ALLOWED);
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            r
        }
    }
}

/// A WebSocket upgrade on the MCP endpoint, every check passed: a place among the sessions,
/// then the 101 (or the upgrade's own refusal).
fn upgrade(state: &Arc<State>, req: Request<Incoming>, settings: &WsSettings) -> Response<Body> {
    let Some(slot) = state.reserve_slot() else {
        return too_many_sessions();
    };
    let factory = state.factory.clone();
    match ws::accept(
        req,
        settings,
        move |link| factory(link),
        &state.ws_sessions,
        slot,
    ) {
        Ok(switch) => switch.map(|()| body::full(bytes::Bytes::new())),
        Err((status, message)) => refuse(status, codes::INVALID_REQUEST, message),
    }
}

/// Which of the server's endpoints a request is for.
#[derive(Clone, Copy)]
enum Endpoint {
    Mcp,
    LegacyStream,
    LegacyMessages,
}

fn not_allowed(allow: &'static str) -> Response<Body> {
    let mut r = body::empty(StatusCode::METHOD_NOT_ALLOWED);
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

pub(super) fn accepts(headers: &HeaderMap, kind: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.split(';').next().unwrap_or("").trim())
        .any(|v| v == kind || v == "*/*")
}

pub(super) fn header_str<'a>(headers: &'a HeaderMap, name: &http::HeaderName) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

pub(super) fn refuse(status: StatusCode, code: i64, message: impl Into<String>) -> Response<Body> {
    body::rpc_error(status, None, ErrorObject::new(code, message))
}

/// 503 with a hint to come back: every session place is taken.
pub(super) fn too_many_sessions() -> Response<Body> {
    let mut r = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::INTERNAL_ERROR,
        "too many sessions",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    r
}

/// Starts an engine whose outbound messages go to `streams`.
pub(super) fn start_engine(
    state: &State,
    streams: &Arc<Streams>,
) -> (Session, mpsc::Sender<Inbound>) {
    let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let engine = (state.factory)(Link {
        inbound: in_rx,
        outbound: out_tx,
    });
    tokio::spawn(streams::route(streams.clone(), out_rx, in_tx.clone()));
    (engine, in_tx)
}

pub(super) fn new_session_id() -> String {
    crate::random::id128()
}
