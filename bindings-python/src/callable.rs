//! A Python callable reached from a tokio task: `def` functions run on the runtime worker
//! that polls the request, without stalling its other work (see [`crate::inline`]; GIL held
//! only for the call, no event-loop hop), `async def` functions run as a task on the loop
//! captured when the server started or the client opened.

use std::sync::{Arc, Mutex};

use pyo3::{exceptions::PyRuntimeError, prelude::*, types::PyTuple};
use serde_json::Value;

use crate::{convert, runtime::LoopHandle};

/// Which loop async handlers run on: set when serving starts, cleared when it ends.
#[derive(Default)]
pub struct LoopSlot {
    inner: Mutex<Option<(LoopHandle, usize)>>,
}

impl LoopSlot {
    /// A slot already holding `handle` (a client's loop, fixed for its lifetime).
    pub fn fixed(handle: LoopHandle) -> Arc<LoopSlot> {
        Arc::new(LoopSlot {
            inner: Mutex::new(Some((handle, 1))),
        })
    }

    /// Binds the running loop for one more user (a serve call); refuses a second loop while
    /// the first is still in use and open.
    pub fn acquire(&self, py: Python<'_>) -> PyResult<()> {
        let current = LoopHandle::current(py)?;
        let mut slot = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_mut() {
            Some((bound, users)) if bound.is(py, current.event_loop(py)) => {
                *users += 1;
                Ok(())
            }
            Some((bound, _)) if !bound.is_closed(py) => Err(PyRuntimeError::new_err(
                "oxmcp: this Server is already serving on another event loop; one Server \
                 object serves from one loop at a time (create one Server per loop)",
            )),
            _ => {
                *slot = Some((current, 1));
                Ok(())
            }
        }
    }

    /// Ends one use.
    pub fn release(&self) {
        let mut slot = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, users)) = slot.as_mut() {
            *users = users.saturating_sub(1);
            if *users == 0 {
                *slot = None;
            }
        }
    }

    fn get(&self) -> PyResult<LoopHandle> {
        let slot = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        slot.as_ref().map(|(h, _)| h.clone()).ok_or_else(|| {
            PyRuntimeError::new_err("oxmcp: an async handler ran while no event loop is serving")
        })
    }
}

/// A host callable plus what is needed to run it.
#[derive(Clone)]
pub struct Callable {
    func: Arc<Py<PyAny>>,
    is_async: bool,
    slot: Arc<LoopSlot>,
    speed: Arc<crate::inline::Speed>,
}

impl Callable {
    /// Wraps `func`; `is_async` says whether calling it returns a coroutine.
    pub fn new(func: Py<PyAny>, is_async: bool, slot: Arc<LoopSlot>) -> Self {
        Callable {
            func: Arc::new(func),
            is_async,
            slot,
            speed: Arc::default(),
        }
    }

    /// Calls with the arguments `build` makes (attached), converts the return value to JSON
    /// (`what` names it in errors) and hands back either the value or the Python exception.
    pub async fn call<B>(&self, what: &'static str, build: B) -> PyResult<Value>
    where
        B: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
    {
        let func = self.func.clone();
        if !self.is_async {
            let joined = crate::inline::run_def(&self.speed, move || {
                crate::runtime::attach(|py| {
                    let args = build(py)?;
                    let out = func.bind(py).call1(args)?;
                    convert::from_py(&out, what)
                })
                .unwrap_or_else(|| Err(exiting()))
            })
            .await;
            return joined
                .unwrap_or_else(|| Err(PyRuntimeError::new_err("the handler thread failed")));
        }
        let waiting = crate::runtime::attach(|py| {
            let handle = self.slot.get()?;
            let args = build(py)?;
            let coroutine = func.bind(py).call1(args)?;
            handle.run_coroutine(py, coroutine)
        })
        .unwrap_or_else(|| Err(exiting()))?;
        let out = waiting.await?;
        crate::runtime::attach(|py| convert::from_py(out.bind(py), what))
            .unwrap_or_else(|| Err(exiting()))
    }
}

fn exiting() -> PyErr {
    PyRuntimeError::new_err("the Python interpreter is exiting")
}

/// What a Python handler's exception means on the wire.
pub enum Failure {
    /// An `oxmcp.McpError` raised on purpose: this JSON-RPC error.
    Protocol(oxmcp::jsonrpc::ErrorObject),
    /// Anything else: its message.
    Raised(String),
}

/// Classifies a handler's exception.
pub fn failure(e: PyErr) -> Failure {
    crate::runtime::attach(|py| {
        let value = e.value(py);
        let code = value
            .getattr("code")
            .ok()
            .and_then(|c| c.extract::<i64>().ok());
        let is_a = |name: &str| {
            py.import("oxmcp.errors")
                .and_then(|m| m.getattr(name))
                .is_ok_and(|cls| value.is_instance(&cls).unwrap_or(false))
        };
        let is_mcp = is_a("McpError");
        let message = value
            .str()
            .map(|s| s.to_string())
            .unwrap_or_else(|_| String::new());
        let type_name = value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "Exception".into());
        if let (true, Some(code)) = (is_mcp, code) {
            let mut obj = oxmcp::jsonrpc::ErrorObject::new(code, message);
            if let Ok(data) = value.getattr("data")
                && !data.is_none()
                && let Ok(data) = convert::from_py(&data, "error data")
            {
                obj = obj.with_data(data);
            }
            return Failure::Protocol(obj);
        }
        // `oxmcp.ToolError` carries a message meant for the model, verbatim.
        if is_a("ToolError") {
            return Failure::Raised(message);
        }
        Failure::Raised(if message.is_empty() {
            type_name
        } else {
            format!("{type_name}: {message}")
        })
    })
    .unwrap_or_else(|| Failure::Raised("the Python interpreter is exiting".into()))
}
