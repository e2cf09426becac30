//! The child-process transport's lifecycle, proven with real processes and real signals.
//!
//! Every test starts the `mcp_fixture` example (`core/tests/bin/mcp_fixture.rs`) in one of its
//! modes through `ChildTransport`, drives it to an end (a close, a crash, a kill, a timeout, a
//! dead host), and asserts how it ended: the exit status (so which step of the shutdown ladder
//! ended it, if any), the typed error a pending call got, and how long that took. Afterwards
//! each test checks `/proc`: no zombie child of this process, no live process carrying the
//! run's `MCP_TEST_RUN` marker (the server and anything it started), and exactly as many open
//! descriptors as before the run.
//!
//! The `/proc` checks see the whole test process, so the tests take turns under a
//! process-wide lock, each on a runtime of its own, and each is bounded by a timeout (a hang is
//! a failure). A guard kills every marked process when a test ends, even when it fails.
//!
//! Run with `--nocapture` to see the measured timings (`[timing]` lines).

use std::{
    future::Future,
    os::unix::process::ExitStatusExt,
    process::{ExitStatus, Stdio},
    sync::{Mutex, PoisonError},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode},
    session::RequestOptions,
    transport::child::{
        ChildCommand, ChildMonitor, ChildTransport, ShutdownTimeouts, StderrHandle,
    },
};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

/// The environment variable that marks every process of one run.
const MARKER: &str = "MCP_TEST_RUN";

/// A short ladder, so the signalling tests stay fast; one test keeps the default 2 s + 2 s.
const SHORT: ShutdownTimeouts = ShutdownTimeouts {
    after_stdin_close: Duration::from_millis(300),
    after_sigterm: Duration::from_millis(300),
};

/// The bound for anything that should be immediate. It is not a speed check: it only tells
/// "done by the ladder" from "stuck until some later event or the 10 s hang guard", so it is
/// wide enough for a 2-core machine building four crates at once (1 s was not: a close
/// measured 1.1 s under a load average of 15).
const PROMPT: Duration = Duration::from_secs(5);

// --- harness -------------------------------------------------------------------------------

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs one test alone (the `/proc` checks see the whole process), on a fresh runtime, within
/// 30 s.
fn serial(test: impl Future<Output = ()>) {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(30), test)
            .await
            .expect("the test finished within 30 s (a hang is a failure)");
    });
}

/// The fixture binary, built next to this test (`target/<profile>/examples/mcp_fixture`).
fn fixture() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    // target/<profile>/deps/<test> → target/<profile>/examples/mcp_fixture
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("examples").join("mcp_fixture"))
        .expect("the target directory");
    assert!(
        path.exists(),
        "{} is not built: `cargo test` builds examples only when no target is selected; run \
         `cargo build --example mcp_fixture` before `cargo test --test child_lifecycle`",
        path.display()
    );
    path
}

/// One scenario: its marker, the descriptor baseline, and a guard that kills what is left.
struct Run {
    name: &'static str,
    marker: String,
    fds: Vec<String>,
}

impl Run {
    fn start(name: &'static str) -> Run {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let marker = format!("{name}-{}-{nanos}", std::process::id());
        Run {
            name,
            marker,
            fds: open_fds(),
        }
    }

    /// The fixture in `mode`, marked, with the short ladder.
    fn command(&self, mode: &str) -> ChildCommand {
        ChildCommand::new(fixture())
            .arg(mode)
            .env(MARKER, &self.marker)
            .shutdown_timeouts(SHORT)
    }

    async fn spawn(&self, command: ChildCommand) -> ChildTransport {
        command.spawn().await.expect("the fixture starts")
    }

    /// Live processes carrying this run's marker.
    fn processes(&self) -> Vec<u32> {
        marked_processes(&self.marker)
    }

    /// Waits until `n` marked processes are alive.
    /// Waits for a grandchild fixture to say its SIGTERM handler is in place, and for the
    /// two processes of the run; returns their pids.
    async fn expect_grandchild(&self, stderr: &StderrHandle) -> Vec<u32> {
        poll(Duration::from_secs(5), || {
            stderr
                .tail(usize::MAX)
                .contains("sleeper: ready")
                .then_some(())
        })
        .await
        .expect("the grandchild starts");
        self.expect_processes(2).await
    }

