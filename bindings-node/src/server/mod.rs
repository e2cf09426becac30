//! The server role for JavaScript: a `NativeServer` owning an `oxmcp::server::Server`, its
//! registries fed from JavaScript, served over stdio, Streamable HTTP or WebSocket.
//!
//! Definitions (tools, resources, prompts) arrive as JSON text and are deserialised into the
//! core's protocol types, so a malformed definition fails at registration with the core's
//! message. Serving promises stay pending while the server runs: that is what keeps Node alive
//! (handlers alone never do), and `close()` settles them.

mod context;
mod handlers;
mod stdio;

use std::{net::SocketAddr, sync::Arc};

use napi::{Env, bindgen_prelude::PromiseRaw};
use napi_derive::napi;
use oxmcp::{
    protocol::{Prompt, Resource, ResourceTemplate, TaskSupport, Tool},
    server::{Server, TaskStart, ToolOptions},
    transport::{
        http::{HttpServer, HttpServerOptions},
        stdio::StdioTransport,
        ws::{WsServer, WsServerOptions, WsSettings},
    },
};
use serde::Deserialize;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use handlers::{JsCallback, JsCompletion, JsFunction, JsPrompt, JsResource, JsTool};

use crate::{
    auth::{JsAuthCallback, ServerAuth},
    error::{invalid, to_js},
    json,
};

/// 64 hex digits → the 32-byte request-state key.
fn state_key(hex: &str) -> napi::Result<[u8; 32]> {
    let bad = || invalid("stateKey must be 64 hex digits (32 bytes)");
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(key)
}

/// `new Server({...})` options, as JSON.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerOptions {
    name: String,
    version: String,
    instructions: Option<String>,
    page_size: Option<usize>,
    /// 64 hex digits: the key sealing multi round-trip request state, shared by replicas.
    state_key: Option<String>,
}

/// How a tool runs as a task: `server.tool(name, {task, taskStart}, handler)`, as JSON.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsToolOptions {
    /// `forbidden`, `optional` or `required`; absent: as the definition's
    /// `execution.taskSupport` says (forbidden when it says nothing).
    task: Option<TaskSupport>,
    /// `immediately` (the default) or `deferred` (the handler calls `ctx.startTask()`).
    task_start: Option<JsTaskStart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum JsTaskStart {
    Immediately,
    Deferred,
}

impl JsToolOptions {
    fn into_core(self, tool: &Tool) -> ToolOptions {
        let mut options = match self.task {
            Some(support) => ToolOptions::tasks(support),
            None => ToolOptions::from_tool(tool),
        };
        options.task_start = match self.task_start {
            Some(JsTaskStart::Deferred) => TaskStart::Deferred,
            Some(JsTaskStart::Immediately) | None => TaskStart::Immediately,
        };
        options
    }
}

/// `runHttp({...})` options, as JSON.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct HttpOptions {
    host: Option<String>,
    port: Option<u16>,
    path: Option<String>,
    stateless: bool,
    json_response: bool,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Option<Vec<String>>,
    sse_retry_ms: Option<u64>,
    /// A shared session store (`redis://HOST:PORT/`), for replicas behind a load balancer.
    store: Option<String>,
    /// Also accept WebSocket upgrades on `path` (with the WebSocket settings below).
    websocket: bool,
    #[serde(flatten)]
    ws: WsOptions,
    #[serde(flatten)]
    auth: ServerAuth,
}

/// The WebSocket settings (`maxMessageBytes`, `pingIntervalMs`, `pingTimeoutMs`), shared by
/// `runWebSocket`, `runHttp({websocket: true})` and `Client.websocket`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct WsOptions {
    max_message_bytes: Option<f64>,
    ping_interval_ms: Option<f64>,
    ping_timeout_ms: Option<f64>,
}

