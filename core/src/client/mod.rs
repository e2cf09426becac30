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
mod encoded;
mod features;
mod handlers;
mod subscription;

use std::{collections::HashSet, sync::Arc, time::Duration};

pub use dispatch::ServerNotification;
use dispatch::{Handlers, Streams};
pub use handlers::{ElicitationHandler, RootsHandler, SamplingHandler};
pub use subscription::Subscription;

use serde_json::{Value, json};

use crate::{
    Error, Result,
    embed::Spawner,
    jsonrpc::codes,
    protocol::{
        CallToolResult, ClientCapabilities, DiscoverResult, Implementation,
        InitializeRequestParams, InitializeResult, InputRequiredResult, JsonObject,
        ListToolsResult, LoggingLevel, ProtocolVersion, RootsCapability, ServerCapabilities, Tool,
        meta, methods,
        param_headers::{self, ParamHeaderTable},
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
    /// Receives server notifications (those not delivered to a [`Subscription`]).
    pub on_notification: Option<NotificationCallback>,
    /// The log level asked for: `logging/setLevel` after the handshake, or `_meta` on every
    /// stateless request (which otherwise get no log messages).
    pub log_level: Option<LoggingLevel>,
    /// Most rounds of one multi round-trip request before giving up.
    pub max_input_rounds: usize,
    /// Where the session's own tasks run: tokio, or a host loop whose thread reads the
    /// transport (see [`crate::embed`]).
    pub spawner: Spawner,
    handlers: Handlers,
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
            log_level: None,
            max_input_rounds: 16,
            spawner: Spawner::Tokio,
            handlers: Handlers::default(),
        }
    }

    /// Answers sampling requests, and declares the `sampling` capability (with tool use).
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.handlers.sampling = Some(Arc::new(handler));
        self.capabilities.sampling =
            Some(serde_json::from_value(json!({ "tools": {} })).unwrap_or_default());
        self
    }

    /// Answers elicitation requests, and declares the `elicitation` capability (form and URL).
    pub fn elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.handlers.elicitation = Some(Arc::new(handler));
        self.capabilities.elicitation =
            Some(serde_json::from_value(json!({ "form": {}, "url": {} })).unwrap_or_default());
        self
    }

    /// Answers `roots/list`, and declares the `roots` capability.
    pub fn roots(mut self, handler: impl RootsHandler) -> Self {
        self.handlers.roots = Some(Arc::new(handler));
        self.capabilities.roots = Some(RootsCapability {
            list_changed: Some(true),
            ..Default::default()
        });
        self
    }

    /// Asks for log messages at `level` and above.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
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
    handlers: Handlers,
    streams: Streams,
    max_input_rounds: usize,
    /// On Streamable HTTP: the `x-mcp-header` declarations of listed tools, which the
    /// transport mirrors into `Mcp-Param-*` headers.
    param_headers: Option<ParamHeaderTable>,
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
    /// the result as JSON. In the stateless era a result that asks for input
    /// (`InputRequiredResult`) is answered with this client's handlers and the request
    /// retried, until it completes.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value> {
        let Some(meta) = &self.inner.stateless_meta else {
            return self.inner.session.request(method, params, options).await;
        };
        let mut params = merge_meta(params, meta)?;
        let mut options = options;
        // Every round is a new request with its own options; progress reaches the same callback.
        let progress = options
            .on_progress
            .take()
            .map(|f| Arc::new(crate::sync::Mutex::new(f)));
        for _ in 0..self.inner.max_input_rounds {
            let mut round = RequestOptions {
                timeout: options.timeout,
                max_total_timeout: options.max_total_timeout,
                reset_timeout_on_progress: options.reset_timeout_on_progress,
                request_progress: options.request_progress,
                cancel: options.cancel.clone(),
                route: options.route.clone(),
                id: options.id.take(),
                on_progress: None,
            };
            if let Some(progress) = &progress {
                let progress = progress.clone();
                round.on_progress = Some(Box::new(move |p| (progress.lock())(p)));
            }
            let value = self
                .inner
                .session
                .request(method, Some(params.clone()), round)
                .await?;
            match value.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => return Ok(value),
                Some("input_required") => {
                    let asked: InputRequiredResult =
                        serde_json::from_value(value).map_err(|e| {
                            Error::Protocol(format!(
                                "invalid InputRequiredResult for `{method}`: {e}"
                            ))
                        })?;
                    let requests = asked.input_requests.unwrap_or_default();
                    let answers = self
                        .answer_inputs(method, requests, options.cancel.clone())
                        .await?;
                    if let Value::Object(map) = &mut params {
                        map.insert("inputResponses".into(), Value::Object(answers));
                        match asked.request_state {
                            Some(state) => map.insert("requestState".into(), Value::String(state)),
                            None => map.remove("requestState"),
                        };
                    }
                }
                Some(other) => {
                    return Err(Error::Protocol(format!(
                        "`{method}` returned unknown resultType `{other}`"
                    )));
                }
            }
        }
        Err(Error::Protocol(format!(
            "`{method}` still asked for input after {} rounds",
            self.inner.max_input_rounds
        )))
    }

    /// Answers the questions of an `InputRequiredResult` with this client's handlers.
    async fn answer_inputs(
        &self,
        method: &str,
        requests: std::collections::BTreeMap<String, crate::protocol::InputRequest>,
        cancel: Option<tokio_util::sync::CancellationToken>,
    ) -> Result<JsonObject> {
        let cancel = cancel.unwrap_or_default();
        let answers = futures::future::join_all(requests.into_iter().map(|(key, request)| {
            let handlers = self.inner.handlers.clone();
            let cancel = cancel.clone();
            async move {
                let answer = handlers
                    .answer(&request.method, request.params, cancel)
                    .await;
                (key, request.method, answer)
            }
        }))
        .await;
        let mut out = JsonObject::new();
        for (key, asked, answer) in answers {
            match answer {
                Ok(value) => {
                    out.insert(key, value);
                }
                Err(e) => {
                    return Err(Error::Protocol(format!(
                        "`{method}` asked for `{asked}`, which this client could not answer: {e}"
                    )));
                }
            }
        }
        Ok(out)
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
        let mut page: ListToolsResult = self
            .request_typed(methods::TOOLS_LIST, params, RequestOptions::default())
            .await?;
        if let (Some(table), true) = (
            &self.inner.param_headers,
            self.protocol_version().is_stateless(),
        ) {
            // A tool whose header declarations break the rules cannot be called correctly
            // over HTTP; it is left out so the rest stay usable (SEP-2243).
            page.tools.retain(
                |tool| match param_headers::declarations(&tool.input_schema) {
                    Ok(declared) => {
                        table.insert(&tool.name, declared);
                        true
                    }
                    Err(why) => {
                        tracing::warn!(tool = %tool.name, "ignoring tool: {why}");
                        false
                    }
                },
            );
        }
        Ok(page)
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
        if !matches!(arguments, Value::Null | Value::Object(_)) {
            return Err(Error::InvalidArgument(
                "tool arguments must be a JSON object".into(),
            ));
        }
        if self.inner.stateless_meta.is_none() {
            // The arguments are encoded once into the request and the result decoded once
            // from the response, with no `Value` of the whole params or result in between.
            let arguments = match &arguments {
                Value::Null => None,
                _ => Some(
                    serde_json::value::to_raw_value(&arguments)
                        .map_err(|e| Error::InvalidArgument(format!("tool arguments: {e}")))?,
                ),
            };
            let result = self
                .call_tool_encoded(name, arguments.as_deref(), options)
                .await?;
            return serde_json::from_str(result.get()).map_err(encoded::invalid_result);
        }
        let mut params = json!({ "name": name });
        if arguments.is_object() {
            params["arguments"] = arguments;
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
    if let Some(level) = options.log_level {
        m.insert(meta::LOG_LEVEL.into(), json!(level));
    }
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
                Err(Error::Rpc(_)) => {
                    initialize(session, options, newest_handshake(options)?).await
                }
                Err(Error::Timeout { .. }) => {
                    // A silent probe usually means a legacy server, but a stateless server that
                    // is slow to start (`uvx`/`npx` installing on first run) answers late and
                    // then refuses `initialize` with the versions it speaks: probe again.
                    match initialize(session, options, newest_handshake(options)?).await {
                        Err(Error::Rpc(e)) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => {
                            let listed = supported_in(&e);
                            let again = options.accepted_versions.iter().rev().copied().find(|v| {
                                v.is_stateless() && listed.iter().any(|s| s == v.as_str())
                            });
                            match again {
                                Some(v) => {
                                    discover(session, options, v, options.session.request_timeout)
                                        .await?
                                        .ok_or(Error::Rpc(e))
                                }
                                None => Err(Error::Rpc(e)),
                            }
                        }
                        other => other,
                    }
                }
                Err(e) => Err(e),
            }
        }
    }
}

