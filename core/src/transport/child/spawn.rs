//! Starting a server process: the command (argv verbatim, never a shell), the environment
//! it inherits, and the fork itself. The child gets its own process group and
//! `PR_SET_PDEATHSIG`, and is forked from one long-lived thread, because the death signal
//! follows the thread that forked and runtime threads come and go.

use std::{
    ffi::{OsStr, OsString},
    io,
    path::PathBuf,
    process::Stdio,
    sync::{Arc, OnceLock, mpsc as std_mpsc},
};

use tokio::{
    process::{Child, Command},
    sync::oneshot,
};

use super::{
    ChildTransport, Parts, ShutdownTimeouts,
    before_kill::{BeforeKill, PreparedBeforeKill},
    stderr::{StderrRing, drain_stderr},
};
use crate::{Error, jsonrpc::Limits};

/// Environment variables a child inherits by default, as the official SDKs do. Everything else
/// must be passed explicitly, so host secrets do not leak into every server.
pub const DEFAULT_INHERITED_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// What the child's environment is built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvPolicy {
    /// The whole host environment.
    Inherit,
    /// Only these host variables (values starting with `()` are dropped, as exported shell
    /// functions are an injection vector).
    Allowlist(Vec<String>),
}

impl Default for EnvPolicy {
    fn default() -> Self {
        EnvPolicy::Allowlist(
            DEFAULT_INHERITED_ENV
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        )
    }
}

/// How to start a server process.
#[derive(Clone, Debug)]
pub struct ChildCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    env_policy: EnvPolicy,
    cwd: Option<PathBuf>,
    max_message_bytes: usize,
    stderr_capacity: usize,
    shutdown: ShutdownTimeouts,
    before_kill: Option<BeforeKill>,
}

impl ChildCommand {
    /// Runs `program` (looked up on `PATH` if it has no slash). Never through a shell.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        ChildCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            env_policy: EnvPolicy::default(),
            cwd: None,
            max_message_bytes: Limits::CLIENT.max_message_bytes,
            stderr_capacity: 1 << 20,
            shutdown: ShutdownTimeouts::default(),
            before_kill: None,
        }
    }

    /// Adds one argument, passed verbatim.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
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

    /// Sets one environment variable for the child (on top of the inherited ones).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Chooses which host variables the child inherits.
    pub fn env_policy(mut self, policy: EnvPolicy) -> Self {
        self.env_policy = policy;
        self
    }

    /// Sets the working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets the inbound message cap (default 16 MiB).
    pub fn max_message_bytes(mut self, max: usize) -> Self {
        self.max_message_bytes = max;
        self
    }

    /// Sets how much of the child's stderr is kept (default 1 MiB).
    pub fn stderr_capacity(mut self, bytes: usize) -> Self {
        self.stderr_capacity = bytes.max(1);
        self
    }

    /// Sets the shutdown ladder's waits.
    pub fn shutdown_timeouts(mut self, timeouts: ShutdownTimeouts) -> Self {
        self.shutdown = timeouts;
        self
    }

    /// A command the shutdown ladder runs, with this child's environment, when the child is
    /// still there after SIGTERM and its wait: before SIGKILL, for a child that fronts
    /// something SIGKILL would not reach (a container, which `docker stop` ends).
    pub fn before_kill(mut self, command: BeforeKill) -> Self {
        self.before_kill = Some(command);
        self
    }

    /// The program as given, for messages.
    pub fn display(&self) -> String {
        let mut s = self.program.to_string_lossy().into_owned();
        for a in &self.args {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }

    /// Starts the process.
    pub async fn spawn(self) -> Result<ChildTransport, Error> {
        ChildTransport::spawn(self).await
    }

    fn build(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        self.environment(&mut cmd);
        // SAFETY: the closure runs in the forked child before exec and only makes
        // async-signal-safe calls (prctl, getppid, kill, getpid).
        let parent = std::process::id() as libc::pid_t;
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died between fork and prctl: then nobody will signal us.
                if libc::getppid() != parent {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
                Ok(())
            });
        }
        cmd
    }

    /// Applies the child's environment (the policy, the extra variables, the directory).
    fn environment(&self, cmd: &mut Command) {
        if let EnvPolicy::Allowlist(keys) = &self.env_policy {
            cmd.env_clear();
            for key in keys {
                if let Some(value) = std::env::var_os(key)
                    && !value.to_string_lossy().starts_with("()")
                {
                    cmd.env(key, value);
                }
            }
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
    }

    /// The `before_kill` command, in the environment the child gets now: the host's variables
    /// are read at spawn, not when (much later) the ladder runs.
    fn prepare_before_kill(&self) -> Option<PreparedBeforeKill> {
        let hook = self.before_kill.as_ref()?;
        let mut command = hook.command();
        self.environment(&mut command);
        Some(PreparedBeforeKill {
            command,
            display: hook.display(),
            timeout: hook.timeout_value(),
        })
    }
}

