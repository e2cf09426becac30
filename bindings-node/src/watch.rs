//! The input of a hosted session (this process's stdin, a child's stdout) watched by Node's
//! own event loop.
//!
//! A JavaScript stream would cost a Buffer, a stream push and an event per read, and one more
//! N-API call to hand the bytes over. Instead a libuv poll handle on the JavaScript thread
//! says when the descriptor is readable, and the session's `Feeder` reads it straight into its
//! framing, inside a run of the host loop (`embed.rs`), so the frames it cut are handled
//! before the callback returns. The handle keeps Node alive while the session reads; it is
//! closed when the input ends or the session does (`close`), and then nothing is left.
//!
//! Back-pressure: when the feeder's backlog is full the handle stops polling; the feeder's
//! `on_room` marks the watch, and the run that drained the backlog starts it again.
//!
//! libuv is not a crate here: Node exports its functions, and the few used are declared below.

use std::{
    cell::{Cell, RefCell},
    collections::HashMap,
    ffi::{c_int, c_void},
    os::fd::AsRawFd,
    panic::AssertUnwindSafe,
    rc::Rc,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use napi::sys;
use oxmcp::embed::{Feeder, ReadOutcome};

use crate::embed::Host;

type PollCallback = unsafe extern "C" fn(handle: *mut c_void, status: c_int, events: c_int);
type CloseCallback = unsafe extern "C" fn(handle: *mut c_void);

unsafe extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_poll_init(event_loop: *mut c_void, handle: *mut c_void, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut c_void, events: c_int, cb: PollCallback) -> c_int;
    fn uv_poll_stop(handle: *mut c_void) -> c_int;
    fn uv_close(handle: *mut c_void, cb: CloseCallback);
    fn uv_handle_set_data(handle: *mut c_void, data: *mut c_void);
    fn uv_handle_get_data(handle: *const c_void) -> *mut c_void;
}

/// `UV_POLL` in libuv's `uv_handle_type` (stable since libuv 1.0).
const UV_POLL: c_int = 8;
/// `UV_READABLE`.
const UV_READABLE: c_int = 1;

struct Watch {
    id: u64,
    /// The poll handle, in `storage` (libuv's size for it, 8-byte aligned), which is freed
    /// with the watch, after libuv's close callback.
    handle: *mut c_void,
    _storage: Box<[u64]>,
    feeder: Feeder,
    host: Rc<Host>,
    polling: bool,
    /// Inside the callback: a close asked for meanwhile waits for its end.
    busy: Cell<bool>,
    close_asked: Cell<bool>,
    /// Set by the feeder when a full backlog drained (from a run, on this thread).
    room: Arc<AtomicBool>,
}

