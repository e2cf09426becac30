//! `oxmcp._native.NativeClient`: `oxmcp::client::Client` for Python.
//!
//! Connecting captures the caller's event loop: callbacks (sampling, elicitation, roots,
//! notifications, progress) run there. Every request resolves to the wire's result as a plain
//! dict; cancelling the awaiting task drops the core's request, which sends
//! `notifications/cancelled`. A stdio client's session runs on the connecting loop's own
//! thread where it can ([`crate::embed`]), so a call crosses no thread; an HTTP client, and a
//! stdio one where hosting cannot be done, runs on tokio.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use oxmcp::{
    client::{
        Client, ClientOptions, ElicitationHandler, ProtocolMode, RootsHandler, SamplingHandler,
        TaskCallOptions,
    },
    embed::Spawner,
    jsonrpc::ErrorObject,
    protocol::{
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ListRootsResult, LoggingLevel, ProgressNotificationParams,
    },
    session::RequestOptions,
    transport::{
        child::{ChildCommand, ChildTransport, EnvPolicy},
        http::HttpClientOptions,
        ws::WsClientOptions,
    },
};
use pyo3::{prelude::*, types::PyTuple};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    callable::{Callable, Failure, LoopSlot, failure},
    convert::{self, Json, Native},
    embed::Hosted,
    errors::{ErrorMapper, to_pyerr},
    runtime::{LoopHandle, attach, spawn_awaitable},
    tasks::NativeTaskHandle,
};

const INTERNAL_ERROR: i64 = -32603;

fn as_error(e: PyErr) -> ErrorObject {
    match failure(e) {
        Failure::Protocol(obj) => obj,
        Failure::Raised(message) => ErrorObject::new(INTERNAL_ERROR, message),
    }
}

/// Calls a client callback (sampling, elicitation, roots) with the request's params, if it
/// has any, as its one argument, and decodes what it returns as the answer to send back.
/// `result` names the returned value in a conversion error, `kind` the answer in a decoding
/// one.
async fn answer_with<T: serde::de::DeserializeOwned>(
    callable: Callable,
    result: &'static str,
    kind: &'static str,
    params: Option<Value>,
) -> Result<T, ErrorObject> {
    let out = callable
        .call(result, move |py| match &params {
            Some(params) => PyTuple::new(py, [convert::to_py(py, params)?]),
            None => Ok(PyTuple::empty(py)),
        })
        .await
        .map_err(as_error)?;
    serde_json::from_value(out)
        .map_err(|e| ErrorObject::new(INTERNAL_ERROR, format!("invalid {kind} answer: {e}")))
}

struct PySampling(Callable);

impl SamplingHandler for PySampling {
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        Box::pin(answer_with(
            self.0.clone(),
            "the sampling callback's result",
            "sampling",
            Some(params),
        ))
    }
}

struct PyElicitation(Callable);

impl ElicitationHandler for PyElicitation {
    fn elicit(
        &self,
        params: ElicitRequestParams,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        Box::pin(answer_with(
            self.0.clone(),
            "the elicitation callback's result",
            "elicitation",
            Some(params),
        ))
    }
}

struct PyRoots(Callable);

