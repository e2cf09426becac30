//! The client role for JavaScript: connecting (child process over stdio, Streamable HTTP,
//! WebSocket) and requests. Named requests whose behaviour depends on the era (`tools/list`
//! records HTTP parameter headers, `ping`, `logging/setLevel`, subscriptions) go through the
//! core's typed methods; every other request goes through the core's generic `request`, which
//! adds the stateless `_meta` and answers multi round-trip input with this client's handlers.
//! Calling a tool as a task, and the task's handle, are in `tasks.rs`.

mod handlers;
mod stdio;
mod tasks;

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use napi::{
    Env, Status,
    bindgen_prelude::PromiseRaw,
    threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode},
};
use napi_derive::napi;
use oxmcp::{
    auth::OAuthClient,
    client::{Client, ClientOptions, ProtocolMode},
    protocol::LoggingLevel,
    session::RequestOptions,
    transport::{child::ChildCommand, http::HttpClientOptions, ws::WsClientOptions},
};
use serde::Deserialize;
use serde_json::json;

use handlers::{JsAnswer, JsClientHandler, JsNotify, notify};
pub(crate) use tasks::{arguments as task_arguments, task_call_options, unless_cancelled};

use crate::{
    auth::JsAuthCallback,
    cancel::Cancellation,
    error::{invalid, to_js},
    json,
};

/// `(progressParamsJson) => void`.
pub(crate) type JsProgress = ThreadsafeFunction<String, (), String, Status, false, true>;

/// Options shared by both ways of connecting, as JSON.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ConnectOptions {
    name: Option<String>,
    version: Option<String>,
    /// Force an era: a revision string (`"2025-11-25"`, `"2026-07-28"`); absent = probe.
    protocol_version: Option<String>,
    /// Or force just the era (`"handshake"` / `"stateless"`: its newest revision).
    era: Option<String>,
    log_level: Option<LoggingLevel>,
    /// Extra environment for a child (on top of the core's safe default allowlist).
    env: BTreeMap<String, String>,
    /// Pass the whole host environment to a child.
    inherit_env: bool,
    cwd: Option<String>,
    /// HTTP request headers.
    headers: BTreeMap<String, String>,
    /// OAuth 2.1 (HTTP only; `null` when absent).
    auth: Option<oxmcp::auth::OAuthSettings>,
    /// How long connecting may take, in ms (WebSocket: TCP, TLS and the upgrade).
    timeout: Option<f64>,
    /// WebSocket settings (`maxMessageBytes`, `pingIntervalMs`, `pingTimeoutMs`).
    #[serde(flatten)]
    ws: crate::server::WsOptions,
}

/// `headers` as an HTTP header map.
fn header_map(headers: &BTreeMap<String, String>) -> napi::Result<http::HeaderMap> {
    let mut out = http::HeaderMap::new();
    for (k, v) in headers {
        let name = http::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| invalid(format!("header name `{k}` is not valid")))?;
        let value = http::HeaderValue::from_str(v)
            .map_err(|_| invalid(format!("header `{k}` has a value HTTP cannot carry")))?;
        out.insert(name, value);
    }
    Ok(out)
}

/// The client-side callbacks.
struct Callbacks {
    sampling: Option<JsClientHandler>,
    elicitation: Option<JsClientHandler>,
    roots: Option<JsClientHandler>,
    notification: Option<JsNotify>,
}

fn client_options(options: &ConnectOptions, callbacks: Callbacks) -> napi::Result<ClientOptions> {
    let mut out = ClientOptions::new(
        options.name.clone().unwrap_or_else(|| "oxmcp-node".into()),
        options
            .version
            .clone()
            .unwrap_or_else(|| env!("CARGO_PKG_VERSION").into()),
    );
    let pinned = ProtocolMode::pinned(options.protocol_version.as_deref(), options.era.as_deref())
        .map_err(|m| crate::error::invalid(format!("protocolVersion / era: {m}")))?;
    if let Some(mode) = pinned {
        out = out.protocol(mode);
    }
    if let Some(level) = options.log_level {
        out = out.log_level(level);
    }
    if let Some(f) = callbacks.sampling {
        out = out.sampling(JsAnswer::new(f));
    }
    if let Some(f) = callbacks.elicitation {
        out = out.elicitation(JsAnswer::new(f));
    }
    if let Some(f) = callbacks.roots {
        out = out.roots(JsAnswer::new(f));
    }
    if let Some(f) = callbacks.notification {
        out = out.on_notification(move |method, params| notify(&f, method, params));
    }
    Ok(out)
}

