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

mod dispatch;

use std::{collections::HashSet, sync::Arc, time::Duration};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::{
    Error, Result,
    jsonrpc::codes,
    protocol::{
        CallToolResult, ClientCapabilities, DiscoverResult, Implementation,
        InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult, ProtocolVersion,
        ServerCapabilities, Tool, meta, methods,
    },
    session::{Phase, RequestOptions, Role, Session, SessionConfig},
    transport::{
        Transport,
        child::{ChildCommand, ChildTransport},
    },
};

/// Called with every notification the server sends that the engine does not consume.
pub type NotificationCallback = Arc<dyn Fn(&str, Option<Value>) + Send + Sync>;

/// Which era to speak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolMode {
    /// Probe `server/discover`, fall back to `initialize` (the default).
    Auto,
    /// Skip the probe; `initialize` asking for this revision.
    Handshake(ProtocolVersion),
    /// Skip the fallback; speak this stateless revision or fail.
    Stateless(ProtocolVersion),
}

/// How a client connects.
#[derive(Clone)]
pub struct ClientOptions {
    /// Our identity.
    pub info: Implementation,
    /// Our capabilities.
    pub capabilities: ClientCapabilities,
    /// Era selection.
    pub protocol: ProtocolMode,
    /// Handshake-era revisions we accept from the server.
    pub accepted_versions: Vec<ProtocolVersion>,
    /// How long the `server/discover` probe may take before we assume a legacy server.
    pub probe_timeout: Duration,
    /// Engine settings.
    pub session: SessionConfig,
    /// Receives server notifications.
    pub on_notification: Option<NotificationCallback>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("info", &self.info)
            .field("protocol", &self.protocol)
            .field("accepted_versions", &self.accepted_versions)
            .field("probe_timeout", &self.probe_timeout)
            .finish_non_exhaustive()
    }
}

impl ClientOptions {
    /// Defaults for a client with this name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientOptions {
            info: Implementation::new(name, version),
            capabilities: ClientCapabilities::default(),
            protocol: ProtocolMode::Auto,
            accepted_versions: ProtocolVersion::ALL.to_vec(),
            probe_timeout: Duration::from_secs(10),
            session: SessionConfig::for_role(Role::Client),
            on_notification: None,
        }
    }

    /// Sets the era selection.
    pub fn protocol(mut self, mode: ProtocolMode) -> Self {
        self.protocol = mode;
        self
    }

    /// Sets the notification callback.
    pub fn on_notification(
        mut self,
        callback: impl Fn(&str, Option<Value>) + Send + Sync + 'static,
    ) -> Self {
        self.on_notification = Some(Arc::new(callback));
        self
    }

    /// Sets the engine settings.
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.session = config;
        self
    }
}

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
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.session.request_close();
    }
}

impl Client {
    /// Connects over `transport`: probes the era, handshakes if needed.
    pub async fn connect(transport: impl Transport, options: ClientOptions) -> Result<Client> {
        let dispatch = Arc::new(dispatch::ClientDispatch::new(
            options.on_notification.clone(),
        ));
        let session = Session::start(transport, Role::Client, dispatch, options.session.clone());
        match negotiate(&session, &options).await {
            Ok(details) => {
                let stateless_meta = details
                    .protocol_version
                    .is_stateless()
                    .then(|| stateless_meta(&options, details.protocol_version));
                Ok(Client {
                    inner: Arc::new(Inner {
                        session,
                        details,
                        stateless_meta,
                    }),
                })
            }
            Err(e) => {
                session.close().await;
                Err(e)
            }
        }
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

    /// Sends any request, adding the stateless `_meta` when the era needs it, and returns
    /// the result as JSON.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value> {
        let params = match &self.inner.stateless_meta {
            Some(m) => Some(merge_meta(params, m)?),
            None => params,
        };
        let value = self.inner.session.request(method, params, options).await?;
        if self.inner.stateless_meta.is_some() {
            check_result_type(method, &value)?;
        }
        Ok(value)
    }

