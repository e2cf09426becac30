//! Sessions: a flood of random session ids gets 404 and allocates nothing; initialize
//! cannot adopt a client-chosen id; ids are fresh 128-bit random values; the session cap
//! answers 503 (also under concurrent initializes) and DELETE frees a slot; idle sessions are
//! reaped.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use oxmcp::transport::http::HttpServerOptions;
use serde_json::json;

use crate::{
    Neighbour,
    common::http_harness::SplitMix,
    raw::{
        Conn, EVENT_STREAM, INITIALIZE, bodiless, delete, exchange, mcp_post, raw_session,
        tools_call,
    },
    start, wait_sessions,
};

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_random_session_ids_allocates_nothing() {
    const REQUESTS: usize = 10_000;
    const CONNECTIONS: usize = 8;
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let neighbour = Neighbour::start(&http.url()).await;
    let not_found = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for c in 0..CONNECTIONS {
        let not_found = not_found.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = SplitMix(0x5E55_1011 + c as u64);
            let mut conn = Conn::open(addr).await;
            for i in 0..REQUESTS / CONNECTIONS {
                let id = rng.session_id();
                let line = format!("Mcp-Session-Id: {id}");
                // Mostly POSTs; some GETs (stream open and Last-Event-ID resume) and DELETEs,
                // which must not find, open or close anything either.
                let request = match i % 10 {
                    7 => bodiless("GET", &[EVENT_STREAM, line.as_bytes()]),
                    8 => bodiless(
                        "GET",
                        &[EVENT_STREAM, line.as_bytes(), b"Last-Event-ID: 1-0"],
                    ),
                    9 => delete(&id),
                    // initialize too: a client-chosen id must not be adopted.
                    0 => mcp_post(Some(&id), &[], INITIALIZE),
                    _ => mcp_post(Some(&id), &[], &tools_call(i as u64, "x")),
                };
                let r = conn.send(&request).await;
                assert_eq!(r.status, 404, "random id {id}: {r:?}");
                assert_eq!(r.rpc_code(), Some(-32600));
                not_found.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // Sample the session count while the flood runs: only the neighbour's session, ever.
    let mut samples = 0;
    while tasks.iter().any(|t| !t.is_finished()) {
        assert_eq!(http.session_count(), 1, "the flood allocated a session");
        samples += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for t in tasks {
        t.await.expect("flood task");
    }
    assert_eq!(not_found.load(Ordering::Relaxed), REQUESTS);
    assert_eq!(http.session_count(), 1);
    println!("{REQUESTS} random session ids: all 404, {samples} session-count samples, all 1");
    neighbour.finish().await;
    wait_sessions(&http, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn session_ids_are_fresh_random_128_bit_values() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let mut ids = std::collections::HashSet::new();
    let mut rng = SplitMix(22);
    for _ in 0..200 {
        // A forged id shaped like a real one, offered with initialize: never adopted.
        let forged = rng.session_id();
        let r = exchange(addr, &mcp_post(Some(&forged), &[], INITIALIZE)).await;
        assert_eq!(r.status, 404);
        let id = raw_session(addr).await;
        assert_ne!(id, forged);
        assert_eq!(id.len(), 22, "{id}");
        let bytes = URL_SAFE_NO_PAD.decode(&id).expect("base64url");
        assert_eq!(bytes.len(), 16);
        assert!(ids.insert(id), "a session id repeated");
    }
    assert_eq!(http.session_count(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn session_cap_refuses_the_next_initialize_and_delete_frees_a_slot() {
    let (_server, http) = start(HttpServerOptions {
        max_sessions: 3,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(raw_session(addr).await);
    }
    assert_eq!(http.session_count(), 3);
    for _ in 0..5 {
        let r = exchange(addr, &mcp_post(None, &[], INITIALIZE)).await;
        assert_eq!(r.status, 503, "{r:?}");
        assert_eq!(r.header("retry-after").as_deref(), Some("5"));
        assert!(r.header("mcp-session-id").is_none());
        assert_eq!(r.rpc_code(), Some(-32603));
        assert_eq!(
            http.session_count(),
            3,
            "a refused initialize created a session"
        );
    }
    // The sessions at the cap keep working.
    for (i, id) in ids.iter().enumerate() {
        let r = exchange(
            addr,
            &mcp_post(Some(id), &[], &tools_call(7, &format!("s{i}"))),
        )
        .await;
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["result"]["content"][0]["text"], format!("s{i}"));
    }
    let r = exchange(addr, &delete(&ids[1])).await;
    assert_eq!(r.status, 200);
    assert_eq!(http.session_count(), 2);
    let fourth = raw_session(addr).await;
    assert_eq!(http.session_count(), 3);
    let r = exchange(addr, &mcp_post(None, &[], INITIALIZE)).await;
    assert_eq!(r.status, 503);
    // The deleted session is gone for good; the new one works.
    let r = exchange(addr, &mcp_post(Some(&ids[1]), &[], &tools_call(8, "x"))).await;
    assert_eq!(r.status, 404);
    let r = exchange(addr, &mcp_post(Some(&fourth), &[], &tools_call(9, "4th"))).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "4th");
}

#[tokio::test(flavor = "multi_thread")]
async fn session_cap_holds_under_concurrent_initializes() {
    const CAP: usize = 3;
    let (_server, http) = start(HttpServerOptions {
        max_sessions: CAP,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    for round in 0..20 {
        // Connections first, then every initialize written at once.
        let mut conns = Vec::new();
        for _ in 0..64 {
            conns.push(Conn::open(addr).await);
        }
        let barrier = Arc::new(tokio::sync::Barrier::new(conns.len()));
        let tasks: Vec<_> = conns
            .into_iter()
            .map(|mut c| {
                let b = barrier.clone();
                tokio::spawn(async move {
                    b.wait().await;
                    c.send(&mcp_post(None, &[], INITIALIZE)).await
                })
            })
            .collect();
        let mut ok = Vec::new();
        for t in tasks {
            let r = t.await.unwrap();
            if r.status == 200 {
                ok.push(r.session_id());
            } else {
                assert_eq!(r.status, 503);
            }
        }
        assert!(
            http.session_count() <= CAP && ok.len() <= CAP,
            "round {round}: {} initializes succeeded, {} sessions with max_sessions = {CAP}",
            ok.len(),
            http.session_count()
        );
        for id in ok {
            let r = exchange(addr, &delete(&id)).await;
            assert_eq!(r.status, 200);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_sessions_are_reaped_and_then_unknown() {
    let (_server, http) = start(HttpServerOptions {
        session_idle_timeout: Duration::from_millis(300),
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let ids = [raw_session(addr).await, raw_session(addr).await];
    assert_eq!(http.session_count(), 2);
    wait_sessions(&http, 0).await;
    for id in &ids {
        let r = exchange(addr, &mcp_post(Some(id), &[], &tools_call(2, "late"))).await;
        assert_eq!(r.status, 404, "a reaped session answered: {r:?}");
    }
    // A session that is not idle is not reaped: a long call keeps it alive past the timeout.
    let id = raw_session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "sleep", "arguments": {"ms": 900}}})
    .to_string();
    let r = exchange(addr, &mcp_post(Some(&id), &[], &call)).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["result"]["content"][0]["text"], "slept 900");
}
