//! The end of a child, as the spec's ladder has it: close stdin, wait, SIGTERM to the
//! process group, wait, SIGKILL to the group, reap. Signals go to the whole group, so
//! launcher wrappers (`npx`, `uvx`) and the servers they start end together. A child that
//! fronts something outside its group (a container) can bring a command that ends it, run
//! before SIGKILL (`before_kill`).

use std::{process::ExitStatus, time::Duration};

use tokio::process::Child;

use super::before_kill::PreparedBeforeKill;

/// After the `before_kill` command, how long the child gets to exit on its own before SIGKILL.
/// A CLI whose container was just stopped exits with the container's status and finishes its
/// own clean-up (`--rm`) when it is not killed in the middle of it.
const EXIT_AFTER_BEFORE_KILL: Duration = Duration::from_secs(1);

/// The waits of the shutdown ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShutdownTimeouts {
    /// After closing stdin, before SIGTERM.
    pub after_stdin_close: Duration,
    /// After SIGTERM, before SIGKILL.
    pub after_sigterm: Duration,
}

impl Default for ShutdownTimeouts {
    fn default() -> Self {
        ShutdownTimeouts {
            after_stdin_close: Duration::from_secs(2),
            after_sigterm: Duration::from_secs(2),
        }
    }
}

/// Close stdin (the writer flushes and closes it) → wait → SIGTERM(group) → wait →
/// [`before_kill` → a moment →] SIGKILL(group) → reap. The first wait counts from the
/// session's `Close`, flush included.
pub(super) async fn ladder(
    child: &mut Child,
    pgid: libc::pid_t,
    waits: ShutdownTimeouts,
    before_kill: Option<PreparedBeforeKill>,
) -> Option<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(waits.after_stdin_close, child.wait()).await {
        return status.ok();
    }
    kill_group(pgid, libc::SIGTERM);
    let deadline = tokio::time::Instant::now() + waits.after_sigterm;
    if let Ok(status) = tokio::time::timeout_at(deadline, child.wait()).await {
        // The rest of the group got the same SIGTERM and gets the same time to act on it: a
        // launcher (`npx`, `uvx`) often exits at once while the real server is still cleaning
        // up. Whatever is left at the deadline is killed with the group.
        while group_alive(pgid) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        return status.ok();
    }
    if let Some(command) = before_kill {
        command.run().await;
        if let Ok(status) = tokio::time::timeout(EXIT_AFTER_BEFORE_KILL, child.wait()).await {
            // Whatever is left of the group is killed with it by the supervisor's guard.
            return status.ok();
        }
    }
    kill_group(pgid, libc::SIGKILL);
    child.wait().await.ok()
}

/// Whether any process is left in the group. The group id cannot be handed to a new group
/// while a member lives, so this never asks about a stranger's group.
fn group_alive(pgid: libc::pid_t) -> bool {
    // SAFETY: killpg with signal 0 only checks for existence and permission.
    pgid > 1 && unsafe { libc::killpg(pgid, 0) } == 0
}

/// Sends `signal` to the whole process group (nothing for a pid that cannot be a group).
pub(super) fn kill_group(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid > 1 {
        // SAFETY: killpg has no memory-safety preconditions; ESRCH (no such group) is fine.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}
