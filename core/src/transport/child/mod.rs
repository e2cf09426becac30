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
    io::{AsyncReadExt, AsyncWriteExt},
    process::{Child, ChildStdin, ChildStdout, Command},
    sync::{mpsc, oneshot},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

use super::{Inbound, Link, OUTBOUND_QUEUE, Outbound, Transport, stdio::read_frames};
use crate::{
    Error,
    embed::{Join, Spawner},
    jsonrpc::Limits,
    sync::Mutex,
};

mod hosted;

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
    status: Arc<OnceLock<ExitStatus>>,
    /// Set by [`ChildTransport::hosted`]: a host loop reads stdout and runs the writer.
    hosted: Option<hosted::HostedInput>,
}

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
}

impl ChildTransport {
    /// Starts `command`. Fails with [`Error::Spawn`] naming the command if it cannot start.
    pub async fn spawn(command: ChildCommand) -> Result<ChildTransport, Error> {
        let display = command.display();
        let program = command.program.to_string_lossy().into_owned();
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
            }),
            pid,
            stderr,
            status: Arc::new(OnceLock::new()),
            hosted: None,
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
        let (out_tx, out_rx) = out_channel();
        self.supervise_on(
            parts,
            &Spawner::Tokio,
            Reading {
                reader: Some(reader),
                stop_reading,
                stdout_eof,
            },
            in_tx,
            out_rx,
        );
        Link {
            inbound: in_rx,
            outbound: out_tx,
        }
    }
}

fn out_channel() -> (mpsc::Sender<Outbound>, mpsc::Receiver<Outbound>) {
    mpsc::channel(OUTBOUND_QUEUE)
}

/// How stdout is being read, for the supervisor.
struct Reading {
    /// The reader task, when the transport reads stdout itself (a host loop's feeder is
    /// stopped through `stop_reading` instead).
    reader: Option<Join>,
    stop_reading: CancellationToken,
    stdout_eof: CancellationToken,
}

