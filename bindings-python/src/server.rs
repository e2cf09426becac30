//! `oxmcp._native.NativeServer`: `oxmcp::server::Server` with Python handlers.
//!
//! Each registration takes the definition as a dict (decoded into the core's type, so a bad
//! schema or URI template is refused here with a typed error) and a Python callable, wrapped
//! in one adapter per core handler trait. The return value of a tool goes through
//! `oxmcp::server::coerce::tool_result`, the rule both bindings share.

use std::{collections::BTreeMap, sync::Arc};

use futures::future::BoxFuture;
use oxmcp::{
    jsonrpc::ErrorObject,
    protocol::{
        Completion, GetPromptResult, JsonObject, Prompt, ReadResourceResult, Resource,
        ResourceTemplate, Tool,
    },
    server::{
        CompletionHandler, Context, PromptHandler, PromptResult, ResourceError, ResourceHandler,
        ResourceResult, Server, ToolError, ToolHandler, ToolOptions, ToolResult,
        coerce::{self, Shape},
    },
    transport::{
        http::{HttpServer, HttpServerOptions},
        ws::{WsServer, WsServerOptions, WsSettings},
    },
};
use pyo3::{prelude::*, types::PyTuple};
use serde_json::Value;

use crate::{
    callable::{Callable, Failure, LoopSlot, failure},
    context::NativeContext,
    convert::{self, Json, Native},
    errors::{ErrorMapper, to_pyerr},
    runtime::spawn_awaitable,
};

/// JSON-RPC "internal error", for a prompt or completion handler that raised.
const INTERNAL_ERROR: i64 = -32603;

fn ctx_arg<'py>(py: Python<'py>, ctx: Context) -> PyResult<Bound<'py, PyAny>> {
    Ok(Bound::new(py, NativeContext { ctx })?.into_any())
}

struct PyTool {
    callable: Callable,
    shape: Shape,
}

impl ToolHandler for PyTool {
    fn call(&self, arguments: Value, ctx: Context) -> BoxFuture<'static, ToolResult> {
        let callable = self.callable.clone();
        let shape = self.shape;
        Box::pin(async move {
            // A cancelled call (a task's `tasks/cancel` included) stops an `async def`
            // handler at once: its coroutine gets `CancelledError` (a `def` handler, on its
            // thread, sees `ctx.is_cancelled`).
            let cancelled = ctx.cancellation().clone();
            let call = callable.call("the tool's return value", move |py| {
                let args = convert::to_py(py, &arguments)?;
                PyTuple::new(py, [args.into_bound(py), ctx_arg(py, ctx)?])
            });
            let out = tokio::select! {
                out = call => out,
                _ = cancelled.cancelled() => return Err(ToolError::failed("cancelled")),
            };
            match out {
                Ok(value) => Ok(coerce::tool_result(value, shape)),
                Err(e) => match failure(e) {
                    Failure::Protocol(obj) => Err(ToolError::Protocol(obj)),
                    Failure::Raised(message) => Err(ToolError::Failed(message)),
                },
            }
        })
    }
}

struct PyResource {
    callable: Callable,
}

impl ResourceHandler for PyResource {
    fn read(
        &self,
        uri: String,
        variables: JsonObject,
        ctx: Context,
    ) -> BoxFuture<'static, ResourceResult> {
        let callable = self.callable.clone();
        Box::pin(async move {
            let out = callable
                .call("the resource's contents", move |py| {
                    let vars = convert::to_py(py, &Value::Object(variables))?;
                    PyTuple::new(
                        py,
                        [
                            pyo3::types::PyString::new(py, &uri).into_any(),
                            vars.into_bound(py),
                            ctx_arg(py, ctx)?,
                        ],
                    )
                })
                .await;
            match out {
                Ok(Value::Null) => Err(ResourceError::NotFound),
                Ok(value) => serde_json::from_value::<ReadResourceResult>(value)
                    .map_err(|e| ResourceError::Failed(format!("invalid resource contents: {e}"))),
                Err(e) => match failure(e) {
                    Failure::Protocol(obj) => Err(ResourceError::Protocol(obj)),
                    Failure::Raised(message) => Err(ResourceError::Failed(message)),
                },
            }
        })
    }
}

fn as_error(e: PyErr) -> ErrorObject {
    match failure(e) {
        Failure::Protocol(obj) => obj,
        Failure::Raised(message) => ErrorObject::new(INTERNAL_ERROR, message),
    }
}

