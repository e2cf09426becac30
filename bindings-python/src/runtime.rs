//! The one tokio runtime of the process, and the two bridges between it and asyncio.
//!
//! - [`runtime`] hands out the process's runtime. A forked child inherits the parent's memory
//!   but none of its threads, so the runtime it would see is dead: the pid is checked and a
//!   child builds its own (the parent's is leaked in the child, never dropped, because dropping
//!   it would try to join threads that do not exist there).
//! - [`spawn_awaitable`] runs a Rust future on the runtime and returns an asyncio future on the
//!   caller's loop. Cancelling the asyncio future drops the Rust future (so the core sends
//!   `notifications/cancelled` for a request in flight).
//! - [`LoopHandle::run_coroutine`] runs a Python coroutine on a captured loop from a tokio
//!   task and awaits it without holding the GIL. Dropping the Rust future cancels the asyncio
//!   task, so a peer's `notifications/cancelled` reaches the Python handler as
//!   `CancelledError`.
//!
//! The GIL is taken only to convert values and to schedule callbacks, never across an await.

use std::{
    future::Future,
    sync::{
        Mutex, OnceLock,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use pyo3::{exceptions::PyRuntimeError, prelude::*, sync::PyOnceLock, types::PyTuple};
use tokio::{runtime::Runtime, sync::oneshot};
use tokio_util::sync::CancellationToken;

use crate::{convert::ToPython, errors::ErrorMapper};

struct Owned {
    pid: u32,
    runtime: &'static Runtime,
}

static RUNTIME: Mutex<Option<Owned>> = Mutex::new(None);

/// The runtime of this process (built on first use, rebuilt after `fork`).
pub fn runtime() -> &'static Runtime {
    let pid = std::process::id();
    let mut slot = RUNTIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(owned) = slot.as_ref()
        && owned.pid == pid
    {
        return owned.runtime;
    }
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(crate::inline::worker_threads())
        .enable_all()
        .thread_name("oxmcp")
        .on_thread_start(|| {
            leave_signals_to_python();
            crate::inline::runtime_thread_started();
        })
        .build()
        .unwrap_or_else(|e| panic!("oxmcp: cannot start the tokio runtime: {e}"));
    // Leaked on purpose: it lives as long as the process, and a stale one (after fork) must
    // never be dropped.
    let runtime: &'static Runtime = Box::leak(Box::new(built));
    *slot = Some(Owned { pid, runtime });
    runtime
}

/// Blocks, on the calling thread, the signals a Python program handles (SIGINT for
/// `KeyboardInterrupt`, SIGTERM, SIGHUP, ...). Called on every thread the binding starts.
///
/// The kernel may hand a process-wide signal to any thread that does not block it. CPython
/// runs Python-level handlers only on the main thread: when the signal lands on one of our
/// threads, its C handler merely sets a flag, and a main thread asleep in the event loop's
/// `epoll_wait` (say until a 30 s timer) does not see the flag until it wakes. A server sent
/// SIGINT then did not stop until its next timer. With these blocked here, such signals are
/// always delivered to a thread that can act on them.
pub fn leave_signals_to_python() {
    #[cfg(unix)]
    // SAFETY: `set` is initialized by sigemptyset before use, and pthread_sigmask only
    // changes the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [
            libc::SIGHUP,
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGTERM,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGALRM,
            libc::SIGWINCH,
        ] {
            libc::sigaddset(&mut set, signal);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Spawns `future` on the runtime from Python code. From a `def` handler running inline on
/// a worker the task is spawned from a blocking-pool thread instead, so that it lands in the
/// shared queue where an idle worker takes it (see [`crate::inline::inline_here`]).
pub fn spawn(future: impl Future<Output = ()> + Send + 'static) {
    if crate::inline::inline_here() {
        runtime().spawn_blocking(move || {
            runtime().spawn(future);
        });
    } else {
        runtime().spawn(future);
    }
}

/// Set by the `atexit` hook: from then on, runtime threads no longer enter Python.
static EXITING: AtomicBool = AtomicBool::new(false);
/// Runtime threads inside [`attach`] right now.
static IN_PYTHON: AtomicUsize = AtomicUsize::new(0);

/// `Python::attach` for runtime threads. Returns `None` once the interpreter is exiting: a
/// thread still waiting for the GIL when finalization starts is killed by CPython
/// (`pthread_exit`), which aborts a Rust thread, so none may be left waiting by then.
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    IN_PYTHON.fetch_add(1, Ordering::SeqCst);
    let out = if EXITING.load(Ordering::SeqCst) {
        None
    } else {
        crate::tstate::keep();
        Some(Python::attach(f))
    };
    IN_PYTHON.fetch_sub(1, Ordering::SeqCst);
    out
}

/// Runs `f` (which takes the GIL by itself) under the same exit guard as [`attach`]: used
/// when a thread's kept state is torn down at thread end.
pub fn enter_at_thread_end(f: impl FnOnce()) {
    IN_PYTHON.fetch_add(1, Ordering::SeqCst);
    if !EXITING.load(Ordering::SeqCst) {
        f();
    }
    IN_PYTHON.fetch_sub(1, Ordering::SeqCst);
}

/// Registered with `atexit`: stops runtime threads from entering Python and lets those
/// already on their way in finish (GIL released meanwhile, for at most two seconds).
#[pyfunction]
pub fn _at_exit(py: Python<'_>) {
    EXITING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while IN_PYTHON.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    });
}

