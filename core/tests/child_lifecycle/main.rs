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
//!
//! `harness.rs` holds the `/proc` machinery, `session.rs` one helper per step of a session
//! (start, call, close, and the assertions on how it ended); this file is the scenarios.

#[path = "../bin/flood.rs"]
mod flood;
mod harness;
mod session;

use std::{
    os::unix::process::ExitStatusExt,
    process::Stdio,
    time::{Duration, Instant},
};

use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ProtocolMode},
    session::RequestOptions,
    transport::child::{ChildCommand, ChildTransport, ShutdownTimeouts},
};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::{
    flood::flood_bytes,
    harness::{MARKER, Run, fixture, open_fds, poll, proc_state, serial, signal, wait_for_stderr},
    session::{
        Live, assert_after_wait, assert_connection_closed, assert_echo, assert_exit_code,
        assert_prompt, assert_signalled, close_exiting, close_watching, connect, failed_call,
        options, start, timed_close,
    },
};

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

/// What `ignore-sigterm` writes when SIGTERM reaches it.
const SERVER_SIGTERM: &str = "ignore-sigterm: SIGTERM received";

// --- closing: the ladder, step by step -------------------------------------------------------

/// A server that exits on stdin EOF is never signalled: the close takes milliseconds (on the
/// default 2 s ladder) and the child exits with code 0.
#[test]
fn server_exiting_on_stdin_eof_is_not_signalled() {
    serial(async {
        let run = Run::start("clean-exit");
        let live = run
            .session(
                run.command("server")
                    .shutdown_timeouts(ShutdownTimeouts::default()),
            )
            .await;
        assert_echo(&live.client, "hello").await;
        assert!(
            live.monitor.exit_status().is_none(),
            "the server is still running"
        );

        let took = close_exiting(&live, 0).await;
        eprintln!("[timing] clean exit on stdin EOF: close took {took:?}");
        run.finish(live.client).await;
    });
}

/// A server that keeps running after stdin EOF gets SIGTERM once the first wait is over, and
/// SIGTERM (default disposition) is what ends it.
#[test]
fn server_ignoring_eof_gets_sigterm_after_the_first_wait() {
    serial(async {
        let (run, live) = start("ignore-eof", "ignore-eof").await;

        let took = timed_close(&live.client).await;
        eprintln!("[timing] ignore-eof (300 ms + 300 ms ladder): close took {took:?}");
        assert_signalled(&live.monitor, libc::SIGTERM);
        assert!(
            live.stderr
                .tail(usize::MAX)
                .contains("stdin closed, staying up"),
            "the server saw EOF before being signalled"
        );
        assert_after_wait(
            took,
            SHORT.after_stdin_close,
            "SIGTERM came before the first wait",
        );
        run.finish(live.client).await;
    });
}

/// Closes a server that ignores both EOF and SIGTERM, on `ladder`: SIGTERM reaches it (it
/// logs it) after the first wait, and SIGKILL ends it after the second. Returns when the
/// SIGTERM was seen.
async fn close_through_sigkill(run: &Run, live: Live, ladder: ShutdownTimeouts) -> Duration {
    let (took, sigterm_at) = close_watching(live.client, &live.stderr, SERVER_SIGTERM).await;
    eprintln!(
        "[timing] ignore-sigterm ({:?} + {:?} ladder): SIGTERM seen at {sigterm_at:?}, close \
         took {took:?}",
        ladder.after_stdin_close, ladder.after_sigterm
    );
    assert_signalled(&live.monitor, libc::SIGKILL);
    assert!(
        sigterm_at >= ladder.after_stdin_close,
        "SIGTERM too early: {sigterm_at:?}"
    );
    assert_after_wait(
        took,
        ladder.after_stdin_close + ladder.after_sigterm,
        "SIGKILL came before the second wait",
    );
    run.assert_clean().await;
    sigterm_at
}

