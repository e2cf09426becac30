//! A server restart on the same port: the client gets a new session transparently (the 404
//! → re-initialize path), its calls go on, server-initiated messages still arrive, and no
//! event id of the old session is replayed into the new one.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use http::{HeaderMap, StatusCode};
use oxmcp::{
    server::Server,
    transport::http::{HttpServer, HttpServerOptions},
};
use serde_json::{Value, json};

use crate::{
    PATIENCE,
    common::{
        Probe, Wire,
        http_harness::{http_client, session_options},
        test_server,
    },
    progress_counter, start, wait_sessions,
};

/// What a server saw of one request (an auth hook that lets everything through records it).
#[derive(Clone, Debug)]
struct Seen {
    /// `GET` (Accept: text/event-stream only) or `POST`/`DELETE` (anything else).
    get: bool,
    session: Option<String>,
    last_event_id: Option<String>,
}

/// The requests a server saw, in order: the tests' view of which session a client used.
#[derive(Clone, Default)]
struct RequestLog(Arc<Mutex<Vec<Seen>>>);

impl RequestLog {
    fn options(&self) -> HttpServerOptions {
        let log = self.0.clone();
        HttpServerOptions {
            auth: Some(Arc::new(move |h: &HeaderMap| {
                let get = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
                log.lock().unwrap().push(Seen {
                    get: get("accept").as_deref() == Some("text/event-stream"),
                    session: get("mcp-session-id"),
                    last_event_id: get("last-event-id"),
                });
                Ok::<(), (StatusCode, String)>(())
            })),
            ..Default::default()
        }
    }

    fn all(&self) -> Vec<Seen> {
        self.0.lock().unwrap().clone()
    }

    /// Session ids presented, first appearance order.
    fn ids(&self) -> Vec<String> {
        let mut seen = Vec::new();
        for id in self.all().into_iter().filter_map(|s| s.session) {
            if !seen.contains(&id) {
                seen.push(id);
            }
        }
        seen
    }
}