    async fn expect_processes(&self, n: usize) -> Vec<u32> {
        let found = poll(Duration::from_secs(5), || {
            let pids = self.processes();
            (pids.len() == n).then_some(pids)
        })
        .await;
        found.unwrap_or_else(|| {
            panic!(
                "expected {n} marked processes, found {:?}",
                self.processes()
            )
        })
    }

    /// Nothing left: no zombie child, no marked process, no extra descriptor. Waits a little,
    /// as the kernel delivers group signals and tokio reaps orphans asynchronously.
    async fn assert_clean(&self) {
        let clean = poll(Duration::from_secs(5), || {
            (zombie_children().is_empty() && self.processes().is_empty() && open_fds() == self.fds)
                .then_some(())
        })
        .await;
        if clean.is_none() {
            panic!(
                "[{}] left behind: zombies {:?}, marked processes {:?}, descriptors {:?} \
                 (baseline {:?})",
                self.name,
                zombie_children(),
                self.processes(),
                open_fds(),
                self.fds
            );
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        // Even when the test failed: take down whatever carries our marker.
        for _ in 0..100 {
            let pids = self.processes();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                signal(pid, libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Polls `probe` every 10 ms until it yields or `within` has passed.
async fn poll<T>(within: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn signal(pid: u32, sig: libc::c_int) {
    let pid = libc::pid_t::try_from(pid).expect("pid fits pid_t");
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// `/proc/self/fd`, each descriptor with what it points at, sorted.
fn open_fds() -> Vec<String> {
    let mut fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let target = std::fs::read_link(e.path()).ok()?;
            Some(format!(
                "{}->{}",
                e.file_name().to_string_lossy(),
                target.display()
            ))
        })
        .collect();
    fds.sort();
    fds
}

fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
}

/// (state, parent pid) from `/proc/<pid>/stat`; `None` once the process is gone.
fn proc_state(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain anything, spaces and parentheses included: skip past it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

fn zombie_children() -> Vec<u32> {
    let me = std::process::id();
    pids()
        .filter(|&pid| proc_state(pid) == Some(('Z', me)))
        .collect()
}

/// Live processes whose environment holds `MCP_TEST_RUN=<marker>` (a zombie has no
/// environment left, and is counted by `zombie_children` when it is ours).
fn marked_processes(marker: &str) -> Vec<u32> {
    let needle = format!("{MARKER}={marker}");
    pids()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle.as_bytes()))
        })
        .collect()
}

fn options() -> ClientOptions {
    ClientOptions::new("child-lifecycle", "0")
}

async fn connect(transport: ChildTransport) -> Client {
    tokio::time::timeout(
        Duration::from_secs(10),
        Client::connect(transport, options()),
    )
    .await
    .expect("the handshake completes within 10 s")
    .expect("the client connects")
}

/// Closes the client and returns how long the close took.
async fn timed_close(client: &Client) -> Duration {
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .expect("close completes within 10 s");
    started.elapsed()
}

/// Closes the client while watching stderr for `note`; returns how long the close took and
/// when the note (a fixture's "SIGTERM received") appeared, both from the start of the close.
async fn close_watching(client: Client, stderr: &StderrHandle, note: &str) -> (Duration, Duration) {
    let started = Instant::now();
    let close = tokio::spawn(async move {
        client.close().await;
        started.elapsed()
    });
    let seen = poll(Duration::from_secs(10), || {
        stderr
            .tail(usize::MAX)
            .contains(note)
            .then(|| started.elapsed())
    })
    .await;
    let took = tokio::time::timeout(Duration::from_secs(10), close)
        .await
        .expect("close completes within 10 s")
        .expect("the close task does not panic");
    let seen =
        seen.unwrap_or_else(|| panic!("`{note}` never appeared on stderr:\n{}", stderr.tail(4096)));
    (took, seen)
}

fn exit_status(monitor: &ChildMonitor) -> ExitStatus {
    monitor
        .exit_status()
        .expect("the child has been reaped by the time the session closed")
}

fn assert_exit_code(monitor: &ChildMonitor, code: i32) {
    let status = exit_status(monitor);
    assert_eq!(
        (status.code(), status.signal()),
        (Some(code), None),
        "expected a normal exit with code {code}, got {status}"
    );
}

fn assert_signalled(monitor: &ChildMonitor, sig: libc::c_int) {
    let status = exit_status(monitor);
    assert_eq!(
        status.signal(),
        Some(sig),
        "expected the child to die of signal {sig}, got {status}"
    );
}

/// What the flood fixture writes (the same bytes as `flood_bytes` in the fixture).
fn flood_bytes(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 64);
    let mut i = 0u64;
    while out.len() < bytes {
        out.extend_from_slice(format!("flood line {i:08}\n").as_bytes());
        i += 1;
    }
    out.extend_from_slice(b"END-OF-FLOOD\n");
    out
}