    async fn request_typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<T> {
        let value = self.request(method, params, options).await?;
        serde_json::from_value(value)
            .map_err(|e| Error::Protocol(format!("invalid `{method}` result: {e}")))
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

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult> {
        let params = cursor.map(|c| json!({ "cursor": c }));
        self.request_typed(methods::TOOLS_LIST, params, RequestOptions::default())
            .await
    }

    /// Every tool, following cursors (refusing a server whose cursors loop).
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>> {
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list_tools(cursor.as_deref()).await?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(Error::Protocol(format!(
                            "tools/list returned cursor `{next}` twice"
                        )));
                    }
                    cursor = Some(next);
                }
            }
        }
    }

    /// Calls a tool with default options (60 s timeout, reset by progress).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call_tool_with(name, arguments, RequestOptions::default())
            .await
    }

    /// Calls a tool. A progress token is always attached, so a server that reports progress
    /// keeps a long call alive.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        mut options: RequestOptions,
    ) -> Result<CallToolResult> {
        let mut params = json!({ "name": name });
        match arguments {
            Value::Null => {}
            Value::Object(_) => params["arguments"] = arguments,
            _ => {
                return Err(Error::InvalidArgument(
                    "tool arguments must be a JSON object".into(),
                ));
            }
        }
        options.request_progress = true;
        self.request_typed(methods::TOOLS_CALL, Some(params), options)
            .await
    }

    /// Sends a notification (with no stateless `_meta`: notifications carry none).
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        self.inner.session.notify(method, params).await
    }
}

fn stateless_meta(options: &ClientOptions, version: ProtocolVersion) -> JsonObject {
    let mut m = JsonObject::new();
    m.insert(meta::PROTOCOL_VERSION.into(), json!(version.as_str()));
    m.insert(
        meta::CLIENT_CAPABILITIES.into(),
        json!(options.capabilities),
    );
    m.insert(meta::CLIENT_INFO.into(), json!(options.info));
    m
}