thread_local! {
    static WATCHES: RefCell<HashMap<u64, *mut Watch>> = RefCell::new(HashMap::new());
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Which watch to close (see [`close`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WatchId(u64);

/// Starts reading `feeder`'s descriptor whenever Node's loop sees it readable. On the host's
/// JavaScript thread.
pub(crate) fn start(host: &Rc<Host>, feeder: Feeder) -> napi::Result<WatchId> {
    let Some(fd) = feeder.input_fd().map(|fd| fd.as_raw_fd()) else {
        return Err(napi::Error::from_reason(
            "the session has no descriptor to watch",
        ));
    };
    let mut event_loop = std::ptr::null_mut();
    // SAFETY: on the env's thread.
    let status = unsafe { sys::napi_get_uv_event_loop(host.env(), &mut event_loop) };
    if status != sys::Status::napi_ok || event_loop.is_null() {
        return Err(napi::Error::from_reason("no libuv loop for this env"));
    }
    // SAFETY: asking libuv for a size has no preconditions.
    let size = unsafe { uv_handle_size(UV_POLL) };
    let mut storage = vec![0u64; size.div_ceil(8)].into_boxed_slice();
    let handle: *mut c_void = storage.as_mut_ptr().cast();
    // SAFETY: `handle` points at enough zeroed memory for a poll handle, which lives (in the
    // watch) until libuv's close callback; `fd` stays open as long as the feeder does.
    let init = unsafe { uv_poll_init(event_loop.cast(), handle, fd) };
    if init != 0 {
        return Err(napi::Error::from_reason(format!(
            "cannot watch descriptor {fd} (libuv error {init})"
        )));
    }
    let room = Arc::new(AtomicBool::new(false));
    let flag = room.clone();
    feeder.on_room(move || flag.store(true, Ordering::Release));
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let watch = Box::into_raw(Box::new(Watch {
        id,
        handle,
        _storage: storage,
        feeder,
        host: host.clone(),
        polling: false,
        busy: Cell::new(false),
        close_asked: Cell::new(false),
        room,
    }));
    // SAFETY: the handle is initialised; its data is the watch it belongs to.
    unsafe { uv_handle_set_data(handle, watch.cast()) };
    WATCHES.with(|w| w.borrow_mut().insert(id, watch));
    // SAFETY: the watch was just made and is only used on this thread.
    unsafe { poll(&mut *watch) };
    Ok(WatchId(id))
}

/// Stops watching and releases the handle (and with it the feeder and its descriptor). On
/// the host's thread; a second call does nothing.
pub(crate) fn close(id: WatchId) {
    let Some(watch) = WATCHES.with(|w| w.borrow().get(&id.0).copied()) else {
        return;
    };
    // SAFETY: registered watches are alive, and only this thread touches them. Inside its
    // own callback (a task closing it during the read's run) only the flags are touched: the
    // callback holds the feeder.
    unsafe {
        if (*watch).busy.get() {
            (*watch).close_asked.set(true);
        } else {
            finish(&mut *watch);
        }
    }
}

/// Starts again the watches whose backlog drained (called after each run).
pub(crate) fn resume_ready() {
    let ready: Vec<*mut Watch> = WATCHES.with(|w| {
        w.borrow()
            .values()
            .copied()
            // SAFETY: registered watches are alive, and only this thread touches them.
            .filter(|&p| unsafe { !(*p).busy.get() && (*p).room.load(Ordering::Acquire) })
            .collect()
    });
    for watch in ready {
        // SAFETY: as above.
        let watch = unsafe { &mut *watch };
        watch.room.store(false, Ordering::Release);
        if !watch.polling && watch.feeder.wants_input() {
            poll(watch);
        }
    }
}

fn poll(watch: &mut Watch) {
    // SAFETY: an initialised, open handle.
    let started = unsafe { uv_poll_start(watch.handle, UV_READABLE, on_readable) };
    if started == 0 {
        watch.polling = true;
    } else {
        watch.feeder.fail(oxmcp::Error::Io(
            std::io::Error::other(format!("cannot poll the input (libuv error {started})")).into(),
        ));
        finish(watch);
    }
}

fn stop(watch: &mut Watch) {
    if watch.polling {
        // SAFETY: an initialised, open handle.
        unsafe { uv_poll_stop(watch.handle) };
        watch.polling = false;
    }
}

/// Unregisters the watch and closes its handle; the memory goes in the close callback.
fn finish(watch: &mut Watch) {
    if WATCHES.with(|w| w.borrow_mut().remove(&watch.id)).is_none() {
        return;
    }
    stop(watch);
    // SAFETY: an initialised handle, closed once; libuv calls back when it may be freed.
    unsafe { uv_close(watch.handle, on_closed) };
}

unsafe extern "C" fn on_closed(handle: *mut c_void) {
    // SAFETY: the data is the watch `start` leaked, freed only here, once.
    let watch = unsafe { Box::from_raw(uv_handle_get_data(handle).cast::<Watch>()) };
    // The feeder (and its descriptor) goes after the handle: libuv no longer watches it.
    drop(watch);
}

unsafe extern "C" fn on_readable(handle: *mut c_void, _status: c_int, _events: c_int) {
    // SAFETY: the data is a live watch (freed only after the handle is closed). Fields are
    // reached through the pointer: a task of the run may ask to close it meanwhile.
    let watch = unsafe { uv_handle_get_data(handle).cast::<Watch>() };
    unsafe {
        if (*watch).close_asked.get() {
            return;
        }
        (*watch).busy.set(true);
    }
    let host = unsafe { (*watch).host.clone() };
    // An error status (the descriptor broke) is seen by the read itself.
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: only this callback touches the feeder while it runs.
        host.run_from_libuv(|| unsafe { (*watch).feeder.read_available() })
    }));
    // SAFETY: the watch is still alive: closing it waits for `busy` to clear.
    let watch = unsafe { &mut *watch };
    watch.busy.set(false);
    match outcome {
        Ok(Ok(ReadOutcome::Drained)) => {}
        Ok(Ok(ReadOutcome::More)) => {
            // Stopped by a full backlog: wait for room; otherwise libuv calls again.
            if !watch.feeder.wants_input() {
                stop(watch);
                // Room may have come during the run (its flag is left for a busy watch).
                if watch.room.swap(false, Ordering::AcqRel) && watch.feeder.wants_input() {
                    poll(watch);
                }
            }
        }
        // End of input, a read error (already given to the session), or a session that no
        // longer takes input.
        _ => watch.close_asked.set(true),
    }
    if watch.close_asked.get() {
        finish(watch);
    }
}
