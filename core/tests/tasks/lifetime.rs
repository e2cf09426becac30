//! A task's life beyond its request: it outlives the client that created it (and another
//! client with the same credentials collects it, one with others cannot see it), it expires
//! with its TTL (its handler stopped), its cancel reaches the handler, a panicking handler
//! leaves it `failed`, a replica that stops renewing its lease leaves it `failed` rather than
//! `working` forever, and what a 2025-11-25 task says on the way carries its id.

use std::{sync::Arc, time::Duration};

use http::{HeaderMap, HeaderValue, StatusCode};
use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ProtocolMode, TaskCallOptions},
    protocol::{CallToolResult, LoggingLevel, TaskStatus, TaskSupport, Tool},
    server::{Context, Server, TaskOptions, ToolOptions},
    task_store::{MemoryTaskStore, TaskStore},
    transport::http::{HttpClientOptions, HttpClientTransport, HttpServerOptions},
};
use serde_json::{Value, json};

use crate::{
    STEP,
    common::{Probe, RawPeer, client_options, fixture, pair},
    create_raw, wait_raw, with_tasks,
};

fn stateless() -> ProtocolMode {
    ProtocolMode::Stateless(ProtocolVersion::V2026_07_28)
}

/// The fixture plus `watched`: a task that runs until cancelled, telling `probe` when its
/// cancellation fires; and `boom`, whose handler panics.
fn watched_server(builder: oxmcp::server::ServerBuilder, probe: &Probe) -> Server {
    let server = fixture::build(builder).expect("the fixture builds");
    let p = probe.clone();
    server
        .add_tool_with(
            Tool::new("watched", "Runs until cancelled", json!({"type": "object"})),
            ToolOptions::tasks(TaskSupport::Optional),
            move |_a: Value, ctx: Context| {
                let p = p.clone();
                async move {
                    p.push("started");
                    ctx.cancelled().await;
                    p.push("cancelled");
                    Ok(CallToolResult::text("stopped"))
                }
            },
        )
        .unwrap();
    server
        .add_tool_with(
            Tool::new("boom", "Panics", json!({"type": "object"})),
            ToolOptions::tasks(TaskSupport::Optional),
            |_a: Value, _c: Context| async move {
                if true {
                    panic!("the handler blew up");
                }
                Ok(CallToolResult::text("never"))
            },
        )
        .unwrap();
    server
}

async fn http_client(url: &str, token: Option<&str>) -> Client {
    let mut headers = HeaderMap::new();
    if let Some(token) = token {
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
    }
    let transport = HttpClientTransport::new(
        url,
        HttpClientOptions {
            headers,
            ..Default::default()
        },
    )
    .unwrap();
    Client::connect(transport, client_options().protocol(stateless()))
        .await
        .expect("connects")
}

#[tokio::test]
async fn a_task_outlives_its_client_and_only_the_same_credentials_collect_it() {
    let server = fixture::build(Server::builder("fixture", "1.0.0")).unwrap();
    // Every token is welcome: the task belongs to whichever one created it.
    let options = HttpServerOptions {
        auth: Some(Arc::new(
            |_h: &HeaderMap| Ok::<(), (StatusCode, String)>(()),
        )),
        ..Default::default()
    };
    let http = server.serve_http(options).await.unwrap();
    let url = http.url();

    let first = http_client(&url, Some("alice")).await;
    let task = first
        .call_tool_as_task(
            "slow_compute",
            json!({"seconds": 0.5, "label": "later"}),
            TaskCallOptions::default(),
        )
        .await
        .unwrap();
    let id = task.id().unwrap().to_owned();
    first.close().await;
    drop(task);

    let stranger = http_client(&url, Some("mallory")).await;
    match stranger.task(&id).unwrap().status().await {
        Err(Error::Rpc(e)) => assert_eq!(e.code, -32602, "another client's task is unknown"),
        other => panic!("{other:?}"),
    }
    assert!(stranger.task(&id).unwrap().cancel().await.is_err());
    let anonymous = http_client(&url, None).await;
    assert!(anonymous.task(&id).unwrap().status().await.is_err());

    let again = http_client(&url, Some("alice")).await;
    let result = tokio::time::timeout(STEP, again.task(&id).unwrap().result())
        .await
        .expect("in time")
        .expect("collected");
    assert_eq!(result.text_content(), "later: computed after 0.5 s");
    for c in [stranger, anonymous, again] {
        c.close().await;
    }
    http.shutdown().await;
}

