//! An executor for futures that must run on a thread owned by a foreign event loop.
//!
//! A binding's own thread (Node's main thread, the thread of an asyncio loop) is where its
//! handlers run and where its callers wait. When the session serving them runs on tokio's
//! threads instead, every message crosses threads twice, and on a busy machine each crossing
//! is a context switch that costs more than the message itself. A [`HostLoop`] lets the host
//! thread run the session: the host feeds it the bytes its own loop read (see
//! [`super::Feeder`]) and calls [`HostLoop::run_ready`]; the session's driver, its writer and
//! its callers' request futures are polled right there, and a handler that is a host function
//! is called directly.
//!
//! Work that finishes on another thread (a tokio timer, a handler that waited on tokio I/O, a
//! response routed from elsewhere) wakes its future as usual; the wake asks the host, once, to
//! call `run_ready` again (`ask_host`: a Node threadsafe function, an asyncio reader on an
//! eventfd). A wake on the host thread during a run needs no such request: the run goes on
//! until nothing it holds is ready.
//!
//! Tasks are polled with the tokio runtime entered, so they may use timers and spawn onto the
//! runtime as anywhere else. A task that panics ends alone; the loop carries on.

use std::{
    future::Future,
    panic::AssertUnwindSafe,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
    thread::ThreadId,
};

use futures::{
    FutureExt, StreamExt,
    future::BoxFuture,
    stream::FuturesUnordered,
    task::{ArcWake, waker_ref},
};

use crate::sync::Mutex;

/// Runs futures on the thread that created it, when that thread's event loop says so.
/// Cheap to clone.
#[derive(Clone)]
pub struct HostLoop {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HostLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostLoop")
            .field("host", &self.inner.signal.host)
            .finish_non_exhaustive()
    }
}

struct Inner {
    /// What is being run; polled only by `run_ready`, on the host thread.
    tasks: Mutex<FuturesUnordered<BoxFuture<'static, ()>>>,
    /// Spawned and not yet picked up by a run (spawning never touches `tasks`, so a task may
    /// spawn while it is being polled).
    spawned: Mutex<Vec<BoxFuture<'static, ()>>>,
    /// Set by `shutdown`: no task runs again, and new ones are dropped.
    shut_down: AtomicBool,
    /// What wakes reach. Kept apart from the tasks: `FuturesUnordered` stores a clone of the
    /// waker it is polled with, and a waker holding the tasks would keep them alive forever.
    signal: Arc<Signal>,
    runtime: tokio::runtime::Handle,
}

struct Signal {
    /// Set by every wake; a run goes on while it keeps being set.
    woken: AtomicBool,
    /// The host has been asked for a run and has not started it yet.
    asked: AtomicBool,
    /// A run is in progress (on the host thread).
    running: AtomicBool,
    host: ThreadId,
    ask_host: Box<dyn Fn() + Send + Sync>,
}

impl HostLoop {
    /// A loop for the calling thread. `ask_host` must make that thread call
    /// [`HostLoop::run_ready`] soon, from any thread, without blocking (it is called at most
    /// once between two runs). Tasks see `runtime` as the current runtime.
    pub fn new(
        runtime: tokio::runtime::Handle,
        ask_host: impl Fn() + Send + Sync + 'static,
    ) -> HostLoop {
        HostLoop {
            inner: Arc::new(Inner {
                tasks: Mutex::new(FuturesUnordered::new()),
                spawned: Mutex::new(Vec::new()),
                shut_down: AtomicBool::new(false),
                signal: Arc::new(Signal {
                    woken: AtomicBool::new(false),
                    asked: AtomicBool::new(false),
                    running: AtomicBool::new(false),
                    host: std::thread::current().id(),
                    ask_host: Box::new(ask_host),
                }),
                runtime,
            }),
        }
    }