/// A server that ignores both EOF and SIGTERM receives SIGTERM after the first wait (it logs
/// it) and dies of SIGKILL after the second.
#[test]
fn server_ignoring_sigterm_gets_sigkill_after_the_second_wait() {
    serial(async {
        let (run, live) = start("ignore-sigterm", "ignore-sigterm").await;
        close_through_sigkill(&run, live, SHORT).await;
    });
}

/// The default ladder, unshortened: SIGTERM at 2 s, SIGKILL at 4 s.
#[test]
fn default_ladder_waits_two_seconds_then_two_more() {
    serial(async {
        let run = Run::start("default-ladder");
        let defaults = ShutdownTimeouts::default();
        let live = run
            .session(run.command("ignore-sigterm").shutdown_timeouts(defaults))
            .await;
        let sigterm_at = close_through_sigkill(&run, live, defaults).await;
        assert!(
            sigterm_at < defaults.after_stdin_close + defaults.after_sigterm,
            "SIGTERM at {sigterm_at:?}"
        );
    });
}

// --- grandchildren ---------------------------------------------------------------------------

/// A grandchild that holds the server's stdout and ignores SIGTERM does not keep the
/// connection open: the server exits on EOF, the group is killed, and the close does not wait
/// for a stdout EOF that would never come.
#[test]
fn grandchild_holding_stdout_dies_with_the_group() {
    serial(async {
        let (run, live) = start("grandchild", "grandchild").await;
        run.expect_grandchild(&live.stderr).await;

        // Without the group kill the close would wait out the 1 s stdout drain.
        let took = close_exiting(&live, 0).await;
        eprintln!("[timing] server exiting on EOF, grandchild holding stdout: close took {took:?}");
        run.finish(live.client).await;
    });
}

/// SIGTERM goes to the whole group: the grandchild (not the group leader) logs it, the server
/// dies of it, and the grandchild, which ignores it, keeps the rest of the SIGTERM window (a
/// launcher such as `npx` may exit before the real server is done) and is then killed.
#[test]
fn sigterm_reaches_the_whole_group() {
    serial(async {
        let (run, live) = start("group-sigterm", "grandchild-ignore-eof").await;
        run.expect_grandchild(&live.stderr).await;

        let (took, sigterm_at) =
            close_watching(live.client, &live.stderr, "sleeper: SIGTERM received").await;
        eprintln!(
            "[timing] grandchild-ignore-eof: SIGTERM seen by the grandchild at {sigterm_at:?}, \
             close took {took:?}"
        );
        assert_signalled(&live.monitor, libc::SIGTERM);
        assert!(
            sigterm_at >= SHORT.after_stdin_close,
            "SIGTERM at {sigterm_at:?}"
        );
        assert_after_wait(
            took,
            SHORT.after_stdin_close + SHORT.after_sigterm,
            "the grandchild was killed before its SIGTERM window ended",
        );
        run.assert_clean().await;
    });
}

/// A grandchild that leaves the group (`setsid`) escapes the ladder; oxmcp cannot signal it.
/// It must still not hold the connection open, nor keep any of our descriptors or tasks.
#[test]
fn escaped_grandchild_does_not_hold_the_connection_or_our_descriptors() {
    serial(async {
        let (run, live) = start("escaped-grandchild", "escaped-grandchild").await;
        let pids = run.expect_grandchild(&live.stderr).await;
        let escapee = pids
            .into_iter()
            .find(|&p| p != live.pid)
            .expect("the grandchild's pid");

        let took = timed_close(&live.client).await;
        eprintln!("[timing] escaped grandchild holding stdout and stderr: close took {took:?}");
        assert_exit_code(&live.monitor, 0);
        assert!(took < Duration::from_secs(3), "close took {took:?}");
        drop(live.client);

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
        let (run, live) = start("die-mid-call", "server").await;

        let call = live.client.call_tool(
            "die",
            json!({"code": 3, "message": "fatal: the fixture gave up"}),
        );
        let (err, took) = failed_call(call, Instant::now()).await;
        eprintln!("[timing] server exiting mid-call: call failed after {took:?}");
        assert_connection_closed(
            &err,
            "exited with exit code 3",
            "fatal: the fixture gave up",
        );
        assert!(
            err.to_string().contains("fatal: the fixture gave up"),
            "{err}"
        );
        assert_prompt(took, "the failing call");
        assert_exit_code(&live.monitor, 3);

        let again =
            tokio::time::timeout(PROMPT, live.client.call_tool("echo", json!({"text": "x"})))
                .await
                .expect("a call on a dead connection fails at once")
                .expect_err("the connection is closed");
        let same_reason = matches!(
            &again,
            Error::ConnectionClosed { reason, .. } if reason.contains("exit code 3")
        );
        assert!(same_reason, "{again:?}");
        let took = timed_close(&live.client).await;
        assert_prompt(took, "closing a dead connection");
        run.finish(live.client).await;
    });
}