// --- closing: the ladder, step by step -------------------------------------------------------

/// A server that exits on stdin EOF is never signalled: the close takes milliseconds (on the
/// default 2 s ladder) and the child exits with code 0.
#[test]
fn server_exiting_on_stdin_eof_is_not_signalled() {
    serial(async {
        let run = Run::start("clean-exit");
        let child = run
            .spawn(
                run.command("server")
                    .shutdown_timeouts(ShutdownTimeouts::default()),
            )
            .await;
        let monitor = child.monitor();
        let client = connect(child).await;
        let echoed = client
            .call_tool("echo", json!({"text": "hello"}))
            .await
            .expect("echo");
        assert_eq!(echoed.text_content(), "hello");
        assert!(
            monitor.exit_status().is_none(),
            "the server is still running"
        );

        let took = timed_close(&client).await;
        eprintln!("[timing] clean exit on stdin EOF: close took {took:?}");
        assert_exit_code(&monitor, 0);
        assert!(
            took < PROMPT,
            "closing a server that exits on EOF took {took:?}"
        );
        drop(client);
        run.assert_clean().await;
    });
}

/// A server that keeps running after stdin EOF gets SIGTERM once the first wait is over, and
/// SIGTERM (default disposition) is what ends it.
#[test]
fn server_ignoring_eof_gets_sigterm_after_the_first_wait() {
    serial(async {
        let run = Run::start("ignore-eof");
        let child = run.spawn(run.command("ignore-eof")).await;
        let monitor = child.monitor();
        let stderr = child.stderr();
        let client = connect(child).await;

        let took = timed_close(&client).await;
        eprintln!("[timing] ignore-eof (300 ms + 300 ms ladder): close took {took:?}");
        assert_signalled(&monitor, libc::SIGTERM);
        assert!(
            stderr.tail(usize::MAX).contains("stdin closed, staying up"),
            "the server saw EOF before being signalled"
        );
        assert!(
            took >= SHORT.after_stdin_close,
            "SIGTERM came before the first wait: {took:?}"
        );
        assert!(
            took < SHORT.after_stdin_close + PROMPT,
            "close took {took:?}"
        );
        drop(client);
        run.assert_clean().await;
    });
}

/// A server that ignores both EOF and SIGTERM receives SIGTERM after the first wait (it logs
/// it) and dies of SIGKILL after the second.
#[test]
fn server_ignoring_sigterm_gets_sigkill_after_the_second_wait() {
    serial(async {
        let run = Run::start("ignore-sigterm");
        let child = run.spawn(run.command("ignore-sigterm")).await;
        let monitor = child.monitor();
        let stderr = child.stderr();
        let client = connect(child).await;

        let (took, sigterm_at) =
            close_watching(client, &stderr, "ignore-sigterm: SIGTERM received").await;
        eprintln!(
            "[timing] ignore-sigterm (300 ms + 300 ms ladder): SIGTERM seen at {sigterm_at:?}, \
             close took {took:?}"
        );
        assert_signalled(&monitor, libc::SIGKILL);
        assert!(
            sigterm_at >= SHORT.after_stdin_close,
            "SIGTERM too early: {sigterm_at:?}"
        );
        let both = SHORT.after_stdin_close + SHORT.after_sigterm;
        assert!(
            took >= both,
            "SIGKILL came before the second wait: {took:?}"
        );
        assert!(took < both + PROMPT, "close took {took:?}");
        run.assert_clean().await;
    });
}