impl RootsHandler for PyRoots {
    fn list_roots(
        &self,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ListRootsResult, ErrorObject>> {
        Box::pin(answer_with(
            self.0.clone(),
            "the roots callback's result",
            "roots",
            None,
        ))
    }
}

/// A callback that takes one JSON value, scheduled on the client's loop (fire and forget).
#[derive(Clone)]
struct LoopCallback {
    func: Arc<Py<PyAny>>,
    handle: LoopHandle,
}

impl LoopCallback {
    fn fire(&self, args: Vec<Value>) {
        crate::runtime::attach(|py| {
            let converted: PyResult<Vec<Bound<'_, PyAny>>> = args
                .iter()
                .map(|a| convert::to_py(py, a).map(|o| o.into_bound(py)))
                .collect();
            if let Ok(converted) = converted {
                // A closed loop means the program is ending; the notification has no reader.
                let _ = self.handle.call_soon(py, self.func.bind(py), converted);
            }
        });
    }
}

/// How the Python layer configures a connection (a dict with these keys).
struct Config {
    options: ClientOptions,
    timeout: Option<Duration>,
}

fn config(py: Python<'_>, cfg: &Bound<'_, PyAny>, handle: &LoopHandle) -> PyResult<Config> {
    let get = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        let v = cfg.get_item(key).ok().filter(|v| !v.is_none());
        Ok(v)
    };
    let name: String = get("name")?.map_or(Ok("oxmcp-python".into()), |v| v.extract())?;
    let version: String =
        get("version")?.map_or(Ok(env!("CARGO_PKG_VERSION").into()), |v| v.extract())?;
    let mut options = ClientOptions::new(name, version);
    let text =
        |key: &str| -> PyResult<Option<String>> { get(key)?.map(|v| v.extract()).transpose() };
    let pinned = ProtocolMode::pinned(
        text("protocol_version")?.as_deref(),
        text("era")?.as_deref(),
    )
    .map_err(|m| {
        crate::errors::to_pyerr(oxmcp::Error::InvalidArgument(format!(
            "protocol_version / era: {m}"
        )))
    })?;
    if let Some(mode) = pinned {
        options = options.protocol(mode);
    }
    if let Some(v) = get("log_level")? {
        let v: String = v.extract()?;
        let level: LoggingLevel = convert::decode(Value::String(v), "log_level")?;
        options = options.log_level(level);
    }
    let slot = LoopSlot::fixed(handle.clone());
    let callable = |key: &str| -> PyResult<Option<Callable>> {
        let Some(func) = get(key)? else {
            return Ok(None);
        };
        let is_async = is_coroutine_function(py, &func)?;
        Ok(Some(Callable::new(func.unbind(), is_async, slot.clone())))
    };
    if let Some(c) = callable("sampling")? {
        options = options.sampling(PySampling(c));
    }
    if let Some(c) = callable("elicitation")? {
        options = options.elicitation(PyElicitation(c));
    }
    if let Some(c) = callable("roots")? {
        options = options.roots(PyRoots(c));
    }
    if let Some(func) = get("on_notification")? {
        let cb = LoopCallback {
            func: Arc::new(func.unbind()),
            handle: handle.clone(),
        };
        options = options.on_notification(move |method: &str, params: Option<Value>| {
            cb.fire(vec![
                Value::String(method.to_owned()),
                params.unwrap_or(Value::Null),
            ]);
        });
    }
    let timeout = get("timeout")?
        .map(|v| v.extract::<f64>())
        .transpose()?
        .map(seconds)
        .transpose()?;
    if let Some(t) = timeout {
        options.session.request_timeout = t;
    }
    Ok(Config { options, timeout })
}

fn seconds(s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| {
        to_pyerr(oxmcp::Error::InvalidArgument(format!(
            "a timeout must be a non-negative number of seconds, got {s}"
        )))
    })
}

/// Header pairs from Python as a header map (a bad name or value is an invalid argument).
fn header_map(headers: Option<Vec<(String, String)>>) -> PyResult<http::HeaderMap> {
    let mut map = http::HeaderMap::new();
    for (k, v) in headers.unwrap_or_default() {
        let name = http::HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
            to_pyerr(oxmcp::Error::InvalidArgument(format!(
                "invalid header name `{k}`"
            )))
        })?;
        let value = http::HeaderValue::from_str(&v).map_err(|_| {
            to_pyerr(oxmcp::Error::InvalidArgument(format!(
                "invalid value for header `{k}`"
            )))
        })?;
        map.insert(name, value);
    }
    Ok(map)
}

fn is_coroutine_function(py: Python<'_>, func: &Bound<'_, PyAny>) -> PyResult<bool> {
    py.import("inspect")?
        .call_method1("iscoroutinefunction", (func,))?
        .is_truthy()
}

