//! A peer that writes requests and never reads the answers must not make a server buffer
//! without bound: once its outbound queue is full the session reads no more, so the peer's
//! own writes block as the pipes fill. When the peer starts reading again every answer comes
//! out, in order, none lost, and the server exits cleanly at EOF.
//!
//! The server is the `weather_server` example, a real child process over real pipes; the
//! requests are `ping`s, which the session answers itself, without a handler task, through
//! the queue that used to detach one task per answer once it was full.

mod common;

use std::{
    io::{BufRead, BufReader, Write},
    process::{Command, Stdio},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use common::example_bin;
use serde_json::{Value, json};

/// Far more pings than fit in the pipes and queues between the two sides (about 18 MB).
const PINGS: usize = 400_000;
/// Only turns a hang into a failure; nothing here is timed.
const GENEROUS: Duration = Duration::from_secs(120);

#[test]
fn a_peer_that_does_not_read_is_held_back_and_loses_nothing() {
    let mut child = Command::new(example_bin("weather_server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn weather_server");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));

    let init = json!({
        "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "peer_not_reading", "version": "0"}
        }
    });
    writeln!(stdin, "{init}").expect("write initialize");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read initialize result");
    let reply: Value = serde_json::from_str(&line).expect("initialize result is JSON");
    assert_eq!(reply["id"], "init", "{reply}");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .expect("write initialized");

    // The writer counts the pings the server has taken; it blocks once the server stops
    // reading.
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let written = written.clone();
        thread::spawn(move || {
            for id in 0..PINGS {
                let ping = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
                if stdin.write_all(ping.as_bytes()).is_err() {
                    return None;
                }
                written.store(id + 1, Ordering::SeqCst);
            }
            Some(stdin)
        })
    };

    // Wait until the writer is finished or has stopped making progress for a while.
    let deadline = Instant::now() + GENEROUS;
    let mut last = (0, Instant::now());
    loop {
        thread::sleep(Duration::from_millis(100));
        let now = written.load(Ordering::SeqCst);
        if now == PINGS {
            break;
        }
        if now != last.0 {
            last = (now, Instant::now());
        } else if last.1.elapsed() > Duration::from_secs(1) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the writer neither finished nor stalled"
        );
    }
    let held_at = written.load(Ordering::SeqCst);
    assert!(
        held_at < PINGS,
        "the server read all {PINGS} pings while none of its answers were read: it buffers \
         without bound"
    );

    // Now read: every ping written gets its answer, in order, and the writer gets going again.
    for expected in 0..PINGS {
        line.clear();
        let n = stdout.read_line(&mut line).expect("read a ping answer");
        assert!(n > 0, "the server closed stdout after {expected} answers");
        let reply: Value = serde_json::from_str(&line).expect("an answer is JSON");
        assert_eq!(reply["id"], expected, "{reply}");
        assert_eq!(reply["result"], json!({}), "{reply}");
    }
    let stdin = writer
        .join()
        .expect("the writer thread")
        .expect("every ping was written once the answers were read");
    drop(stdin);

    // EOF: the server exits cleanly, and said nothing more.
    let exit_deadline = Instant::now() + GENEROUS;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the server") {
            break status;
        }
        if Instant::now() > exit_deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not exit at EOF");
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    line.clear();
    assert_eq!(
        stdout.read_line(&mut line).expect("read to EOF"),
        0,
        "{line}"
    );
    eprintln!("held back after {held_at} of {PINGS} pings");
}