/// The default ladder, unshortened: SIGTERM at 2 s, SIGKILL at 4 s.
#[test]
fn default_ladder_waits_two_seconds_then_two_more() {
    serial(async {
        let run = Run::start("default-ladder");
        let child = run
            .spawn(
                run.command("ignore-sigterm")
                    .shutdown_timeouts(ShutdownTimeouts::default()),
            )
            .await;
        let monitor = child.monitor();
        let stderr = child.stderr();
        let client = connect(child).await;

        let (took, sigterm_at) =
            close_watching(client, &stderr, "ignore-sigterm: SIGTERM received").await;
        eprintln!(
            "[timing] ignore-sigterm (default 2 s + 2 s ladder): SIGTERM seen at \
             {sigterm_at:?}, close took {took:?}"
        );
        assert_signalled(&monitor, libc::SIGKILL);
        let defaults = ShutdownTimeouts::default();
        assert!(
            sigterm_at >= defaults.after_stdin_close,
            "SIGTERM at {sigterm_at:?}"
        );
        assert!(
            sigterm_at < defaults.after_stdin_close + defaults.after_sigterm,
            "SIGTERM at {sigterm_at:?}"
        );
        let both = defaults.after_stdin_close + defaults.after_sigterm;
        assert!(
            took >= both,
            "SIGKILL came before the second wait: {took:?}"
        );
        assert!(took < both + PROMPT, "close took {took:?}");
        run.assert_clean().await;
    });
}

// --- grandchildren ---------------------------------------------------------------------------

/// A grandchild that holds the server's stdout and ignores SIGTERM does not keep the
/// connection open: the server exits on EOF, the group is killed, and the close does not wait
/// for a stdout EOF that would never come.
#[test]
fn grandchild_holding_stdout_dies_with_the_group() {
    serial(async {
        let run = Run::start("grandchild");
        let child = run.spawn(run.command("grandchild")).await;
        let monitor = child.monitor();
        let stderr = child.stderr();
        let client = connect(child).await;
        run.expect_grandchild(&stderr).await;

        let took = timed_close(&client).await;
        eprintln!("[timing] server exiting on EOF, grandchild holding stdout: close took {took:?}");
        assert_exit_code(&monitor, 0);
        // Without the group kill the close would wait out the 1 s stdout drain.
        assert!(took < PROMPT, "close took {took:?}");
        drop(client);
        run.assert_clean().await;
    });
}

/// SIGTERM goes to the whole group: the grandchild (not the group leader) logs it, the server
/// dies of it, and the grandchild, which ignores it, keeps the rest of the SIGTERM window (a
/// launcher such as `npx` may exit before the real server is done) and is then killed.
#[test]
fn sigterm_reaches_the_whole_group() {
    serial(async {
        let run = Run::start("group-sigterm");
        let child = run.spawn(run.command("grandchild-ignore-eof")).await;
        let monitor = child.monitor();
        let stderr = child.stderr();
        let client = connect(child).await;
        run.expect_grandchild(&stderr).await;

        let (took, sigterm_at) = close_watching(client, &stderr, "sleeper: SIGTERM received").await;
        eprintln!(
            "[timing] grandchild-ignore-eof: SIGTERM seen by the grandchild at {sigterm_at:?}, \
             close took {took:?}"
        );
        assert_signalled(&monitor, libc::SIGTERM);
        assert!(
            sigterm_at >= SHORT.after_stdin_close,
            "SIGTERM at {sigterm_at:?}"
        );
        let whole_ladder = SHORT.after_stdin_close + SHORT.after_sigterm;
        assert!(
            took >= whole_ladder,
            "the grandchild was killed before its SIGTERM window ended: {took:?}"
        );
        assert!(took < whole_ladder + PROMPT, "close took {took:?}");
        run.assert_clean().await;
    });
}