impl ChildTransport {
    /// Starts `command`. Fails with [`Error::Spawn`] naming the command if it cannot start.
    pub async fn spawn(command: ChildCommand) -> Result<ChildTransport, Error> {
        let display = command.display();
        let program = command.program.to_string_lossy().into_owned();
        let before_kill = command.prepare_before_kill();
        let mut child = spawn_from_spawner_thread(command.build())
            .await
            .map_err(|source| Error::Spawn {
                command: program.clone(),
                source: Arc::new(source),
            })?;
        let missing = |what: &str| Error::Spawn {
            command: program.clone(),
            source: Arc::new(io::Error::other(format!("child {what} was not captured"))),
        };
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let stderr_pipe = child.stderr.take().ok_or_else(|| missing("stderr"))?;
        let pid = child.id().ok_or_else(|| missing("pid"))?;
        let stderr = Arc::new(StderrRing::new(command.stderr_capacity));
        let stderr_drain = tokio::spawn(drain_stderr(stderr_pipe, stderr.clone(), display.clone()));
        Ok(ChildTransport {
            parts: Some(Parts {
                command: display,
                child,
                stdin,
                stdout: Some(stdout),
                stderr_drain,
                max_message_bytes: command.max_message_bytes,
                shutdown: command.shutdown,
                before_kill,
            }),
            pid,
            stderr,
            status: Arc::new(OnceLock::new()),
            hosted: None,
        })
    }
}

type SpawnJob = Box<dyn FnOnce() + Send>;

/// Forks every child from one thread that lives as long as the process, because
/// `PR_SET_PDEATHSIG` fires when the forking *thread* exits, and runtime threads come and go.
///
/// The thread is per *process*: a process forked from one that already spawned children (a
/// Python program calling `os.fork()`) inherits the sender but not the thread, so the sender
/// is kept with the pid that started its thread, and a new process starts its own.
async fn spawn_from_spawner_thread(mut cmd: Command) -> io::Result<Child> {
    static SPAWNER: std::sync::Mutex<Option<(u32, std_mpsc::Sender<SpawnJob>)>> =
        std::sync::Mutex::new(None);
    let spawner = {
        let mut slot = SPAWNER.lock().unwrap_or_else(|e| e.into_inner());
        let pid = std::process::id();
        match slot.as_ref() {
            Some((owner, tx)) if *owner == pid => tx.clone(),
            _ => {
                let (tx, rx) = std_mpsc::channel::<SpawnJob>();
                std::thread::Builder::new()
                    .name("oxmcp-spawner".into())
                    .spawn(move || {
                        while let Ok(job) = rx.recv() {
                            job();
                        }
                    })
                    .map_err(|e| {
                        io::Error::other(format!("cannot start the spawner thread: {e}"))
                    })?;
                *slot = Some((pid, tx.clone()));
                tx
            }
        }
    };
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = oneshot::channel();
    let job: SpawnJob = Box::new(move || {
        // Register the child with the caller's runtime (its SIGCHLD reaper and I/O driver).
        let _entered = handle.enter();
        let _ = tx.send(cmd.spawn());
    });
    spawner
        .send(job)
        .map_err(|_| io::Error::other("the spawner thread is not running"))?;
    rx.await
        .map_err(|_| io::Error::other("the spawner thread dropped the request"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_joins_argv_without_quoting() {
        let c = ChildCommand::new("npx").args(["-y", "server x"]);
        assert_eq!(c.display(), "npx -y server x");
    }
}