/// Adds the stateless keys to a request's `_meta`, keeping whatever the caller put there.
fn merge_meta(params: Option<Value>, extra: &JsonObject) -> Result<Value> {
    let mut params = params.unwrap_or_else(|| json!({}));
    let Value::Object(map) = &mut params else {
        return Err(Error::InvalidArgument(
            "request params must be a JSON object".into(),
        ));
    };
    let meta = map.entry("_meta").or_insert_with(|| json!({}));
    let Value::Object(meta) = meta else {
        return Err(Error::InvalidArgument(
            "`_meta` must be a JSON object".into(),
        ));
    };
    for (k, v) in extra {
        meta.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Ok(params)
}

/// A stateless result must say it is complete; absent means complete (older servers).
fn check_result_type(method: &str, value: &Value) -> Result<()> {
    match value.get("resultType").and_then(Value::as_str) {
        None | Some("complete") => Ok(()),
        Some("input_required") => Err(Error::Protocol(format!(
            "`{method}` asked for more input (input_required), which this client does not handle"
        ))),
        Some(other) => Err(Error::Protocol(format!(
            "`{method}` returned unknown resultType `{other}`"
        ))),
    }
}

async fn negotiate(session: &Session, options: &ClientOptions) -> Result<ServerDetails> {
    match &options.protocol {
        ProtocolMode::Handshake(v) => initialize(session, options, *v).await,
        ProtocolMode::Stateless(v) => {
            discover(session, options, *v, options.session.request_timeout)
                .await?
                .ok_or_else(|| Error::UnsupportedProtocolVersion {
                    requested: v.as_str().into(),
                    supported: Vec::new(),
                })
        }
        ProtocolMode::Auto => {
            let ours = ProtocolVersion::ALL
                .iter()
                .rev()
                .copied()
                .find(|v| v.is_stateless() && options.accepted_versions.contains(v));
            let Some(modern) = ours else {
                return initialize(session, options, newest_handshake(options)?).await;
            };
            match discover(session, options, modern, options.probe_timeout).await {
                Ok(Some(details)) => Ok(details),
                Ok(None) => initialize(session, options, newest_handshake(options)?).await,
                Err(Error::Rpc(e)) if is_stateless_error(e.code) => Err(Error::Rpc(e)),
                Err(Error::Rpc(_) | Error::Timeout { .. }) => {
                    initialize(session, options, newest_handshake(options)?).await
                }
                Err(e) => Err(e),
            }
        }
    }
}

fn is_stateless_error(code: i64) -> bool {
    (codes::HEADER_MISMATCH..=codes::UNSUPPORTED_PROTOCOL_VERSION).contains(&code)
}

fn newest_handshake(options: &ClientOptions) -> Result<ProtocolVersion> {
    options
        .accepted_versions
        .iter()
        .rev()
        .copied()
        .find(|v| v.uses_handshake())
        .ok_or_else(|| {
            Error::InvalidArgument(
                "no handshake-era protocol version is accepted by this client".into(),
            )
        })
}

/// `server/discover` with `version`; on `UnsupportedProtocolVersion`, once more with the best
/// stateless version the server listed. `Ok(None)` means "fall back to the handshake" (only in
/// auto mode: the server is modern but shares no stateless version with us).
async fn discover(
    session: &Session,
    options: &ClientOptions,
    version: ProtocolVersion,
    timeout: Duration,
) -> Result<Option<ServerDetails>> {
    let mut version = version;
    for attempt in 0..2 {
        let params = json!({ "_meta": stateless_meta(options, version) });
        let reply = session
            .request(
                methods::DISCOVER,
                Some(params),
                RequestOptions::with_timeout(timeout),
            )
            .await;
        match reply {
            Ok(value) => {
                let result: DiscoverResult = serde_json::from_value(value).map_err(|e| {
                    Error::Protocol(format!("invalid `server/discover` result: {e}"))
                })?;
                let listed =
                    |v: &ProtocolVersion| result.supported_versions.iter().any(|s| s == v.as_str());
                if !listed(&version) {
                    let better = options
                        .accepted_versions
                        .iter()
                        .rev()
                        .copied()
                        .find(|v| v.is_stateless() && listed(v));
                    match better {
                        Some(v) if attempt == 0 => {
                            version = v;
                            continue;
                        }
                        _ if options.protocol == ProtocolMode::Auto => return Ok(None),
                        _ => {
                            return Err(Error::UnsupportedProtocolVersion {
                                requested: version.as_str().into(),
                                supported: result.supported_versions,
                            });
                        }
                    }
                }
                let info = result
                    .meta
                    .as_ref()
                    .and_then(|m| m.get(meta::SERVER_INFO))
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .unwrap_or_default();
                return Ok(Some(ServerDetails {
                    protocol_version: version,
                    info,
                    capabilities: result.capabilities,
                    instructions: result.instructions,
                    supported_versions: result.supported_versions,
                }));
            }
            Err(Error::Rpc(e)) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => {
                let supported: Vec<String> = e
                    .data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(|s| serde_json::from_value(s.clone()).ok())
                    .unwrap_or_default();
                let better = options.accepted_versions.iter().rev().copied().find(|v| {
                    v.is_stateless() && *v != version && supported.iter().any(|s| s == v.as_str())
                });
                match better {
                    Some(v) if attempt == 0 => version = v,
                    _ if options.protocol == ProtocolMode::Auto => return Ok(None),
                    _ => {
                        return Err(Error::UnsupportedProtocolVersion {
                            requested: version.as_str().into(),
                            supported,
                        });
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

async fn initialize(
    session: &Session,
    options: &ClientOptions,
    requested: ProtocolVersion,
) -> Result<ServerDetails> {
    let params = InitializeRequestParams {
        protocol_version: requested.as_str().to_owned(),
        capabilities: options.capabilities.clone(),
        client_info: options.info.clone(),
        meta: None,
        extra: Default::default(),
    };
    let params =
        serde_json::to_value(&params).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    session.update_state(|s| s.phase = Phase::Initializing);
    let value = session
        .request(methods::INITIALIZE, Some(params), RequestOptions::default())
        .await?;
    let result: InitializeResult = serde_json::from_value(value)
        .map_err(|e| Error::Protocol(format!("invalid `initialize` result: {e}")))?;
    let version = ProtocolVersion::parse(&result.protocol_version)
        .filter(|v| v.uses_handshake() && options.accepted_versions.contains(v))
        .ok_or_else(|| Error::UnsupportedProtocolVersion {
            requested: result.protocol_version.clone(),
            supported: options
                .accepted_versions
                .iter()
                .filter(|v| v.uses_handshake())
                .map(|v| v.as_str().to_owned())
                .collect(),
        })?;
    let capabilities = serde_json::to_value(&result.capabilities).ok();
    session.update_state(|s| {
        s.phase = Phase::Ready;
        s.protocol_version = Some(version);
        s.peer_info = Some(result.server_info.clone());
        s.peer_capabilities = capabilities;
    });
    session.notify(methods::INITIALIZED, None).await?;
    Ok(ServerDetails {
        protocol_version: version,
        info: result.server_info,
        capabilities: result.capabilities,
        instructions: result.instructions,
        supported_versions: Vec::new(),
    })
}