/// A grandchild that leaves the group (`setsid`) escapes the ladder; oxmcp cannot signal it.
/// It must still not hold the connection open, nor keep any of our descriptors or tasks.
#[test]
fn escaped_grandchild_does_not_hold_the_connection_or_our_descriptors() {
    serial(async {
        let run = Run::start("escaped-grandchild");
        let child = run.spawn(run.command("escaped-grandchild")).await;
        let monitor = child.monitor();
        let stderr = child.stderr();
        let server_pid = child.pid();
        let client = connect(child).await;
        let pids = run.expect_grandchild(&stderr).await;
        let escapee = pids
            .into_iter()
            .find(|&p| p != server_pid)
            .expect("the grandchild's pid");

        let took = timed_close(&client).await;
        eprintln!("[timing] escaped grandchild holding stdout and stderr: close took {took:?}");
        assert_exit_code(&monitor, 0);
        assert!(took < Duration::from_secs(3), "close took {took:?}");
        drop(client);

        // The escapee still holds the write ends of stdout and stderr; our read ends must be
        // closed all the same.
        assert!(
            proc_state(escapee).is_some_and(|(s, _)| s != 'Z'),
            "the escapee is alive"
        );
        let released = poll(Duration::from_secs(3), || {
            (open_fds() == run.fds).then_some(())
        })
        .await;
        assert!(
            released.is_some(),
            "descriptors still open while the escapee lives: {:?} (baseline {:?})",
            open_fds(),
            run.fds
        );
        signal(escapee, libc::SIGKILL);
        run.assert_clean().await;
    });
}

// --- dying mid-call --------------------------------------------------------------------------

/// A server that exits in the middle of a call fails that call at once with
/// `ConnectionClosed`, carrying the exit code and the stderr tail; later calls fail the same
/// way without waiting.
#[test]
fn server_exiting_mid_call_fails_the_call_at_once() {
    serial(async {
        let run = Run::start("die-mid-call");
        let child = run.spawn(run.command("server")).await;
        let monitor = child.monitor();
        let client = connect(child).await;

        let started = Instant::now();
        let call = client.call_tool(
            "die",
            json!({"code": 3, "message": "fatal: the fixture gave up"}),
        );
        let err = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .expect("the call fails within 5 s, not at the 60 s request timeout")
            .expect_err("the server died before answering");
        let took = started.elapsed();
        eprintln!("[timing] server exiting mid-call: call failed after {took:?}");
        match &err {
            Error::ConnectionClosed { reason, stderr } => {
                assert!(
                    reason.contains("exited with exit code 3"),
                    "reason: {reason}"
                );
                let stderr = stderr.as_deref().unwrap_or_default();
                assert!(
                    stderr.contains("fatal: the fixture gave up"),
                    "stderr tail: {stderr:?}"
                );
            }
            other => panic!("expected ConnectionClosed, got {other:?}"),
        }
        assert!(
            err.to_string().contains("fatal: the fixture gave up"),
            "{err}"
        );
        assert!(took < PROMPT, "the call took {took:?} to fail");
        assert_exit_code(&monitor, 3);

        let again = tokio::time::timeout(PROMPT, client.call_tool("echo", json!({"text": "x"})))
            .await
            .expect("a call on a dead connection fails at once")
            .expect_err("the connection is closed");
        let same_reason = matches!(
            &again,
            Error::ConnectionClosed { reason, .. } if reason.contains("exit code 3")
        );
        assert!(same_reason, "{again:?}");
        let took = timed_close(&client).await;
        assert!(took < PROMPT, "closing a dead connection took {took:?}");
        drop(client);
        run.assert_clean().await;
    });
}

