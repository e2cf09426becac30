//! One step of a fixture session per helper: start it ([`Run::session`]), call it, close it
//! (timed, or while watching stderr for a signal's note), and assert how it ended (the exit
//! status, the typed error a pending call got, how long each step took). The tests in
//! `main.rs` are sequences of these steps.

use std::{
    future::Future,
    os::unix::process::ExitStatusExt,
    process::ExitStatus,
    time::{Duration, Instant},
};

use oxmcp::{
    Error,
    client::{Client, ClientOptions},
    transport::child::{ChildCommand, ChildMonitor, ChildTransport, StderrHandle},
};
use serde_json::json;

use crate::{
    PROMPT,
    harness::{Run, poll},
};

/// A connected fixture: the client, and what the transport hands out before it is linked.
pub struct Live {
    pub client: Client,
    pub monitor: ChildMonitor,
    pub stderr: StderrHandle,
    pub pid: u32,
}

impl Run {
    /// Spawns `command` and completes the handshake with the default options.
    pub async fn session(&self, command: ChildCommand) -> Live {
        self.session_with(command, options()).await
    }

    /// Spawns `command` and completes the handshake with `options`.
    pub async fn session_with(&self, command: ChildCommand, options: ClientOptions) -> Live {
        let child = self.spawn(command).await;
        let (monitor, stderr, pid) = (child.monitor(), child.stderr(), child.pid());
        let client = connect_with(child, options).await;
        Live {
            client,
            monitor,
            stderr,
            pid,
        }
    }

    /// The last step of every session: the client goes, and nothing may be left behind.
    pub async fn finish(&self, client: Client) {
        drop(client);
        self.assert_clean().await;
    }
}

/// A run named `name` and a session with the fixture in `mode`, on the short ladder.
pub async fn start(name: &'static str, mode: &str) -> (Run, Live) {
    let run = Run::start(name);
    let live = run.session(run.command(mode)).await;
    (run, live)
}

/// Closes a session whose server exits by itself on stdin EOF: the close is prompt (no
/// signal needed) and the exit code is `code`. Returns how long the close took.
pub async fn close_exiting(live: &Live, code: i32) -> Duration {
    let took = timed_close(&live.client).await;
    assert_exit_code(&live.monitor, code);
    assert_prompt(took, "the close of a server exiting on EOF");
    took
}

pub fn options() -> ClientOptions {
    ClientOptions::new("child-lifecycle", "0")
}

pub async fn connect(transport: ChildTransport) -> Client {
    connect_with(transport, options()).await
}

async fn connect_with(transport: ChildTransport, options: ClientOptions) -> Client {
    tokio::time::timeout(Duration::from_secs(10), Client::connect(transport, options))
        .await
        .expect("the handshake completes within 10 s")
        .expect("the client connects")
}

/// Calls `echo` and checks the text comes back.
pub async fn assert_echo(client: &Client, text: &str) {
    let echoed = client
        .call_tool("echo", json!({ "text": text }))
        .await
        .expect("echo");
    assert_eq!(echoed.text_content(), text);
}

/// Closes the client and returns how long the close took.
pub async fn timed_close(client: &Client) -> Duration {
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .expect("close completes within 10 s");
    started.elapsed()
}

/// Closes the client while watching stderr for `note`; returns how long the close took and
/// when the note (a fixture's "SIGTERM received") appeared, both from the start of the close.
pub async fn close_watching(
    client: Client,
    stderr: &StderrHandle,
    note: &str,
) -> (Duration, Duration) {
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

/// A ladder step that waits: `took` is at least `wait` (else `early`, with the time), and
/// the step then happened promptly, not at some later event.
pub fn assert_after_wait(took: Duration, wait: Duration, early: &str) {
    assert!(took >= wait, "{early}: {took:?}");
    assert!(took < wait + PROMPT, "took {took:?}, the wait was {wait:?}");
}

/// A step that must not wait for anything: done well within [`PROMPT`].
pub fn assert_prompt(took: Duration, what: &str) {
    assert!(took < PROMPT, "{what} took {took:?}");
}

/// Awaits a call that must fail at once (within 5 s, not at the 60 s request timeout);
/// returns its error and how long after `since` it failed.
pub async fn failed_call<T: std::fmt::Debug>(
    call: impl Future<Output = oxmcp::Result<T>>,
    since: Instant,
) -> (Error, Duration) {
    let err = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the call fails within 5 s, not at the 60 s request timeout")
        .expect_err("the server ended before answering");
    (err, since.elapsed())
}

/// `err` is `ConnectionClosed`, its reason saying how the child ended and its stderr tail
/// holding what the child wrote last.
pub fn assert_connection_closed(err: &Error, reason_has: &str, stderr_has: &str) {
    match err {
        Error::ConnectionClosed { reason, stderr } => {
            assert!(reason.contains(reason_has), "reason: {reason}");
            let stderr = stderr.as_deref().unwrap_or_default();
            assert!(stderr.contains(stderr_has), "stderr tail: {stderr:?}");
        }
        other => panic!("expected ConnectionClosed, got {other:?}"),
    }
}

fn exit_status(monitor: &ChildMonitor) -> ExitStatus {
    monitor
        .exit_status()
        .expect("the child has been reaped by the time the session closed")
}

pub fn assert_exit_code(monitor: &ChildMonitor, code: i32) {
    let status = exit_status(monitor);
    assert_eq!(
        (status.code(), status.signal()),
        (Some(code), None),
        "expected a normal exit with code {code}, got {status}"
    );
}

pub fn assert_signalled(monitor: &ChildMonitor, sig: libc::c_int) {
    let status = exit_status(monitor);
    assert_eq!(
        status.signal(),
        Some(sig),
        "expected the child to die of signal {sig}, got {status}"
    );
}