fn string_map<'py>(py: Python<'py>, map: &BTreeMap<String, String>) -> PyResult<Bound<'py, PyAny>> {
    let dict = pyo3::types::PyDict::new(py);
    for (k, v) in map {
        dict.set_item(k, v)?;
    }
    Ok(dict.into_any())
}

struct PyPrompt {
    callable: Callable,
}

impl PromptHandler for PyPrompt {
    fn get(
        &self,
        arguments: BTreeMap<String, String>,
        ctx: Context,
    ) -> BoxFuture<'static, PromptResult> {
        let callable = self.callable.clone();
        Box::pin(async move {
            let value = callable
                .call("the prompt's messages", move |py| {
                    PyTuple::new(py, [string_map(py, &arguments)?, ctx_arg(py, ctx)?])
                })
                .await
                .map_err(as_error)?;
            serde_json::from_value::<GetPromptResult>(value).map_err(|e| {
                ErrorObject::new(INTERNAL_ERROR, format!("invalid prompt result: {e}"))
            })
        })
    }
}

struct PyCompletion {
    callable: Callable,
}

impl CompletionHandler for PyCompletion {
    fn complete(
        &self,
        value: String,
        context: BTreeMap<String, String>,
        ctx: Context,
    ) -> BoxFuture<'static, Result<Completion, ErrorObject>> {
        let callable = self.callable.clone();
        Box::pin(async move {
            let out = callable
                .call("the completion", move |py| {
                    PyTuple::new(
                        py,
                        [
                            pyo3::types::PyString::new(py, &value).into_any(),
                            string_map(py, &context)?,
                            ctx_arg(py, ctx)?,
                        ],
                    )
                })
                .await
                .map_err(as_error)?;
            serde_json::from_value::<Completion>(out)
                .map_err(|e| ErrorObject::new(INTERNAL_ERROR, format!("invalid completion: {e}")))
        })
    }
}

/// A server (`oxmcp.Server` wraps it).
#[pyclass(module = "oxmcp._native", name = "NativeServer", frozen)]
pub struct NativeServer {
    server: Server,
    slot: Arc<LoopSlot>,
}

impl NativeServer {
    fn callable(&self, handler: Py<PyAny>, is_async: bool) -> Callable {
        Callable::new(handler, is_async, self.slot.clone())
    }
}

#[pymethods]
impl NativeServer {
    #[new]
    #[pyo3(signature = (name, version, instructions=None, state_key=None))]
    fn new(
        name: String,
        version: String,
        instructions: Option<String>,
        state_key: Option<Vec<u8>>,
    ) -> PyResult<Self> {
        let mut builder = Server::builder(name, version)
            .advertise_resources()
            .advertise_prompts();
        if let Some(instructions) = instructions {
            builder = builder.instructions(instructions);
        }
        if let Some(key) = state_key {
            // Replicas behind one load balancer share this key, so a multi round-trip
            // request's state signed by one is accepted by the others.
            let len = key.len();
            let key: [u8; 32] = key.try_into().map_err(|_| {
                to_pyerr(oxmcp::Error::InvalidArgument(format!(
                    "state_key must be 32 bytes, got {len}"
                )))
            })?;
            builder = builder.request_state_key(key);
        }
        Ok(NativeServer {
            server: builder.build(),
            slot: Arc::default(),
        })
    }

    /// Registers (or replaces) a tool. `wrapped`: the output schema is `{"result": ...}`.
    /// `task`: `"optional"` or `"required"` (calls may or must run as tasks); `deferred`: the
    /// call becomes a task when the handler calls `ctx.start_task()`.
    #[pyo3(signature = (tool, handler, is_async, wrapped, task=None, deferred=false))]
    fn add_tool(
        &self,
        tool: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        is_async: bool,
        wrapped: bool,
        task: Option<&str>,
        deferred: bool,
    ) -> PyResult<()> {
        let tool: Tool = convert::decode(convert::from_py(tool, "tool")?, "tool")?;
        let mut options = match task {
            None => ToolOptions::from_tool(&tool),
            Some(support) => ToolOptions::tasks(convert::decode(
                Value::String(support.to_owned()),
                "task support (\"optional\" or \"required\")",
            )?),
        };
        if deferred {
            options = options.deferred();
        }
        let handler = PyTool {
            callable: self.callable(handler, is_async),
            shape: if wrapped {
                Shape::Wrapped
            } else {
                Shape::Plain
            },
        };
        self.server
            .add_tool_with(tool, options, handler)
            .map_err(to_pyerr)
    }

