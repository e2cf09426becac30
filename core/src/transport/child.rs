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
//! to the group, reap. A server that exits on its own is reaped and its group cleared too; a
//! server that dies mid-call fails the pending calls at once with its exit status and stderr.

use std::{
    collections::VecDeque,
    ffi::{OsStr, OsString},
    io,
    path::PathBuf,
    process::{ExitStatus, Stdio},
    sync::{Arc, OnceLock, mpsc as std_mpsc},
    time::Duration,
};

use tokio::{
    io::AsyncReadExt,
    process::{Child, ChildStdin, ChildStdout, Command},
    sync::{mpsc, oneshot},
};
use tokio_util::sync::CancellationToken;

use super::{
    Inbound, Link, OUTBOUND_QUEUE, Transport,
    stdio::{read_frames, write_frames},
};
use crate::{Error, jsonrpc::Limits, sync::Mutex};

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
        EnvPolicy::Allowlist(DEFAULT_INHERITED_ENV.iter().map(|s| (*s).to_owned()).collect())
    }
}

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
        ShutdownTimeouts { after_stdin_close: Duration::from_secs(2), after_sigterm: Duration::from_secs(2) }
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
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets one environment variable for the child (on top of the inherited ones).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), value.as_ref().to_owned()));
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
        if let EnvPolicy::Allowlist(keys) = &self.env_policy {
            cmd.env_clear();
            for key in keys {
                if let Some(value) = std::env::var_os(key) {
                    if !value.to_string_lossy().starts_with("()") {
                        cmd.env(key, value);
                    }
                }
            }
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
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
}

/// A running server process, not yet handed to a session.
#[derive(Debug)]
pub struct ChildTransport {
    /// Taken by `into_link`; still here means the transport was dropped unused.
    parts: Option<Parts>,
    pid: u32,
    stderr: Arc<StderrRing>,
}

#[derive(Debug)]
struct Parts {
    command: String,
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    stderr_done: oneshot::Receiver<()>,
    max_message_bytes: usize,
    shutdown: ShutdownTimeouts,
}