/// A connected client (`oxmcp.Client` wraps it).
#[pyclass(module = "oxmcp._native", name = "NativeClient", frozen)]
pub struct NativeClient {
    client: Client,
    handle: LoopHandle,
    default_timeout: Option<Duration>,
    /// The session runs on the connecting loop's thread (a stdio client, where possible).
    hosted: Option<Arc<Hosted>>,
}

impl Drop for NativeClient {
    fn drop(&mut self) {
        // Dropped without `close`: the session closes with the last handle to the client;
        // hosting ends after it.
        if let Some(hosted) = &self.hosted {
            hosted.retire_later(self.client.session().clone());
        }
    }
}

impl NativeClient {
    /// The Python object for a client that has just connected.
    fn connected(
        client: Client,
        handle: LoopHandle,
        default_timeout: Option<Duration>,
        hosted: Option<Arc<Hosted>>,
    ) -> Native<NativeClient> {
        Native(NativeClient {
            client,
            handle,
            default_timeout,
            hosted,
        })
    }

    /// Runs `future` hosted when called on the client's own loop thread, else on tokio.
    fn spawn<'py, F, T>(&self, py: Python<'py>, future: F) -> PyResult<Bound<'py, PyAny>>
    where
        F: std::future::Future<Output = Result<T, ErrorMapper>> + Send + 'static,
        T: crate::convert::ToPython,
    {
        match &self.hosted {
            Some(hosted) if hosted.serves_here(py) => hosted.awaitable(py, future),
            _ => spawn_awaitable(py, future),
        }
    }

    fn options(
        &self,
        py: Python<'_>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
    ) -> PyResult<RequestOptions> {
        let mut options = RequestOptions {
            timeout: match timeout {
                Some(t) => Some(seconds(t)?),
                None => self.default_timeout,
            },
            ..Default::default()
        };
        if let Some(func) = on_progress {
            let cb = LoopCallback {
                func: Arc::new(func),
                handle: self.handle.clone(),
            };
            options.on_progress = Some(Box::new(move |p: ProgressNotificationParams| {
                cb.fire(vec![
                    serde_json::json!(p.progress),
                    serde_json::json!(p.total),
                    serde_json::json!(p.message),
                ]);
            }));
        }
        let _ = py;
        Ok(options)
    }
}

