//! The native request context handed to Python handlers: a thin handle on
//! `oxmcp::server::Context`. Everything era-dependent (MRTR rounds in 2026-07-28, requests to
//! the client before it) happens in the core; this file converts arguments and results.

use oxmcp::{
    protocol::LoggingLevel,
    server::{Context, Question},
};
use pyo3::{prelude::*, types::PyList};
use serde_json::Value;

use crate::{
    convert::{self, Json, ToPython},
    errors::ErrorMapper,
    runtime::spawn_awaitable,
};

/// One request's context (`oxmcp.Context` wraps it).
#[pyclass(module = "oxmcp._native", name = "NativeContext", frozen)]
pub struct NativeContext {
    pub(crate) ctx: Context,
}

#[pymethods]
impl NativeContext {
    /// The JSON-RPC id of the request (an int or a str, as the client sent it).
    #[getter]
    fn request_id(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let id = serde_json::to_value(self.ctx.id()).unwrap_or(Value::Null);
        convert::to_py(py, &id)
    }

    /// The method being served (`tools/call`, `resources/read`, …).
    #[getter]
    fn method(&self) -> String {
        self.ctx.method().to_owned()
    }

    /// The revision the request is served in, when known.
    #[getter]
    fn protocol_version(&self) -> Option<String> {
        self.ctx.protocol_version().map(|v| v.as_str().to_owned())
    }

    /// Whether the request is a stateless (2026-07-28) one.
    #[getter]
    fn is_stateless(&self) -> bool {
        self.ctx.is_stateless()
    }

    /// The client's `clientInfo` (from the handshake, or the stateless request's `_meta`).
    #[getter]
    fn client_info(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let from_handshake = self
            .ctx
            .session()
            .state()
            .peer_info
            .and_then(|i| serde_json::to_value(i).ok());
        let from_meta = || {
            self.ctx
                .meta()
                .and_then(|m| m.get("io.modelcontextprotocol/clientInfo").cloned())
        };
        let info = from_handshake.or_else(from_meta).unwrap_or(Value::Null);
        convert::to_py(py, &info)
    }

    /// The client's capabilities for this request.
    #[getter]
    fn client_capabilities(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        convert::to_py(py, &self.ctx.client_capabilities().unwrap_or(Value::Null))
    }

    /// The request's `_meta`, if any.
    #[getter]
    fn meta(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let meta = self
            .ctx
            .meta()
            .map(|m| Value::Object(m.clone()))
            .unwrap_or(Value::Null);
        convert::to_py(py, &meta)
    }

    /// Whether the client cancelled this request.
    #[getter]
    fn is_cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// Sends `notifications/progress` (nothing if the client asked for none).
    #[pyo3(signature = (progress, total=None, message=None))]
    fn report_progress<'py>(
        &self,
        py: Python<'py>,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ctx = self.ctx.clone();
        spawn_awaitable(py, async move {
            ctx.report_progress(progress, total, message.as_deref())
                .await
                .map_err(ErrorMapper::from)
        })
    }

    /// Sends a log message at `level` (if the client asked for that level).
    #[pyo3(signature = (level, data, logger=None))]
    fn log<'py>(
        &self,
        py: Python<'py>,
        level: &str,
        data: &Bound<'py, PyAny>,
        logger: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let level: LoggingLevel = convert::decode(Value::String(level.to_owned()), "log level")?;
        let data = convert::from_py(data, "log data")?;
        let ctx = self.ctx.clone();
        spawn_awaitable(py, async move {
            ctx.log(level, logger.as_deref(), data)
                .await
                .map_err(ErrorMapper::from)
        })
    }

    /// The id of the task this call runs as, once it is one.
    #[getter]
    fn task_id(&self) -> Option<String> {
        self.ctx.task_id().map(str::to_owned)
    }

    /// Turns the call into a task (a tool registered with a deferred start); resolves to the
    /// task's id, or `None` when the call is not a task.
    fn start_task<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ctx = self.ctx.clone();
        spawn_awaitable(py, async move {
            ctx.start_task().await.map(Json).map_err(ErrorMapper::from)
        })
    }

    /// Says what the task is doing (its `statusMessage`); nothing for a call that is not a task.
    fn report_status<'py>(&self, py: Python<'py>, message: String) -> PyResult<Bound<'py, PyAny>> {
        let ctx = self.ctx.clone();
        spawn_awaitable(py, async move {
            ctx.report_status(&message).await.map_err(ErrorMapper::from)
        })
    }

    /// Whether the client declared a capability (`sampling`, `elicitation`, `roots`, …) for
    /// this request.
    fn client_supports(&self, capability: &str) -> bool {
        self.ctx.client_supports(capability)
    }

    /// Ends this request's HTTP response stream early (the client resumes it with
    /// `Last-Event-ID`); a no-op on other transports.
    fn close_stream<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ctx = self.ctx.clone();
        spawn_awaitable(py, async move {
            ctx.close_stream().await;
            Ok::<_, ErrorMapper>(Json(()))
        })
    }

    /// Asks several questions together: `questions` is a list of `{"kind": "sample" |
    /// "elicit" | "roots", "params": {...}, "key": ...}`. Resolves to a list, in order, of each
    /// answer or the exception for it. `oxmcp.Context` sends every question a handler asks
    /// in one tick of its event loop (`asyncio.gather(ctx.elicit(..), ctx.sample(..))`)
    /// through here, so a 2026-07-28 round asks them all at once (`Context::ask_all`).
    fn ask_all<'py>(
        &self,
        py: Python<'py>,
        questions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let questions: Vec<Question> =
            convert::decode(convert::from_py(questions, "questions")?, "questions")?;
        let ctx = self.ctx.clone();
        spawn_awaitable(py, async move {
            Ok::<_, ErrorMapper>(Answers(ctx.ask_all(questions).await))
        })
    }

    /// Sends any notification related to this request.
    #[pyo3(signature = (method, params=None))]
    fn notify<'py>(
        &self,
        py: Python<'py>,
        method: String,
        params: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = params
            .map(|p| convert::from_py(p, "notification params"))
            .transpose()?;
        let ctx = self.ctx.clone();
        spawn_awaitable(py, async move {
            ctx.notify(&method, params).await.map_err(ErrorMapper::from)
        })
    }
}

/// The answers of [`NativeContext::ask_all`]: each a value, or the exception it raises.
struct Answers(Vec<oxmcp::Result<Value>>);

impl ToPython for Answers {
    fn to_python(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = PyList::empty(py);
        for answer in self.0 {
            match answer {
                Ok(v) => list.append(convert::to_py(py, &v)?)?,
                Err(e) => list.append(ErrorMapper::Core(e).into_pyerr(py).into_value(py))?,
            }
        }
        Ok(list.into_any().unbind())
    }
}