/// A server killed from outside mid-call fails the call at once, with the signal in the reason.
#[test]
fn server_killed_mid_call_fails_the_call_at_once() {
    serial(async {
        let run = Run::start("killed-mid-call");
        let child = run.spawn(run.command("server")).await;
        let monitor = child.monitor();
        let stderr = child.stderr();
        let pid = child.pid();
        let client = connect(child).await;

        let call = tokio::spawn({
            let client = client.clone();
            async move { client.call_tool("hang", json!({})).await }
        });
        poll(Duration::from_secs(5), || {
            stderr
                .tail(usize::MAX)
                .contains("hang: started")
                .then_some(())
        })
        .await
        .expect("the call reaches the server");
        let killed = Instant::now();
        signal(pid, libc::SIGKILL);
        let err = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .expect("the call fails within 5 s, not at the 60 s request timeout")
            .expect("the call task does not panic")
            .expect_err("the server was killed");
        let took = killed.elapsed();
        eprintln!("[timing] server SIGKILLed mid-call: call failed {took:?} after the kill");
        match &err {
            Error::ConnectionClosed { reason, stderr } => {
                assert!(reason.contains("signal 9"), "reason: {reason}");
                assert!(
                    stderr
                        .as_deref()
                        .unwrap_or_default()
                        .contains("hang: started"),
                    "stderr tail: {stderr:?}"
                );
            }
            other => panic!("expected ConnectionClosed, got {other:?}"),
        }
        assert!(took < PROMPT, "the call took {took:?} to fail");
        assert_signalled(&monitor, libc::SIGKILL);
        timed_close(&client).await;
        drop(client);
        run.assert_clean().await;
    });
}

/// A server dying mid-call while its grandchild still holds stdout: the call fails at once
/// (the group is killed, so stdout reaches EOF without waiting out the drain).
#[test]
fn server_dying_with_a_grandchild_holding_stdout_fails_the_call_at_once() {
    serial(async {
        let run = Run::start("die-with-grandchild");
        let child = run.spawn(run.command("grandchild")).await;
        let monitor = child.monitor();
        let stderr = child.stderr();
        let client = connect(child).await;
        run.expect_grandchild(&stderr).await;

        let started = Instant::now();
        let call = client.call_tool("die", json!({"code": 7, "message": "fatal: seven"}));
        let err = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .expect("the call fails within 5 s")
            .expect_err("the server died before answering");
        let took = started.elapsed();
        eprintln!(
            "[timing] server exiting mid-call, grandchild holding stdout: failed after {took:?}"
        );
        assert!(
            matches!(&err, Error::ConnectionClosed { reason, stderr: Some(tail) }
                if reason.contains("exit code 7") && tail.contains("fatal: seven")),
            "{err:?}"
        );
        assert!(took < PROMPT, "the call took {took:?} to fail");
        assert_exit_code(&monitor, 7);
        timed_close(&client).await;
        drop(client);
        run.assert_clean().await;
    });
}

// --- starting ---------------------------------------------------------------------------------

/// A command that does not exist fails with `Error::Spawn` naming it, and leaves nothing.
#[test]
fn missing_command_is_a_spawn_error_naming_it() {
    serial(async {
        let run = Run::start("missing-command");
        let name = format!("oxmcp-no-such-server-{}", run.marker);
        let err = ChildCommand::new(&name)
            .spawn()
            .await
            .expect_err("no such program");
        match &err {
            Error::Spawn { command, source } => {
                assert_eq!(command, &name);
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{source}");
            }
            other => panic!("expected Error::Spawn, got {other:?}"),
        }
        assert!(err.to_string().contains(&name), "{err}");

        let path = "/nonexistent/oxmcp/server";
        let err = Client::connect_child(ChildCommand::new(path).arg("--flag"), options())
            .await
            .expect_err("no such program");
        assert!(
            matches!(&err, Error::Spawn { command, .. } if command == path),
            "{err:?}"
        );
        assert!(err.to_string().contains(path), "{err}");
        run.assert_clean().await;
    });
}

/// A transport dropped before it was ever linked takes its process group down.
#[test]
fn unused_transport_dropped_kills_the_child() {
    serial(async {
        let run = Run::start("dropped-unused");
        let child = run.spawn(run.command("ignore-sigterm")).await;
        run.expect_processes(1).await;
        drop(child);
        run.assert_clean().await;
    });
}