    /// Removes a tool; whether it existed.
    fn remove_tool(&self, name: &str) -> bool {
        self.server.remove_tool(name)
    }

    /// The registered tools, as sent in `tools/list`.
    fn tools(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let tools = serde_json::to_value(self.server.tools()).unwrap_or(Value::Null);
        convert::to_py(py, &tools)
    }

    /// Registers a resource with a fixed URI.
    fn add_resource(
        &self,
        resource: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        is_async: bool,
    ) -> PyResult<()> {
        let resource: Resource =
            convert::decode(convert::from_py(resource, "resource")?, "resource")?;
        self.server.add_resource(
            resource,
            PyResource {
                callable: self.callable(handler, is_async),
            },
        );
        Ok(())
    }

    /// Registers a resource template.
    fn add_resource_template(
        &self,
        template: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        is_async: bool,
    ) -> PyResult<()> {
        let template: ResourceTemplate = convert::decode(
            convert::from_py(template, "resource template")?,
            "resource template",
        )?;
        self.server
            .add_resource_template(
                template,
                PyResource {
                    callable: self.callable(handler, is_async),
                },
            )
            .map_err(to_pyerr)
    }

    /// Removes a resource; whether it existed.
    fn remove_resource(&self, uri: &str) -> bool {
        self.server.remove_resource(uri)
    }

    /// Registers a prompt.
    fn add_prompt(
        &self,
        prompt: &Bound<'_, PyAny>,
        handler: Py<PyAny>,
        is_async: bool,
    ) -> PyResult<()> {
        let prompt: Prompt = convert::decode(convert::from_py(prompt, "prompt")?, "prompt")?;
        self.server
            .add_prompt(
                prompt,
                PyPrompt {
                    callable: self.callable(handler, is_async),
                },
            )
            .map_err(to_pyerr)
    }

    /// Removes a prompt; whether it existed.
    fn remove_prompt(&self, name: &str) -> bool {
        self.server.remove_prompt(name)
    }

    /// Completes one argument of a prompt.
    fn add_prompt_completion(
        &self,
        prompt: &str,
        argument: &str,
        handler: Py<PyAny>,
        is_async: bool,
    ) -> PyResult<()> {
        self.server
            .add_prompt_completion(
                prompt,
                argument,
                PyCompletion {
                    callable: self.callable(handler, is_async),
                },
            )
            .map_err(to_pyerr)
    }

    /// Completes one variable of a resource template.
    fn add_template_completion(
        &self,
        uri_template: &str,
        variable: &str,
        handler: Py<PyAny>,
        is_async: bool,
    ) -> PyResult<()> {
        self.server
            .add_template_completion(
                uri_template,
                variable,
                PyCompletion {
                    callable: self.callable(handler, is_async),
                },
            )
            .map_err(to_pyerr)
    }

    /// Tells subscribers a resource changed.
    fn notify_resource_updated(&self, uri: &str) {
        self.server.notify_resource_updated(uri);
    }

    /// How many sessions are open.
    fn session_count(&self) -> usize {
        self.server.session_count()
    }