impl ChildTransport {
    /// Starts `command`. Fails with [`Error::Spawn`] naming the command if it cannot start.
    pub async fn spawn(command: ChildCommand) -> Result<ChildTransport, Error> {
        let display = command.display();
        let program = command.program.to_string_lossy().into_owned();
        let mut child = spawn_from_spawner_thread(command.build()).await.map_err(|source| {
            Error::Spawn { command: program.clone(), source: Arc::new(source) }
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
        let (done_tx, stderr_done) = oneshot::channel();
        tokio::spawn(drain_stderr(stderr_pipe, stderr.clone(), display.clone(), done_tx));
        Ok(ChildTransport {
            parts: Some(Parts {
                command: display,
                child,
                stdin,
                stdout,
                stderr_done,
                max_message_bytes: command.max_message_bytes,
                shutdown: command.shutdown,
            }),
            pid,
            stderr,
        })
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// A handle to the child's captured stderr.
    pub fn stderr(&self) -> StderrHandle {
        StderrHandle(self.stderr.clone())
    }
}

impl Transport for ChildTransport {
    fn into_link(mut self) -> Link {
        let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let Some(parts) = self.parts.take() else {
            let _ = in_tx.try_send(Inbound::Closed(Some(Error::closed("child transport already used"))));
            return Link { inbound: in_rx, outbound: out_tx };
        };
        let Parts { command, child, stdin, stdout, stderr_done, max_message_bytes, shutdown } = parts;
        let (wire_tx, wire_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let stop_reading = CancellationToken::new();
        let stdout_eof = CancellationToken::new();
        let close_requested = CancellationToken::new();
        let write_failed = CancellationToken::new();

        // stdout → frames. Frames go through `wire` so the supervisor can hold back the final
        // `Closed` until every frame the child wrote has been delivered.
        let reader = tokio::spawn(read_frames(stdout, max_message_bytes, wire_tx, stop_reading.clone()));
        tokio::spawn(forward_frames(wire_rx, in_tx.clone(), stdout_eof.clone()));

        // frames → stdin. When the session sends Close, the writer closes stdin. Its own
        // `Closed` report goes to a private channel: the supervisor speaks last.
        tokio::spawn({
            let close_requested = close_requested.clone();
            let write_failed = write_failed.clone();
            async move {
                let (done_tx, mut done_rx) = mpsc::channel(1);
                write_frames(stdin, out_rx, done_tx, CancellationToken::new()).await;
                match done_rx.recv().await {
                    Some(Inbound::Closed(Some(_))) => write_failed.cancel(),
                    _ => close_requested.cancel(),
                }
            }
        });

        tokio::spawn(supervise(Supervised {
            command,
            child,
            pgid: self.pid as libc::pid_t,
            stderr: self.stderr.clone(),
            stderr_done,
            shutdown,
            reader,
            stop_reading,
            stdout_eof,
            close_requested,
            write_failed,
            inbound: in_tx,
        }));
        Link { inbound: in_rx, outbound: out_tx }
    }
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        // Dropped without being linked (a setup that failed, say): take the group down.
        if self.parts.is_some() {
            kill_group(self.pid as libc::pid_t, libc::SIGKILL);
        }
    }
}

/// Passes frames on, and marks stdout finished when the reader stops.
async fn forward_frames(
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

struct Supervised {
    command: String,
    child: Child,
    pgid: libc::pid_t,
    stderr: Arc<StderrRing>,
    stderr_done: oneshot::Receiver<()>,
    shutdown: ShutdownTimeouts,
    reader: tokio::task::JoinHandle<()>,
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
        status = s.child.wait() => Trigger::Exited(status),
        _ = s.close_requested.cancelled() => Trigger::CloseRequested,
        _ = s.stdout_eof.cancelled() => Trigger::PipeBroken,
        _ = s.write_failed.cancelled() => Trigger::PipeBroken,
    };
    let (status, by_us) = match trigger {
        Trigger::Exited(status) => (status.ok(), false),
        Trigger::CloseRequested => (ladder(&mut s).await, true),
        Trigger::PipeBroken => {
            // Give a server that closed its pipes on its way out a moment to exit by itself.
            match tokio::time::timeout(Duration::from_millis(200), s.child.wait()).await {
                Ok(status) => (status.ok(), false),
                Err(_) => (ladder(&mut s).await, false),
            }
        }
    };
    // The leader is reaped; anything left in its group (a grandchild holding stdout, say) goes
    // too.
    drop(guard);

    // Deliver every frame the child wrote before it died, then stop reading.
    if tokio::time::timeout(Duration::from_secs(1), s.stdout_eof.cancelled()).await.is_err() {
        s.stop_reading.cancel();
        s.reader.abort();
    }
    let _ = tokio::time::timeout(Duration::from_millis(500), s.stderr_done).await;

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
}

/// Close stdin (done by the writer) → wait → SIGTERM(group) → wait → SIGKILL(group) → reap.
async fn ladder(s: &mut Supervised) -> Option<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(s.shutdown.after_stdin_close, s.child.wait()).await {
        return status.ok();
    }
    kill_group(s.pgid, libc::SIGTERM);
    if let Ok(status) = tokio::time::timeout(s.shutdown.after_sigterm, s.child.wait()).await {
        return status.ok();
    }
    kill_group(s.pgid, libc::SIGKILL);
    s.child.wait().await.ok()
}

fn kill_group(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid > 1 {
        // SAFETY: killpg has no memory-safety preconditions; ESRCH (no such group) is fine.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => status.to_string(),
    }
}

/// The last bytes a child wrote to stderr, bounded.
#[derive(Debug)]
struct StderrRing {
    capacity: usize,
    bytes: Mutex<VecDeque<u8>>,
}

impl StderrRing {
    fn new(capacity: usize) -> Self {
        StderrRing { capacity, bytes: Mutex::new(VecDeque::new()) }
    }

    fn push(&self, chunk: &[u8]) {
        let mut bytes = self.bytes.lock();
        let chunk = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let held = bytes.len();
        let overflow = (held + chunk.len()).saturating_sub(self.capacity);
        bytes.drain(..overflow.min(held));
        bytes.extend(chunk);
    }

    fn tail(&self, max: usize) -> String {
        let bytes = self.bytes.lock();
        let start = bytes.len().saturating_sub(max);
        let tail: Vec<u8> = bytes.range(start..).copied().collect();
        String::from_utf8_lossy(&tail).into_owned()
    }

    fn len(&self) -> usize {
        self.bytes.lock().len()
    }
}

/// Read access to a child's captured stderr.
#[derive(Clone, Debug)]
pub struct StderrHandle(Arc<StderrRing>);

impl StderrHandle {
    /// The last `max` bytes, lossily decoded.
    pub fn tail(&self, max: usize) -> String {
        self.0.tail(max)
    }

    /// How many bytes are held (never more than the capacity).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing has been captured.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

async fn drain_stderr(
    mut pipe: tokio::process::ChildStderr,
    ring: Arc<StderrRing>,
    command: String,
    done: oneshot::Sender<()>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                ring.push(&buf[..n]);
                if tracing::enabled!(target: "oxmcp::stderr", tracing::Level::DEBUG) {
                    for line in String::from_utf8_lossy(&buf[..n]).lines() {
                        tracing::debug!(target: "oxmcp::stderr", server = %command, "{line}");
                    }
                }
            }
        }
    }
    let _ = done.send(());
}

type SpawnJob = Box<dyn FnOnce() + Send>;

/// Forks every child from one thread that lives as long as the process, because
/// `PR_SET_PDEATHSIG` fires when the forking *thread* exits, and runtime threads come and go.
async fn spawn_from_spawner_thread(mut cmd: Command) -> io::Result<Child> {
    static SPAWNER: OnceLock<Mutex<std_mpsc::Sender<SpawnJob>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = std_mpsc::channel::<SpawnJob>();
        let started = std::thread::Builder::new().name("oxmcp-spawner".into()).spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
            }
        });
        if let Err(e) = started {
            tracing::error!(target: "oxmcp", "could not start the spawner thread: {e}");
        }
        Mutex::new(tx)
    });
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = oneshot::channel();
    let job: SpawnJob = Box::new(move || {
        // Register the child with the caller's runtime (its SIGCHLD reaper and I/O driver).
        let _entered = handle.enter();
        let _ = tx.send(cmd.spawn());
    });
    spawner
        .lock()
        .send(job)
        .map_err(|_| io::Error::other("the spawner thread is not running"))?;
    rx.await.map_err(|_| io::Error::other("the spawner thread dropped the request"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_only_the_tail() {
        let ring = StderrRing::new(8);
        ring.push(b"hello ");
        ring.push(b"world!");
        assert_eq!(ring.tail(100), "o world!");
        ring.push(&[b'x'; 100]);
        assert_eq!(ring.len(), 8);
        assert_eq!(ring.tail(3), "xxx");
    }

    #[test]
    fn display_joins_argv_without_quoting() {
        let c = ChildCommand::new("npx").args(["-y", "server x"]);
        assert_eq!(c.display(), "npx -y server x");
    }
}
