//! 1,000 oxmcp clients hold 1,000 concurrent sessions on one server, each making calls with
//! arguments of its own (plain JSON answers and SSE answers with progress), while hostile
//! neighbours flood forged session ids and half-sent requests: every answer and every progress
//! notification reaches the client it belongs to, none is lost.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use serde_json::json;
use tokio::{io::AsyncWriteExt, net::TcpStream};

use crate::{
    common::{
        Wire,
        http_harness::{SplitMix, http_client, session_options},
    },
    progress_counter,
    sse::{post, send_head},
    start, wait_sessions,
};

/// Open file descriptors of this process (the test's clients and the server together).
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_concurrent_sessions_each_get_their_own_answers() {
    const SESSIONS: usize = 1000;
    let (_server, http) = start().await;
    let url = http.url();
    let addr = http.local_addr();

    // Hostile neighbours: forged session ids, and requests abandoned half-way.
    let stop = Arc::new(AtomicBool::new(false));
    let hostile: Vec<_> = (0..2)
        .map(|h| {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut rng = SplitMix(1000 + h);
                let mut refused = 0usize;
                let body = concat!(
                    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
                    r#""params":{"name":"echo","arguments":{"text":"forged"}}}"#
                );
                while !stop.load(Ordering::Relaxed) {
                    let mut s = TcpStream::connect(addr).await.unwrap();
                    let request = post(Some(&rng.session_id()), body);
                    if rng.below(2) == 0 {
                        let head = send_head(&mut s, &request).await;
                        assert_eq!(head.status, 404);
                        refused += 1;
                    } else {
                        let cut = rng.below(request.len() as u64) as usize;
                        let _ = s.write_all(&request[..cut]).await;
                    }
                    tokio::task::yield_now().await;
                }
                refused
            })
        })
        .collect();

    let started = Instant::now();
    // All clients connect, then all call at once, then all close: the 1,000 sessions are
    // open together while the calls run.
    let connected = Arc::new(tokio::sync::Barrier::new(SESSIONS + 1));
    let called = Arc::new(tokio::sync::Barrier::new(SESSIONS + 1));
    // Held until the test has counted the sessions after the calls.
    let counted = Arc::new(tokio::sync::Barrier::new(SESSIONS + 1));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let progress_total = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(SESSIONS);
    for i in 0..SESSIONS {
        let url = url.clone();
        let (failures, progress_total) = (failures.clone(), progress_total.clone());
        let (connected, called, counted) = (connected.clone(), called.clone(), counted.clone());
        tasks.push(tokio::spawn(async move {
            // Every 50th client's whole exchange is checked against the official schemas.
            let wire = (i % 50 == 0).then(Wire::new);
            let client = http_client(&url, session_options(), wire.as_ref()).await;
            connected.wait().await;
            let client = match client {
                Ok(c) => c,
                Err(e) => {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("client {i}: connect: {e}"));
                    called.wait().await;
                    counted.wait().await;
                    return;
                }
            };
            let text = format!("client {i} says {}", i * 7919 % 10007);
            let steps = (i % 4 + 1) as u64;
            let (seen, options) = progress_counter();
            // Three calls in flight at once on one session: a JSON answer, a structured
            // one, and an SSE stream with `steps` progress notifications before its answer.
            let (echo, add, tick) = tokio::join!(
                client.call_tool("echo", json!({ "text": text })),
                client.call_tool("add", json!({ "a": i, "b": 1_000_000 + i })),
                client.call_tool_with("tick", json!({ "interval_ms": 1, "steps": steps }), options),
            );
            let mut bad = Vec::new();
            match echo {
                Ok(r) if r.content[0].as_text() == Some(text.as_str()) => {}
                other => bad.push(format!("echo: {other:?}")),
            }
            match add {
                Ok(r)
                    if r.structured_content
                        == Some(json!({ "sum": (1_000_000 + 2 * i) as f64 })) => {}
                other => bad.push(format!("add: {other:?}")),
            }
            match tick {
                Ok(r) if r.content[0].as_text() == Some(&*format!("ticked {steps}")) => {}
                other => bad.push(format!("tick: {other:?}")),
            }
            let progress = seen.lock().unwrap().clone();
            let expected: Vec<f64> = (1..=steps).map(|s| s as f64).collect();
            if progress != expected {
                bad.push(format!("progress {progress:?}, expected {expected:?}"));
            }
            progress_total.fetch_add(progress.len(), Ordering::Relaxed);
            if !bad.is_empty() {
                failures
                    .lock()
                    .unwrap()
                    .push(format!("client {i}: {}", bad.join("; ")));
            }
            called.wait().await;
            counted.wait().await;
            client.close().await;
            if let Some(w) = wire {
                w.assert_valid();
            }
        }));
    }
    let limit = Duration::from_secs(180);
    tokio::time::timeout(limit, connected.wait())
        .await
        .expect("1,000 clients connect");
    let connect_time = started.elapsed();
    let open_at_once = http.session_count();
    tokio::time::timeout(limit, called.wait())
        .await
        .expect("1,000 sessions' calls finish");
    let call_time = started.elapsed() - connect_time;
    let fds = open_fds();
    let still_open = http.session_count();
    counted.wait().await;
    tokio::time::timeout(limit, async {
        for t in tasks {
            t.await.expect("a client task panicked");
        }
    })
    .await
    .expect("1,000 clients close");
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let mut refused = 0;
    for h in hostile {
        refused += h.await.unwrap();
    }
    let failures = failures.lock().unwrap().clone();
    println!(
        "{SESSIONS} sessions: connected in {connect_time:?}, 3 concurrent calls each in \
         {call_time:?}, {elapsed:?} in all; {open_at_once} sessions open at once; {fds} fds \
         open at the peak; {} progress notifications routed; {refused} forged requests \
         refused; {} failures",
        progress_total.load(Ordering::Relaxed),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(20)].join("\n")
    );
    assert_eq!(open_at_once, SESSIONS);
    assert_eq!(still_open, SESSIONS);
    // Every client said goodbye with DELETE: nothing is left behind.
    wait_sessions(&http, 0).await;
    http.shutdown().await;
}