/// Starts `command` with `args` and connects over its stdio. With `hosted` (the JavaScript
/// layer asks on the main thread) the session runs on this thread (see `stdio.rs`).
#[napi(ts_return_type = "Promise<NativeClient>")]
#[allow(clippy::too_many_arguments)]
pub fn connect_stdio<'env>(
    env: &'env Env,
    command: String,
    args: Vec<String>,
    hosted: bool,
    options: String,
    sampling: Option<JsClientHandler>,
    elicitation: Option<JsClientHandler>,
    roots: Option<JsClientHandler>,
    notification: Option<JsNotify>,
) -> napi::Result<PromiseRaw<'env, NativeClient>> {
    let options: ConnectOptions = json::parse("Client.stdio options", &options)?;
    if options.auth.is_some() {
        return Err(invalid("Client.stdio: `auth` is for HTTP servers only"));
    }
    let callbacks = Callbacks {
        sampling,
        elicitation,
        roots,
        notification,
    };
    let mut cmd = ChildCommand::new(&command).args(&args);
    if options.inherit_env {
        cmd = cmd.env_policy(oxmcp::transport::child::EnvPolicy::Inherit);
    }
    for (k, v) in &options.env {
        cmd = cmd.env(k, v);
    }
    if let Some(cwd) = &options.cwd {
        cmd = cmd.current_dir(cwd);
    }
    let client_options = client_options(&options, callbacks)?;
    if hosted && let Some(host) = crate::embed::host(env.raw()) {
        return stdio::connect_hosted(&host, cmd, client_options);
    }
    env.spawn_future(async move {
        let client = Client::connect_child(cmd, client_options)
            .await
            .map_err(to_js)?;
        Ok(NativeClient { inner: client })
    })
}

/// Connects to a Streamable HTTP endpoint (legacy HTTP+SSE as a fallback); with `auth` in the
/// options, through the core's OAuth client (`authorize`: the user step, headless if absent).
#[napi]
#[allow(clippy::too_many_arguments)]
pub async fn connect_http(
    url: String,
    options: String,
    sampling: Option<JsClientHandler>,
    elicitation: Option<JsClientHandler>,
    roots: Option<JsClientHandler>,
    notification: Option<JsNotify>,
    authorize: Option<JsAuthCallback>,
) -> napi::Result<NativeClient> {
    let mut options: ConnectOptions = json::parse("Client.http options", &options)?;
    let callbacks = Callbacks {
        sampling,
        elicitation,
        roots,
        notification,
    };
    let mut http = HttpClientOptions::default();
    http.headers.extend(header_map(&options.headers)?);
    match options.auth.take() {
        Some(auth) => {
            let name = options.name.as_deref().unwrap_or("oxmcp-node");
            let options = crate::auth::oauth_options(auth, name, authorize)?;
            let oauth = OAuthClient::new(options).map_err(to_js)?;
            http.auth = Some(Arc::new(oauth));
        }
        None if authorize.is_some() => {
            return Err(invalid("Client.http: `authorize` needs `auth`"));
        }
        None => {}
    }
    let client = Client::connect_http(&url, client_options(&options, callbacks)?, http)
        .await
        .map_err(to_js)?;
    Ok(NativeClient { inner: client })
}