    /// The runtime tasks run under.
    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.inner.runtime
    }

    /// Whether the calling thread is this loop's host thread.
    pub fn is_host_thread(&self) -> bool {
        std::thread::current().id() == self.inner.signal.host
    }

    /// Whether the calling thread is inside this loop's [`HostLoop::run_ready`] right now
    /// (a binding then knows it may call its host functions directly).
    pub fn is_running_here(&self) -> bool {
        self.inner.signal.running.load(Ordering::Acquire) && self.is_host_thread()
    }

    /// Whether the same loop as `other`.
    pub fn same_as(&self, other: &HostLoop) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Adds a task; it first runs in the next (or the current) run. From any thread.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let task = AssertUnwindSafe(task).catch_unwind().map(|outcome| {
            if outcome.is_err() {
                tracing::error!(target: "oxmcp", "a task on the host loop panicked");
            }
        });
        if self.inner.shut_down.load(Ordering::Acquire) {
            return;
        }
        self.inner.spawned.lock().push(task.boxed());
        ArcWake::wake_by_ref(&self.inner.signal);
    }

    /// Drops every task without running it again: for a host whose event loop is gone (its
    /// tasks could never run, and what they hold, a child's stdin say, must be released).
    /// From any thread; inside a run on the host thread, the tasks go when the run ends.
    pub fn shutdown(&self) {
        self.inner.shut_down.store(true, Ordering::Release);
        if self.is_running_here() {
            return;
        }
        self.drop_tasks();
    }

    fn drop_tasks(&self) {
        let tasks = std::mem::take(&mut *self.inner.tasks.lock());
        let spawned = std::mem::take(&mut *self.inner.spawned.lock());
        // Dropped outside the locks: a task's destructor may spawn or wake.
        drop(tasks);
        drop(spawned);
    }

    /// How many tasks the loop holds (running or spawned). Not from inside a task.
    pub fn len(&self) -> usize {
        self.inner.tasks.lock().len() + self.inner.spawned.lock().len()
    }

    /// Whether the loop holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Polls every task that is ready, again and again, until none is. Must be called on the
    /// host thread; a call from inside a run (a host function the run called, calling back)
    /// returns at once, and the outer run carries on.
    pub fn run_ready(&self) {
        self.run_with(|| ());
    }

    /// Calls `first` (feeding input, spawning a task), then runs what is ready, as one run:
    /// the wakes `first` causes on this thread need no request to the host. Must be called on
    /// the host thread; inside a run, only calls `first` (the outer run sees its wakes).
    pub fn run_with<R>(&self, first: impl FnOnce() -> R) -> R {
        let inner = &self.inner;
        let signal = &inner.signal;
        if !self.is_host_thread() {
            debug_assert!(false, "HostLoop::run_with called off the host thread");
            return first();
        }
        if signal.running.swap(true, Ordering::AcqRel) {
            return first();
        }
        // A panic in `first` (a host function it called) must not leave the loop marked as
        // running: every later run would then return at once and the loop would stall.
        let running = RunningGuard(signal);
        // From here on, a wake from another thread asks for another run.
        signal.asked.store(false, Ordering::Release);
        let _runtime = inner.runtime.enter();
        let out = first();
        let waker = waker_ref(signal);
        let mut cx = Context::from_waker(&waker);
        loop {
            if inner.shut_down.load(Ordering::Acquire) {
                break;
            }
            signal.woken.store(false, Ordering::Release);
            let spawned = std::mem::take(&mut *inner.spawned.lock());
            let mut tasks = inner.tasks.lock();
            tasks.extend(spawned);
            // `FuturesUnordered` polls only the tasks that were woken, and yields (waking us)
            // after a round through all of them, so one busy task cannot starve the host.
            while let Poll::Ready(Some(())) = tasks.poll_next_unpin(&mut cx) {}
            drop(tasks);
            if !signal.woken.load(Ordering::Acquire) && inner.spawned.lock().is_empty() {
                break;
            }
        }
        drop(running);
        if inner.shut_down.load(Ordering::Acquire) {
            self.drop_tasks();
        }
        out
    }
}

/// Marks the run over when dropped, on return or unwind.
struct RunningGuard<'a>(&'a Signal);

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
    }
}

