//! Where the engine's own tasks run: on the tokio runtime, or on a host loop.
//!
//! A session spawns its driver, the handlers that have to wait, and a few helpers; a
//! transport spawns its writer. Both take a [`Spawner`], so that a session embedded in a host
//! event loop (see [`super::HostLoop`]) keeps all of that on the host thread, while everything
//! else stays on tokio exactly as before.

use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use futures::{
    FutureExt,
    future::{AbortHandle, Abortable},
};
use tokio::sync::oneshot;

use super::HostLoop;

/// Where spawned tasks run.
#[derive(Clone, Debug, Default)]
pub enum Spawner {
    /// On the current tokio runtime (`tokio::spawn`).
    #[default]
    Tokio,
    /// On a host loop's thread.
    Host(HostLoop),
}

impl Spawner {
    /// Starts `task`; the returned handle completes when it has finished (or was aborted).
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) -> Join {
        match self {
            Spawner::Tokio => Join(Kind::Tokio(tokio::spawn(task))),
            Spawner::Host(host) => {
                let (abort, registration) = AbortHandle::new_pair();
                let (done_tx, done) = oneshot::channel();
                host.spawn(async move {
                    let _ = Abortable::new(task, registration).await;
                    let _ = done_tx.send(());
                });
                Join(Kind::Host { done, abort })
            }
        }
    }

    /// Starts `task` and forgets it (it runs to its end).
    pub fn detach(&self, task: impl Future<Output = ()> + Send + 'static) {
        match self {
            Spawner::Tokio => {
                tokio::spawn(task);
            }
            Spawner::Host(host) => host.spawn(task),
        }
    }

    /// The host loop, if tasks run on one.
    pub fn host(&self) -> Option<&HostLoop> {
        match self {
            Spawner::Tokio => None,
            Spawner::Host(host) => Some(host),
        }
    }

    /// Whether a new task would run on the thread that spawns it, after the spawner returns:
    /// on a host loop, or on a current-thread runtime. The session then polls a handler once
    /// itself before giving it a task (on a multi-threaded runtime a spawned handler may start
    /// on another worker at once, and one that computes before its first await must not hold
    /// up the frames behind it).
    pub fn runs_on_this_thread(&self) -> bool {
        match self {
            Spawner::Host(_) => true,
            Spawner::Tokio => tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread),
        }
    }
}

/// A spawned task: await it to know it has finished; [`Join::abort`] stops it.
#[derive(Debug)]
pub struct Join(Kind);

#[derive(Debug)]
enum Kind {
    Tokio(tokio::task::JoinHandle<()>),
    Host {
        done: oneshot::Receiver<()>,
        abort: AbortHandle,
    },
}

impl Join {
    /// Stops the task at its next await (at once if it is not running).
    pub fn abort(&self) {
        match &self.0 {
            Kind::Tokio(handle) => handle.abort(),
            Kind::Host { abort, .. } => abort.abort(),
        }
    }
}

impl Future for Join {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.0 {
            // A panic or an abort counts as finished, as it does for the callers' old
            // `let _ = handle.await`.
            Kind::Tokio(handle) => handle.poll_unpin(cx).map(|_| ()),
            Kind::Host { done, .. } => done.poll_unpin(cx).map(|_| ()),
        }
    }
}
