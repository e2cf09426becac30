//! Outgoing requests: the table of requests awaiting a response, and the options and guard
//! that make every request resolve exactly once.
//!
//! A request resolves by its response, by its timeout, by the caller's cancellation token, by
//! the connection closing, or by the caller dropping the future. In every case but the
//! response, the entry is removed and (except for `initialize`, which must never be cancelled)
//! `notifications/cancelled` is sent, so the peer can stop working on it.

use std::{
    collections::{HashMap, VecDeque},
    fmt,
    sync::Arc,
    time::Duration,
};

use serde_json::value::RawValue;
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use super::Session;
use crate::{
    Error,
    jsonrpc::RequestId,
    protocol::{ProgressNotificationParams, methods},
    transport::Route,
};

/// Receives `notifications/progress` for one request.
pub type ProgressCallback = Box<dyn FnMut(ProgressNotificationParams) + Send>;

/// Per-request options. The defaults come from the session's configuration.
pub struct RequestOptions {
    /// Time without a response (or progress, see below) after which the request fails.
    /// `None` uses the session default (60 s).
    pub timeout: Option<Duration>,
    /// Hard cap on the request's total time, progress or not. `None` uses the session
    /// default (10 min).
    pub max_total_timeout: Option<Duration>,
    /// Whether a progress notification restarts the `timeout` clock.
    pub reset_timeout_on_progress: bool,
    /// Called for each progress notification.
    pub on_progress: Option<ProgressCallback>,
    /// Attach a progress token even without a callback, so progress can keep the request
    /// alive.
    pub request_progress: bool,
    /// Cancels the request (and notifies the peer) when fired.
    pub cancel: Option<CancellationToken>,
    /// Where the request belongs (set by a handler's context for nested requests).
    pub route: Route,
    /// The id to send the request with, from [`super::Session::allocate_id`] (for callers
    /// that must know it before the response, like a subscription stream).
    pub id: Option<RequestId>,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            timeout: None,
            max_total_timeout: None,
            reset_timeout_on_progress: true,
            on_progress: None,
            request_progress: false,
            cancel: None,
            route: Route::Unrelated,
            id: None,
        }
    }
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("max_total_timeout", &self.max_total_timeout)
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("on_progress", &self.on_progress.is_some())
            .field("request_progress", &self.request_progress)
            .field("cancel", &self.cancel.is_some())
            .field("route", &self.route)
            .field("id", &self.id)
            .finish()
    }
}

impl RequestOptions {
    /// Options with a specific timeout.
    pub fn with_timeout(timeout: Duration) -> Self {
        RequestOptions {
            timeout: Some(timeout),
            ..Default::default()
        }
    }

    /// Sets a progress callback (which also attaches a progress token).
    pub fn on_progress(
        mut self,
        callback: impl FnMut(ProgressNotificationParams) + Send + 'static,
    ) -> Self {
        self.on_progress = Some(Box::new(callback));
        self
    }

    /// Waits for the response however long it takes (for long-lived requests such as
    /// `subscriptions/listen`).
    pub fn without_timeout() -> Self {
        RequestOptions {
            timeout: Some(Duration::MAX),
            max_total_timeout: Some(Duration::MAX),
            ..Default::default()
        }
    }

