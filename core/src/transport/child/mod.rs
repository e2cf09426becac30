//! The client side of stdio: a server running as a child process.
//!
//! The child is started without a shell (argv is passed verbatim), in its own process group
//! (so `npx`/`uvx` wrappers and their children are signalled together), with
//! `PR_SET_PDEATHSIG` (so it dies if the host dies), and from a dedicated long-lived thread
//! (the death signal follows the *thread* that forked, so a worker thread that might exit must
//! not be the parent). Its stderr is always drained into a bounded ring, so a chatty server can
//! never block on a full pipe, and the tail is attached to the error when it dies.
//!
//! Shutdown follows the spec's ladder: close stdin, wait, SIGTERM to the group, wait, SIGKILL
//! to the group, reap. The ladder starts as soon as the session's `Close` arrives, even when
//! the child has stopped reading and a write to it can never finish. A server that exits on its
//! own is reaped and its group cleared too; a server that dies mid-call fails the pending calls
//! at once with its exit status and stderr. A [`ChildMonitor`] tells the host how the child
//! ended (a clean exit, or the signal that took it).

// This file holds the transport and its link; the parts live beside it:
// - `spawn`: the command, its environment, and the fork from the spawner thread;
// - `supervise`: the watch over a linked child, up to its last `Closed`;
// - `shutdown`: the ladder and the signals to the process group;
// - `before_kill`: a command the ladder runs before SIGKILL (a container's `stop`);
// - `stdin` and `stderr`: the writer to the child, and the ring its stderr drains into;
// - `hosted`: a child whose stdout a host's event loop reads.
mod before_kill;
mod hosted;
mod shutdown;
mod spawn;
mod stderr;
mod stdin;
mod supervise;

use std::{
    process::ExitStatus,
    sync::{Arc, OnceLock},
};

use tokio::{
    process::{Child, ChildStdin, ChildStdout},
    sync::mpsc,
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

pub use self::{
    before_kill::{BeforeKill, DEFAULT_BEFORE_KILL_TIMEOUT},
    shutdown::ShutdownTimeouts,
    spawn::{ChildCommand, DEFAULT_INHERITED_ENV, EnvPolicy},
    stderr::StderrHandle,
};
use self::{
    shutdown::kill_group,
    stderr::StderrRing,
    supervise::{Reading, forward_frames},
};
use super::{Inbound, Link, OUTBOUND_QUEUE, Outbound, Transport, stdio::read_frames};
use crate::{Error, embed::Spawner};

/// A running server process, not yet handed to a session.
#[derive(Debug)]
pub struct ChildTransport {
    /// Taken by `into_link`; still here means the transport was dropped unused.
    parts: Option<Parts>,
    pid: u32,
    stderr: Arc<StderrRing>,
    status: Arc<OnceLock<ExitStatus>>,
    /// Set by [`ChildTransport::hosted`]: a host loop reads stdout and runs the writer.
    hosted: Option<hosted::HostedInput>,
}

/// The pieces of a spawned child that its link takes over.
#[derive(Debug)]
struct Parts {
    command: String,
    child: Child,
    stdin: ChildStdin,
    /// Taken by [`ChildTransport::hosted`].
    stdout: Option<ChildStdout>,
    stderr_drain: JoinHandle<()>,
    max_message_bytes: usize,
    shutdown: ShutdownTimeouts,
    before_kill: Option<before_kill::PreparedBeforeKill>,
}

impl ChildTransport {
    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// A handle to the child's captured stderr.
    pub fn stderr(&self) -> StderrHandle {
        StderrHandle(self.stderr.clone())
    }

    /// A handle that reports how the child ended, once it has been reaped.
    pub fn monitor(&self) -> ChildMonitor {
        ChildMonitor {
            pid: self.pid,
            status: self.status.clone(),
        }
    }
}

/// Watches a child from outside its session: its pid and, once reaped, its exit status.
///
/// The status is recorded before the transport reports `Closed`, so it is known by the time
/// a session over the transport has closed or has failed its pending requests. Hosts use it
/// to tell a clean exit from a ladder that had to signal (and which signal it took).
#[derive(Clone, Debug)]
pub struct ChildMonitor {
    pid: u32,
    status: Arc<OnceLock<ExitStatus>>,
}

impl ChildMonitor {
    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// How the child ended; `None` until it has been reaped (or if it was never linked, or
    /// waiting on it failed).
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.status.get().copied()
    }
}

impl Transport for ChildTransport {
    fn into_link(mut self) -> Link {
        let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let Some(parts) = self.parts.take() else {
            let _ = in_tx.try_send(Inbound::Closed(Some(Error::closed(
                "child transport already used",
            ))));
            return Link {
                inbound: in_rx,
                outbound: out_channel().0,
            };
        };
        if let Some(hosted) = self.hosted.take() {
            return hosted::link(&self, parts, hosted);
        }
        let (wire_tx, wire_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let stop_reading = CancellationToken::new();
        let stdout_eof = CancellationToken::new();

        // stdout → frames. Frames go through `wire` so the supervisor can hold back the final
        // `Closed` until every frame the child wrote has been delivered.
        let mut parts = parts;
        let reader = match parts.stdout.take() {
            Some(stdout) => Spawner::Tokio.spawn(read_frames(
                stdout,
                parts.max_message_bytes,
                wire_tx,
                stop_reading.clone(),
            )),
            None => Spawner::Tokio.spawn(async {}),
        };
        tokio::spawn(forward_frames(wire_rx, in_tx.clone(), stdout_eof.clone()));
        self.link_supervised(
            parts,
            &Spawner::Tokio,
            Reading {
                reader: Some(reader),
                stop_reading,
                stdout_eof,
            },
            (in_tx, in_rx),
        )
    }
}

fn out_channel() -> (mpsc::Sender<Outbound>, mpsc::Receiver<Outbound>) {
    mpsc::channel(OUTBOUND_QUEUE)
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        // Dropped without being linked (a setup that failed, say): take the group down.
        if self.parts.is_some() {
            kill_group(self.pid as libc::pid_t, libc::SIGKILL);
        }
    }
}