impl ChildTransport {
    /// Starts the writer (on `writer_on`) and the supervisor (on tokio).
    fn supervise_on(
        &self,
        parts: Parts,
        writer_on: &Spawner,
        reading: Reading,
        inbound: mpsc::Sender<Inbound>,
        outbound: mpsc::Receiver<Outbound>,
    ) {
        let Parts {
            command,
            child,
            stdin,
            stdout: _,
            stderr_drain,
            max_message_bytes: _,
            shutdown,
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
            reader: reading.reader,
            writer,
            stop_reading: reading.stop_reading,
            stdout_eof: reading.stdout_eof,
            close_requested,
            write_failed,
            inbound,
        }));
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
    status: Arc<OnceLock<ExitStatus>>,
    stderr_drain: JoinHandle<()>,
    shutdown: ShutdownTimeouts,
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
        Trigger::CloseRequested => (ladder(&mut s).await, true),
        Trigger::PipeBroken => {
            // Give a server that closed its pipes on its way out a moment to exit by itself.
            match tokio::time::timeout(Duration::from_millis(200), s.child.wait()).await {
                Ok(status) => (status.ok(), false),
                Err(_) => (ladder(&mut s).await, false),
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

/// How many bytes of frames the writer takes in behind a write the child has not accepted
/// yet. Beyond this, senders wait (back-pressure).
const STDIN_BACKLOG: usize = 1 << 20;

/// Frames → the child's stdin, until `Close` (or every sender is gone) and everything queued
/// has been written, or until a write fails.
///
/// The writer keeps taking frames in while a write is pending, so that `Close` is seen even
/// when the child has stopped reading and the pipe is full: `close_requested` fires as soon as
/// `Close` arrives, and the ladder's clock starts then. Waiting for the write to finish first
/// would wait forever on a child that never reads, and the session's close with it. What is
/// queued is still flushed, within the ladder's first wait; a child that never takes it is
/// signalled, and its death fails the write.
async fn write_stdin(
    mut stdin: ChildStdin,
    mut outbound: mpsc::Receiver<Outbound>,
    close_requested: CancellationToken,
    write_failed: CancellationToken,
) {
    // `writing[written..]` is going out now; `queued` collects the frames behind it.
    let mut writing: Vec<u8> = Vec::new();
    let mut written = 0;
    let mut queued: Vec<u8> = Vec::new();
    let mut closing = false;
    loop {
        if written == writing.len() {
            if queued.is_empty() && closing {
                break;
            }
            writing.clear();
            // Do not keep a huge buffer around after one huge message.
            writing.shrink_to(STDIN_BACKLOG);
            written = 0;
            std::mem::swap(&mut writing, &mut queued);
        }
        tokio::select! {
            // Take in what is queued first: `Close` must not wait behind a stuck write, and
            // frames that arrive together go out in one write.
            biased;
            item = outbound.recv(), if !closing && queued.len() < STDIN_BACKLOG => match item {
                Some(Outbound::Frame(frame)) => {
                    crate::jsonrpc::push_line(&mut queued, &frame.bytes);
                }
                Some(Outbound::CloseStream(_)) => {}
                Some(Outbound::Close) | None => {
                    closing = true;
                    close_requested.cancel();
                }
            },
            // Cancel-safe: a write that loses the race has written nothing.
            result = stdin.write(&writing[written..]), if written < writing.len() => match result {
                Ok(n) if n > 0 => written += n,
                _ => {
                    write_failed.cancel();
                    return;
                }
            },
            // Unreachable (when nothing is being written, `queued` was just emptied, so
            // receiving is enabled unless closing, and closing with nothing left breaks above);
            // ending is the safe answer all the same.
            else => break,
        }
    }
    // Closing our end is what the child sees as EOF.
    let _ = stdin.shutdown().await;
}

/// Close stdin (the writer flushes and closes it) → wait → SIGTERM(group) → wait →
/// SIGKILL(group) → reap. The first wait counts from the session's `Close`, flush included.
async fn ladder(s: &mut Supervised) -> Option<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(s.shutdown.after_stdin_close, s.child.wait()).await {
        return status.ok();
    }
    kill_group(s.pgid, libc::SIGTERM);
    let deadline = tokio::time::Instant::now() + s.shutdown.after_sigterm;
    if let Ok(status) = tokio::time::timeout_at(deadline, s.child.wait()).await {
        // The rest of the group got the same SIGTERM and gets the same time to act on it: a
        // launcher (`npx`, `uvx`) often exits at once while the real server is still cleaning
        // up. Whatever is left at the deadline is killed with the group.
        while group_alive(s.pgid) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        return status.ok();
    }
    kill_group(s.pgid, libc::SIGKILL);
    s.child.wait().await.ok()
}

/// Whether any process is left in the group. The group id cannot be handed to a new group
/// while a member lives, so this never asks about a stranger's group.
fn group_alive(pgid: libc::pid_t) -> bool {
    // SAFETY: killpg with signal 0 only checks for existence and permission.
    pgid > 1 && unsafe { libc::killpg(pgid, 0) } == 0
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
        StderrRing {
            capacity,
            bytes: Mutex::new(VecDeque::new()),
        }
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
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                ring.push(&buf[..n]);
                if tracing::enabled!(target: "oxmcp::stderr", tracing::Level::DEBUG) {
                    for line in String::from_utf8_lossy(&buf[..n]).lines() {
                        let line = crate::sanitize::line(line);
                        tracing::debug!(target: "oxmcp::stderr", server = %command, "{line}");
                    }
                }
            }
        }
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

    fn frame(bytes: &[u8]) -> Outbound {
        Outbound::Frame(crate::transport::OutFrame {
            bytes: bytes.to_vec(),
            route: crate::transport::Route::Unrelated,
        })
    }

    /// Frames go out in order, newline-terminated, and `Close` closes stdin after them (`cat`
    /// echoes what it read and exits on EOF).
    #[tokio::test]
    async fn writer_flushes_then_closes_stdin() {
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("cat starts");
        let stdin = cat.stdin.take().expect("stdin");
        let mut stdout = cat.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel(8);
        let (closed, failed) = (CancellationToken::new(), CancellationToken::new());
        let writer = tokio::spawn(write_stdin(stdin, rx, closed.clone(), failed.clone()));
        for item in [frame(b"{\"a\":1}"), frame(b"{\"b\":2}"), Outbound::Close] {
            tx.send(item).await.expect("queued");
        }
        let mut echoed = String::new();
        tokio::time::timeout(Duration::from_secs(5), stdout.read_to_string(&mut echoed))
            .await
            .expect("cat sees EOF")
            .expect("read");
        assert_eq!(echoed, "{\"a\":1}\n{\"b\":2}\n");
        writer.await.expect("the writer ends");
        assert!(closed.is_cancelled() && !failed.is_cancelled());
        let status = cat.wait().await.expect("cat is reaped");
        assert_eq!(status.code(), Some(0));
    }

    /// `Close` is seen while a write is stuck on a child that never reads (`sleep`): the
    /// ladder can start. The stuck write then fails once the child is gone.
    #[tokio::test]
    async fn close_is_seen_behind_a_write_the_child_never_reads() {
        let mut sleep = Command::new("sleep")
            .arg("30")
            .stdin(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("sleep starts");
        let stdin = sleep.stdin.take().expect("stdin");
        let (tx, rx) = mpsc::channel(8);
        let (closed, failed) = (CancellationToken::new(), CancellationToken::new());
        let writer = tokio::spawn(write_stdin(stdin, rx, closed.clone(), failed.clone()));
        // Far more than a pipe holds.
        tx.send(frame(&vec![b'x'; 4 << 20])).await.expect("queued");
        tx.send(Outbound::Close).await.expect("queued");
        tokio::time::timeout(Duration::from_secs(5), closed.cancelled())
            .await
            .expect("Close is seen although the write cannot finish");
        assert!(!writer.is_finished(), "the write is still pending");

        sleep.start_kill().expect("kill sleep");
        sleep.wait().await.expect("sleep is reaped");
        tokio::time::timeout(Duration::from_secs(5), failed.cancelled())
            .await
            .expect("the pending write fails once nobody can read it");
        writer.await.expect("the writer ends");
    }
}
