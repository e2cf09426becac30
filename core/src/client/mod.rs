//! The client role: connects to a server of either era and makes typed requests.
//!
//! On connect the client probes `server/discover`. A stateless (2026-07-28) server answers it
//! and every later request carries its version and capabilities in `_meta`; any other answer
//! (an error that is not one of the revision's own, or silence) means a handshake-era server,
//! and the client falls back to `initialize`.
//!
//! ```no_run
//! use oxmcp::{client::{Client, ClientOptions}, transport::child::ChildCommand};
//! use serde_json::json;
//!
//! # async fn run() -> oxmcp::Result<()> {
//! let client = Client::connect_child(ChildCommand::new("weather-server"), ClientOptions::new("host", "1.0")).await?;
//! let tools = client.list_all_tools().await?;
//! let result = client.call_tool("get_weather", json!({"city": "Oslo"})).await?;
//! client.close().await;
//! # Ok(()) }
//! ```

// This file holds the client and its connection; the parts live beside it:
// - `options`: how a client connects (`ClientOptions`, `ProtocolMode`);
// - `negotiate`: choosing the era, `server/discover` and `initialize`;
// - `request`: any request, with the stateless `_meta` and the input-required rounds;
// - `tools`, `features` and `encoded`: the typed requests;
// - `tasks`: calling a tool as a task and following it;
// - `dispatch`, `handlers` and `subscription`: what the server sends us.
mod dispatch;
mod encoded;
mod features;
mod handlers;
mod lenient;
mod negotiate;
mod options;
mod request;
mod subscription;
mod tasks;
mod tools;

use std::sync::Arc;

pub use dispatch::ServerNotification;
use dispatch::{Handlers, Streams};
pub use handlers::{ElicitationHandler, RootsHandler, SamplingHandler};
pub use lenient::EntryIssue;
/// One list's entries that were left out and those that were repaired.
type ListIssues = (Vec<EntryIssue>, Vec<EntryIssue>);
use negotiate::{negotiate, stateless_meta};
pub use options::{ClientOptions, NotificationCallback, ProtocolMode};
pub use subscription::Subscription;
pub use tasks::{TaskCallOptions, TaskHandle, TaskUpdates};

use serde_json::Value;

use crate::{
    Result,
    protocol::{
        Implementation, JsonObject, ProtocolVersion, ServerCapabilities, methods,
        param_headers::ParamHeaderTable,
    },
    session::{RequestOptions, Role, Session},
    transport::{
        Transport,
        child::{ChildCommand, ChildTransport},
    },
};

/// What the server told us about itself.
#[derive(Clone, Debug)]
pub struct ServerDetails {
    /// The revision in use.
    pub protocol_version: ProtocolVersion,
    /// The server's identity.
    pub info: Implementation,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    pub instructions: Option<String>,
    /// Every revision the server listed (stateless servers only).
    pub supported_versions: Vec<String>,
}

/// A connected client. Cheap to clone; the connection closes when the last clone is dropped
/// or [`Client::close`] is called.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.details)
            .finish_non_exhaustive()
    }
}

struct Inner {
    session: Session,
    details: ServerDetails,
    /// The `_meta` every stateless request carries.
    stateless_meta: Option<JsonObject>,
    handlers: Handlers,
    streams: Streams,
    max_input_rounds: usize,
    /// On Streamable HTTP: the `x-mcp-header` declarations of listed tools, which the
    /// transport mirrors into `Mcp-Param-*` headers.
    param_headers: Option<ParamHeaderTable>,
    /// Tools the server listed as `taskSupport: required`: a plain call of one is refused
    /// here, with the typed error, whatever the server would have answered.
    task_only: crate::sync::Mutex<std::collections::HashSet<String>>,
    /// What the last listing of each list left out or repaired (see `lenient`).
    entry_issues: crate::sync::Mutex<std::collections::HashMap<&'static str, ListIssues>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.session.request_close();
    }
}

impl Client {
    /// Connects over `transport`: probes the era, handshakes if needed.
    pub async fn connect(transport: impl Transport, options: ClientOptions) -> Result<Client> {
        Client::connect_inner(transport, options, None).await
    }

    pub(crate) async fn connect_inner(
        transport: impl Transport,
        options: ClientOptions,
        param_headers: Option<ParamHeaderTable>,
    ) -> Result<Client> {
        let streams = Streams::default();
        let dispatch = Arc::new(dispatch::ClientDispatch::new(
            options.handlers.clone(),
            options.on_notification.clone(),
            streams.clone(),
        ));
        let session = Session::start_on(
            transport,
            Role::Client,
            dispatch,
            options.session.clone(),
            options.spawner.clone(),
        );
        let details = match negotiate(&session, &options).await {
            Ok(details) => details,
            Err(e) => {
                session.close().await;
                return Err(e);
            }
        };
        let stateless_meta = details
            .protocol_version
            .is_stateless()
            .then(|| stateless_meta(&options, details.protocol_version));
        let client = Client {
            inner: Arc::new(Inner {
                session,
                details,
                stateless_meta,
                handlers: options.handlers.clone(),
                streams,
                max_input_rounds: options.max_input_rounds.max(1),
                param_headers,
                task_only: Default::default(),
                entry_issues: Default::default(),
            }),
        };
        if let Some(level) = options.log_level {
            let handshake = !client.protocol_version().is_stateless();
            if handshake && client.server().capabilities.logging.is_some() {
                client.set_logging_level(level).await?;
            }
        }
        Ok(client)
    }

    /// Connects to a Streamable HTTP server (falling back to the legacy HTTP+SSE transport
    /// for 2024-11-05 servers).
    pub async fn connect_http(
        url: &str,
        options: ClientOptions,
        http: crate::transport::http::HttpClientOptions,
    ) -> Result<Client> {
        let transport = crate::transport::http::HttpClientTransport::new(url, http)?;
        let param_headers = transport.param_headers();
        Client::connect_inner(transport, options, Some(param_headers)).await
    }

    /// Connects to a WebSocket server (`ws://` or `wss://`): the upgrade (within
    /// `ws.connect_timeout`), then the era probe and handshake as over any transport.
    pub async fn connect_ws(
        url: &str,
        options: ClientOptions,
        ws: crate::transport::ws::WsClientOptions,
    ) -> Result<Client> {
        let transport = crate::transport::ws::WsClientTransport::connect(url, ws).await?;
        Client::connect(transport, options).await
    }

    /// Starts a server process and connects to it over its stdio.
    pub async fn connect_child(command: ChildCommand, options: ClientOptions) -> Result<Client> {
        let child = ChildTransport::spawn(command).await?;
        Client::connect(child, options).await
    }

    /// What the server told us about itself.
    pub fn server(&self) -> &ServerDetails {
        &self.inner.details
    }

    /// The revision in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.details.protocol_version
    }

    /// The underlying session.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// Closes the connection (a child server goes through the shutdown ladder).
    pub async fn close(&self) {
        self.inner.session.close().await;
    }

    /// Checks the server is alive: `ping` in the handshake era, `server/discover` in the
    /// stateless era (which has no ping).
    pub async fn ping(&self) -> Result<()> {
        let method = if self.inner.stateless_meta.is_some() {
            methods::DISCOVER
        } else {
            methods::PING
        };
        self.request(method, None, RequestOptions::default())
            .await
            .map(|_| ())
    }

    /// Sends a notification (with no stateless `_meta`: notifications carry none).
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        self.inner.session.notify(method, params).await
    }
}
