//! `oxmcp._native.NativeHost`: `oxmcp::host::Host` for Python.
//!
//! The host (servers started concurrently, one session each, cached namespaced tools, restart
//! of a crashed server, the agent loop) is entirely the core's; this file converts values and
//! adapts the one callback, the model. The model is a Python callable (`def` or `async def`)
//! taking the conversation and the tools in the provider's format and returning the assistant
//! turn; an exception it raises ends the run and reaches the caller as itself, not re-wrapped.
//! The approval callback of `run_agent(approve=...)` is adapted the same way.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use oxmcp::{
    host::{
        AgentOptions, Approval, ApprovalFuture, ApprovalHook, ApprovalRequest, Approver, Config,
        Host, HostOptions, Model, ModelRequest, agent::ModelFuture,
    },
    session::RequestOptions,
};
use pyo3::{prelude::*, types::PyTuple};
use serde_json::{Map, Value};

use crate::{
    callable::{Callable, LoopSlot},
    convert::{self, Json, Native},
    errors::{ErrorMapper, to_pyerr},
    runtime::{LoopHandle, spawn_awaitable},
    schema::{self, NativeTranslation},
};

fn is_coroutine_function(py: Python<'_>, func: &Bound<'_, PyAny>) -> PyResult<bool> {
    py.import("inspect")?
        .call_method1("iscoroutinefunction", (func,))?
        .is_truthy()
}

fn seconds(s: f64, what: &str) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| {
        to_pyerr(oxmcp::Error::InvalidArgument(format!(
            "{what} must be a non-negative number of seconds, got {s}"
        )))
    })
}

/// A Python model callback as the core's [`Model`].
struct PyModel {
    callable: Callable,
    /// The exception the callback raised, handed back to the caller as it was.
    raised: Arc<Mutex<Option<PyErr>>>,
}

impl Model for PyModel {
    fn turn(&self, request: ModelRequest) -> ModelFuture<'_> {
        let callable = self.callable.clone();
        let raised = self.raised.clone();
        Box::pin(async move {
            let ModelRequest {
                messages, tools, ..
            } = request;
            let out = callable
                .call("the model's assistant turn", move |py| {
                    PyTuple::new(
                        py,
                        [
                            convert::to_py(py, &Value::Array(messages))?,
                            convert::to_py(py, &tools)?,
                        ],
                    )
                })
                .await;
            out.map_err(|e| {
                let message =
                    crate::runtime::attach(|py| e.value(py).to_string()).unwrap_or_default();
                *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                oxmcp::Error::InvalidArgument(format!("the model callback raised: {message}"))
            })
        })
    }
}

/// A Python approval callback (`def` or `async def`, one `ApprovalRequest` dict in) as the
/// core's [`Approver`]; what it returns is read by [`Approval::from_value`], and an exception
/// it raises keeps the call from running (the model is told why).
struct PyApprover {
    callable: Callable,
}

impl Approver for PyApprover {
    fn approve(&self, request: ApprovalRequest) -> ApprovalFuture<'_> {
        Box::pin(async move {
            let request = serde_json::to_value(&request)
                .map_err(|e| oxmcp::Error::InvalidArgument(e.to_string()))?;
            let answer = self
                .callable
                .call("the approval of a tool call", move |py| {
                    PyTuple::new(py, [convert::to_py(py, &request)?])
                })
                .await
                .map_err(|e| {
                    let message =
                        crate::runtime::attach(|py| e.value(py).to_string()).unwrap_or_default();
                    oxmcp::Error::InvalidArgument(format!("the approve callback raised: {message}"))
                })?;
            Approval::from_value(answer)
        })
    }
}

/// Many servers from one config (`oxmcp.Host` wraps it).
#[pyclass(module = "oxmcp._native", name = "NativeHost", frozen)]
pub struct NativeHost {
    host: Arc<Host>,
}