/// A server killed from outside mid-call fails the call at once, with the signal in the reason.
#[test]
fn server_killed_mid_call_fails_the_call_at_once() {
    serial(async {
        let (run, live) = start("killed-mid-call", "server").await;

        let call = tokio::spawn({
            let client = live.client.clone();
            async move { client.call_tool("hang", json!({})).await }
        });
        wait_for_stderr(&live.stderr, "hang: started", "the call reaches the server").await;
        let killed = Instant::now();
        signal(live.pid, libc::SIGKILL);
        let call = async { call.await.expect("the call task does not panic") };
        let (err, took) = failed_call(call, killed).await;
        eprintln!("[timing] server SIGKILLed mid-call: call failed {took:?} after the kill");
        assert_connection_closed(&err, "signal 9", "hang: started");
        assert_prompt(took, "the failing call");
        assert_signalled(&live.monitor, libc::SIGKILL);
        timed_close(&live.client).await;
        run.finish(live.client).await;
    });
}

/// A server dying mid-call while its grandchild still holds stdout: the call fails at once
/// (the group is killed, so stdout reaches EOF without waiting out the drain).
#[test]
fn server_dying_with_a_grandchild_holding_stdout_fails_the_call_at_once() {
    serial(async {
        let (run, live) = start("die-with-grandchild", "grandchild").await;
        run.expect_grandchild(&live.stderr).await;

        let call = live
            .client
            .call_tool("die", json!({"code": 7, "message": "fatal: seven"}));
        let (err, took) = failed_call(call, Instant::now()).await;
        eprintln!(
            "[timing] server exiting mid-call, grandchild holding stdout: failed after {took:?}"
        );
        assert_connection_closed(&err, "exit code 7", "fatal: seven");
        assert_prompt(took, "the failing call");
        assert_exit_code(&live.monitor, 7);
        timed_close(&live.client).await;
        run.finish(live.client).await;
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
        let (run, live) = start("dropped-client", "server").await;
        drop(live.client);
        let status = poll(Duration::from_secs(5), || live.monitor.exit_status()).await;
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
        assert_echo(&client, "still here").await;
        timed_close(&client).await;
        assert_exit_code(&monitor, 0);
        run.finish(client).await;
    });
}

// --- stderr ------------------------------------------------------------------------------------

async fn flood_run(name: &'static str, flood: usize, capacity: Option<usize>) {
    let run = Run::start(name);
    let mut command = run
        .command("flood-stderr")
        .arg(flood.to_string())
        .shutdown_timeouts(ShutdownTimeouts::default());
    if let Some(capacity) = capacity {
        command = command.stderr_capacity(capacity);
    }
    let started = Instant::now();
    // The flood is one blocking write before the server starts: the handshake only completes
    // if the transport keeps draining stderr.
    let Live {
        client,
        monitor,
        stderr,
        ..
    } = run.session(command).await;
    eprintln!(
        "[timing] {name}: {flood} bytes of stderr, handshake after {:?}",
        started.elapsed()
    );
    assert_echo(&client, "after the flood").await;
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
    run.finish(client).await;
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
    let options = options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25));
    let Live {
        client, monitor, ..
    } = run
        .session_with(run.command("never-answers"), options)
        .await;

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
    assert_after_wait(took, timeout, "timed out early");

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
    run.finish(client).await;
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
