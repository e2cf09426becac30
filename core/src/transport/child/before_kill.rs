//! A command the shutdown ladder runs when SIGTERM was not enough, just before SIGKILL.
//!
//! Some children are only the front of something that outlives them. The `docker run` CLI is
//! the host's child, but the container belongs to the daemon: SIGKILL ends the CLI (it cannot
//! be caught, so it is never passed on) and leaves the container running. A command such as
//! `docker stop -t 2 <name>` ends the real thing. The ladder runs it where it would otherwise
//! go to SIGKILL, waits for it (within its own timeout, so a hung daemon cannot hold the
//! close hostage), gives the child a moment to exit on its own, and only then kills the group.
//!
//! The transport does not know what the command means; whoever builds the [`ChildCommand`]
//! (the host's launch policy) does. The command runs with the child's environment (the same
//! inherited variables, the same extra ones, the same working directory), so it finds the same
//! program and talks to the same daemon. It never goes through a shell.
//!
//! [`ChildCommand`]: super::ChildCommand

use std::{
    ffi::{OsStr, OsString},
    process::Stdio,
    time::Duration,
};

use tokio::process::Command;

/// How long the command may take by default: `docker stop -t 2` needs its 2 s and a round
/// trip to the daemon; past that the daemon is in trouble and the ladder moves on.
pub const DEFAULT_BEFORE_KILL_TIMEOUT: Duration = Duration::from_secs(5);

/// A command the shutdown ladder runs when the child outlived SIGTERM, before SIGKILL (see
/// [`super::ChildCommand::before_kill`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BeforeKill {
    program: OsString,
    args: Vec<OsString>,
    timeout: Duration,
}

impl BeforeKill {
    /// Runs `program` (looked up on the child's `PATH` if it has no slash). Never a shell.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        BeforeKill {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            timeout: DEFAULT_BEFORE_KILL_TIMEOUT,
        }
    }

    /// Adds arguments, passed verbatim.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// How long the ladder waits for the command before it kills it and goes on to SIGKILL
    /// (default [`DEFAULT_BEFORE_KILL_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the ladder waits for it.
    pub(super) fn timeout_value(&self) -> Duration {
        self.timeout
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The process to start, before the child's environment is applied to it. Nothing reads
    /// its stdin or stdout; stderr is kept for the log when it fails.
    pub(super) fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // A command that outlives its timeout is killed, not left behind.
            .kill_on_drop(true);
        cmd
    }
}

/// A [`BeforeKill`] with the child's environment applied, kept until the ladder needs it.
#[derive(Debug)]
pub(super) struct PreparedBeforeKill {
    pub(super) command: Command,
    pub(super) display: String,
    pub(super) timeout: Duration,
}

impl PreparedBeforeKill {
    /// Runs the command to its end or its timeout. Failures are logged, never fatal: the
    /// ladder goes on to SIGKILL either way.
    pub(super) async fn run(mut self) {
        let shown = &self.display;
        tracing::info!(
            target: "oxmcp",
            "the child outlived SIGTERM: running `{shown}` before SIGKILL"
        );
        let hook = match self.command.spawn() {
            Ok(hook) => hook,
            Err(e) => {
                tracing::warn!(target: "oxmcp", "cannot run `{shown}`: {e}");
                return;
            }
        };
        match tokio::time::timeout(self.timeout, hook.wait_with_output()).await {
            Ok(Ok(out)) if out.status.success() => {}
            Ok(Ok(out)) => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let status = out.status;
                tracing::warn!(target: "oxmcp", "`{shown}` failed ({status}): {}", stderr.trim());
            }
            Ok(Err(e)) => tracing::warn!(target: "oxmcp", "`{shown}` failed: {e}"),
            // Dropping the wait killed the command (`kill_on_drop`).
            Err(_) => {
                let after = self.timeout;
                tracing::warn!(target: "oxmcp", "`{shown}` did not finish in {after:?}; killed");
            }
        }
    }
}
