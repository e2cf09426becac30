//! A stdio client's session run on the caller's own asyncio loop thread.
//!
//! A client whose session runs on tokio's threads costs two thread hops per call (the request
//! goes from the loop thread to a tokio worker, the answer comes back through
//! `call_soon_threadsafe`), and on a loaded machine those context switches, not the protocol
//! work, are most of a call's cost. Here the core's [`HostLoop`] runs the session on the loop
//! thread instead:
//!
//! - a *bell* (an eventfd) is registered with `loop.add_reader`; the host loop's `ask_host`
//!   writes it, from any thread and without Python, and its reader runs the host loop;
//! - the child's stdout is registered with `loop.add_reader` too, and its reader hands the
//!   bytes to the core's [`Feeder`] and runs the host loop in the same breath (a full backlog
//!   removes the reader until the feeder says there is room again);
//! - a call starts its request inside a run right away (the frame is written before the call
//!   returns its future) and settles the asyncio future with `set_result` from the run that
//!   sees the answer, on the loop thread: no thread is crossed at all.
//!
//! The host loop is polled with the GIL held (the loop thread holds it while it runs a
//! callback); the work it does there is short and never blocks. Timers, child supervision and
//! stderr stay on tokio and reach the loop through the bell.
//!
//! Hosting ends ([`Hosted::stop`]: readers removed, host loop shut down, descriptor closed)
//! when the client closes and its calls have been settled, when it is dropped unclosed, or
//! when the event loop closes under it (the loop then drops the bell's reader).

