//! `oxmcp._native.NativeTaskHandle`: a handle on `oxmcp::client::TaskHandle` (a tool call
//! running as a task on the server). `oxmcp.TaskHandle` wraps it with `await handle.status()`,
//! `result()`, `cancel()` and `async for status in handle`; everything else (the era's form,
//! polling, answering the task's questions) is the core's.

use std::sync::Arc;

use oxmcp::client::{TaskHandle, TaskUpdates};
use pyo3::prelude::*;

use crate::{convert::Json, embed::Hosted, errors::ErrorMapper, runtime::spawn_awaitable};

/// A task on the server (`oxmcp.TaskHandle` wraps it).
#[pyclass(module = "oxmcp._native", name = "NativeTaskHandle", frozen)]
pub struct NativeTaskHandle {
    handle: TaskHandle,
    /// The status changes, pulled by `next_update`; one stream per handle.
    updates: Arc<tokio::sync::Mutex<Option<TaskUpdates>>>,
    /// The client's hosted session, when it runs on its loop's thread (see `NativeClient`).
    hosted: Option<Arc<Hosted>>,
}

impl NativeTaskHandle {
    pub fn new(handle: TaskHandle, hosted: Option<Arc<Hosted>>) -> Self {
        NativeTaskHandle {
            handle,
            updates: Arc::default(),
            hosted,
        }
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
}

#[pymethods]
impl NativeTaskHandle {
    /// The task's id (`None` when the server answered at once and there is no task).
    #[getter]
    fn id(&self) -> Option<String> {
        self.handle.id().map(str::to_owned)
    }

    /// The task's current status (`tasks/get`), as the wire has it.
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let handle = self.handle.clone();
        self.spawn(py, async move {
            handle.status().await.map(Json).map_err(ErrorMapper::from)
        })
    }

    /// Waits for the task to end; its `CallToolResult` (a failed task raises its error, a
    /// cancelled one `RequestCancelledError`).
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let handle = self.handle.clone();
        self.spawn(py, async move {
            handle.result().await.map(Json).map_err(ErrorMapper::from)
        })
    }

    /// Asks the server to cancel the task (harmless on a finished one).
    fn cancel<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let handle = self.handle.clone();
        self.spawn(py, async move {
            handle.cancel().await.map(Json).map_err(ErrorMapper::from)
        })
    }

    /// The next status, once it changed; `None` after the final one.
    fn next_update<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let handle = self.handle.clone();
        let updates = self.updates.clone();
        self.spawn(py, async move {
            let mut updates = updates.lock().await;
            let stream = updates.get_or_insert_with(|| handle.watch());
            match stream.next().await {
                None => Ok(Json(None)),
                Some(Ok(task)) => Ok(Json(Some(task))),
                Some(Err(e)) => Err(ErrorMapper::from(e)),
            }
        })
    }
}
