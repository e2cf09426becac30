//! The JavaScript thread as the host of stdio sessions.
//!
//! A session run by tokio's threads reaches a JavaScript handler through a threadsafe function
//! and its answer comes back through another: two thread hops per message, which cost more
//! than the message itself. Here the thread that runs JavaScript also runs the session
//! (`oxmcp::embed::HostLoop`): its input is read by a libuv watch on that thread (`watch.rs`),
//! handlers are called directly (`call_direct`), and a Promise the binding made settles in the
//! same run.
//!
//! One host per thread, made on first use for the env of that thread. Work that finishes on a
//! tokio thread (a timer, a child's exit) asks for a run through a threadsafe function that is
//! unreferenced, so it never keeps Node alive by itself; a promise made by [`spawn_promise`]
//! references it while it is pending (as napi-rs's own async functions keep Node alive), so
//! `await client.close()` is not cut short by an idle loop. When the env is torn down the host
//! drops every task and stops asking for runs.

use std::{
    cell::{Cell, RefCell},
    ffi::c_void,
    future::Future,
    panic::AssertUnwindSafe,
    ptr,
    rc::Rc,
    sync::{Arc, Mutex},
};

use napi::{
    bindgen_prelude::{FromNapiValue, PromiseRaw, ToNapiValue},
    sys,
};
use oxmcp::embed::HostLoop;

/// The threadsafe function that asks the JavaScript thread for a run; 0 once the env is gone
/// (Node frees the function at teardown, so nothing may call it after that).
struct Bell(Mutex<usize>);

impl Bell {
    fn ring(&self) {
        if SETTLING.with(|s| s.get()) {
            // On the JavaScript thread, while the promise reactions of a run are draining:
            // `run_from_libuv` runs again when they are done, with no trip through libuv.
            RUN_AGAIN.with(|r| r.set(true));
            return;
        }
        let tsfn = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if *tsfn != 0 {
            // SAFETY: the function is alive while the slot holds it (cleared under this lock
            // before Node frees it); a non-blocking call is allowed from any thread.
            unsafe {
                sys::napi_call_threadsafe_function(
                    *tsfn as sys::napi_threadsafe_function,
                    ptr::null_mut(),
                    sys::ThreadsafeFunctionCallMode::nonblocking,
                );
            }
        }
    }
}

/// The host of one JavaScript thread.
pub(crate) struct Host {
    env: sys::napi_env,
    host_loop: HostLoop,
    bell: Arc<Bell>,
    tsfn: sys::napi_threadsafe_function,
    /// What a libuv callback runs JavaScript under (so microtasks and `nextTick`s run after).
    async_ctx: sys::napi_async_context,
    resource: sys::napi_ref,
    /// Promises made by `spawn_promise` that are still pending.
    pending: Cell<usize>,
}

thread_local! {
    static HOST: RefCell<Option<Rc<Host>>> = const { RefCell::new(None) };
    /// The env of the run in progress on this thread (null outside a run).
    static RUNNING_ENV: Cell<sys::napi_env> = const { Cell::new(ptr::null_mut()) };
    /// Set while `run_from_libuv` closes its callback scope, which runs the promise reactions
    /// the run queued: a wake they cause is noted in `RUN_AGAIN` instead of asking libuv.
    static SETTLING: Cell<bool> = const { Cell::new(false) };
    static RUN_AGAIN: Cell<bool> = const { Cell::new(false) };
}

/// How many runs one libuv callback makes for wakes its own promise reactions cause, before
/// it leaves the rest to a regular request (so a chain of promises cannot starve I/O).
const RERUNS_PER_CALLBACK: usize = 16;

fn ok(status: sys::napi_status) -> bool {
    status == sys::Status::napi_ok
}

/// This thread's host for `env`, made on first use; `None` if it cannot be made (another env
/// already hosts on this thread, or Node refused a resource), and callers keep to tokio.
pub(crate) fn host(env: sys::napi_env) -> Option<Rc<Host>> {
    if let Some(existing) = HOST.with(|h| h.borrow().clone()) {
        return (existing.env == env).then_some(existing);
    }
    let made = Host::new(env)?;
    HOST.with(|h| *h.borrow_mut() = Some(made.clone()));
    Some(made)
}

/// The host of this thread if it exists and hosts `loop_` (a session started here).
pub(crate) fn host_of(loop_: &HostLoop) -> Option<Rc<Host>> {
    HOST.with(|h| h.borrow().clone())
        .filter(|h| h.host_loop.same_as(loop_) && h.host_loop.is_host_thread())
}