    /// Serves stdin/stdout until the client hangs up (fd 1 is pointed at stderr meanwhile,
    /// so stray prints never reach the protocol stream).
    fn serve_stdio<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.slot.acquire(py)?;
        let server = self.server.clone();
        let slot = self.slot.clone();
        let awaitable = spawn_awaitable(py, async move {
            let _release = Release(slot);
            server.serve_stdio().await.map_err(ErrorMapper::from)
        });
        if awaitable.is_err() {
            self.slot.release();
        }
        awaitable
    }

    /// Starts Streamable HTTP (plus the legacy HTTP+SSE endpoints) and resolves to the running
    /// server once it listens. `store`: a shared session store URL (`redis://HOST:PORT/`) for
    /// several replicas. `auth`: a token verifier (the claims dict or `None`) that protects the
    /// endpoint as an OAuth resource server.
    #[pyo3(signature = (
        host="127.0.0.1", port=0, path="/mcp", stateless=false, json_response=false,
        allowed_hosts=None, sse_retry_ms=None, store=None, auth=None, auth_is_async=false,
        resource=None, authorization_servers=None, required_scopes=None, resource_name=None,
        allowed_origins=None, websocket=false, max_message_bytes=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn serve_http<'py>(
        &self,
        py: Python<'py>,
        host: &str,
        port: u16,
        path: &str,
        stateless: bool,
        json_response: bool,
        allowed_hosts: Option<Vec<String>>,
        sse_retry_ms: Option<u64>,
        store: Option<String>,
        auth: Option<Py<PyAny>>,
        auth_is_async: bool,
        resource: Option<String>,
        authorization_servers: Option<Vec<String>>,
        required_scopes: Option<Vec<String>>,
        resource_name: Option<String>,
        allowed_origins: Option<Vec<String>>,
        websocket: bool,
        max_message_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bind = bind_addr(host, port)?;
        let mut options = HttpServerOptions {
            bind,
            path: path.to_owned(),
            stateless,
            json_response,
            allowed_hosts,
            allowed_origins,
            websocket: websocket.then(|| ws_settings(max_message_bytes)),
            ..Default::default()
        };
        if let Some(ms) = sse_retry_ms {
            options.sse_retry = std::time::Duration::from_millis(ms);
        }
        if let Some(verify) = auth {
            options.resource_server = Some(self.resource_server(
                verify,
                auth_is_async,
                ResourceArgs {
                    scheme: "http",
                    bind,
                    path,
                    resource,
                    authorization_servers,
                    required_scopes,
                    resource_name,
                },
            )?);
        }
        self.slot.acquire(py)?;
        let server = self.server.clone();
        let slot = self.slot.clone();
        let awaitable = spawn_awaitable(py, async move {
            let release = Release(slot);
            if let Some(url) = store {
                let store = oxmcp::transport::http::store::connect(&url)
                    .await
                    .map_err(ErrorMapper::from)?;
                options.shared_store = Some(store);
            }
            let http = server
                .serve_http(options)
                .await
                .map_err(ErrorMapper::from)?;
            Ok(Native(NativeHttpServer {
                url: http.url(),
                http: Arc::new(http),
                release: std::sync::Mutex::new(Some(release)),
            }))
        });
        if awaitable.is_err() {
            self.slot.release();
        }
        awaitable
    }

    /// Starts a WebSocket-only server (`ws://HOST:PORT/PATH`) and resolves to it once it
    /// listens. `auth` and the rest are those of `serve_http`, checked on the upgrade request.
    #[pyo3(signature = (
        host="127.0.0.1", port=0, path="/mcp", allowed_hosts=None, allowed_origins=None,
        max_message_bytes=None, auth=None, auth_is_async=false, resource=None,
        authorization_servers=None, required_scopes=None, resource_name=None,
        ping_interval=None, ping_timeout=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn serve_ws<'py>(
        &self,
        py: Python<'py>,
        host: &str,
        port: u16,
        path: &str,
        allowed_hosts: Option<Vec<String>>,
        allowed_origins: Option<Vec<String>>,
        max_message_bytes: Option<usize>,
        auth: Option<Py<PyAny>>,
        auth_is_async: bool,
        resource: Option<String>,
        authorization_servers: Option<Vec<String>>,
        required_scopes: Option<Vec<String>>,
        resource_name: Option<String>,
        ping_interval: Option<f64>,
        ping_timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bind = bind_addr(host, port)?;
        let mut websocket = ws_settings(max_message_bytes);
        if let Some(s) = ping_interval {
            websocket.ping_interval = duration(s, "ping_interval")?;
        }
        if let Some(s) = ping_timeout {
            websocket.ping_timeout = duration(s, "ping_timeout")?;
        }
        let mut options = WsServerOptions {
            bind,
            path: path.to_owned(),
            allowed_hosts,
            allowed_origins,
            websocket,
            ..Default::default()
        };
        if let Some(verify) = auth {
            options.resource_server = Some(self.resource_server(
                verify,
                auth_is_async,
                ResourceArgs {
                    scheme: "ws",
                    bind,
                    path,
                    resource,
                    authorization_servers,
                    required_scopes,
                    resource_name,
                },
            )?);
        }
        self.slot.acquire(py)?;
        let server = self.server.clone();
        let slot = self.slot.clone();
        let awaitable = spawn_awaitable(py, async move {
            let release = Release(slot);
            let ws = server.serve_ws(options).await.map_err(ErrorMapper::from)?;
            Ok(Native(NativeWsServer {
                url: ws.url(),
                ws: Arc::new(ws),
                release: std::sync::Mutex::new(Some(release)),
            }))
        });
        if awaitable.is_err() {
            self.slot.release();
        }
        awaitable
    }
}