/// Our capabilities, without the ones `version` does not define (a server speaking it could
/// not make sense of them, and should never send the requests they announce).
fn capabilities_for(
    capabilities: &ClientCapabilities,
    version: ProtocolVersion,
) -> ClientCapabilities {
    let mut caps = capabilities.clone();
    if version < ProtocolVersion::V2025_06_18 {
        caps.elicitation = None;
    }
    if version < ProtocolVersion::V2025_11_25 {
        caps.tasks = None;
        if let Some(elicitation) = caps.elicitation.as_mut() {
            elicitation.remove("url");
        }
        if let Some(sampling) = caps.sampling.as_mut() {
            sampling.remove("tools");
            sampling.remove("context");
        }
    }
    caps
}

/// Whether a code is one of the errors only a stateless (2026-07-28) server sends: such a
/// server is modern, so the client must not fall back to `initialize`.
fn is_stateless_error(code: i64) -> bool {
    (codes::UNSUPPORTED_PROTOCOL_VERSION..=codes::HEADER_MISMATCH).contains(&code)
}

/// The `supported` list of an `UnsupportedProtocolVersion` error.
fn supported_in(e: &crate::jsonrpc::ErrorObject) -> Vec<String> {
    e.data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default()
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
                let result: DiscoverResult = match serde_json::from_value(value) {
                    Ok(result) => result,
                    // Some legacy servers answer any method with an empty result: not a
                    // stateless server, so fall back to the handshake.
                    Err(_) if options.protocol == ProtocolMode::Auto => return Ok(None),
                    Err(e) => {
                        return Err(Error::Protocol(format!(
                            "invalid `server/discover` result: {e}"
                        )));
                    }
                };
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
                let supported = supported_in(&e);
                // Retry once with the best version the server lists; that can be the one just
                // refused (behind a load balancer another instance may have answered), and the
                // second refusal is final.
                let better = options
                    .accepted_versions
                    .iter()
                    .rev()
                    .copied()
                    .find(|v| v.is_stateless() && supported.iter().any(|s| s == v.as_str()));
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
        capabilities: capabilities_for(&options.capabilities, requested),
        client_info: options.info.clone(),
        meta: None,
        extra: Default::default(),
    };
    let params =
        serde_json::to_value(&params).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    session.update_state(|s| s.phase = Phase::Initializing);
    let reply = session
        .request(methods::INITIALIZE, Some(params), RequestOptions::default())
        .await;
    let value = match reply {
        Ok(value) => value,
        Err(e) => {
            session.update_state(|s| s.phase = Phase::Fresh);
            return Err(e);
        }
    };
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