    /// Sets a cancellation token.
    pub fn cancel_with(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

pub(crate) type Reply = Result<Box<RawValue>, Error>;

pub(crate) struct Entry {
    pub(crate) reply: oneshot::Sender<Reply>,
    pub(crate) progress: Option<Arc<ProgressInbox>>,
}

/// The `notifications/progress` of one request, from the driver to the request's own loop.
///
/// Every `tools/call` attaches a progress token (progress keeps a long call alive), so this is
/// made per request: a tokio mpsc channel allocates its first block of 32 slots up front
/// (about 5 KB here, past the allocator's fast sizes), where this is one small allocation and
/// its queue grows only if progress comes.
#[derive(Default)]
pub(crate) struct ProgressInbox {
    queue: crate::sync::Mutex<VecDeque<ProgressNotificationParams>>,
    arrived: Notify,
}

impl ProgressInbox {
    pub(crate) fn push(&self, progress: ProgressNotificationParams) {
        self.queue.lock().push_back(progress);
        // A stored permit if nobody waits yet, so a push just before `next` is not missed.
        self.arrived.notify_one();
    }

    pub(crate) fn try_next(&self) -> Option<ProgressNotificationParams> {
        self.queue.lock().pop_front()
    }

    /// The next notification. Dropping this future loses nothing: the queue is looked at
    /// before every wait.
    pub(crate) async fn next(&self) -> ProgressNotificationParams {
        loop {
            if let Some(progress) = self.try_next() {
                return progress;
            }
            self.arrived.notified().await;
        }
    }
}

/// Requests we sent that await a response.
#[derive(Default)]
pub(crate) struct PendingTable {
    /// Keyed by ids this side allocated; aHash, as the in-flight table, since SipHash showed
    /// in the client's profile.
    pub(crate) entries: HashMap<RequestId, Entry, ahash::RandomState>,
    /// Set once the connection has closed; new requests fail with it immediately.
    pub(crate) closed: Option<Error>,
}

/// Removes the pending entry and tells the peer, unless the request completed normally.
pub(crate) struct PendingGuard<'a> {
    pub(crate) session: &'a Session,
    pub(crate) id: RequestId,
    pub(crate) method: &'a str,
    pub(crate) route: Route,
    pub(crate) armed: bool,
}

impl PendingGuard<'_> {
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }

    /// Withdraws the request, telling the peer why.
    pub(crate) fn withdraw(&mut self, reason: &str) {
        if !self.armed {
            return;
        }
        self.armed = false;
        let known = self
            .session
            .inner
            .pending
            .lock()
            .entries
            .remove(&self.id)
            .is_some();
        // The initialize request must never be cancelled (every revision says so), and a
        // request the connection already failed needs no notice.
        if known && self.method != methods::INITIALIZE {
            let params = serde_json::json!({ "requestId": self.id, "reason": reason });
            self.session
                .notify_nowait(methods::CANCELLED, Some(params), self.route.clone());
        }
    }
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.withdraw("request abandoned by caller");
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn step(n: f64) -> ProgressNotificationParams {
        ProgressNotificationParams {
            progress_token: RequestId::Number(1),
            progress: n,
            total: None,
            message: None,
            meta: None,
        }
    }

    #[tokio::test]
    async fn progress_arrives_in_order_whether_pushed_before_or_while_waiting() {
        let inbox = Arc::new(ProgressInbox::default());
        inbox.push(step(1.0));
        inbox.push(step(2.0));
        assert_eq!(inbox.next().await.progress, 1.0);
        let waiter = tokio::spawn({
            let inbox = inbox.clone();
            async move { (inbox.next().await.progress, inbox.next().await.progress) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        inbox.push(step(3.0));
        assert_eq!(waiter.await.unwrap(), (2.0, 3.0));
        assert!(inbox.try_next().is_none());
    }

    #[tokio::test]
    async fn a_wait_dropped_midway_loses_nothing() {
        let inbox = ProgressInbox::default();
        // A wait that is dropped (another select branch won) before the push...
        assert!(
            tokio::time::timeout(Duration::from_millis(10), inbox.next())
                .await
                .is_err()
        );
        inbox.push(step(1.0));
        // ...and one made after the push and dropped unpolled.
        {
            let pending = inbox.next();
            drop(pending);
        }
        inbox.push(step(2.0));
        assert_eq!(inbox.next().await.progress, 1.0);
        assert_eq!(inbox.next().await.progress, 2.0);
        assert!(
            tokio::time::timeout(Duration::from_millis(10), inbox.next())
                .await
                .is_err()
        );
    }
}