/// `host` (an IP address) and `port` as a socket address.
fn bind_addr(host: &str, port: u16) -> PyResult<std::net::SocketAddr> {
    let ip: std::net::IpAddr = host.parse().map_err(|_| {
        to_pyerr(oxmcp::Error::InvalidArgument(format!(
            "host must be an IP address, got `{host}`"
        )))
    })?;
    Ok(std::net::SocketAddr::new(ip, port))
}

/// The core's WebSocket settings with the message cap, when given, replaced.
/// Seconds from Python as a duration: finite and not negative, or a typed error naming `what`.
fn duration(seconds: f64, what: &str) -> PyResult<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(seconds).map_err(|_| {
        to_pyerr(oxmcp::Error::InvalidArgument(format!(
            "{what} must be a finite, non-negative number of seconds, not {seconds}"
        )))
    })
}

fn ws_settings(max_message_bytes: Option<usize>) -> WsSettings {
    let mut settings = WsSettings::default();
    if let Some(n) = max_message_bytes {
        settings.max_message_bytes = n;
    }
    settings
}

/// What makes an endpoint an OAuth resource server, besides the token verifier.
struct ResourceArgs<'a> {
    scheme: &'a str,
    bind: std::net::SocketAddr,
    path: &'a str,
    resource: Option<String>,
    authorization_servers: Option<Vec<String>>,
    required_scopes: Option<Vec<String>>,
    resource_name: Option<String>,
}

impl NativeServer {
    /// The core's resource server around the Python token verifier `verify`.
    fn resource_server(
        &self,
        verify: Py<PyAny>,
        is_async: bool,
        args: ResourceArgs<'_>,
    ) -> PyResult<Arc<oxmcp::auth::ResourceServer>> {
        // The resource's URL is what tokens must name as their audience, so it has to be
        // known before listening: given, or made from a fixed port.
        let resource = match args.resource {
            Some(r) => r,
            None if args.bind.port() != 0 => {
                format!("{}://{}{}", args.scheme, args.bind, args.path)
            }
            None => {
                return Err(to_pyerr(oxmcp::Error::InvalidArgument(
                    "auth= needs resource= (the endpoint's public URL) or a fixed port".into(),
                )));
            }
        };
        crate::auth_resource::resource_server(
            self.callable(verify, is_async),
            resource,
            args.authorization_servers.unwrap_or_default(),
            args.required_scopes.unwrap_or_default(),
            args.resource_name,
        )
        .map_err(to_pyerr)
    }
}

/// Releases the server's loop when serving ends.
struct Release(Arc<LoopSlot>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A listening HTTP server.
#[pyclass(module = "oxmcp._native", name = "NativeHttpServer", frozen)]
pub struct NativeHttpServer {
    http: Arc<HttpServer>,
    url: String,
    release: std::sync::Mutex<Option<Release>>,
}

#[pymethods]
impl NativeHttpServer {
    /// The endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// The port listened on.
    #[getter]
    fn port(&self) -> u16 {
        self.http.local_addr().port()
    }

    /// How many sessions are open.
    fn session_count(&self) -> usize {
        self.http.session_count()
    }

    /// Stops accepting and closes every session.
    fn shutdown<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let http = self.http.clone();
        let release = self
            .release
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        spawn_awaitable(py, async move {
            http.shutdown().await;
            drop(release);
            Ok::<_, ErrorMapper>(Json(()))
        })
    }
}

/// A listening WebSocket server.
#[pyclass(module = "oxmcp._native", name = "NativeWsServer", frozen)]
pub struct NativeWsServer {
    ws: Arc<WsServer>,
    url: String,
    release: std::sync::Mutex<Option<Release>>,
}

#[pymethods]
impl NativeWsServer {
    /// The endpoint, e.g. `ws://127.0.0.1:8000/mcp`.
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// The port listened on.
    #[getter]
    fn port(&self) -> u16 {
        self.ws.local_addr().port()
    }

    /// How many sockets are open.
    fn session_count(&self) -> usize {
        self.ws.session_count()
    }

    /// Stops accepting and closes every socket.
    fn shutdown<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ws = self.ws.clone();
        let release = self
            .release
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        spawn_awaitable(py, async move {
            ws.shutdown().await;
            drop(release);
            Ok::<_, ErrorMapper>(Json(()))
        })
    }
}