#[pymethods]
impl NativeHost {
    /// Starts every enabled server of a config: a file path (`str`) or an already parsed
    /// config (`dict`, variables from the environment). Only a bad config raises.
    #[staticmethod]
    #[pyo3(signature = (config, connect_timeout=None, restart=true, client_name=None))]
    fn start<'py>(
        py: Python<'py>,
        config: &Bound<'py, PyAny>,
        connect_timeout: Option<f64>,
        restart: bool,
        client_name: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let config = if let Ok(path) = config.extract::<std::path::PathBuf>() {
            Config::from_file(path)
        } else {
            let value = convert::from_py(config, "the config")?;
            Config::from_value(&value, &|k| std::env::var(k).ok())
        }
        .map_err(to_pyerr)?;
        let mut options = HostOptions {
            restart,
            ..HostOptions::default()
        };
        if let Some(t) = connect_timeout {
            options.connect_timeout = seconds(t, "connect_timeout")?;
        }
        if let Some(name) = client_name {
            options.client_name = name;
        }
        spawn_awaitable(py, async move {
            let host = Host::start(config, options).await;
            Ok::<_, ErrorMapper>(Native(NativeHost {
                host: Arc::new(host),
            }))
        })
    }

    /// The enabled servers' names, in config order.
    fn server_names(&self) -> Vec<String> {
        self.host.server_names()
    }

    /// Every server's state (`connected`, `failed` with the error and stderr tail,
    /// `disabled`).
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            Ok::<_, ErrorMapper>(Json(host.status().await))
        })
    }

    /// `{server: [Tool, ...]}` of the connected servers (cached until `list_changed`).
    fn tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            let lists = host.tools().await;
            let map: Map<String, Value> = lists
                .into_iter()
                .map(|(server, tools)| {
                    let value = serde_json::to_value(tools.as_ref()).unwrap_or_default();
                    (server, value)
                })
                .collect();
            Ok::<_, ErrorMapper>(Value::Object(map))
        })
    }

    /// `{server: [Resource, ...]}` (cached like tools).
    fn resources<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            let map: Map<String, Value> = host
                .resources()
                .await
                .into_iter()
                .map(|(s, l)| (s, serde_json::to_value(l.as_ref()).unwrap_or_default()))
                .collect();
            Ok::<_, ErrorMapper>(Value::Object(map))
        })
    }

    /// `{server: [Prompt, ...]}` (cached like tools).
    fn prompts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            let map: Map<String, Value> = host
                .prompts()
                .await
                .into_iter()
                .map(|(s, l)| (s, serde_json::to_value(l.as_ref()).unwrap_or_default()))
                .collect();
            Ok::<_, ErrorMapper>(Value::Object(map))
        })
    }

    /// The connected servers' tools in `provider`'s format, kept native for the way back.
    #[pyo3(signature = (provider, strict=true, namespace="always"))]
    fn translate<'py>(
        &self,
        py: Python<'py>,
        provider: &str,
        strict: bool,
        namespace: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let provider = schema::provider(provider)?;
        let options = schema::options(strict, namespace)?;
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            let t = host.translate(provider, &options).await;
            Ok::<_, ErrorMapper>(Native(NativeTranslation::new(t)))
        })
    }

    /// `tools/call` on one server (a crashed stdio server is started again first); with
    /// `task`, the call runs as a task and this waits for its result (a long tool then
    /// neither times out nor holds a request open).
    #[pyo3(signature = (server, tool, arguments=None, timeout=None, task=false))]
    fn call_tool<'py>(
        &self,
        py: Python<'py>,
        server: String,
        tool: String,
        arguments: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        task: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arguments = arguments
            .map(|a| convert::from_py(a, "the tool's arguments"))
            .transpose()?
            .unwrap_or(Value::Object(Map::new()));
        let options = RequestOptions {
            timeout: timeout.map(|t| seconds(t, "timeout")).transpose()?,
            ..Default::default()
        };
        let host = self.host.clone();
        if task {
            return spawn_awaitable(py, async move {
                let handle = host
                    .call_tool_as_task(&server, &tool, arguments, Default::default())
                    .await
                    .map_err(ErrorMapper::from)?;
                handle.result().await.map(Json).map_err(ErrorMapper::from)
            });
        }
        spawn_awaitable(py, async move {
            host.call_tool_with(&server, &tool, arguments, options)
                .await
                .map(Json)
                .map_err(ErrorMapper::from)
        })
    }

    /// `resources/read` on one server.
    fn read_resource<'py>(
        &self,
        py: Python<'py>,
        server: String,
        uri: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            host.read_resource(&server, &uri)
                .await
                .map(Json)
                .map_err(ErrorMapper::from)
        })
    }

    /// `prompts/get` on one server.
    #[pyo3(signature = (server, name, arguments=None))]
    fn get_prompt<'py>(
        &self,
        py: Python<'py>,
        server: String,
        name: String,
        arguments: Option<std::collections::BTreeMap<String, String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            host.get_prompt(&server, &name, arguments.unwrap_or_default())
                .await
                .map(Json)
                .map_err(ErrorMapper::from)
        })
    }

    /// Runs the agent loop with `model` (see the module doc); resolves to the transcript.
    #[pyo3(signature = (model, messages, provider="openai", strict=true, namespace="always", max_steps=16, approve=None))]
    #[allow(clippy::too_many_arguments)]
    fn run_agent<'py>(
        &self,
        py: Python<'py>,
        model: &Bound<'py, PyAny>,
        messages: &Bound<'py, PyAny>,
        provider: &str,
        strict: bool,
        namespace: &str,
        max_steps: usize,
        approve: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut options = AgentOptions::new(schema::provider(provider)?);
        options.translate = schema::options(strict, namespace)?;
        options.max_steps = max_steps;
        if let Some(approve) = approve {
            if !approve.is_callable() {
                return Err(to_pyerr(oxmcp::Error::InvalidArgument(
                    "approve must be a callable (request) -> True | False | reason | arguments"
                        .into(),
                )));
            }
            let is_async = is_coroutine_function(py, approve)?;
            let slot = LoopSlot::fixed(LoopHandle::current(py)?);
            options.approve = Some(ApprovalHook(Arc::new(PyApprover {
                callable: Callable::new(approve.clone().unbind(), is_async, slot),
            })));
        }
        let messages = convert::from_py(messages, "the messages")?;
        let Value::Array(messages) = messages else {
            return Err(to_pyerr(oxmcp::Error::InvalidArgument(
                "messages must be a list of messages in the provider's format".into(),
            )));
        };
        if !model.is_callable() {
            return Err(to_pyerr(oxmcp::Error::InvalidArgument(
                "model must be a callable (messages, tools) -> assistant turn".into(),
            )));
        }
        let is_async = is_coroutine_function(py, model)?;
        let slot = LoopSlot::fixed(LoopHandle::current(py)?);
        let model = PyModel {
            callable: Callable::new(model.clone().unbind(), is_async, slot),
            raised: Arc::default(),
        };
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            match host.run_agent(&model, messages, &options).await {
                Ok(t) => Ok(Json(t)),
                Err(e) => {
                    let raised = model
                        .raised
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take();
                    Err(raised.map_or(ErrorMapper::Core(e), ErrorMapper::Py))
                }
            }
        })
    }

    /// Closes every session (children go through the shutdown ladder).
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let host = self.host.clone();
        spawn_awaitable(py, async move {
            host.close().await;
            Ok::<_, ErrorMapper>(())
        })
    }
}