#[tokio::test]
async fn a_task_expires_with_its_ttl_and_its_handler_is_stopped() {
    let probe = Probe::default();
    let options = TaskOptions {
        min_ttl: Duration::from_millis(50),
        default_ttl: Duration::from_millis(400),
        lease: Duration::from_millis(300),
        ..Default::default()
    };
    let server = watched_server(
        Server::builder("fixture", "1.0.0").task_options(options),
        &probe,
    );
    let (mut peer, _s) = RawPeer::connect(&server);
    let id = create_raw(&mut peer, "c", "watched", json!({})).await;
    probe.wait_for("started").await;
    let working = peer
        .request(json!(1), "tasks/get", with_tasks(json!({"taskId": id})))
        .await;
    assert_eq!(working["result"]["ttlMs"], 400, "{working}");
    // Past its TTL the task is gone, and its runner stops the handler.
    probe.wait_for("cancelled").await;
    let gone = peer
        .request(json!(2), "tasks/get", with_tasks(json!({"taskId": id})))
        .await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    // Its place is free again, and the server serves on.
    create_raw(&mut peer, "d", "slow_compute", json!({"seconds": 0})).await;
}

#[tokio::test]
async fn a_cancel_reaches_the_handler_and_a_panic_leaves_the_task_failed() {
    let probe = Probe::default();
    let server = watched_server(Server::builder("fixture", "1.0.0"), &probe);
    let (mut peer, _s) = RawPeer::connect(&server);
    let id = create_raw(&mut peer, "c", "watched", json!({})).await;
    probe.wait_for("started").await;
    peer.request(json!(1), "tasks/cancel", with_tasks(json!({"taskId": id})))
        .await;
    probe.wait_for("cancelled").await;
    let cancelled = wait_raw(&mut peer, &id, &[TaskStatus::Cancelled]).await;
    assert!(
        cancelled.get("result").is_none(),
        "a cancelled task carries no result"
    );

    let boom = create_raw(&mut peer, "b", "boom", json!({})).await;
    let failed = wait_raw(&mut peer, &boom, &[TaskStatus::Failed]).await;
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("panicked")
    );
    // The server is unharmed.
    let ok = create_raw(&mut peer, "after", "slow_compute", json!({"seconds": 0})).await;
    wait_raw(&mut peer, &ok, &[TaskStatus::Completed]).await;
}