/// Connects to a WebSocket server (`ws://` or `wss://`). `cancel` (the caller's
/// `AbortSignal`) abandons the connect; `timeout` bounds it (the core's default otherwise).
#[napi(ts_return_type = "Promise<NativeClient>")]
#[allow(clippy::too_many_arguments)]
pub fn connect_web_socket<'env>(
    env: &'env Env,
    url: String,
    options: String,
    sampling: Option<JsClientHandler>,
    elicitation: Option<JsClientHandler>,
    roots: Option<JsClientHandler>,
    notification: Option<JsNotify>,
    cancel: Option<&Cancellation>,
) -> napi::Result<PromiseRaw<'env, NativeClient>> {
    let options: ConnectOptions = json::parse("Client.websocket options", &options)?;
    if options.auth.is_some() {
        return Err(invalid(
            "Client.websocket: `auth` (OAuth) is for HTTP servers; pass a token in `headers`",
        ));
    }
    let mut ws = WsClientOptions {
        headers: header_map(&options.headers)?,
        websocket: options.ws.settings("Client.websocket")?,
        ..Default::default()
    };
    if let Some(ms) = options.timeout {
        if !(ms.is_finite() && ms > 0.0) {
            return Err(invalid(format!(
                "Client.websocket: `timeout` must be a positive number of ms, not {ms}"
            )));
        }
        ws.connect_timeout = Duration::from_secs_f64(ms / 1000.0);
    }
    let callbacks = Callbacks {
        sampling,
        elicitation,
        roots,
        notification,
    };
    let client_options = client_options(&options, callbacks)?;
    let token = cancel.map(|c| c.token.clone());
    env.spawn_future(async move {
        let connect = Client::connect_ws(&url, client_options, ws);
        let client = match token {
            Some(token) => tokio::select! {
                r = connect => r,
                () = token.cancelled() => return Err(crate::error::cancelled()),
            },
            None => connect.await,
        }
        .map_err(to_js)?;
        Ok(NativeClient { inner: client })
    })
}

/// A connected client.
#[napi]
pub struct NativeClient {
    inner: Client,
}

impl NativeClient {
    /// Runs a request of this client (see [`start_on`]).
    fn start<'env>(
        &self,
        env: &'env Env,
        request: impl std::future::Future<Output = napi::Result<String>> + Send + 'static,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        start_on(&self.inner, env, request)
    }
}

/// Runs a request of `client`: on this thread's host loop when its session runs there (the
/// request is written before this returns and the answer settles the Promise in the run that
/// read it), else on tokio.
pub(crate) fn start_on<'env, T: napi::bindgen_prelude::ToNapiValue + Send + 'static>(
    client: &Client,
    env: &'env Env,
    request: impl std::future::Future<Output = napi::Result<T>> + Send + 'static,
) -> napi::Result<PromiseRaw<'env, T>> {
    let hosted = client.session().spawner().host();
    match hosted.and_then(crate::embed::host_of) {
        Some(host) => crate::embed::spawn_promise(&host, request),
        None => env.spawn_future(request),
    }
}

/// Request options from JavaScript.
pub(crate) fn request_options(
    timeout_ms: Option<f64>,
    cancel: Option<&Cancellation>,
    on_progress: Option<JsProgress>,
) -> napi::Result<RequestOptions> {
    let mut options = RequestOptions::default();
    if let Some(ms) = timeout_ms {
        if !(ms.is_finite() && ms > 0.0) {
            return Err(invalid(format!(
                "timeout must be a positive number of ms, not {ms}"
            )));
        }
        options.timeout = Some(Duration::from_secs_f64(ms / 1000.0));
    }
    if let Some(cancel) = cancel {
        options.cancel = Some(cancel.token.clone());
    }
    if let Some(f) = on_progress {
        options.on_progress = Some(Box::new(move |p| {
            let text = serde_json::to_string(&p).unwrap_or_else(|_| "null".into());
            let _ = f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
        }));
    }
    Ok(options)
}

/// A cancelled request reports `cancelled` even if the engine saw the close first.
pub(crate) fn outcome<T>(cancel: Option<Cancellation>, r: oxmcp::Result<T>) -> napi::Result<T> {
    match r {
        Ok(v) => Ok(v),
        Err(_) if cancel.is_some_and(|c| c.token.is_cancelled()) => Err(crate::error::cancelled()),
        Err(e) => Err(to_js(e)),
    }
}