impl WsOptions {
    /// The core's settings; absent fields keep its defaults (0 ms disables pings).
    pub(crate) fn settings(&self, what: &str) -> napi::Result<WsSettings> {
        let mut out = WsSettings::default();
        if let Some(n) = self.max_message_bytes {
            if !((1.0..=f64::from(u32::MAX)).contains(&n) && n.fract() == 0.0) {
                return Err(invalid(format!(
                    "{what}: `maxMessageBytes` must be a positive integer, not {n}"
                )));
            }
            out.max_message_bytes = n as usize;
        }
        for (ms, field, name) in [
            (
                self.ping_interval_ms,
                &mut out.ping_interval,
                "pingIntervalMs",
            ),
            (self.ping_timeout_ms, &mut out.ping_timeout, "pingTimeoutMs"),
        ] {
            if let Some(ms) = ms {
                if !(0.0..=86_400_000.0).contains(&ms) {
                    return Err(invalid(format!(
                        "{what}: `{name}` must be a number of ms from 0 to a day, not {ms}"
                    )));
                }
                *field = std::time::Duration::from_secs_f64(ms / 1000.0);
            }
        }
        Ok(out)
    }
}

/// `runWebSocket({...})` options, as JSON.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WebSocketOptions {
    host: Option<String>,
    port: Option<u16>,
    path: Option<String>,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Option<Vec<String>>,
    #[serde(flatten)]
    ws: WsOptions,
    #[serde(flatten)]
    auth: ServerAuth,
}

/// `host` as an IP address, for a bind address.
fn bind_ip(what: &str, host: Option<&str>) -> napi::Result<std::net::IpAddr> {
    let host = host.unwrap_or("127.0.0.1");
    host.parse().map_err(|_| {
        invalid(format!(
            "{what}: `host` must be an IP address, not `{host}`"
        ))
    })
}

/// `scheme://host:port/path` for a fixed port (the OAuth resource's URL before binding).
fn fixed_url(scheme: &str, bind: SocketAddr, path: &str) -> Option<String> {
    (bind.port() != 0).then(|| {
        let host = match bind.ip() {
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
            v4 => v4.to_string(),
        };
        format!("{scheme}://{host}:{}{path}", bind.port())
    })
}

/// A server and what it is serving.
#[napi]
pub struct NativeServer {
    inner: Server,
    http: Arc<Mutex<Option<HttpServer>>>,
    ws: Arc<Mutex<Option<WsServer>>>,
    stop: CancellationToken,
}

#[napi]
impl NativeServer {
    /// `options`: JSON `{name, version, instructions?, pageSize?}`.
    #[napi(constructor)]
    pub fn new(options: String) -> napi::Result<Self> {
        let options: ServerOptions = json::parse("server options", &options)?;
        let mut builder = Server::builder(options.name, options.version)
            .advertise_resources()
            .advertise_prompts();
        if let Some(instructions) = options.instructions {
            builder = builder.instructions(instructions);
        }
        if let Some(size) = options.page_size {
            builder = builder.page_size(size);
        }
        if let Some(hex) = &options.state_key {
            builder = builder.request_state_key(state_key(hex)?);
        }
        Ok(NativeServer {
            inner: builder.build(),
            http: Arc::new(Mutex::new(None)),
            ws: Arc::new(Mutex::new(None)),
            stop: CancellationToken::new(),
        })
    }

    /// Registers (or replaces) a tool: `tool` is its JSON definition, `options` its task
    /// options as JSON (`{task, taskStart}`, see [`JsToolOptions`]).
    #[napi]
    pub fn add_tool(
        &self,
        env: Env,
        tool: String,
        handler: JsFunction<'_>,
        options: Option<String>,
    ) -> napi::Result<()> {
        let tool: Tool = json::parse("tool definition", &tool)?;
        let options = match options {
            Some(text) => json::parse::<JsToolOptions>("tool options", &text)?,
            None => JsToolOptions::default(),
        }
        .into_core(&tool);
        self.inner
            .add_tool_with(tool, options, JsTool(JsCallback::new(&env, handler)?))
            .map_err(to_js)
    }

