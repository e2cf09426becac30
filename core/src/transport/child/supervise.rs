//! Watching a linked child until it is gone: the writer to its stdin and the reader of its
//! stdout run beside a supervisor, which notices the first of a close the session asked for,
//! an exit, or a broken pipe; runs the shutdown ladder when it is ours to run; records the
//! exit status; delivers every frame the child wrote; and only then reports `Closed`, with
//! the status and the stderr tail when the child died on its own.

use std::{
    io,
    process::ExitStatus,
    sync::{Arc, OnceLock},
    time::Duration,
};

use tokio::{process::Child, sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use super::{
    ChildTransport, Parts, ShutdownTimeouts,
    before_kill::PreparedBeforeKill,
    out_channel,
    shutdown::{kill_group, ladder},
    stderr::StderrRing,
    stdin::write_stdin,
};
use crate::{
    Error,
    embed::{Join, Spawner},
    transport::{Inbound, Link},
};

/// How stdout is being read, for the supervisor.
pub(super) struct Reading {
    /// The reader task, when the transport reads stdout itself (a host loop's feeder is
    /// stopped through `stop_reading` instead).
    pub(super) reader: Option<Join>,
    pub(super) stop_reading: CancellationToken,
    pub(super) stdout_eof: CancellationToken,
}

impl ChildTransport {
    /// Starts the writer (on `writer_on`) and the supervisor (on tokio), and returns the
    /// session's link: `inbound` is the channel stdout's frames go to, and what the session
    /// sends goes to the writer.
    pub(super) fn link_supervised(
        &self,
        parts: Parts,
        writer_on: &Spawner,
        reading: Reading,
        (inbound, inbound_rx): (mpsc::Sender<Inbound>, mpsc::Receiver<Inbound>),
    ) -> Link {
        let (outbound_tx, outbound) = out_channel();
        let Parts {
            command,
            child,
            stdin,
            stdout: _,
            stderr_drain,
            max_message_bytes: _,
            shutdown,
            before_kill,
        } = parts;
        let close_requested = CancellationToken::new();
        let write_failed = CancellationToken::new();
        // frames → stdin. The writer reports `Close` (or a failed write) to the supervisor,
        // which speaks last on the inbound channel.
        let writer = writer_on.spawn(write_stdin(
            stdin,
            outbound,
            close_requested.clone(),
            write_failed.clone(),
        ));
        tokio::spawn(supervise(Supervised {
            command,
            child,
            pgid: self.pid as libc::pid_t,
            stderr: self.stderr.clone(),
            status: self.status.clone(),
            stderr_drain,
            shutdown,
            before_kill,
            reader: reading.reader,
            writer,
            stop_reading: reading.stop_reading,
            stdout_eof: reading.stdout_eof,
            close_requested,
            write_failed,
            inbound,
        }));
        Link {
            inbound: inbound_rx,
            outbound: outbound_tx,
        }
    }
}

/// Passes frames on, and marks stdout finished when the reader stops.
pub(super) async fn forward_frames(
    mut wire: mpsc::Receiver<Inbound>,
    inbound: mpsc::Sender<Inbound>,
    stdout_eof: CancellationToken,
) {
    while let Some(item) = wire.recv().await {
        match item {
            Inbound::Closed(_) => break,
            other => {
                if inbound.send(other).await.is_err() {
                    break;
                }
            }
        }
    }
    stdout_eof.cancel();
}

/// What the supervisor of one child holds.
struct Supervised {
    command: String,
    child: Child,
    pgid: libc::pid_t,
    stderr: Arc<StderrRing>,
    status: Arc<OnceLock<ExitStatus>>,
    stderr_drain: JoinHandle<()>,
    shutdown: ShutdownTimeouts,
    /// Taken by the ladder, which runs at most once.
    before_kill: Option<PreparedBeforeKill>,
    reader: Option<Join>,
    writer: Join,
    stop_reading: CancellationToken,
    stdout_eof: CancellationToken,
    close_requested: CancellationToken,
    write_failed: CancellationToken,
    inbound: mpsc::Sender<Inbound>,
}

/// Kills the whole group if the supervisor is dropped (the runtime shutting down, say).
struct GroupGuard(libc::pid_t);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0, libc::SIGKILL);
    }
}

async fn supervise(mut s: Supervised) {
    let guard = GroupGuard(s.pgid);
    enum Trigger {
        Exited(io::Result<ExitStatus>),
        CloseRequested,
        PipeBroken,
    }
    let trigger = tokio::select! {
        // A close the session asked for is ours, even if the child exited at the same moment.
        biased;
        _ = s.close_requested.cancelled() => Trigger::CloseRequested,
        status = s.child.wait() => Trigger::Exited(status),
        _ = s.stdout_eof.cancelled() => Trigger::PipeBroken,
        _ = s.write_failed.cancelled() => Trigger::PipeBroken,
    };
    let (status, by_us) = match trigger {
        Trigger::Exited(status) => (status.ok(), false),
        Trigger::CloseRequested => {
            let before_kill = s.before_kill.take();
            let status = ladder(&mut s.child, s.pgid, s.shutdown, before_kill).await;
            (status, true)
        }
        Trigger::PipeBroken => {
            // Give a server that closed its pipes on its way out a moment to exit by itself.
            match tokio::time::timeout(Duration::from_millis(200), s.child.wait()).await {
                Ok(status) => (status.ok(), false),
                Err(_) => {
                    let before_kill = s.before_kill.take();
                    let status = ladder(&mut s.child, s.pgid, s.shutdown, before_kill).await;
                    (status, false)
                }
            }
        }
    };
    if let Some(status) = status {
        let _ = s.status.set(status);
    }
    // The leader is reaped; anything left in its group (a grandchild holding stdout, say) goes
    // too.
    drop(guard);

    // Deliver every frame the child wrote before it died, then stop reading.
    if tokio::time::timeout(Duration::from_secs(1), s.stdout_eof.cancelled())
        .await
        .is_err()
    {
        s.stop_reading.cancel();
        if let Some(reader) = &s.reader {
            reader.abort();
        }
    }
    // Likewise for stderr. A process that left the group (a grandchild that called `setsid`)
    // can hold the pipe open for as long as it lives: stop reading rather than keep our end
    // (and the task) alive with it.
    if tokio::time::timeout(Duration::from_millis(500), &mut s.stderr_drain)
        .await
        .is_err()
    {
        s.stderr_drain.abort();
    }

    let reason = if by_us {
        None
    } else {
        let how = status.map_or_else(|| "an unknown status".to_owned(), describe_status);
        Some(Error::ConnectionClosed {
            reason: format!("server process `{}` exited with {how}", s.command),
            stderr: Some(s.stderr.tail(8 * 1024)),
        })
    };
    let _ = s.inbound.send(Inbound::Closed(reason)).await;
    // The session answers a spontaneous close with `Close` and waits for one more `Closed`;
    // a writer that already failed will never see that `Close`.
    tokio::select! {
        _ = s.close_requested.cancelled() => {}
        _ = s.write_failed.cancelled() => {}
    }
    let _ = s.inbound.send(Inbound::Closed(None)).await;
    // The child is reaped and its group killed: a write still pending could only reach a
    // process outside the group that inherited stdin. Release our end.
    s.writer.abort();
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => status.to_string(),
    }
}
