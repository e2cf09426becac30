//! Serving WebSocket: the upgrade itself, run by the Streamable HTTP server once its own checks
//! passed, and [`WsServer`], that server listening for WebSocket alone.
//!
//! The upgrade rides on the HTTP server rather than beside it so that a refusal is exactly the
//! Streamable HTTP one: the same `Host`/`Origin` allowlist (403), the same `auth` hook and
//! bearer-token check (401/403 with `WWW-Authenticate`), the same session cap (503), all
//! answered as plain HTTP before anything is upgraded. One socket is one session, started by
//! the server's session factory like any other and closed with the server.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use http::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::{WebSocketStream, tungstenite::protocol::Role};

use super::{WsSettings, handshake, socket};
use crate::{
    session::Session,
    sync::Mutex,
    transport::{
        Link,
        http::{AuthHook, HttpServer, HttpServerOptions},
    },
};

/// The WebSocket sessions of one server, closed with it.
#[derive(Default)]
pub(crate) struct WsSessions {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Session>>,
}

impl WsSessions {
    /// How many sockets are open.
    pub(crate) fn len(&self) -> usize {
        self.open.lock().len()
    }

    /// Asks every session to close, without waiting (the server was dropped).
    pub(crate) fn request_close_all(&self) {
        for session in self.open.lock().values() {
            session.request_close();
        }
    }

    /// Closes every session (the server is shutting down): each socket closes with 1000. All
    /// at once, since each may wait a little for its peer's answering close frame.
    pub(crate) async fn close_all(&self) {
        let all: Vec<Session> = self.open.lock().drain().map(|(_, s)| s).collect();
        futures::future::join_all(all.iter().map(Session::close)).await;
    }
}

/// Answers an upgrade request the server has already checked (`Host`, `Origin`, auth, the
/// session cap: `hold` is the place taken, kept until the socket closes). On success the 101
/// goes out and, once hyper hands the connection over, `start` runs the session over it.
pub(crate) fn accept<B, H>(
    request: Request<B>,
    settings: &WsSettings,
    start: impl FnOnce(Link) -> Session + Send + 'static,
    sessions: &Arc<WsSessions>,
    hold: H,
) -> Result<Response<()>, (StatusCode, String)>
where
    B: Send + 'static,
    H: Send + 'static,
{
    let headers = handshake::answer(request.method(), request.headers())?;
    let settings = settings.clone();
    let sessions = sessions.clone();
    let upgrade = hyper::upgrade::on(request);
    tokio::spawn(async move {
        let upgraded = match upgrade.await {
            Ok(upgraded) => upgraded,
            Err(e) => {
                tracing::debug!(target: "oxmcp::ws", "the upgrade did not complete: {e}");
                return;
            }
        };
        let socket = WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Server,
            Some(settings.framing()),
        )
        .await;
        let session = start(socket::link(socket, &settings, "the client"));
        let id = sessions.next.fetch_add(1, Ordering::Relaxed);
        sessions.open.lock().insert(id, session.clone());
        session.closed().await;
        sessions.open.lock().remove(&id);
        drop(hold);
    });
    let mut response = Response::new(());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    *response.headers_mut() = headers;
    Ok(response)
}

/// Settings of a server that speaks WebSocket only ([`crate::server::Server::serve_ws`]).
/// The security options are the Streamable HTTP server's; to serve both on one port, set
/// [`HttpServerOptions::websocket`] instead.
#[derive(Clone)]
pub struct WsServerOptions {
    /// Where to listen (default 127.0.0.1, a free port).
    pub bind: SocketAddr,
    /// The endpoint's path (default `/mcp`).
    pub path: String,
    /// Host names accepted in `Host` (default: the loopback names).
    pub allowed_hosts: Option<Vec<String>>,
    /// Full origins accepted in `Origin` (default: http(s) origins of the allowed hosts).
    pub allowed_origins: Option<Vec<String>>,
    /// Authenticates each upgrade request.
    pub auth: Option<AuthHook>,
    /// OAuth bearer tokens, checked on the upgrade request (401/403 with `WWW-Authenticate`).
    pub resource_server: Option<Arc<crate::auth::ResourceServer>>,
    /// Most sockets open at once (503 beyond it).
    pub max_sessions: usize,
    /// How long a client may take to send its upgrade request's headers.
    pub header_read_timeout: Duration,
    /// The message cap and keepalive.
    pub websocket: WsSettings,
}

impl std::fmt::Debug for WsServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsServerOptions")
            .field("bind", &self.bind)
            .field("path", &self.path)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("websocket", &self.websocket)
            .finish_non_exhaustive()
    }
}

impl Default for WsServerOptions {
    fn default() -> Self {
        let http = HttpServerOptions::default();
        WsServerOptions {
            bind: http.bind,
            path: http.path,
            allowed_hosts: http.allowed_hosts,
            allowed_origins: http.allowed_origins,
            auth: http.auth,
            resource_server: http.resource_server,
            max_sessions: http.max_sessions,
            header_read_timeout: http.header_read_timeout,
            websocket: WsSettings::default(),
        }
    }
}

impl WsServerOptions {
    /// Listens on `port` of 127.0.0.1.
    pub fn port(port: u16) -> Self {
        WsServerOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], port)),
            ..Default::default()
        }
    }

    /// The HTTP server's options that serve these: the upgrade on `path`, and nothing else
    /// (no legacy SSE endpoints).
    pub(crate) fn into_http(self) -> HttpServerOptions {
        HttpServerOptions {
            bind: self.bind,
            path: self.path,
            allowed_hosts: self.allowed_hosts,
            allowed_origins: self.allowed_origins,
            auth: self.auth,
            resource_server: self.resource_server,
            max_sessions: self.max_sessions,
            header_read_timeout: self.header_read_timeout,
            legacy_sse_path: None,
            websocket: Some(self.websocket),
            ..HttpServerOptions::default()
        }
    }
}

/// A running WebSocket server.
#[derive(Debug)]
pub struct WsServer {
    http: HttpServer,
}

impl WsServer {
    pub(crate) fn new(http: HttpServer) -> Self {
        WsServer { http }
    }

    /// The address listened on.
    pub fn local_addr(&self) -> SocketAddr {
        self.http.local_addr()
    }

    /// The endpoint's URL (`ws://127.0.0.1:PORT/mcp`).
    pub fn url(&self) -> String {
        self.http.ws_url()
    }

    /// How many sockets are open.
    pub fn session_count(&self) -> usize {
        self.http.session_count()
    }

    /// Stops accepting and closes every socket (1000).
    pub async fn shutdown(&self) {
        self.http.shutdown().await;
    }
}