/// Binds `port` again, retrying while the old listener is still being torn down.
async fn rebind(server: &Server, port: u16, mut options: HttpServerOptions) -> HttpServer {
    options.bind = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + PATIENCE;
    loop {
        match server.serve_http(options.clone()).await {
            Ok(h) => return h,
            Err(e) if Instant::now() < deadline => {
                tracing::debug!("rebind: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("port {port} not free again: {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_whose_server_restarts_gets_a_new_session_and_goes_on() {
    let server = test_server(&Probe::default());
    let before = RequestLog::default();
    let first = server.serve_http(before.options()).await.unwrap();
    let port = first.local_addr().port();
    let url = first.url();
    // Two clients: each must come back on a session of its own.
    let (wa, wb) = (Wire::new(), Wire::new());
    let a = http_client(&url, session_options(), Some(&wa))
        .await
        .unwrap();
    let b = http_client(&url, session_options(), Some(&wb))
        .await
        .unwrap();
    for (c, name) in [(&a, "a"), (&b, "b")] {
        let r = c.call_tool("echo", json!({"text": name})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some(name));
    }
    let old = before.ids();
    assert_eq!(old.len(), 2, "{old:?}");

    first.shutdown().await;
    drop(first);
    // Restarted at once: a call that goes out on a keep-alive connection the old server
    // closed is retried on a new one (`every_call_right_after_a_restart_succeeds` hammers that).
    let after = RequestLog::default();
    let second = rebind(&server, port, after.options()).await;
    assert_eq!(second.session_count(), 0);

    for round in 0..3 {
        let (ra, rb) = tokio::time::timeout(PATIENCE, async {
            tokio::join!(
                a.call_tool("echo", json!({"text": format!("a again {round}")})),
                b.call_tool("echo", json!({"text": format!("b again {round}")})),
            )
        })
        .await
        .expect("calls after the restart finish");
        assert_eq!(
            ra.expect("a's call after the restart").content[0].as_text(),
            Some(&*format!("a again {round}"))
        );
        assert_eq!(
            rb.expect("b's call after the restart").content[0].as_text(),
            Some(&*format!("b again {round}"))
        );
    }
    assert_eq!(second.session_count(), 2);
    let seen = after.ids();
    let new: Vec<&String> = seen.iter().filter(|id| !old.contains(id)).collect();
    println!("sessions before the restart {old:?}; ids presented after it {seen:?}");
    // The clients presented their old ids (answered 404), then each used one new id.
    assert!(old.iter().all(|id| seen.contains(id)), "{seen:?}");
    assert_eq!(new.len(), 2, "one new session per client: {seen:?}");
    assert_ne!(new[0], new[1]);
    a.close().await;
    b.close().await;
    wa.assert_valid();
    wb.assert_valid();
    wait_sessions(&second, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_call_right_after_a_restart_succeeds() {
    // About one restart in 40 loses the race on an idle machine: enough rounds to see it.
    const RESTARTS: usize = 150;
    let (server, mut http) = start().await;
    let port = http.local_addr().port();
    let client = http_client(&http.url(), session_options(), None)
        .await
        .unwrap();
    let mut failures = Vec::new();
    for n in 0..RESTARTS {
        let text = format!("after restart {n}");
        // A pooled connection to the current server, idle when the restart comes.
        client
            .call_tool("echo", json!({"text": "warm"}))
            .await
            .unwrap();
        http.shutdown().await;
        drop(http);
        http = rebind(&server, port, HttpServerOptions::default()).await;
        match client.call_tool("echo", json!({ "text": text })).await {
            Ok(r) => assert_eq!(r.content[0].as_text(), Some(text.as_str())),
            Err(e) => failures.push(format!("restart {n}: {e}")),
        }
    }
    println!("{} of {RESTARTS} first calls failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_restart_server_initiated_messages_still_arrive() {
    let server = test_server(&Probe::default());
    // A short retry hint: the client's GET loop comes back quickly after the restart.
    let quick = |log: &RequestLog| HttpServerOptions {
        sse_retry: Duration::from_millis(50),
        ..log.options()
    };
    let (before, after) = (RequestLog::default(), RequestLog::default());
    let first = server.serve_http(quick(&before)).await.unwrap();
    let port = first.local_addr().port();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = session_options().on_notification(move |method, _| {
        let _ = tx.send(method.to_owned());
    });
    let client = http_client(&first.url(), options, None).await.unwrap();
    client
        .call_tool("echo", json!({"text": "1"}))
        .await
        .unwrap();
    let add = |name: &str| {
        server
            .add_tool(
                oxmcp::protocol::Tool::new(name, "added", json!({"type": "object"})),
                |_a: Value, _c| async move { Ok(oxmcp::protocol::CallToolResult::text("new")) },
            )
            .unwrap();
    };
    // Before the restart, a list change reaches the client on its GET stream.
    add("before");
    let got = tokio::time::timeout(PATIENCE, rx.recv())
        .await
        .expect("a notification");
    assert_eq!(got.as_deref(), Some("notifications/tools/list_changed"));

    first.shutdown().await;
    drop(first);
    let second = rebind(&server, port, quick(&after)).await;
    let r = client
        .call_tool("echo", json!({"text": "2"}))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("2"));
    // Wait until the new session has its GET stream: a GET without Last-Event-ID (the bound
    // only turns a hang into a failure whose message shows the requests the server saw).
    let new_id = after.ids().last().cloned().unwrap();
    let reopened =
        tokio::time::timeout(Duration::from_secs(5), async {
            while !after.all().iter().any(|s| {
                s.get && s.session.as_deref() == Some(&new_id) && s.last_event_id.is_none()
            }) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    assert!(
        reopened.is_ok(),
        "no GET on the new session {new_id}; the second server saw {:#?}",
        after.all()
    );
    add("after");
    let got = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("tools/list_changed after the restart never arrived");
    assert_eq!(got.as_deref(), Some("notifications/tools/list_changed"));
    client.close().await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_restart_no_event_id_of_the_old_session_is_replayed() {
    let server = test_server(&Probe::default());
    let (before, after) = (RequestLog::default(), RequestLog::default());
    // The default 1 s retry hint: the GET loop comes back after the call below has started.
    let first = server.serve_http(before.options()).await.unwrap();
    let port = first.local_addr().port();
    let client = http_client(&first.url(), session_options(), None)
        .await
        .unwrap();
    client
        .call_tool("echo", json!({"text": "1"}))
        .await
        .unwrap();
    let old_id = before.ids()[0].clone();
    // The GET stream of the old session got its priming event id.
    tokio::time::timeout(PATIENCE, async {
        while !before.all().iter().any(|s| s.get) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the client opens its GET stream");

    first.shutdown().await;
    drop(first);
    let second = rebind(&server, port, after.options()).await;
    // A long call right after the restart: re-initialize (stream 1 of the new session), then
    // this call on stream 2 — the number the old session's GET stream had.
    let (seen, options) = progress_counter();
    let r = tokio::time::timeout(
        PATIENCE,
        client.call_tool_with("tick", json!({"interval_ms": 50, "steps": 50}), options),
    )
    .await
    .expect("the call finishes")
    .expect("the call succeeds");
    assert_eq!(r.content[0].as_text(), Some("ticked 50"));
    let log = after.all();
    let new_id = after
        .ids()
        .into_iter()
        .find(|id| *id != old_id)
        .expect("a new session");
    // The old session's GET stream had id 2 ("2-0" its priming event); that id means nothing
    // in the new session, where stream 2 is this call's.
    let stale: Vec<&Seen> = log
        .iter()
        .filter(|s| s.session.as_deref() == Some(&new_id) && s.last_event_id.is_some())
        .collect();
    let progress = seen.lock().unwrap().clone();
    let expected: Vec<f64> = (1..=50).map(f64::from).collect();
    println!("second server saw {log:#?}\nprogress {progress:?}");
    assert_eq!(progress, expected, "duplicated or lost progress");
    assert!(
        stale
            .iter()
            .all(|s| s.last_event_id.as_deref() != Some("2-0")),
        "the old session's GET stream id resumed on the new session: {stale:#?}"
    );
    client.close().await;
    second.shutdown().await;
}