pub(crate) fn asyncio(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static ASYNCIO: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    ASYNCIO
        .get_or_try_init(py, || py.import("asyncio").map(Bound::unbind))
        .map(|m| m.bind(py))
}

/// An asyncio event loop captured where a server starts or a client opens, with the
/// `contextvars` context of that moment (handlers see the caller's context variables).
pub struct LoopHandle {
    event_loop: Py<PyAny>,
    context: Py<PyAny>,
}

impl LoopHandle {
    /// The running loop of the calling thread.
    pub fn current(py: Python<'_>) -> PyResult<LoopHandle> {
        let event_loop = asyncio(py)?.call_method0("get_running_loop").map_err(|_| {
            PyRuntimeError::new_err("oxmcp: this must be called from a running asyncio event loop")
        })?;
        let context = py.import("contextvars")?.call_method0("copy_context")?;
        Ok(LoopHandle {
            event_loop: event_loop.unbind(),
            context: context.unbind(),
        })
    }

    /// The loop object.
    pub fn event_loop<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.event_loop.bind(py)
    }

    /// Whether the loop is closed (a server bound to it may move to another loop).
    pub fn is_closed(&self, py: Python<'_>) -> bool {
        self.event_loop
            .bind(py)
            .call_method0("is_closed")
            .and_then(|v| v.is_truthy())
            .unwrap_or(true)
    }

    /// Whether `other` is this loop.
    pub fn is(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> bool {
        self.event_loop.bind(py).is(other)
    }

    /// Schedules `callable(*args)` on the loop from any thread.
    pub fn call_soon(
        &self,
        py: Python<'_>,
        callable: &Bound<'_, PyAny>,
        args: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(callable.clone());
        all.extend(args);
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("context", self.context.bind(py))?;
        self.event_loop.bind(py).call_method(
            "call_soon_threadsafe",
            PyTuple::new(py, all)?,
            Some(&kwargs),
        )?;
        Ok(())
    }

    /// Runs `coroutine` as a task on the loop and waits for it, GIL released. Dropping the
    /// returned future cancels the task.
    pub fn run_coroutine(
        &self,
        py: Python<'_>,
        coroutine: Bound<'_, PyAny>,
    ) -> PyResult<impl Future<Output = PyResult<Py<PyAny>>> + Send + 'static + use<>> {
        let (tx, rx) = oneshot::channel();
        let task = Py::new(
            py,
            LoopTask {
                tx: Mutex::new(Some(tx)),
                task: Mutex::new(None),
                cancelled: std::sync::atomic::AtomicBool::new(false),
            },
        )?;
        let start = task.bind(py).getattr("start")?;
        self.call_soon(py, &start, vec![coroutine])?;
        let guard = CancelOnDrop {
            event_loop: self.event_loop.clone_ref(py),
            task: Some(task),
        };
        Ok(async move {
            let mut guard = guard;
            let out = match rx.await {
                Ok(out) => out,
                Err(_) => Err(PyRuntimeError::new_err(
                    "the event loop dropped the handler",
                )),
            };
            guard.task = None;
            out
        })
    }
}