    /// Removes a tool; whether it existed.
    #[napi]
    pub fn remove_tool(&self, name: String) -> bool {
        self.inner.remove_tool(&name)
    }

    /// Registers (or replaces) a resource with a fixed URI.
    #[napi]
    pub fn add_resource(
        &self,
        env: Env,
        resource: String,
        handler: JsFunction<'_>,
    ) -> napi::Result<()> {
        let resource: Resource = json::parse("resource definition", &resource)?;
        if resource.uri.is_empty() {
            return Err(invalid("a resource needs a `uri`"));
        }
        self.inner
            .add_resource(resource, JsResource(JsCallback::new(&env, handler)?));
        Ok(())
    }

    /// Removes a resource; whether it existed.
    #[napi]
    pub fn remove_resource(&self, uri: String) -> bool {
        self.inner.remove_resource(&uri)
    }

    /// Registers (or replaces) a resource template (RFC 6570 `uriTemplate`).
    #[napi]
    pub fn add_resource_template(
        &self,
        env: Env,
        template: String,
        handler: JsFunction<'_>,
    ) -> napi::Result<()> {
        let template: ResourceTemplate = json::parse("resource template", &template)?;
        self.inner
            .add_resource_template(template, JsResource(JsCallback::new(&env, handler)?))
            .map_err(to_js)
    }

    /// Completes one variable of a registered template.
    #[napi]
    pub fn add_template_completion(
        &self,
        env: Env,
        uri_template: String,
        variable: String,
        handler: JsFunction<'_>,
    ) -> napi::Result<()> {
        self.inner
            .add_template_completion(
                &uri_template,
                &variable,
                JsCompletion(JsCallback::new(&env, handler)?),
            )
            .map_err(to_js)
    }

    /// Registers (or replaces) a prompt.
    #[napi]
    pub fn add_prompt(
        &self,
        env: Env,
        prompt: String,
        handler: JsFunction<'_>,
    ) -> napi::Result<()> {
        let prompt: Prompt = json::parse("prompt definition", &prompt)?;
        self.inner
            .add_prompt(prompt, JsPrompt(JsCallback::new(&env, handler)?))
            .map_err(to_js)
    }

    /// Removes a prompt; whether it existed.
    #[napi]
    pub fn remove_prompt(&self, name: String) -> bool {
        self.inner.remove_prompt(&name)
    }

    /// Completes one argument of a registered prompt.
    #[napi]
    pub fn add_prompt_completion(
        &self,
        env: Env,
        prompt: String,
        argument: String,
        handler: JsFunction<'_>,
    ) -> napi::Result<()> {
        self.inner
            .add_prompt_completion(
                &prompt,
                &argument,
                JsCompletion(JsCallback::new(&env, handler)?),
            )
            .map_err(to_js)
    }

    /// Tells subscribers that a resource changed.
    #[napi]
    pub fn notify_resource_updated(&self, uri: String) {
        self.inner.notify_resource_updated(&uri);
    }

    /// How many sessions are open.
    #[napi(getter)]
    pub fn session_count(&self) -> u32 {
        u32::try_from(self.inner.session_count()).unwrap_or(u32::MAX)
    }