#[pymethods]
impl NativeClient {
    /// Starts `command` (never through a shell) and connects over its stdio.
    #[staticmethod]
    #[pyo3(signature = (command, args, env, cwd, config, inherit_env=false))]
    fn connect_stdio<'py>(
        py: Python<'py>,
        command: String,
        args: Vec<String>,
        env: Option<Vec<(String, String)>>,
        cwd: Option<String>,
        config: &Bound<'py, PyAny>,
        inherit_env: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let handle = LoopHandle::current(py)?;
        let Config { options, timeout } = self::config(py, config, &handle)?;
        let mut cmd = ChildCommand::new(command).args(args);
        if inherit_env {
            cmd = cmd.env_policy(EnvPolicy::Inherit);
        }
        for (k, v) in env.unwrap_or_default() {
            cmd = cmd.env(k, v);
        }
        if let Some(cwd) = cwd {
            cmd = cmd.current_dir(cwd);
        }
        if let Some(hosted) = Hosted::open(py)? {
            return connect_hosted(py, hosted, cmd, options, handle, timeout);
        }
        spawn_awaitable(py, async move {
            let client = Client::connect_child(cmd, options)
                .await
                .map_err(ErrorMapper::from)?;
            Ok(NativeClient::connected(client, handle, timeout, None))
        })
    }

    /// Connects to a Streamable HTTP server (or a legacy HTTP+SSE one); `auth` is the
    /// settings of `oxmcp.OAuth` (a 401 then runs the core's OAuth flow).
    #[staticmethod]
    #[pyo3(signature = (url, headers, config, auth=None))]
    fn connect_http<'py>(
        py: Python<'py>,
        url: String,
        headers: Option<Vec<(String, String)>>,
        config: &Bound<'py, PyAny>,
        auth: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let handle = LoopHandle::current(py)?;
        let Config { options, timeout } = self::config(py, config, &handle)?;
        let mut http = HttpClientOptions::default();
        if let Some(auth) = auth {
            http.auth = Some(crate::auth::oauth_client(py, auth, &handle)?);
        }
        http.headers = header_map(headers)?;
        spawn_awaitable(py, async move {
            let client = Client::connect_http(&url, options, http)
                .await
                .map_err(ErrorMapper::from)?;
            Ok(NativeClient::connected(client, handle, timeout, None))
        })
    }

    /// Connects to a WebSocket server (`ws://` or `wss://`); `headers` go on the upgrade
    /// request, `connect_timeout` (seconds) bounds TCP, TLS and the upgrade together.
    #[staticmethod]
    #[pyo3(signature = (url, headers, config, connect_timeout=None, max_message_bytes=None))]
    fn connect_ws<'py>(
        py: Python<'py>,
        url: String,
        headers: Option<Vec<(String, String)>>,
        config: &Bound<'py, PyAny>,
        connect_timeout: Option<f64>,
        max_message_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let handle = LoopHandle::current(py)?;
        let Config { options, timeout } = self::config(py, config, &handle)?;
        let mut ws = WsClientOptions {
            headers: header_map(headers)?,
            ..WsClientOptions::default()
        };
        if let Some(t) = connect_timeout {
            ws.connect_timeout = seconds(t)?;
        }
        if let Some(n) = max_message_bytes {
            ws.websocket.max_message_bytes = n;
        }
        spawn_awaitable(py, async move {
            let client = Client::connect_ws(&url, options, ws)
                .await
                .map_err(ErrorMapper::from)?;
            Ok(NativeClient::connected(client, handle, timeout, None))
        })
    }

    /// What the server said about itself: `protocolVersion`, `serverInfo`, `capabilities`,
    /// `instructions`.
    #[getter]
    fn server(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let d = self.client.server();
        let value = serde_json::json!({
            "protocolVersion": d.protocol_version.as_str(),
            "serverInfo": d.info,
            "capabilities": d.capabilities,
            "instructions": d.instructions,
        });
        convert::to_py(py, &value)
    }

    /// Any request; resolves to its result.
    #[pyo3(signature = (method, params=None, timeout=None, on_progress=None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: String,
        params: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = params
            .map(|p| convert::from_py(p, "the request's params"))
            .transpose()?;
        let options = self.options(py, timeout, on_progress)?;
        let client = self.client.clone();
        self.spawn(py, async move {
            client
                .request(&method, params, options)
                .await
                .map_err(ErrorMapper::from)
        })
    }

    /// `tools/call` (a progress token is always attached, so progress keeps it alive).
    #[pyo3(signature = (name, arguments=None, timeout=None, on_progress=None))]
    fn call_tool<'py>(
        &self,
        py: Python<'py>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arguments = arguments
            .map(|a| convert::from_py(a, "the tool's arguments"))
            .transpose()?
            .unwrap_or(Value::Null);
        let options = self.options(py, timeout, on_progress)?;
        let client = self.client.clone();
        self.spawn(py, async move {
            client
                .call_tool_with(&name, arguments, options)
                .await
                .map(Json)
                .map_err(ErrorMapper::from)
        })
    }

    /// Calls a tool as a task: a handle at once (see `oxmcp::client::TaskHandle`); a server
    /// without tasks gets a plain call, whose result the handle holds. `ttl` in seconds.
    #[pyo3(signature = (name, arguments=None, ttl=None))]
    fn call_tool_as_task<'py>(
        &self,
        py: Python<'py>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        ttl: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arguments = arguments
            .map(|a| convert::from_py(a, "the tool's arguments"))
            .transpose()?
            .unwrap_or(Value::Null);
        let options = TaskCallOptions {
            ttl: ttl.map(seconds).transpose()?,
        };
        let client = self.client.clone();
        let hosted = self.hosted.clone();
        self.spawn(py, async move {
            client
                .call_tool_as_task(&name, arguments, options)
                .await
                .map(|handle| Native(NativeTaskHandle::new(handle, hosted)))
                .map_err(ErrorMapper::from)
        })
    }

    /// A handle on a task created earlier (by this connection or another).
    fn task(&self, id: &str) -> PyResult<NativeTaskHandle> {
        let handle = self.client.task(id).map_err(to_pyerr)?;
        Ok(NativeTaskHandle::new(handle, self.hosted.clone()))
    }

    /// One page of `tools/list`.
    #[pyo3(signature = (cursor=None))]
    fn list_tools<'py>(
        &self,
        py: Python<'py>,
        cursor: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let client = self.client.clone();
        self.spawn(py, async move {
            client
                .list_tools(cursor.as_deref())
                .await
                .map(Json)
                .map_err(ErrorMapper::from)
        })
    }

    /// `ping` (handshake era; refused locally in the stateless one).
    fn ping<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let client = self.client.clone();
        self.spawn(
            py,
            async move { client.ping().await.map_err(ErrorMapper::from) },
        )
    }

    /// `logging/setLevel`.
    fn set_logging_level<'py>(&self, py: Python<'py>, level: &str) -> PyResult<Bound<'py, PyAny>> {
        let level: LoggingLevel = convert::decode(Value::String(level.to_owned()), "log level")?;
        let client = self.client.clone();
        self.spawn(py, async move {
            client
                .set_logging_level(level)
                .await
                .map_err(ErrorMapper::from)
        })
    }

    /// `notifications/roots/list_changed` (nothing in the stateless era).
    fn send_roots_list_changed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let client = self.client.clone();
        self.spawn(py, async move {
            client
                .notify_roots_changed()
                .await
                .map_err(ErrorMapper::from)
        })
    }

    /// Whether the connection has closed.
    #[getter]
    fn is_closed(&self) -> bool {
        self.client.session().is_closed()
    }

    /// Whether the session runs on the connecting loop's thread (see `embed.rs`) rather than
    /// on tokio's: what the tests check that hosting took place, or fell back.
    #[getter]
    fn is_hosted(&self) -> bool {
        self.hosted.is_some()
    }

    /// Closes the connection (a child server goes through the shutdown ladder).
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let client = self.client.clone();
        if let Some(hosted) = &self.hosted
            && hosted.serves_here(py)
        {
            return hosted.close(py, client);
        }
        spawn_awaitable(py, async move {
            client.close().await;
            Ok::<_, ErrorMapper>(())
        })
    }
}