impl ArcWake for Signal {
    fn wake_by_ref(inner: &Arc<Self>) {
        inner.woken.store(true, Ordering::Release);
        if inner.running.load(Ordering::Acquire) && std::thread::current().id() == inner.host {
            // The run in progress on this thread sees `woken` before it returns.
            return;
        }
        if !inner.asked.swap(true, Ordering::AcqRel) {
            (inner.ask_host)();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    type Job = Box<dyn FnOnce(&HostLoop) + Send>;

    /// A host thread: runs the loop whenever asked, and any job it is sent; `None` stops it.
    fn host_thread(
        runtime: tokio::runtime::Handle,
    ) -> (
        HostLoop,
        mpsc::Sender<Option<Job>>,
        std::thread::JoinHandle<()>,
    ) {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (job_tx, job_rx) = mpsc::channel::<Option<Job>>();
        let asks = job_tx.clone();
        let thread = std::thread::spawn(move || {
            let host = HostLoop::new(runtime, move || {
                let _ = asks.send(Some(Box::new(|host: &HostLoop| host.run_ready())));
            });
            ready_tx.send(host.clone()).unwrap();
            while let Ok(Some(job)) = job_rx.recv() {
                job(&host);
            }
        });
        (ready_rx.recv().unwrap(), job_tx, thread)
    }

    #[test]
    fn tasks_run_on_the_host_thread_and_cross_thread_wakes_ask_for_a_run() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (host, jobs, thread) = host_thread(runtime.handle().clone());
        let (seen_tx, seen_rx) = mpsc::channel();
        let (go_tx, go_rx) = tokio::sync::oneshot::channel::<u32>();
        host.spawn(async move {
            let first = std::thread::current().id();
            // Woken from a tokio worker: the loop must be asked to run again.
            let value = go_rx.await.unwrap();
            // A timer of the runtime works from the host thread too.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            seen_tx
                .send((first, std::thread::current().id(), value))
                .unwrap();
        });
        runtime.spawn(async move {
            go_tx.send(7).unwrap();
        });
        let (first, second, value) = seen_rx.recv().unwrap();
        assert_eq!(value, 7);
        assert_eq!(first, second);
        assert_ne!(first, std::thread::current().id());
        jobs.send(None).unwrap();
        drop(host);
        thread.join().unwrap();
    }

    #[test]
    fn a_panicking_task_ends_alone_and_a_nested_run_returns() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (host, jobs, thread) = host_thread(runtime.handle().clone());
        let (seen_tx, seen_rx) = mpsc::channel();
        host.spawn(async { panic!("a bug in one task") });
        let nested = host.clone();
        host.spawn(async move {
            // A host function calling back into the loop while it runs: returns at once.
            nested.run_ready();
            seen_tx.send("after the nested run").unwrap();
        });
        assert_eq!(seen_rx.recv().unwrap(), "after the nested run");
        // Both tasks are gone: the panicking one ended, the other finished.
        let (len_tx, len_rx) = mpsc::channel();
        jobs.send(Some(Box::new(move |host: &HostLoop| {
            len_tx.send(host.len()).unwrap()
        })))
        .unwrap();
        assert_eq!(len_rx.recv().unwrap(), 0);
        jobs.send(None).unwrap();
        drop(host);
        thread.join().unwrap();
    }

    #[test]
    fn a_loop_whose_tasks_finished_is_freed_with_its_last_handle() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let sentinel = Arc::new(());
        let held = sentinel.clone();
        let host = HostLoop::new(runtime.handle().clone(), move || {
            let _ = &held;
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let inner = host.clone();
        // A task holding the loop itself (as a session's tasks hold its spawner), waiting.
        host.spawn(async move {
            let _ = rx.await;
            drop(inner);
        });
        host.run_ready();
        assert_eq!(Arc::strong_count(&sentinel), 2);
        tx.send(()).unwrap();
        host.run_ready();
        assert!(host.is_empty());
        drop(host);
        // Nothing (no stored waker, no finished task) keeps the loop, or what it holds, alive.
        assert_eq!(Arc::strong_count(&sentinel), 1);
    }

    #[test]
    fn a_panic_in_the_first_closure_leaves_the_loop_runnable() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let host = HostLoop::new(runtime.handle().clone(), || {});
        let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
            host.run_with(|| panic!("a host function failed"));
        }));
        assert!(caught.is_err());
        assert!(!host.is_running_here());
        // The next run still runs tasks (a stuck `running` would make it return at once).
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        host.spawn(async move {
            let _ = tx.send(7);
        });
        host.run_ready();
        assert_eq!(rx.try_recv().unwrap(), 7);
    }

    #[test]
    fn shutdown_drops_waiting_tasks_and_what_they_hold() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let host = HostLoop::new(runtime.handle().clone(), || {});
        let held = Arc::new(());
        let in_task = held.clone();
        let (_never_tx, never) = tokio::sync::oneshot::channel::<()>();
        host.spawn(async move {
            let _keep = in_task;
            let _ = never.await;
        });
        host.run_ready();
        assert_eq!(Arc::strong_count(&held), 2);
        // The host's event loop is gone: from another thread, drop what can never run.
        let other = host.clone();
        std::thread::spawn(move || other.shutdown()).join().unwrap();
        assert_eq!(Arc::strong_count(&held), 1);
        // Later spawns are dropped at once.
        let late = held.clone();
        host.spawn(async move {
            let _keep = late;
        });
        assert_eq!(Arc::strong_count(&held), 1);
        assert!(host.is_empty());
    }
}