impl Clone for LoopHandle {
    fn clone(&self) -> Self {
        // Cloned only while attached (a handler being called), so the GIL is already held.
        Python::attach(|py| LoopHandle {
            event_loop: self.event_loop.clone_ref(py),
            context: self.context.clone_ref(py),
        })
    }
}

/// The task side of [`LoopHandle::run_coroutine`]; its methods run on the loop thread.
#[pyclass(module = "oxmcp._native")]
struct LoopTask {
    tx: Mutex<Option<oneshot::Sender<PyResult<Py<PyAny>>>>>,
    task: Mutex<Option<Py<PyAny>>>,
    cancelled: std::sync::atomic::AtomicBool,
}

#[pymethods]
impl LoopTask {
    fn start(slf: &Bound<'_, Self>, coroutine: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let this = slf.borrow();
        if this.cancelled.load(std::sync::atomic::Ordering::SeqCst) {
            // Cancelled before it started: close it so Python does not warn "never awaited".
            let _ = coroutine.call_method0("close");
            return Ok(());
        }
        let task = match asyncio(py)?.call_method1("ensure_future", (coroutine,)) {
            Ok(task) => task,
            Err(e) => {
                this.send(Err(e));
                return Ok(());
            }
        };
        task.call_method1("add_done_callback", (slf.getattr("done")?,))?;
        *this.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(task.unbind());
        Ok(())
    }

    fn done(&self, task: &Bound<'_, PyAny>) -> PyResult<()> {
        let out = if task.call_method0("cancelled")?.is_truthy()? {
            Err(PyErr::from_value(
                asyncio(task.py())?.getattr("CancelledError")?.call0()?,
            ))
        } else {
            task.call_method0("result").map(Bound::unbind)
        };
        self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.send(out);
        Ok(())
    }

    fn cancel(&self, py: Python<'_>) -> PyResult<()> {
        self.cancelled
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = task {
            task.bind(py).call_method0("cancel")?;
        }
        Ok(())
    }
}

impl LoopTask {
    fn send(&self, out: PyResult<Py<PyAny>>) {
        if let Some(tx) = self.tx.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = tx.send(out);
        }
    }
}

/// Cancels the asyncio task when the Rust side stops waiting for it.
struct CancelOnDrop {
    event_loop: Py<PyAny>,
    task: Option<Py<LoopTask>>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task) = self.task.take() else {
            return;
        };
        attach(|py| {
            let Ok(cancel) = task.bind(py).getattr("cancel") else {
                return;
            };
            // The loop may be closed already (interpreter exit); nothing is left to cancel then.
            let _ = self
                .event_loop
                .bind(py)
                .call_method1("call_soon_threadsafe", (cancel,));
        });
    }
}

/// Resolves an asyncio future from the loop thread, unless it was cancelled meanwhile.
#[pyfunction]
fn _resolve(future: &Bound<'_, PyAny>, ok: bool, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if future.call_method0("done")?.is_truthy()? {
        return Ok(());
    }
    if ok {
        future.call_method1("set_result", (value,))?;
    } else {
        future.call_method1("set_exception", (value,))?;
    }
    Ok(())
}

/// Fires a token when the asyncio future it watches is cancelled.
#[pyclass(module = "oxmcp._native")]
pub(crate) struct CancelWatch {
    token: CancellationToken,
}