/// Spawns the child and connects to it with the session on `hosted`'s loop (see
/// [`crate::embed`]). A connect that fails or is cancelled stops hosting again.
fn connect_hosted<'py>(
    py: Python<'py>,
    hosted: Arc<Hosted>,
    cmd: ChildCommand,
    mut options: ClientOptions,
    handle: LoopHandle,
    timeout: Option<Duration>,
) -> PyResult<Bound<'py, PyAny>> {
    let on = hosted.clone();
    hosted.awaitable(py, async move {
        let mut guard = StopUnlessConnected(Some(on.clone()));
        let child = ChildTransport::spawn(cmd).await?;
        let (child, feeder) = child.hosted(on.host())?;
        attach(|py| on.watch(py, feeder))
            .unwrap_or_else(|| Err(to_pyerr(oxmcp::Error::closed("the interpreter is exiting"))))?;
        options.spawner = Spawner::Host(on.host().clone());
        let client = Client::connect(child, options).await?;
        guard.0 = None;
        Ok(NativeClient::connected(client, handle, timeout, Some(on)))
    })
}

/// Stops hosting when a hosted connect ends without a client.
struct StopUnlessConnected(Option<Arc<Hosted>>);

impl Drop for StopUnlessConnected {
    fn drop(&mut self) {
        if let Some(hosted) = self.0.take() {
            attach(|py| hosted.stop(py));
        }
    }
}