use std::{
    future::Future,
    os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
    pin::pin,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use oxmcp::{
    embed::{Feeder, HostLoop, ReadOutcome},
    session::Session,
};
use pyo3::{exceptions::PyNotImplementedError, prelude::*, sync::PyOnceLock};
use tokio::sync::Notify;

use crate::{convert::ToPython, errors::ErrorMapper, runtime};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `asyncio._get_running_loop`, looked up once: asked on every call.
fn running_loop(py: Python<'_>) -> Option<Bound<'_, PyAny>> {
    static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let get = GET
        .get_or_try_init(py, || {
            runtime::asyncio(py)?
                .getattr("_get_running_loop")
                .map(Bound::unbind)
        })
        .ok()?;
    get.bind(py).call0().ok().filter(|l| !l.is_none())
}

/// One client's session hosted on one asyncio loop.
pub struct Hosted {
    host: HostLoop,
    event_loop: Py<PyAny>,
    /// Written by `ask_host`; kept open by the host loop's closure as long as anything can
    /// ring it, so it is never closed while registered.
    bell: Arc<OwnedFd>,
    /// The reader of the child's stdout, once connected.
    reader: Mutex<Option<Py<FeedReader>>>,
    stopped: AtomicBool,
    /// Calls whose futures are not settled yet: hosting must outlive them.
    in_flight: AtomicUsize,
    idle: Notify,
}

impl Hosted {
    /// Hosting on the running loop of the calling thread, or `None` where it cannot be done
    /// (the caller then runs the client on tokio as before).
    pub fn open(py: Python<'_>) -> PyResult<Option<Arc<Hosted>>> {
        // A thread of the runtime (`asyncio.run` inside a `def` handler, which the runtime
        // lends a thread for one call): a session hosted there would run only while that
        // handler's loop does, and its runs would nest in the runtime's own context.
        if tokio::runtime::Handle::try_current().is_ok() {
            return Ok(None);
        }
        let Some(event_loop) = running_loop(py) else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "oxmcp: this must be called from a running asyncio event loop",
            ));
        };
        let Some(bell) = eventfd() else {
            return Ok(None);
        };
        let bell = Arc::new(bell);
        let raw = bell.as_raw_fd();
        let ring = bell.clone();
        let host = HostLoop::new(runtime::runtime().handle().clone(), move || {
            ring_bell(&ring)
        });
        let hosted = Arc::new(Hosted {
            host,
            event_loop: event_loop.clone().unbind(),
            bell,
            reader: Mutex::new(None),
            stopped: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
        });
        let bell_reader = Bell {
            hosted: hosted.clone(),
        };
        match event_loop.call_method1("add_reader", (raw, bell_reader)) {
            Ok(_) => Ok(Some(hosted)),
            // A loop that cannot watch descriptors (Windows' proactor loop).
            Err(e) if e.is_instance_of::<PyNotImplementedError>(py) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The loop the session runs on.
    pub fn host(&self) -> &HostLoop {
        &self.host
    }

    /// Whether a call made now can run hosted: on the loop's own thread, while it runs, and
    /// hosting has not stopped. Otherwise (another loop or thread) it goes through tokio.
    pub fn serves_here(&self, py: Python<'_>) -> bool {
        !self.stopped.load(Ordering::Acquire)
            && self.host.is_host_thread()
            && running_loop(py).is_some_and(|l| l.is(self.event_loop.bind(py)))
    }

    /// Watches the child's stdout: on the loop thread (a task of the host loop, or with the
    /// GIL held there).
    pub fn watch(&self, py: Python<'_>, feeder: Feeder) -> PyResult<()> {
        let Some(fd) = feeder.input_fd().map(|fd| fd.as_raw_fd()) else {
            return Err(crate::errors::to_pyerr(oxmcp::Error::closed(
                "the child's output is not readable",
            )));
        };
        let reader = Py::new(
            py,
            FeedReader {
                host: self.host.clone(),
                event_loop: self.event_loop.clone_ref(py),
                fd,
                feeder: Mutex::new(Some(feeder)),
                watching: AtomicBool::new(true),
            },
        )?;
        let for_room = reader.clone_ref(py);
        if let Some(feeder) = lock(&reader.get().feeder).as_ref() {
            feeder.on_room(move || {
                runtime::attach(|py| FeedReader::resume(for_room.bind(py)));
            });
        }
        let added = if self.stopped.load(Ordering::Acquire) {
            Err(crate::errors::to_pyerr(oxmcp::Error::closed(
                "the client was closed while connecting",
            )))
        } else {
            self.event_loop
                .bind(py)
                .call_method1("add_reader", (fd, reader.bind(py)))
                .map(drop)
        };
        if let Err(e) = added {
            // Also breaks the cycle through the feeder's room callback.
            reader.get().finish(py);
            return Err(e);
        }
        *lock(&self.reader) = Some(reader);
        Ok(())
    }

    /// Runs `future` on the host loop and returns an asyncio future on the loop it settles.
    /// Cancelling that future drops `future` (a request then sends `notifications/cancelled`).
    /// Call only where [`Hosted::serves_here`].
    pub fn awaitable<'py, F, T>(
        self: &Arc<Self>,
        py: Python<'py>,
        future: F,
    ) -> PyResult<Bound<'py, PyAny>>
    where
        F: Future<Output = Result<T, ErrorMapper>> + Send + 'static,
        T: ToPython,
    {
        let py_future = self.event_loop.bind(py).call_method0("create_future")?;
        let run = runtime::watched(&py_future, future)?;
        let settle = py_future.clone().unbind();
        let guard = InFlight::enter(self.clone());
        self.run_now(async move {
            let _guard = guard;
            let Some(out) = run.await else { return };
            runtime::attach(|py| runtime::settle_here(py, settle.bind(py), out));
        });
        Ok(py_future)
    }

    /// Closes the client's session, waits until every call is settled, stops hosting, and
    /// only then settles the returned future. Not cancellable: a close always finishes.
    pub fn close<'py>(
        self: &Arc<Self>,
        py: Python<'py>,
        client: oxmcp::client::Client,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py_future = self.event_loop.bind(py).call_method0("create_future")?;
        let settle = py_future.clone().unbind();
        let this = self.clone();
        self.run_now(async move {
            client.close().await;
            this.clone().retire(client.session().clone()).await;
            runtime::attach(|py| runtime::settle_here(py, settle.bind(py), Ok(())));
        });
        Ok(py_future)
    }

    /// Stops hosting once `session` has closed and no call is in flight (from any thread: the
    /// work is queued on the host loop).
    pub fn retire_later(self: &Arc<Self>, session: Session) {
        if self.stopped.load(Ordering::Acquire) {
            return;
        }
        self.host.spawn(self.clone().retire(session));
    }

    async fn retire(self: Arc<Self>, session: Session) {
        session.closed().await;
        loop {
            let idle = self.idle.notified();
            let mut idle = pin!(idle);
            idle.as_mut().enable();
            if self.in_flight.load(Ordering::Acquire) == 0 {
                break;
            }
            idle.await;
        }
        runtime::attach(|py| self.stop(py));
    }

    /// Ends hosting: removes the readers, closes the child's stdout and drops whatever the
    /// host loop still holds (once the current run, if any, ends). Idempotent.
    pub fn stop(&self, py: Python<'_>) {
        if self.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        // A closed loop has nothing registered any more; its refusal is not an error here.
        let _ = self
            .event_loop
            .bind(py)
            .call_method1("remove_reader", (self.bell.as_raw_fd(),));
        let reader = lock(&self.reader).take();
        if let Some(reader) = reader {
            reader.get().finish(py);
        }
        self.host.shutdown();
    }

    /// Spawns `task` and runs the host loop at once: on the loop thread, outside a run, this
    /// writes a request before the call returns; inside a run it only queues the task.
    fn run_now(&self, task: impl Future<Output = ()> + Send + 'static) {
        let host = &self.host;
        host.run_with(|| host.spawn(task));
    }
}