impl CancelWatch {
    /// Cancels `token` when the future it is added to (`add_done_callback`) is cancelled.
    pub(crate) fn new(token: CancellationToken) -> CancelWatch {
        CancelWatch { token }
    }
}

/// Settles `future` with `out` right here: for code running on the future's own loop thread
/// (a hosted session's task), where `call_soon_threadsafe` would only add a detour.
pub(crate) fn settle_here<T: ToPython>(
    py: Python<'_>,
    future: &Bound<'_, PyAny>,
    out: Result<T, ErrorMapper>,
) {
    let (ok, value) = outcome(py, out);
    // Fails only if the loop is closed or the future was cancelled meanwhile: nobody waits.
    let _ = _resolve(future, ok, value.bind(py));
}

/// A Rust outcome as `_resolve` takes it: `(true, value)` or `(false, exception)`.
fn outcome<T: ToPython>(py: Python<'_>, out: Result<T, ErrorMapper>) -> (bool, Py<PyAny>) {
    match out.and_then(|v| v.to_python(py).map_err(ErrorMapper::Py)) {
        Ok(v) => (true, v),
        Err(e) => (false, e.into_pyerr(py).into_value(py).into_any()),
    }
}

/// `future`, wrapped to stop as soon as the asyncio future `py_future` is cancelled (`None`
/// then: nobody waits for the outcome, and dropping `future` is what tells the peer).
/// Whoever runs the wrapper settles `py_future` with its outcome.
pub(crate) fn watched<F, T>(
    py_future: &Bound<'_, PyAny>,
    future: F,
) -> PyResult<impl Future<Output = Option<Result<T, ErrorMapper>>> + Send + 'static + use<F, T>>
where
    F: Future<Output = Result<T, ErrorMapper>> + Send + 'static,
    T: ToPython,
{
    let token = CancellationToken::new();
    py_future.call_method1("add_done_callback", (CancelWatch::new(token.clone()),))?;
    Ok(async move {
        tokio::select! {
            biased;
            _ = token.cancelled() => None,
            out = future => Some(out),
        }
    })
}

#[pymethods]
impl CancelWatch {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0("cancelled")?.is_truthy()? {
            self.token.cancel();
        }
        Ok(())
    }
}

fn resolver(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static RESOLVE: OnceLock<Py<PyAny>> = OnceLock::new();
    if let Some(f) = RESOLVE.get() {
        return Ok(f.bind(py));
    }
    let f = wrap_pyfunction!(_resolve, py)?.into_any().unbind();
    Ok(RESOLVE.get_or_init(|| f).bind(py))
}

/// Runs `future` on the runtime and returns an asyncio future on the running loop.
pub fn spawn_awaitable<'py, F, T>(py: Python<'py>, future: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, ErrorMapper>> + Send + 'static,
    T: ToPython,
{
    let event_loop = asyncio(py)?.call_method0("get_running_loop").map_err(|_| {
        PyRuntimeError::new_err("oxmcp: awaitables must be created inside a running event loop")
    })?;
    let py_future = event_loop.call_method0("create_future")?;
    let run = watched(&py_future, future)?;
    let loop_ref = event_loop.unbind();
    let fut_ref = py_future.clone().unbind();
    spawn(async move {
        let Some(out) = run.await else { return };
        attach(|py| {
            let (ok, value) = outcome(py, out);
            let Ok(resolve) = resolver(py) else { return };
            // A closed loop (the program ended) has nobody left to tell.
            let _ = loop_ref.bind(py).call_method1(
                "call_soon_threadsafe",
                (resolve, fut_ref.bind(py), ok, value.bind(py)),
            );
        });
    });
    Ok(py_future)
}

/// Registers the runtime's Python-visible classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LoopTask>()?;
    m.add_class::<CancelWatch>()?;
    let at_exit = wrap_pyfunction!(_at_exit, m)?;
    m.py()
        .import("atexit")?
        .call_method1("register", (at_exit,))?;
    Ok(())
}
