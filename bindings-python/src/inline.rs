//! Where a `def` handler runs: on the runtime worker that polls its request, not on a
//! thread of the blocking pool.
//!
//! Sending each call to the blocking pool and back costs two thread hand-offs (a pool thread
//! is woken for the call, then a worker is woken for its result); `block_in_place` costs one
//! (a thread is woken to take over the worker's scheduler). For a short handler either was
//! most of the time of a call. So a handler known to be quick is called right on the worker,
//! and these rules keep a call that turns out slow from stalling anything but its request:
//!
//! - At most `workers - 1` calls run inline at once (the runtime has a reserve worker, see
//!   [`worker_threads`]), so one worker is always free to read sockets, fire timers and
//!   steal queued tasks. Calls beyond that, and calls of a handler seen to be slow, go
//!   through `tokio::task::block_in_place`, which hands the worker's scheduler to another
//!   thread first: as many run at once as there are calls, as on a thread pool.
//! - Before an inline call of a handler not yet trusted, a no-op task is spawned: a task
//!   woken earlier in this poll may sit in the worker's LIFO slot, which other workers cannot
//!   steal, and the spawn moves it to the stealable queue (waking an idle worker for it); the
//!   no-op takes its place. The slot is empty when a task's poll starts (tokio polls it
//!   first) unless the poll began from the shared queue, and the core's `tools/call` path
//!   wakes nothing before the handler; so a handler quick 64 calls in a row is trusted and
//!   skips the spawn. That matters: the no-op is displaced again when the answer wakes the
//!   writer, and the idle worker it wakes costs about three context switches per call
//!   (stdio echo, same sitting: 4.5 switches and 21-25 us of server CPU per call with the
//!   spawn, 1.05 and 8-9 us without). A task left in the slot behind a trusted handler's
//!   call waits for that call, once: the call that runs long marks the handler slow.
//! - A watchdog thread looks every millisecond (parked after 100 ms without inline calls);
//!   when a call has run for more than a millisecond it spawns a task from outside the
//!   runtime, which wakes an idle worker to steal whatever is queued behind the call. The handler is marked slow and takes
//!   the `block_in_place` road until it has been quick many times in a row.
//!
//! What an inline call cannot hand off is a task its own handler wakes on its thread while
//! it runs (Python code rarely reaches tokio from a `def`); such a task runs when the call
//! returns. The binding's own entry to the runtime from Python code
//! ([`crate::runtime::spawn`]) goes around the worker for that reason. A running `def` is never interrupted, inline or not: a cancelled call's answer
//! is dropped when it returns. `OXMCP_DEF_HANDLERS=pool` brings the blocking pool back and
//! `OXMCP_DEF_HANDLERS=in-place` uses `block_in_place` for every call, to compare.

use std::{
    cell::Cell,
    sync::{
        OnceLock,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

/// An inline call running longer than this is slow: its worker's queue is handed off and its
/// handler leaves the inline road.
const SLOW: Duration = Duration::from_millis(1);

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Inline,
    InPlace,
    Pool,
}

fn mode() -> Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("OXMCP_DEF_HANDLERS").as_deref() {
        Ok("pool") => Mode::Pool,
        Ok("in-place") => Mode::InPlace,
        _ => Mode::Inline,
    })
}

/// Worker threads for the runtime: one per CPU, at least two, plus the reserve that inline
/// calls never take.
pub fn worker_threads() -> usize {
    // Cached: on Linux the answer reads cgroup files, too dear for every call.
    static WORKERS: OnceLock<usize> = OnceLock::new();
    *WORKERS.get_or_init(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        cpus.max(2) + 1
    })
}

/// What one handler has shown about itself.
#[derive(Default)]
pub struct Speed {
    slow: AtomicBool,
    /// Quick calls in a row. Enough of them clear the slow mark (a handler slow once, on its
    /// first call say, is not sent off the inline road for good), and make the handler
    /// trusted: its calls skip the no-op spawn (see [`run_def`]).
    quick_run: AtomicUsize,
}

/// Quick calls in a row that bring a slow handler back inline, and make a handler trusted.
const QUICK_RUN: usize = 64;

impl Speed {
    fn record(&self, took: Duration) {
        if took > SLOW {
            self.quick_run.store(0, Ordering::Relaxed);
            self.slow.store(true, Ordering::Relaxed);
        } else if self.quick_run.fetch_add(1, Ordering::Relaxed) + 1 >= QUICK_RUN
            && self.slow.load(Ordering::Relaxed)
        {
            self.slow.store(false, Ordering::Relaxed);
        }
    }

    fn trusted(&self) -> bool {
        !self.slow.load(Ordering::Relaxed) && self.quick_run.load(Ordering::Relaxed) >= QUICK_RUN
    }
}

/// Inline calls running now.
static INLINE_NOW: AtomicUsize = AtomicUsize::new(0);
/// Start times (µs since [`epoch`]) of inline calls, by slot; 0 is a free slot.
static STARTS: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_us() -> u64 {
    // +1 so that a call starting at the epoch is not mistaken for a free slot.
    u64::try_from(epoch().elapsed().as_micros()).unwrap_or(u64::MAX - 1) + 1
}

/// Takes an inline slot if the budget allows, returning its index.
fn claim() -> Option<usize> {
    let budget = worker_threads() - 1;
    let mut now = INLINE_NOW.load(Ordering::Relaxed);
    loop {
        if now >= budget {
            return None;
        }
        // SeqCst: the watchdog's park check pairs with this (see `watch`).
        match INLINE_NOW.compare_exchange_weak(now, now + 1, Ordering::SeqCst, Ordering::Relaxed) {
            Ok(_) => break,
            Err(seen) => now = seen,
        }
    }
    let start = now_us();
    for (i, slot) in STARTS.iter().enumerate() {
        if slot
            .compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            watchdog();
            return Some(i);
        }
    }
    // More CPUs than slots: no inline call beyond the table.
    INLINE_NOW.fetch_sub(1, Ordering::AcqRel);
    None
}

