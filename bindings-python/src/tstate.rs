//! One Python thread state per runtime thread, kept for the thread's life.
//!
//! A thread unknown to Python that takes the GIL (`PyGILState_Ensure`) gets a fresh
//! `PyThreadState`, and giving the GIL back (`PyGILState_Release`) destroys it again when the
//! thread's count drops to zero. On a tokio worker that enters Python once or twice per
//! request, that allocation, registration and teardown was a large share of each call.
//!
//! [`keep`] makes the first entry of a thread create the state, then hands the GIL back with
//! `PyEval_SaveThread`, which keeps the state and leaves the thread's gilstate count at one.
//! Every later `Python::attach` on the thread then only takes and releases the GIL. The
//! state is destroyed when the thread ends, unless the interpreter has begun to exit: a
//! thread that asks for the GIL then is killed by CPython, which aborts a Rust thread, so the
//! state is left to the interpreter's own teardown instead.

use pyo3::ffi;

/// What a thread kept: the gilstate token of its first `PyGILState_Ensure` and the state
/// `PyEval_SaveThread` parked.
struct Kept {
    gilstate: ffi::PyGILState_STATE,
    saved: *mut ffi::PyThreadState,
}

impl Drop for Kept {
    fn drop(&mut self) {
        let saved = self.saved;
        if saved.is_null() {
            return;
        }
        // The runtime's exit guard decides whether Python may still be entered; if not, the
        // interpreter reclaims the state itself when it finalizes.
        crate::runtime::enter_at_thread_end(|| {
            // SAFETY: `saved` is this thread's own state, parked by `PyEval_SaveThread` in
            // `keep` and never restored since (every attach in between went through
            // `PyGILState_Ensure`/`Release`, which leave it parked again). Restoring it takes
            // the GIL; releasing the first `Ensure` then drops the count to zero and deletes it.
            unsafe {
                ffi::PyEval_RestoreThread(saved);
                ffi::PyGILState_Release(self.gilstate);
            }
        });
    }
}

thread_local! {
    static KEPT: std::cell::OnceCell<Kept> = const { std::cell::OnceCell::new() };
}

/// Switched off by `OXMCP_PERSISTENT_TSTATE=0`, to compare against the per-call states.
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("OXMCP_PERSISTENT_TSTATE").as_deref() != Ok("0"))
}

/// Gives the calling thread a Python thread state that lasts until the thread ends, unless
/// it has one already (the main thread, a thread Python started, one kept earlier). Must be
/// called without the GIL, by a caller that [`crate::runtime::attach`] allowed in.
pub fn keep() {
    if !enabled() {
        return;
    }
    let _ = KEPT.try_with(|kept| {
        if kept.get().is_some() {
            return;
        }
        // SAFETY: asking whether this thread has a state needs no GIL.
        if !unsafe { ffi::PyGILState_GetThisThreadState() }.is_null() {
            return;
        }
        // SAFETY: the thread has no state and does not hold the GIL; `Ensure` creates the
        // state and takes the GIL, `SaveThread` releases the GIL and returns that state.
        let (gilstate, saved) = unsafe {
            let gilstate = ffi::PyGILState_Ensure();
            (gilstate, ffi::PyEval_SaveThread())
        };
        let _ = kept.set(Kept { gilstate, saved });
    });
}