#[napi]
impl NativeClient {
    /// What the server said about itself: `{protocolVersion, serverInfo, capabilities,
    /// instructions}` as JSON text.
    #[napi(getter)]
    pub fn server_details(&self) -> String {
        let d = self.inner.server();
        json!({
            "protocolVersion": d.protocol_version.as_str(),
            "serverInfo": d.info,
            "capabilities": d.capabilities,
            "instructions": d.instructions,
        })
        .to_string()
    }

    /// Any request; params and result as JSON text.
    #[napi]
    pub fn request<'env>(
        &self,
        env: &'env Env,
        method: String,
        params: Option<String>,
        timeout_ms: Option<f64>,
        cancel: Option<&Cancellation>,
        on_progress: Option<JsProgress>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let params = json::parse_opt("request params", params)?;
        let options = request_options(timeout_ms, cancel, on_progress)?;
        let (client, cancel) = (self.inner.clone(), cancel.cloned());
        self.start(env, async move {
            let r = client.request(&method, params, options).await;
            json::text(&outcome(cancel, r)?)
        })
    }

    /// `tools/list` (one page).
    #[napi]
    pub async fn list_tools(&self, cursor: Option<String>) -> napi::Result<String> {
        let page = self
            .inner
            .list_tools(cursor.as_deref())
            .await
            .map_err(to_js)?;
        json::text(&page)
    }

    /// `tools/call`; a progress token is always attached (progress keeps a long call alive).
    #[napi]
    pub fn call_tool<'env>(
        &self,
        env: &'env Env,
        name: String,
        arguments: Option<String>,
        timeout_ms: Option<f64>,
        cancel: Option<&Cancellation>,
        on_progress: Option<JsProgress>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let options = request_options(timeout_ms, cancel, on_progress)?;
        let (client, cancel) = (self.inner.clone(), cancel.cloned());
        // The arguments arrive as JSON text and the result leaves as the text the server
        // sent: no `Value` is built either way.
        self.start(env, async move {
            let r = client
                .call_tool_json(&name, arguments.as_deref(), options)
                .await;
            Ok(String::from(Box::<str>::from(outcome(cancel, r)?)))
        })
    }

    /// `ping` (`server/discover` in the stateless era, which has no ping).
    #[napi]
    pub async fn ping(&self) -> napi::Result<()> {
        self.inner.ping().await.map_err(to_js)
    }

    /// `logging/setLevel` (handshake era).
    #[napi]
    pub async fn set_logging_level(&self, level: String) -> napi::Result<()> {
        let level: LoggingLevel = json::parse("logging level", &json!(level).to_string())?;
        self.inner.set_logging_level(level).await.map_err(to_js)
    }

    /// `resources/subscribe` (handshake era).
    #[napi]
    pub async fn subscribe_resource(&self, uri: String) -> napi::Result<()> {
        self.inner.subscribe_resource(&uri).await.map_err(to_js)
    }

    /// `resources/unsubscribe` (handshake era).
    #[napi]
    pub async fn unsubscribe_resource(&self, uri: String) -> napi::Result<()> {
        self.inner.unsubscribe_resource(&uri).await.map_err(to_js)
    }

    /// `notifications/roots/list_changed` (handshake era; nothing in 2026-07-28).
    #[napi]
    pub async fn send_roots_list_changed(&self) -> napi::Result<()> {
        self.inner.notify_roots_changed().await.map_err(to_js)
    }

    /// Resolves when the connection ends, for whatever reason (keeps Node alive meanwhile).
    #[napi]
    pub async fn closed(&self) -> Option<String> {
        self.inner.session().closed().await.map(|e| e.to_string())
    }

    /// Closes the connection (a child server goes through the shutdown ladder).
    #[napi]
    pub async fn close(&self) {
        self.inner.close().await;
    }
}