/// Dropping the last client handle without `close` still runs the ladder and reaps the child.
#[test]
fn dropped_client_reaps_the_child() {
    serial(async {
        let run = Run::start("dropped-client");
        let child = run.spawn(run.command("server")).await;
        let monitor = child.monitor();
        let client = connect(child).await;
        drop(client);
        let status = poll(Duration::from_secs(5), || monitor.exit_status()).await;
        let status = status.expect("the child is reaped after the client is dropped");
        assert_eq!(status.code(), Some(0), "{status}");
        run.assert_clean().await;
    });
}

// --- PR_SET_PDEATHSIG --------------------------------------------------------------------------

/// A host that is SIGKILLed (no chance to run the ladder) takes its server with it. The server
/// ignores stdin EOF and SIGTERM, so only the death signal (SIGKILL) can have ended it.
#[test]
fn server_dies_with_a_killed_host() {
    serial(async {
        let run = Run::start("pdeathsig");
        let mut host = tokio::process::Command::new(fixture())
            .args(["host", "ignore-sigterm"])
            .env(MARKER, &run.marker)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the host starts");
        let host_pid = host.id().expect("the host's pid");
        let mut lines = BufReader::new(host.stdout.take().expect("host stdout")).lines();
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
        let Ok(Ok(Some(line))) = line else {
            signal(host_pid, libc::SIGKILL);
            let mut log = String::new();
            if let Some(mut err) = host.stderr.take() {
                let _ = tokio::time::timeout(PROMPT, err.read_to_string(&mut log)).await;
            }
            panic!("the host did not report its server's pid ({line:?}); host stderr:\n{log}");
        };
        let server_pid: u32 = line.trim().parse().expect("a pid");
        assert_eq!(
            proc_state(server_pid).map(|(_, ppid)| ppid),
            Some(host_pid),
            "the server is the host's child"
        );
        assert!(
            run.processes().contains(&server_pid),
            "the server carries the marker"
        );

        let killed = Instant::now();
        signal(host_pid, libc::SIGKILL);
        let status = tokio::time::timeout(Duration::from_secs(5), host.wait())
            .await
            .expect("the host dies")
            .expect("the host is reaped");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // Reparented, the server is reaped by whoever adopts it; dead or a zombie is enough.
        let gone = poll(Duration::from_secs(5), || {
            proc_state(server_pid)
                .is_none_or(|(state, _)| state == 'Z')
                .then(|| killed.elapsed())
        })
        .await;
        let took = gone.expect("the server died with its host");
        eprintln!("[timing] host SIGKILLed: its server was dead {took:?} later");
        // Our ends of the host's pipes are ours to close.
        drop(lines);
        drop(host);
        run.assert_clean().await;
    });
}

/// The death signal follows the thread that forked; a transport spawned from a thread that
/// then exits must not lose its child (oxmcp forks from a dedicated long-lived thread).
#[test]
fn child_survives_the_thread_that_spawned_it() {
    serial(async {
        let run = Run::start("spawning-thread");
        let command = run.command("server");
        let handle = tokio::runtime::Handle::current();
        let thread = std::thread::spawn(move || handle.block_on(ChildTransport::spawn(command)));
        let child = tokio::task::spawn_blocking(move || thread.join())
            .await
            .expect("join task")
            .expect("the spawning thread does not panic")
            .expect("the fixture starts");
        // The spawning thread has exited; the child must still serve a whole session.
        let monitor = child.monitor();
        let client = connect(child).await;
        let echoed = client
            .call_tool("echo", json!({"text": "still here"}))
            .await
            .expect("echo");
        assert_eq!(echoed.text_content(), "still here");
        timed_close(&client).await;
        assert_exit_code(&monitor, 0);
        drop(client);
        run.assert_clean().await;
    });
}

// --- stderr ------------------------------------------------------------------------------------