    /// Serves this process's stdin/stdout until the client hangs up or `close()` is called.
    /// With `hosted` (the JavaScript layer asks on the main thread), the session runs on this
    /// thread when stdin is a pipe or a socket (see `stdio.rs`); otherwise on tokio.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn serve_stdio<'env>(
        &self,
        env: &'env Env,
        hosted: bool,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let stop = self.stop.clone();
        if hosted
            && let Some(host) = crate::embed::host(env.raw())
            && let Some(promise) = stdio::serve_hosted(&self.inner, &host, stop.clone())?
        {
            return Ok(promise);
        }
        let server = self.inner.clone();
        env.spawn_future(async move {
            // Inside the runtime: the transport registers its descriptors with the reactor.
            let session = server.serve(StdioTransport::new());
            tokio::select! {
                closed = session.closed() => stdio::outcome(closed),
                _ = stop.cancelled() => {
                    session.close().await;
                    Ok(())
                }
            }
        })
    }

    /// Starts Streamable HTTP; resolves with the endpoint URL once listening. `verify` is
    /// `runHttp({ auth })`, the bearer-token verifier.
    #[napi]
    pub async fn serve_http(
        &self,
        options: String,
        verify: Option<JsAuthCallback>,
    ) -> napi::Result<String> {
        let options: HttpOptions = json::parse("runHttp options", &options)?;
        let ip = bind_ip("runHttp", options.host.as_deref())?;
        let mut http = HttpServerOptions {
            bind: SocketAddr::new(ip, options.port.unwrap_or(0)),
            stateless: options.stateless,
            json_response: options.json_response,
            allowed_hosts: options.allowed_hosts,
            allowed_origins: options.allowed_origins,
            ..Default::default()
        };
        if options.websocket {
            http.websocket = Some(options.ws.settings("runHttp")?);
        }
        if let Some(ms) = options.sse_retry_ms {
            http.sse_retry = std::time::Duration::from_millis(ms);
        }
        if let Some(path) = options.path {
            http.path = path;
        }
        // The resource's URL is known before binding only for a fixed port.
        let endpoint = fixed_url("http", http.bind, &http.path);
        http.resource_server = options.auth.into_resource_server(endpoint, verify)?;
        let mut slot = self.http.lock().await;
        if slot.is_some() {
            return Err(invalid("runHttp: this server is already serving HTTP"));
        }
        if let Some(url) = &options.store {
            http.shared_store = Some(
                oxmcp::transport::http::store::connect(url)
                    .await
                    .map_err(to_js)?,
            );
        }
        let server = self.inner.serve_http(http).await.map_err(to_js)?;
        let url = server.url();
        *slot = Some(server);
        Ok(url)
    }

    /// Starts a WebSocket-only server; resolves with its `ws://` URL once listening. `verify`
    /// is `runWebSocket({ auth })`, the bearer-token verifier checked on the upgrade request.
    #[napi]
    pub async fn serve_web_socket(
        &self,
        options: String,
        verify: Option<JsAuthCallback>,
    ) -> napi::Result<String> {
        let options: WebSocketOptions = json::parse("runWebSocket options", &options)?;
        let ip = bind_ip("runWebSocket", options.host.as_deref())?;
        let mut ws = WsServerOptions {
            bind: SocketAddr::new(ip, options.port.unwrap_or(0)),
            allowed_hosts: options.allowed_hosts,
            allowed_origins: options.allowed_origins,
            websocket: options.ws.settings("runWebSocket")?,
            ..Default::default()
        };
        if let Some(path) = options.path {
            ws.path = path;
        }
        let endpoint = fixed_url("ws", ws.bind, &ws.path);
        ws.resource_server = options.auth.into_resource_server(endpoint, verify)?;
        let mut slot = self.ws.lock().await;
        if slot.is_some() {
            return Err(invalid(
                "runWebSocket: this server is already serving WebSocket",
            ));
        }
        let server = self.inner.serve_ws(ws).await.map_err(to_js)?;
        let url = server.url();
        *slot = Some(server);
        Ok(url)
    }

    /// Resolves when `close()` is called (keeps Node alive while HTTP is served).
    #[napi]
    pub async fn wait_closed(&self) {
        self.stop.cancelled().await;
    }

    /// Stops serving: HTTP shuts down, the stdio session closes, listen streams end.
    #[napi]
    pub async fn close(&self) {
        self.inner.end_subscriptions();
        let http = self.http.lock().await.take();
        if let Some(http) = http {
            http.shutdown().await;
        }
        let ws = self.ws.lock().await.take();
        if let Some(ws) = ws {
            ws.shutdown().await;
        }
        self.stop.cancel();
    }
}
