//! Cut and resumed SSE streams: streams cut at seeded random byte offsets (POST streams and
//! the GET streams that resume them, cut again and again) and resumed with `Last-Event-ID`
//! deliver every event exactly once, in order, with the final answer, and never to another
//! session; a stream the server cuts itself (SEP-1699, the fixture's `test_reconnection`) is
//! resumed the same way, by a raw client and by the oxmcp client.

use std::{
    collections::HashSet,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use oxmcp::transport::http::{HttpServer, HttpServerOptions};
use serde_json::{Value, json};
use tokio::net::TcpStream;

use crate::{
    PATIENCE,
    common::{
        Wire, fixture_server,
        http_harness::{SplitMix, http_client, session_options},
    },
    sse::{Event, post, raw_session, read_events, resume, send_head},
    start,
};

/// The conformance fixture with a 100 ms retry hint, for its self-cutting `test_reconnection`.
async fn serve_reconnection_fixture() -> HttpServer {
    fixture_server()
        .serve_http(HttpServerOptions {
            sse_retry: Duration::from_millis(100),
            ..Default::default()
        })
        .await
        .expect("the server binds")
}

/// What one call's events looked like across all the connections that carried them.
struct Trial {
    seed: u64,
    cuts: usize,
    connections: usize,
}

/// Calls `tick` over raw HTTP, cutting each connection after a random number of bytes and
/// resuming with `Last-Event-ID` until the answer arrives; checks every event exactly once.
async fn cut_and_resume(addr: SocketAddr, session: &str, tag: &str, n: u64, seed: u64) -> Trial {
    let mut rng = SplitMix(seed);
    let steps = 10 + rng.below(40);
    let interval = [0, 0, 1, 3][rng.below(4) as usize];
    let id = format!("{tag}-{n}");
    let token = format!("{tag}-token-{n}");
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "tick", "arguments": {"interval_ms": interval, "steps": steps},
        "_meta": {"progressToken": token}}})
    .to_string();
    // About 140 bytes per event on the wire (chunk framing included): cut anywhere in the
    // whole stream.
    let span = (steps as usize + 1) * 140;
    let mut all: Vec<Event> = Vec::new();
    let mut cuts = 0;
    let mut connections = 0;
    let mut last_id: Option<String> = None;
    let answered = |e: &Event| e.data.contains(&format!("\"id\":\"{id}\""));
    loop {
        connections += 1;
        assert!(connections < 200, "seed {seed}: no end in sight");
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = match &last_id {
            None => send_head(&mut s, &post(Some(session), &call)).await,
            Some(from) => send_head(&mut s, &resume(session, from)).await,
        };
        assert_eq!(head.status, 200, "seed {seed}: resume from {last_id:?}");
        assert_eq!(head.header("content-type"), Some("text/event-stream"));
        // One time in five the connection is read to its end; otherwise cut at random.
        let budget = (rng.below(5) != 0).then(|| rng.below(span as u64) as usize);
        let (events, ended) =
            read_events(&mut s, head.rest, budget, last_id.is_none(), answered).await;
        let got_answer = events.iter().any(answered);
        if let Some(e) = events.iter().rev().find_map(|e| e.id.clone()) {
            last_id = Some(e);
        }
        all.extend(events);
        if got_answer {
            break;
        }
        if !ended {
            cuts += 1;
        }
        // Dropping the socket with unread bytes resets the connection: a real cut.
        drop(s);
        assert!(last_id.is_some(), "seed {seed}: cut before any event id");
    }
    // Priming events (no data) carry `<stream>-0`; messages `<stream>-1` … `<stream>-n`.
    let messages: Vec<&Event> = all.iter().filter(|e| !e.data.is_empty()).collect();
    let ids: Vec<&str> = messages.iter().map(|e| e.id.as_deref().unwrap()).collect();
    let unique: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(
        unique.len(),
        ids.len(),
        "seed {seed}: duplicated events {ids:?}"
    );
    let stream = ids[0].split_once('-').unwrap().0;
    let expected: Vec<String> = (1..=steps + 1).map(|k| format!("{stream}-{k}")).collect();
    assert_eq!(ids, expected, "seed {seed}: lost or reordered events");
    let mut progress = Vec::new();
    for e in &messages[..messages.len() - 1] {
        assert_eq!(e.event.as_deref(), Some("message"));
        let v: Value = serde_json::from_str(&e.data).unwrap();
        assert_eq!(v["method"], "notifications/progress", "seed {seed}: {v}");
        assert_eq!(
            v["params"]["progressToken"], token,
            "seed {seed}: another call's event"
        );
        progress.push(v["params"]["progress"].as_f64().unwrap());
    }
    let expected: Vec<f64> = (1..=steps).map(|s| s as f64).collect();
    assert_eq!(progress, expected, "seed {seed}");
    let answer: Value = serde_json::from_str(&messages.last().unwrap().data).unwrap();
    assert_eq!(answer["id"], id);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("ticked {steps}"),
        "seed {seed}"
    );
    Trial {
        seed,
        cuts,
        connections,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sse_streams_cut_at_random_points_resume_without_loss_or_duplication() {
    const TRIALS: u64 = 200;
    let (_server, http) = start().await;
    let addr = http.local_addr();
    let a = raw_session(addr).await;
    let b = raw_session(addr).await;
    // Two sessions cut and resume side by side; each must only ever see its own events.
    let run = |session: String, tag: &'static str, base: u64| {
        tokio::spawn(async move {
            let mut trials = Vec::new();
            for n in 0..TRIALS {
                trials.push(cut_and_resume(addr, &session, tag, n, base + n).await);
            }
            trials
        })
    };
    let stop = Arc::new(AtomicBool::new(false));
    // A third session replays event ids the other two use: it gets its own streams or 404,
    // never their events.
    let snoop = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let c = raw_session(addr).await;
            let mut rng = SplitMix(77);
            let mut probes = 0;
            while !stop.load(Ordering::Relaxed) {
                let from = format!("{}-0", 1 + rng.below(40));
                let session = if rng.below(2) == 0 {
                    c.clone()
                } else {
                    rng.session_id()
                };
                let mut s = TcpStream::connect(addr).await.unwrap();
                let head = send_head(&mut s, &resume(&session, &from)).await;
                if head.status == 200 {
                    let (events, _) = tokio::time::timeout(
                        Duration::from_millis(200),
                        read_events(&mut s, head.rest, None, false, |_| false),
                    )
                    .await
                    .unwrap_or_default();
                    for e in events {
                        assert!(
                            !e.data.contains("\"A-") && !e.data.contains("\"B-"),
                            "session C received another session's event: {}",
                            e.data
                        );
                    }
                } else {
                    assert_eq!(head.status, 404);
                }
                probes += 1;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            probes
        })
    };
    let started = Instant::now();
    let ta = run(a, "A", 1_000);
    let tb = run(b, "B", 2_000);
    let (ta, tb) = tokio::time::timeout(Duration::from_secs(240), async {
        (ta.await.unwrap(), tb.await.unwrap())
    })
    .await
    .expect("the trials finish");
    stop.store(true, Ordering::Relaxed);
    let probes = snoop.await.unwrap();
    let trials: Vec<Trial> = ta.into_iter().chain(tb).collect();
    let cuts: usize = trials.iter().map(|t| t.cuts).sum();
    let connections: usize = trials.iter().map(|t| t.connections).sum();
    let most = trials.iter().max_by_key(|t| t.cuts).unwrap();
    println!(
        "{} trials in {:?}: {cuts} cuts, {connections} connections, at most {} cuts in one \
         call (seed {}); {probes} snooping resumes refused or isolated",
        trials.len(),
        started.elapsed(),
        most.cuts,
        most.seed
    );
    // The seeds are fixed: this only guards against the test silently cutting nothing.
    assert!(
        cuts >= trials.len(),
        "{cuts} cuts in {} calls",
        trials.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn server_cut_stream_is_resumed_sep_1699_raw() {
    let http = serve_reconnection_fixture().await;
    let addr = http.local_addr();
    let session = raw_session(addr).await;
    let mut rng = SplitMix(1699);
    for n in 0..20 {
        let call = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                          "params": {"name": "test_reconnection", "arguments": {}}})
        .to_string();
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = send_head(&mut s, &post(Some(&session), &call)).await;
        assert_eq!(head.status, 200);
        assert_eq!(head.header("content-type"), Some("text/event-stream"));
        // The server ends the stream itself, after a priming event and before the answer.
        let (events, ended) = read_events(&mut s, head.rest, None, false, |_| false).await;
        assert!(ended);
        assert_eq!(events.len(), 1, "{events:?}");
        let priming = &events[0];
        assert!(priming.data.is_empty());
        assert_eq!(priming.retry, Some(100));
        let from = priming
            .id
            .clone()
            .expect("the priming event names the resume point");
        assert!(from.ends_with("-0"), "{from}");
        // Resume before the answer exists (live) or after (replayed), and sometimes cut the
        // resumed stream too and resume again.
        if n % 2 == 1 {
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
        let mut last = from.clone();
        let mut seen = Vec::new();
        loop {
            let mut s = TcpStream::connect(addr).await.unwrap();
            let head = send_head(&mut s, &resume(&session, &last)).await;
            assert_eq!(head.status, 200);
            let budget = (rng.below(3) == 0).then(|| rng.below(200) as usize);
            let (events, _) = read_events(&mut s, head.rest, budget, false, |_| false).await;
            if let Some(id) = events.iter().rev().find_map(|e| e.id.clone()) {
                last = id;
            }
            seen.extend(events);
            if seen.iter().any(|e| !e.data.is_empty()) {
                break;
            }
        }
        assert_eq!(seen.len(), 1, "{seen:?}");
        let answer: Value = serde_json::from_str(&seen[0].data).unwrap();
        assert_eq!(answer["id"], n);
        assert_eq!(
            answer["result"]["content"][0]["text"],
            "Reconnection test completed"
        );
        let stream = from.split_once('-').unwrap().0;
        assert_eq!(seen[0].id.as_deref(), Some(&*format!("{stream}-1")));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn server_cut_stream_is_resumed_sep_1699_by_the_client() {
    let http = serve_reconnection_fixture().await;
    let wire = Wire::new();
    let client = http_client(&http.url(), session_options(), Some(&wire))
        .await
        .unwrap();
    // Several at once on one session, next to plain calls.
    let calls = (0..5).map(|_| client.call_tool("test_reconnection", json!({})));
    let plain = (0..5).map(|_| client.call_tool("test_simple_text", json!({})));
    let (cut, plain) = tokio::time::timeout(PATIENCE, async {
        futures::join!(
            futures::future::join_all(calls),
            futures::future::join_all(plain)
        )
    })
    .await
    .expect("the calls finish");
    for r in cut {
        assert_eq!(
            r.unwrap().content[0].as_text(),
            Some("Reconnection test completed")
        );
    }
    for r in plain {
        assert_eq!(
            r.unwrap().content[0].as_text(),
            Some("This is a simple text response for testing.")
        );
    }
    client.close().await;
    wire.assert_valid();
}