#[tokio::test]
async fn a_task_whose_server_stops_renewing_its_lease_ends_failed_not_working() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let options = TaskOptions {
        lease: Duration::from_millis(300),
        ..Default::default()
    };
    let probe = Probe::default();
    let builder = || {
        Server::builder("fixture", "1.0.0")
            .task_options(options.clone())
            .task_store(store.clone())
    };
    // Replica A runs the task, then disappears without a word.
    let a = watched_server(builder(), &probe);
    let client_a = pair(&a, client_options().protocol(stateless())).await;
    let task = client_a
        .client
        .call_tool_as_task("watched", json!({}), TaskCallOptions::default())
        .await
        .unwrap();
    let id = task.id().unwrap().to_owned();
    probe.wait_for("started").await;
    client_a.client.close().await;
    drop((task, client_a, a));
    // Replica B, on the same store, finds it abandoned once the lease has run out.
    let b = watched_server(builder(), &Probe::default());
    let client_b = pair(&b, client_options().protocol(stateless())).await;
    let handle = client_b.client.task(&id).unwrap();
    let ended = tokio::time::timeout(STEP, async {
        loop {
            let t = handle.status().await.unwrap();
            if t.status.is_terminal() {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the task ends");
    assert_eq!(ended.status, TaskStatus::Failed, "{ended:?}");
    assert!(
        ended
            .status_message
            .as_deref()
            .unwrap_or_default()
            .contains("stopped before it finished"),
        "{ended:?}"
    );
    match handle.result().await {
        Err(Error::Rpc(e)) => assert_eq!(e.code, -32603),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_2025_task_tags_what_it_says_and_a_2026_task_says_nothing_on_the_side() {
    let server = fixture::build(Server::builder("fixture", "1.0.0")).unwrap();
    server
        .add_tool_with(
            Tool::new(
                "chatty",
                "Logs and reports progress",
                json!({"type": "object"}),
            ),
            ToolOptions::tasks(TaskSupport::Optional),
            |_a: Value, ctx: Context| async move {
                ctx.log(LoggingLevel::Info, None, json!("step one")).await?;
                ctx.report_progress(1.0, Some(2.0), Some("half")).await?;
                Ok(CallToolResult::text("said it"))
            },
        )
        .unwrap();
    let (mut peer, _s) = RawPeer::connect(&server);
    peer.initialize("2025-11-25").await;
    let created = peer
        .request(
            json!(1),
            "tools/call",
            json!({"name": "chatty", "arguments": {}, "task": {}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|m: &Value| m["method"] == "notifications/tasks/status")
    {
        seen.push(peer.recv().await);
    }
    let tag = json!({"taskId": id});
    let find = |method: &str| {
        seen.iter()
            .find(|m| m["method"] == method)
            .unwrap_or_else(|| panic!("no {method} in {seen:?}"))
            .clone()
    };
    let log = find("notifications/message");
    assert_eq!(log["params"]["data"], "step one");
    assert_eq!(
        log["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        tag
    );
    let progress = find("notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "p");
    assert_eq!(
        progress["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        tag
    );
    let status = find("notifications/tasks/status");
    assert_eq!(status["params"]["status"], "completed");
    assert_eq!(status["params"]["taskId"], id.as_str());
    peer.wire.assert_valid();

    // 2026-07-28: the task reports through tasks/get only.
    let (mut raw, _s) = RawPeer::connect(&server);
    let mut params = with_tasks(json!({"name": "chatty", "arguments": {}}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    params["_meta"]["progressToken"] = json!("q");
    let created = raw.request(json!(1), "tools/call", params).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    wait_raw(&mut raw, &id, &[TaskStatus::Completed]).await;
    assert!(
        raw.notifications.is_empty() && raw.recv_within(Duration::from_millis(200)).await.is_none(),
        "nothing on the side: {:?}",
        raw.notifications
    );
}

#[tokio::test]
async fn a_2025_task_with_no_stream_to_the_client_asks_through_tasks_result() {
    // An HTTP client that opens no GET stream: a question the task asks right away has no way
    // to the client until the client's `tasks/result`, which then carries it.
    let server = fixture::build(Server::builder("fixture", "1.0.0")).unwrap();
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let transport = HttpClientTransport::new(
        &http.url(),
        HttpClientOptions {
            get_stream: false,
            ..Default::default()
        },
    )
    .unwrap();
    let client = Client::connect(
        transport,
        crate::common::schema_filling_client()
            .protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
    )
    .await
    .unwrap();
    for (tool, args, want) in [
        (
            "confirm_delete",
            json!({"filename": "b.txt"}),
            "Deleted b.txt",
        ),
        ("multi_input", json!({}), r#"name: "x", confirm: true"#),
    ] {
        let task = client
            .call_tool_as_task(tool, args, TaskCallOptions::default())
            .await
            .unwrap();
        // Before anyone collects it, the task waits for input rather than failing.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            task.status().await.unwrap().status,
            TaskStatus::InputRequired,
            "{tool}"
        );
        let result = tokio::time::timeout(STEP, task.result())
            .await
            .expect("in time")
            .expect("answered through tasks/result");
        assert_eq!(result.text_content(), want);
    }
    client.close().await;
    http.shutdown().await;
}