/// Gives the slot back when the call ends, however it ends.
struct Claimed(usize);

impl Drop for Claimed {
    fn drop(&mut self) {
        STARTS[self.0].store(0, Ordering::Release);
        INLINE_NOW.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether the watchdog is parked (set by it, after a quiet spell with nothing inline).
static PARKED: AtomicBool = AtomicBool::new(false);
/// Inline calls ever claimed: the watchdog parks once this stops moving.
static CLAIMS: AtomicU64 = AtomicU64::new(0);

/// Starts the watchdog on first use, and wakes it if it parked. Waking it is a syscall, so
/// it only parks after a quiet spell rather than between two calls.
fn watchdog() {
    static THREAD: OnceLock<Option<std::thread::Thread>> = OnceLock::new();
    CLAIMS.fetch_add(1, Ordering::Relaxed);
    let thread = THREAD.get_or_init(|| {
        std::thread::Builder::new()
            .name("oxmcp-inline-watch".into())
            .spawn(watch)
            .ok()
            .map(|handle| handle.thread().clone())
        // Without a watchdog, inline calls still run; a slow one is then noticed when it
        // returns.
    });
    if PARKED.load(Ordering::SeqCst)
        && let Some(t) = thread
    {
        PARKED.store(false, Ordering::SeqCst);
        t.unpark();
    }
}

fn watch() {
    crate::runtime::leave_signals_to_python();
    // The start time of the call already reported, so a long call is reported once.
    let mut reported = [0u64; 64];
    let (mut claims, mut quiet) = (0u64, 0u32);
    loop {
        std::thread::sleep(SLOW);
        let seen = CLAIMS.load(Ordering::Relaxed);
        if seen == claims && INLINE_NOW.load(Ordering::SeqCst) == 0 {
            quiet += 1;
        } else {
            (claims, quiet) = (seen, 0);
        }
        if quiet >= 100 {
            // A claim made after this store sees the flag and unparks us; one made before
            // it is seen in INLINE_NOW here (both sides use SeqCst).
            PARKED.store(true, Ordering::SeqCst);
            if INLINE_NOW.load(Ordering::SeqCst) == 0 {
                std::thread::park();
            }
            PARKED.store(false, Ordering::SeqCst);
            quiet = 0;
            continue;
        }
        let limit = now_us().saturating_sub(u64::try_from(SLOW.as_micros()).unwrap_or(0));
        let mut stuck = false;
        for (slot, seen) in STARTS.iter().zip(reported.iter_mut()) {
            let start = slot.load(Ordering::Acquire);
            if start != 0 && start <= limit && *seen != start {
                *seen = start;
                stuck = true;
            }
        }
        if stuck {
            // From a thread outside the runtime a spawn goes to the shared queue and unparks
            // an idle worker, which then steals the stuck worker's queued tasks.
            crate::runtime::runtime().spawn(async {});
        }
    }
}

thread_local! {
    /// Whether this thread is one of the runtime's (set at thread start).
    static RUNTIME_THREAD: Cell<bool> = const { Cell::new(false) };
    /// Whether a handler is running inline on this thread right now.
    static INLINE_HERE: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as running a handler inline, until dropped (however the call ends).
struct InlineHere;

impl InlineHere {
    fn enter() -> InlineHere {
        INLINE_HERE.set(true);
        InlineHere
    }
}

impl Drop for InlineHere {
    fn drop(&mut self) {
        INLINE_HERE.set(false);
    }
}

/// Marks the calling thread as one of the runtime's (its `on_thread_start`).
pub fn runtime_thread_started() {
    RUNTIME_THREAD.set(true);
}

/// Whether the caller is a handler running inline on a worker. A task it spawns on that
/// worker would wait in the worker's LIFO slot, which no other worker can steal, until the
/// handler returns; so a handler that waits for such a task (say an oxmcp client used with
/// `asyncio.run` inside a `def` tool) would wait for ever. See [`crate::runtime::spawn`].
pub fn inline_here() -> bool {
    INLINE_HERE.get()
}

/// Runs the blocking `call` (a `def` handler, GIL taken inside) for the calling task.
pub async fn run_def<R: Send + 'static>(
    speed: &Speed,
    call: impl FnOnce() -> R + Send + 'static,
) -> Option<R> {
    match mode() {
        Mode::Pool => return tokio::task::spawn_blocking(call).await.ok(),
        Mode::InPlace => return Some(tokio::task::block_in_place(call)),
        Mode::Inline => {}
    }
    // Only the runtime's own threads can hand work off as described. Elsewhere (a session
    // hosted on an asyncio loop, whose thread must not be blocked) the call goes to the pool.
    if !RUNTIME_THREAD.get() {
        return tokio::task::spawn_blocking(call).await.ok();
    }
    let slot = if speed.slow.load(Ordering::Relaxed) {
        None
    } else {
        claim()
    };
    let started = Instant::now();
    let out = match slot {
        Some(slot) => {
            let _claimed = Claimed(slot);
            if !speed.trusted() {
                tokio::spawn(async {});
            }
            let _here = InlineHere::enter();
            call()
        }
        None => tokio::task::block_in_place(call),
    };
    speed.record(started.elapsed());
    Some(out)
}