async fn flood_run(name: &'static str, flood: usize, capacity: Option<usize>) {
    let run = Run::start(name);
    let mut command = ChildCommand::new(fixture())
        .args(["flood-stderr", &flood.to_string()])
        .env(MARKER, &run.marker);
    if let Some(capacity) = capacity {
        command = command.stderr_capacity(capacity);
    }
    let child = run.spawn(command).await;
    let monitor = child.monitor();
    let stderr = child.stderr();
    let started = Instant::now();
    // The flood is one blocking write before the server starts: the handshake only completes
    // if the transport keeps draining stderr.
    let client = connect(child).await;
    eprintln!(
        "[timing] {name}: {flood} bytes of stderr, handshake after {:?}",
        started.elapsed()
    );
    let echoed = client
        .call_tool("echo", json!({"text": "after the flood"}))
        .await
        .expect("echo");
    assert_eq!(echoed.text_content(), "after the flood");
    timed_close(&client).await;
    assert_exit_code(&monitor, 0);

    let capacity = capacity.unwrap_or(1 << 20);
    let expected = flood_bytes(flood);
    let expected = String::from_utf8_lossy(&expected[expected.len() - capacity..]).into_owned();
    assert_eq!(
        stderr.len(),
        capacity,
        "the ring holds exactly its capacity"
    );
    let kept = stderr.tail(usize::MAX);
    assert!(
        kept.ends_with("END-OF-FLOOD\n"),
        "the ring keeps the newest bytes"
    );
    assert!(
        kept == expected,
        "the ring holds exactly the last {capacity} bytes of the flood"
    );
    drop(client);
    run.assert_clean().await;
}

/// Several MiB of stderr never block the server, and the default ring keeps the last 1 MiB.
#[test]
fn stderr_flood_never_blocks_and_the_last_mebibyte_is_kept() {
    serial(flood_run("stderr-flood", 8 << 20, None));
}

/// A configured capacity (not a multiple of any read size) is honoured to the byte.
#[test]
fn stderr_ring_keeps_the_configured_capacity() {
    serial(flood_run("stderr-capacity", 3 << 20, Some(100_003)));
}

// --- never answering ---------------------------------------------------------------------------

async fn never_answers_run(name: &'static str, payload: usize) {
    let run = Run::start(name);
    let child = run.spawn(run.command("never-answers")).await;
    let monitor = child.monitor();
    let options = options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25));
    let client = tokio::time::timeout(Duration::from_secs(10), Client::connect(child, options))
        .await
        .expect("the handshake completes")
        .expect("the client connects");

    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    let call = client.call_tool_with(
        "echo",
        json!({"text": "x".repeat(payload)}),
        RequestOptions::with_timeout(timeout),
    );
    let err = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the per-request timeout fires")
        .expect_err("nobody answers");
    let took = started.elapsed();
    assert!(
        matches!(&err, Error::Timeout { method, .. } if method == "tools/call"),
        "expected Error::Timeout, got {err:?}"
    );
    assert!(took >= timeout, "timed out early: {took:?}");
    assert!(took < timeout + PROMPT, "timed out late: {took:?}");

    // The server never reads stdin again, so it never sees EOF: the ladder has to SIGTERM it.
    let closed = timed_close(&client).await;
    eprintln!(
        "[timing] {name} ({payload} byte call): timed out after {took:?}, close took {closed:?}"
    );
    assert_signalled(&monitor, libc::SIGTERM);
    assert!(
        closed < SHORT.after_stdin_close + PROMPT,
        "close took {closed:?}"
    );
    drop(client);
    run.assert_clean().await;
}

/// A call to a server that never answers times out with `Error::Timeout`, and closing still
/// reaps the server.
#[test]
fn call_to_a_silent_server_times_out_and_close_reaps_it() {
    serial(never_answers_run("never-answers", 16));
}

/// The same with a call larger than the pipe buffer: the write to the child's stdin can never
/// finish, and the close must not queue up behind it.
#[test]
fn close_is_not_stuck_behind_a_write_the_child_never_reads() {
    serial(never_answers_run("never-reads", 4 << 20));
}