/// The bell: an eventfd, or nothing where there is none (the client then runs on tokio).
#[cfg(target_os = "linux")]
fn eventfd() -> Option<OwnedFd> {
    // SAFETY: eventfd returns a fresh descriptor (checked) that we then own.
    let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    // SAFETY: `raw` is a valid descriptor owned by nobody else.
    (raw >= 0).then(|| unsafe { OwnedFd::from_raw_fd(raw) })
}

#[cfg(not(target_os = "linux"))]
fn eventfd() -> Option<OwnedFd> {
    None
}

fn ring_bell(bell: &OwnedFd) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a local to an eventfd. A full counter (never in practice)
    // or a closed loop leaves the write undone, and there is nothing to do about either.
    unsafe { libc::write(bell.as_raw_fd(), (&one as *const u64).cast(), 8) };
}

/// Counts a call as in flight until its task ends (settled, cancelled or dropped).
struct InFlight(Arc<Hosted>);

impl InFlight {
    fn enter(hosted: Arc<Hosted>) -> InFlight {
        hosted.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(hosted)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// The bell's reader: runs the host loop when some thread asked for a run.
#[pyclass(module = "oxmcp._native", frozen)]
struct Bell {
    hosted: Arc<Hosted>,
}

#[pymethods]
impl Bell {
    fn __call__(&self) {
        let mut count = 0u64;
        // SAFETY: reads 8 bytes into a local from a non-blocking eventfd; an empty one
        // (a spurious wake-up) fails with EAGAIN, which is fine.
        unsafe {
            libc::read(
                self.hosted.bell.as_raw_fd(),
                (&mut count as *mut u64).cast(),
                8,
            )
        };
        self.hosted.host.run_ready();
    }
}

impl Drop for Bell {
    fn drop(&mut self) {
        // Dropped by `stop` (which then returns at once) or by the loop closing its selector
        // with the client still open: nothing can run the session any more, so let go of it
        // (its child sees stdin close; the supervisor on tokio reaps it).
        runtime::attach(|py| self.hosted.stop(py));
    }
}

/// The reader of the child's stdout.
#[pyclass(module = "oxmcp._native", frozen)]
struct FeedReader {
    host: HostLoop,
    event_loop: Py<PyAny>,
    fd: RawFd,
    /// Taken (and dropped, closing the descriptor) when reading ends.
    feeder: Mutex<Option<Feeder>>,
    /// Registered with the loop right now.
    watching: AtomicBool,
}

#[pymethods]
impl FeedReader {
    fn __call__(slf: &Bound<'_, Self>) {
        let this = slf.get();
        // The feeder is locked only while it reads: the tasks the frames wake run after.
        let read = this.host.run_with(|| {
            let mut feeder = lock(&this.feeder);
            let feeder = feeder.as_mut()?;
            let outcome = feeder.read_available();
            Some((outcome, feeder.wants_input()))
        });
        match read {
            None | Some((Ok(ReadOutcome::Ended) | Err(_), _)) => this.finish(slf.py()),
            // The session's backlog is full: stop reading until the feeder has room.
            Some((Ok(ReadOutcome::More), false)) => this.pause(slf.py()),
            Some(_) => {}
        }
    }
}

impl FeedReader {
    fn pause(&self, py: Python<'_>) {
        if self.watching.swap(false, Ordering::AcqRel) {
            let _ = self
                .event_loop
                .bind(py)
                .call_method1("remove_reader", (self.fd,));
        }
    }

    /// The feeder's room callback (on the loop thread, in a run).
    fn resume(slf: &Bound<'_, Self>) {
        let this = slf.get();
        if lock(&this.feeder).is_none() || this.watching.swap(true, Ordering::AcqRel) {
            return;
        }
        if this
            .event_loop
            .bind(slf.py())
            .call_method1("add_reader", (this.fd, slf))
            .is_err()
        {
            // The loop is closing: nobody will read again.
            this.finish(slf.py());
        }
    }

    /// Stops watching and drops the feeder, which ends the input and closes the descriptor
    /// (only after the loop forgot it, so a new descriptor with its number is never
    /// mistaken for it).
    fn finish(&self, py: Python<'_>) {
        self.pause(py);
        let feeder = lock(&self.feeder).take();
        drop(feeder);
    }
}