impl Host {
    fn new(env: sys::napi_env) -> Option<Rc<Host>> {
        let runtime = std::panic::catch_unwind(|| {
            napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::current)
        })
        .ok()?;
        let mut name = ptr::null_mut();
        let mut resource_obj = ptr::null_mut();
        let mut resource = ptr::null_mut();
        let mut async_ctx = ptr::null_mut();
        let mut tsfn = ptr::null_mut();
        // SAFETY: plain N-API calls on the env's own thread, with out-pointers we own.
        unsafe {
            let label = "oxmcp host loop";
            if !ok(sys::napi_create_string_utf8(
                env,
                label.as_ptr().cast(),
                label.len() as isize,
                &mut name,
            )) || !ok(sys::napi_create_object(env, &mut resource_obj))
                || !ok(sys::napi_create_reference(
                    env,
                    resource_obj,
                    1,
                    &mut resource,
                ))
                || !ok(sys::napi_async_init(
                    env,
                    resource_obj,
                    name,
                    &mut async_ctx,
                ))
                || !ok(sys::napi_create_threadsafe_function(
                    env,
                    ptr::null_mut(),
                    ptr::null_mut(),
                    name,
                    0,
                    1,
                    ptr::null_mut(),
                    None,
                    ptr::null_mut(),
                    Some(on_bell),
                    &mut tsfn,
                ))
            {
                return None;
            }
            // Asking for runs alone never keeps Node alive: watches and pending promises do.
            sys::napi_unref_threadsafe_function(env, tsfn);
            // Registered after the threadsafe function, so it runs before Node frees it.
            sys::napi_add_env_cleanup_hook(env, Some(on_teardown), ptr::null_mut());
        }
        let bell = Arc::new(Bell(Mutex::new(tsfn as usize)));
        let ring = bell.clone();
        let host_loop = HostLoop::new(runtime, move || ring.ring());
        Some(Rc::new(Host {
            env,
            host_loop,
            bell,
            tsfn,
            async_ctx,
            resource,
            pending: Cell::new(0),
        }))
    }

    pub(crate) fn env(&self) -> sys::napi_env {
        self.env
    }

    pub(crate) fn host_loop(&self) -> &HostLoop {
        &self.host_loop
    }

    /// Calls `first`, then runs what is ready, with this env marked as running (handlers
    /// may then be called directly); then resumes watches that have room again.
    pub(crate) fn run<R>(&self, first: impl FnOnce() -> R) -> R {
        let outer = RUNNING_ENV.with(|e| e.replace(self.env));
        let out = self.host_loop.run_with(first);
        RUNNING_ENV.with(|e| e.set(outer));
        if outer.is_null() {
            crate::watch::resume_ready();
        }
        out
    }

    /// [`Host::run`] from a libuv callback: inside a handle scope and a callback scope, so
    /// the promise reactions and `nextTick`s JavaScript queued run when it returns.
    ///
    /// An `async` handler's answer comes back through such a reaction: the handler's promise
    /// settles while the scope closes, after the run that called it has ended. Its wake would
    /// cost a trip through libuv (a threadsafe function's signal, another turn of the event
    /// loop) before the answer is written; instead the wake is noted and this callback runs
    /// again at once, up to [`RERUNS_PER_CALLBACK`] times.
    pub(crate) fn run_from_libuv<R>(&self, first: impl FnOnce() -> R) -> R {
        let out = self.run_in_scope(first);
        for _ in 0..RERUNS_PER_CALLBACK {
            if !RUN_AGAIN.with(|r| r.replace(false)) {
                return out;
            }
            self.run_in_scope(|| ());
        }
        if RUN_AGAIN.with(|r| r.replace(false)) {
            // Enough for one callback: the next run goes through libuv like any other.
            self.bell.ring();
        }
        out
    }

    /// One [`Host::run`] inside fresh scopes; a wake from the reactions that run as the
    /// callback scope closes sets `RUN_AGAIN`.
    fn run_in_scope<R>(&self, first: impl FnOnce() -> R) -> R {
        let env = self.env;
        let mut handles = ptr::null_mut();
        let mut scope = ptr::null_mut();
        let mut resource = ptr::null_mut();
        // SAFETY: on the env's thread, outside any N-API call (a libuv callback).
        unsafe {
            sys::napi_open_handle_scope(env, &mut handles);
            sys::napi_get_reference_value(env, self.resource, &mut resource);
            sys::napi_open_callback_scope(env, resource, self.async_ctx, &mut scope);
        }
        let out = self.run(first);
        let outer = SETTLING.with(|s| s.replace(true));
        // SAFETY: closing what was opened above, in reverse order.
        unsafe {
            sys::napi_close_callback_scope(env, scope);
            sys::napi_close_handle_scope(env, handles);
        }
        SETTLING.with(|s| s.set(outer));
        out
    }

    fn promise_started(&self) {
        let n = self.pending.get();
        if n == 0 {
            // SAFETY: on the env's thread; the function lives as long as the env.
            unsafe { sys::napi_ref_threadsafe_function(self.env, self.tsfn) };
        }
        self.pending.set(n + 1);
    }

    fn promise_settled(&self) {
        let n = self.pending.get().saturating_sub(1);
        self.pending.set(n);
        if n == 0 {
            // SAFETY: as above.
            unsafe { sys::napi_unref_threadsafe_function(self.env, self.tsfn) };
        }
    }
}

