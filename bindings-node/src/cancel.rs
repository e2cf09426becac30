//! Cancellation across the boundary, both ways.
//!
//! JavaScript → Rust: `callTool(..., {signal})` creates a [`Cancellation`] and calls
//! `cancel()` when the signal aborts; the core drops the request and sends
//! `notifications/cancelled`. Rust → JavaScript: a handler's context waits on
//! [`Cancellation::wait`], which resolves `true` when the peer cancels (the JavaScript layer
//! then aborts the handler's `AbortSignal`) and `false` once the call is over, so no native
//! promise outlives the call and keeps Node alive.

use napi_derive::napi;
use tokio_util::sync::CancellationToken;

/// A cancellation token plus the end of the call it belongs to.
#[napi]
#[derive(Clone, Default)]
pub struct Cancellation {
    pub(crate) token: CancellationToken,
    pub(crate) finished: CancellationToken,
}

#[napi]
impl Cancellation {
    /// A fresh token (for a request JavaScript may abort).
    #[napi(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels: the request is dropped and the peer told.
    #[napi]
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Whether it was cancelled.
    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Resolves `true` on cancellation, `false` when the call finished first.
    #[napi]
    pub async fn wait(&self) -> bool {
        let (token, finished) = (self.token.clone(), self.finished.clone());
        tokio::select! {
            biased;
            _ = token.cancelled() => true,
            _ = finished.cancelled() => false,
        }
    }
}

impl Cancellation {
    /// A handler call's cancellation, fired by `token` (the core's) and ended by the guard.
    pub(crate) fn for_call(token: CancellationToken) -> (Self, FinishGuard) {
        let finished = CancellationToken::new();
        (
            Cancellation {
                token,
                finished: finished.clone(),
            },
            FinishGuard(finished),
        )
    }

    /// Runs `fut` unless the call ends first (then fails with `cancelled`): a context method
    /// must not outlive the handler call it belongs to (in a stateless round the core drops the
    /// handler when it has asked its questions, and the method would otherwise wait forever).
    pub(crate) async fn bounded<T>(
        &self,
        fut: impl std::future::Future<Output = napi::Result<T>>,
    ) -> napi::Result<T> {
        let finished = self.finished.clone();
        tokio::select! {
            out = fut => out,
            _ = finished.cancelled() => Err(crate::error::cancelled()),
        }
    }
}

/// Marks the call finished when dropped (handler returned, failed, or its future was dropped).
pub(crate) struct FinishGuard(CancellationToken);

impl Drop for FinishGuard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