/// The threadsafe function's callback, on the JavaScript thread: a run was asked for. Node
/// calls it inside a handle scope and a callback scope.
unsafe extern "C" fn on_bell(
    env: sys::napi_env,
    _js_callback: sys::napi_value,
    _context: *mut c_void,
    _data: *mut c_void,
) {
    if env.is_null() {
        return;
    }
    if let Some(host) = HOST.with(|h| h.borrow().clone()) {
        // A panic must not unwind into Node; the loop's own guard has reset it by then.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| host.run(|| ())));
    }
}

/// The env is going away: stop asking for runs and drop every task (what they hold, a
/// child's stdin say, is released; their promises could never settle anyway).
unsafe extern "C" fn on_teardown(_arg: *mut c_void) {
    if let Some(host) = HOST.with(|h| h.borrow_mut().take()) {
        *host.bell.0.lock().unwrap_or_else(|e| e.into_inner()) = 0;
        host.host_loop.shutdown();
    }
}

/// Whether a JavaScript function of `env` may be called right now, from inside a run.
pub(crate) fn may_call_js(env: sys::napi_env) -> bool {
    RUNNING_ENV.with(|e| e.get()) == env
        && HOST.with(|h| {
            h.borrow()
                .as_ref()
                .is_some_and(|h| h.host_loop.is_running_here())
        })
}

/// A pointer moved into a task that only touches it on the host thread.
struct OnHostThread<T>(T);
// SAFETY: the task holding it runs on the host loop, which polls only on the JavaScript
// thread the pointer belongs to.
unsafe impl<T> Send for OnHostThread<T> {}

/// Runs `task` on the host loop and returns a Promise settled with its outcome, on this
/// thread, in the run that finishes it. Starts it at once (a request is written before this
/// returns).
pub(crate) fn spawn_promise<'env, T, F>(
    host: &Rc<Host>,
    task: F,
) -> napi::Result<PromiseRaw<'env, T>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = napi::Result<T>> + Send + 'static,
{
    let env = host.env;
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    // SAFETY: on the env's thread, inside the N-API call that asked for the promise.
    let status = unsafe { sys::napi_create_promise(env, &mut deferred, &mut promise) };
    if !ok(status) {
        return Err(napi::Error::new(
            napi::Status::GenericFailure,
            "could not make a Promise",
        ));
    }
    host.promise_started();
    let target = OnHostThread((env, deferred));
    let settle = async move {
        let outcome = task.await;
        settle_promise(target, outcome);
    };
    host.run(|| host.host_loop.spawn(settle));
    // SAFETY: a fresh promise of this env.
    unsafe { PromiseRaw::from_napi_value(env, promise) }
}

fn settle_promise<T: ToNapiValue>(
    target: OnHostThread<(sys::napi_env, sys::napi_deferred)>,
    outcome: napi::Result<T>,
) {
    let (env, deferred) = target.0;
    let Some(host) = HOST.with(|h| h.borrow().clone()).filter(|h| h.env == env) else {
        return;
    };
    let mut scope = ptr::null_mut();
    // SAFETY: the task runs on the env's thread, inside a run (so inside an N-API call, a
    // threadsafe-function callback or a libuv callback with scopes open); the deferred is
    // settled exactly once.
    unsafe {
        sys::napi_open_handle_scope(env, &mut scope);
        let value = match outcome {
            Ok(v) => T::to_napi_value(env, v),
            Err(e) => Err(e),
        };
        match value {
            Ok(v) => {
                sys::napi_resolve_deferred(env, deferred, v);
            }
            Err(e) => {
                let error = napi::JsError::from(e).into_value(env);
                sys::napi_reject_deferred(env, deferred, error);
            }
        }
        sys::napi_close_handle_scope(env, scope);
    }
    host.promise_settled();
}
