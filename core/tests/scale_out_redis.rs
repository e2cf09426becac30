//! Scale-out (issue 12): three replicas of the fixture server share one private Redis, with a
//! round-robin proxy in front. Each request travels on a connection of its own, so nothing
//! sticks to a replica: the session, its GET stream, the answers to the server's requests,
//! cancels and multi round-trip state all have to work wherever a request lands.
//!
//! Needs `redis-server` on PATH (`make scale-out-test` installs Debian's) and the examples
//! built with `--features redis` (cargo builds them with this test).

mod scale_out;

use std::time::Duration;

use http::StatusCode;
use scale_out::{Cluster, Mcp, OTHER_KEY, Redis, Replica, answer_of, send};
use serde_json::{Value, json};

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const WAIT: Duration = Duration::from_secs(20);

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn initialize_on_one_replica_then_list_and_call_on_the_others_through_the_proxy() {
    let cluster = Cluster::start(false).await;
    let proxy = cluster.proxy_url();
    // Through the proxy: initialize, initialized, then requests, each on the next replica.
    let mcp = Mcp::initialize(&proxy, &proxy, json!({})).await;
    for round in 0..3 {
        let listed = mcp
            .request(&proxy, 10 + round, "tools/list", json!({}))
            .await;
        let tools = listed["result"]["tools"].as_array().expect("tools");
        assert!(
            tools.iter().any(|t| t["name"] == "test_simple_text"),
            "{listed}"
        );
        let called = mcp
            .request(
                &proxy,
                20 + round,
                "tools/call",
                json!({"name": "test_simple_text", "arguments": {}}),
            )
            .await;
        assert_eq!(
            text_of(&called),
            "This is a simple text response for testing."
        );
    }
    // And on each replica by its own address: every one knows the session.
    for (i, _) in cluster.replicas.iter().enumerate() {
        let pong = mcp
            .request(&cluster.url(i), 30 + i as i64, "ping", json!({}))
            .await;
        assert_eq!(pong["result"], json!({}), "{pong}");
    }
}

#[tokio::test]
async fn unknown_and_borrowed_session_ids_are_not_found_on_any_replica() {
    let cluster = Cluster::start(false).await;
    let owner = Mcp::initialize_as(
        &cluster.url(A),
        &cluster.url(B),
        json!({}),
        Some("Bearer alice"),
    )
    .await;
    let made_up = Mcp {
        session: "0123456789abcdef0123456789abcdef".into(),
        version: scale_out::VERSION.into(),
        authorization: None,
    };
    // Someone else's session id with other credentials, or none.
    let borrowed = Mcp {
        session: owner.session.clone(),
        version: scale_out::VERSION.into(),
        authorization: Some("Bearer mallory".into()),
    };
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    for i in [A, B, C] {
        for intruder in [&made_up, &borrowed] {
            let reply = intruder.post(&cluster.url(i), &ping).await.expect("POST");
            assert_eq!(reply.status, StatusCode::NOT_FOUND);
            let get = intruder.get(&cluster.url(i), None).await;
            assert_eq!(get.status, StatusCode::NOT_FOUND);
        }
    }
    let pong = owner.request(&cluster.url(C), 2, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    // DELETE through one replica ends the session on all of them.
    let deleted = send(
        "DELETE",
        &cluster.url(B),
        &[
            ("mcp-session-id", owner.session.as_str()),
            ("authorization", "Bearer alice"),
        ],
        None,
    )
    .await
    .expect("DELETE");
    assert_eq!(deleted.status, StatusCode::OK);
    for i in [A, B, C] {
        let reply = owner.post(&cluster.url(i), &ping).await.expect("POST");
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "replica {i}");
    }
}

/// The `(progressToken, progress)` of a progress notification, or the data of a log message.
fn note(message: &Value) -> Option<String> {
    match message["method"].as_str()? {
        "notifications/progress" => Some(format!(
            "{}:{}",
            message["params"]["progressToken"], message["params"]["progress"]
        )),
        "notifications/message" => Some(format!("log:{}", message["params"]["data"])),
        _ => None,
    }
}

#[tokio::test]
async fn a_get_stream_on_a_receives_the_progress_and_logs_of_a_tool_on_b() {
    // JSON responses: a POST's answer carries nothing else, so the rest goes to the GET stream.
    let cluster = Cluster::start(true).await;
    let mcp = Mcp::initialize(&cluster.url(C), &cluster.url(B), json!({})).await;
    let mut get = mcp.get(&cluster.url(A), None).await;
    assert_eq!(get.status, StatusCode::OK);
    assert!(get.is_sse());
    let priming = get.next_event(WAIT).await.expect("priming event");
    assert!(priming.id.is_some() && priming.data.is_none());

    let called = mcp
        .request(
            &cluster.url(B),
            5,
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p-b"}}),
        )
        .await;
    assert_eq!(text_of(&called), "Tool with progress executed successfully");
    let logged = mcp
        .request(
            &cluster.url(B),
            6,
            "tools/call",
            json!({"name": "test_tool_with_logging", "arguments": {}}),
        )
        .await;
    assert_eq!(text_of(&logged), "Tool with logging executed successfully");
    let mut seen = Vec::new();
    while seen.len() < 6 {
        let message = get
            .next_message(WAIT)
            .await
            .expect("the GET stream goes on");
        if let Some(n) = note(&message) {
            seen.push(n);
        }
    }
    assert_eq!(
        seen,
        [
            "\"p-b\":0.0",
            "\"p-b\":50.0",
            "\"p-b\":100.0",
            "log:\"Tool execution started\"",
            "log:\"Tool processing data\"",
            "log:\"Tool execution completed\"",
        ]
    );
}

/// Calls `tool` at `url` and returns the open SSE reply with the server's request read off it.
async fn call_until_asked(mcp: &Mcp, url: &str, id: i64, tool: &str) -> (scale_out::Reply, Value) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"message": "Who are you?"}}});
    let mut reply = mcp.post(url, &body).await.expect("POST");
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.is_sse(), "the request is asked on the call's stream");
    let asked = reply.next_message(WAIT).await.expect("the server asks");
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    (reply, asked)
}

#[tokio::test]
async fn an_elicitation_answered_through_c_reaches_the_handler_waiting_on_b() {
    let cluster = Cluster::start(false).await;
    let mcp = Mcp::initialize(&cluster.url(A), &cluster.url(C), json!({"elicitation": {}})).await;
    let (reply, asked) = call_until_asked(&mcp, &cluster.url(B), 7, "test_elicitation").await;
    // A reply to a request nobody asked is dropped, and the real one still arrives.
    let stray = json!({"jsonrpc": "2.0", "id": 987654321, "result": {"action": "decline"}});
    let r = mcp.post(&cluster.url(C), &stray).await.expect("POST");
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}});
    let r = mcp.post(&cluster.url(C), &answer).await.expect("POST");
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let done = answer_of(reply, 7).await;
    let text = text_of(&done);
    assert!(
        text.contains("action=accept") && text.contains("ada@example.com"),
        "{done}"
    );
}

#[tokio::test]
async fn a_cancel_through_c_stops_a_handler_on_a() {
    let cluster = Cluster::start(false).await;
    let mcp = Mcp::initialize(&cluster.url(B), &cluster.url(B), json!({"elicitation": {}})).await;
    let (mut reply, asked) = call_until_asked(&mcp, &cluster.url(A), 8, "test_elicitation").await;
    // A cancel for a request that is not running anywhere changes nothing.
    let unknown = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 4242, "reason": "nothing"}});
    let r = mcp.post(&cluster.url(C), &unknown).await.expect("POST");
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 8, "reason": "user gave up"}});
    let r = mcp.post(&cluster.url(C), &cancel).await.expect("POST");
    assert_eq!(r.status, StatusCode::ACCEPTED);
    // The handler on A stops: its pending elicitation is withdrawn, and no answer follows.
    let withdrawn = reply.next_message(WAIT).await.expect("a message");
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(withdrawn["params"]["requestId"], asked["id"]);
    // The session goes on.
    let pong = mcp.request(&cluster.url(C), 9, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
}

#[tokio::test]
async fn killing_the_replica_holding_a_get_stream_loses_nothing_on_resumption_elsewhere() {
    let mut cluster = Cluster::start(true).await;
    let mcp = Mcp::initialize(&cluster.url(B), &cluster.url(C), json!({})).await;
    let mut get = mcp.get(&cluster.url(A), None).await;
    let priming = get.next_event(WAIT).await.expect("priming");
    let mut last_id = priming.id.expect("priming id");
    let mut seen = Vec::new();
    let mut expected = Vec::new();
    let call = |url: String, n: i64| {
        let mcp = &mcp;
        async move {
            let token = format!("t{n}");
            let done = mcp
                .request(
                    &url,
                    100 + n,
                    "tools/call",
                    json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": token}}),
                )
                .await;
            assert_eq!(text_of(&done), "Tool with progress executed successfully");
        }
    };
    for n in 0..3 {
        call(cluster.url(B), n).await;
        for p in ["0.0", "50.0", "100.0"] {
            expected.push(format!("\"t{n}\":{p}"));
        }
    }
    // Read part of it on A, then kill A with the stream open.
    while seen.len() < 4 {
        let event = get.next_event(WAIT).await.expect("event");
        if let Some(n) = event.data.as_ref().and_then(note) {
            seen.push(n);
            last_id = event.id.expect("event id");
        }
    }
    cluster.replicas[A].kill().await;
    drop(get);
    // More happens on C while nobody listens.
    for n in 3..5 {
        call(cluster.url(C), n).await;
        for p in ["0.0", "50.0", "100.0"] {
            expected.push(format!("\"t{n}\":{p}"));
        }
    }
    let mut resumed = mcp.get(&cluster.url(B), Some(&last_id)).await;
    assert_eq!(resumed.status, StatusCode::OK);
    while seen.len() < expected.len() {
        let event = resumed.next_event(WAIT).await.expect("resumed events");
        if let Some(n) = event.data.as_ref().and_then(note) {
            seen.push(n);
        }
    }
    assert_eq!(seen, expected, "every event exactly once, in order");
    // Nothing more (no duplicate) arrives.
    let extra = tokio::time::timeout(Duration::from_millis(300), resumed.next_event(WAIT)).await;
    assert!(extra.is_err(), "unexpected extra event: {extra:?}");
}

#[tokio::test]
async fn a_last_event_id_of_another_session_is_refused() {
    let cluster = Cluster::start(true).await;
    let first = Mcp::initialize(&cluster.url(A), &cluster.url(A), json!({})).await;
    let second = Mcp::initialize(&cluster.url(B), &cluster.url(B), json!({})).await;
    let mut get = first.get(&cluster.url(C), None).await;
    let priming = get.next_event(WAIT).await.expect("priming");
    let foreign = priming.id.expect("id");
    for i in [A, B, C] {
        let refused = second.get(&cluster.url(i), Some(&foreign)).await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND, "replica {i}");
        let body = refused.json().await;
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("not one of this session's")),
            "{body}"
        );
        for garbage in ["", "1-2", "zz:1-2", "not an id at all"] {
            let refused = second.get(&cluster.url(i), Some(garbage)).await;
            assert_eq!(refused.status, StatusCode::NOT_FOUND, "`{garbage}`");
        }
    }
    // The owner resumes with it fine.
    let resumed = first.get(&cluster.url(B), Some(&foreign)).await;
    assert_eq!(resumed.status, StatusCode::OK);
}

const META: &str = r#"{
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "scale-out-test", "version": "1"}
}"#;

async fn stateless_call(url: &str, id: i64, params: Value) -> (StatusCode, Value) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let reply = send(
        "POST",
        url,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", &name),
        ],
        Some(&body),
    )
    .await
    .expect("POST");
    let status = reply.status;
    (status, answer_of(reply, id).await)
}

fn meta() -> Value {
    serde_json::from_str(META).expect("meta")
}

#[tokio::test]
async fn a_multi_round_trip_request_does_round_one_on_a_and_round_two_on_b() {
    let cluster = Cluster::start(false).await;
    let tool = "test_input_required_result_request_state";
    let (status, round1) = stateless_call(
        &cluster.url(A),
        1,
        json!({"name": tool, "arguments": {}, "_meta": meta()}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{round1}");
    let state = round1["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("an InputRequiredResult with state: {round1}"))
        .to_owned();
    let key = round1["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");
    let retry = json!({"name": tool, "arguments": {}, "_meta": meta(),
        "inputResponses": {key: {"action": "accept", "content": {"ok": true}}},
        "requestState": state});
    let (status, round2) = stateless_call(&cluster.url(B), 2, retry.clone()).await;
    assert_eq!(status, StatusCode::OK, "{round2}");
    assert_eq!(text_of(&round2), "state-ok: confirmed=true", "{round2}");

    // A replica configured with another key cannot verify A's state.
    let stranger = Replica::start(&cluster.redis, OTHER_KEY, false).await;
    let (_, refused) = stateless_call(&stranger.url(), 3, retry).await;
    assert!(
        refused.get("error").is_some() || refused["result"]["isError"] == true,
        "state signed with another key must not verify: {refused}"
    );
    assert_ne!(text_of(&refused), "state-ok: confirmed=true");
}

#[tokio::test]
async fn with_redis_stopped_session_requests_get_503_and_stateless_ones_go_on() {
    let mut cluster = Cluster::start(false).await;
    let mcp = Mcp::initialize(&cluster.url(A), &cluster.url(B), json!({})).await;
    cluster.redis.kill().await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    for i in [A, B, C] {
        let reply = mcp.post(&cluster.url(i), &ping).await.expect("POST");
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "replica {i}");
        assert!(reply.header("retry-after").is_some());
        let body = reply.json().await;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("session store is unreachable"), "{body}");
        // A new session cannot be shared either.
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": scale_out::VERSION, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let reply = send("POST", &cluster.url(i), &[], Some(&init))
            .await
            .expect("POST");
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
        // Stateless requests need no store.
        let (status, answer) = stateless_call(
            &cluster.url(i),
            2,
            json!({"name": "test_simple_text", "arguments": {}, "_meta": meta()}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(
            text_of(&answer),
            "This is a simple text response for testing."
        );
    }
    // Redis comes back (empty: it saved nothing): each replica reconnects (the first request
    // after the outage may still get a 503 with Retry-After) and new sessions work again.
    cluster.redis.restart().await;
    for i in [A, B, C] {
        let mut recovered = false;
        for _ in 0..50 {
            let probe = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": scale_out::VERSION, "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}});
            let reply = send("POST", &cluster.url(i), &[], Some(&probe))
                .await
                .expect("POST");
            if reply.status == StatusCode::OK {
                recovered = true;
                break;
            }
            assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(
            recovered,
            "replica {i} serves sessions again once Redis is back"
        );
    }
    let again = Mcp::initialize(&cluster.url(B), &cluster.url(C), json!({})).await;
    let pong = again.request(&cluster.url(A), 3, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    // The old session's record went with the Redis that held it.
    let reply = mcp.post(&cluster.url(A), &ping).await.expect("POST");
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_server_refuses_a_store_it_cannot_reach_or_parse() {
    let redis = Redis::start().await;
    let port = redis.port;
    drop(redis);
    for store in [
        format!("redis://127.0.0.1:{port}/"),
        "memcached://x/".into(),
        "redis://[::1".into(),
    ] {
        let output = tokio::process::Command::new(scale_out::example_bin("conformance_server"))
            .args(["--http", "--port", "0", "--store", &store])
            .output()
            .await
            .expect("run");
        assert!(!output.status.success(), "{store} accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("Redis") || stderr.contains("store"),
            "{store}: {stderr}"
        );
    }
    let bad_key = tokio::process::Command::new(scale_out::example_bin("conformance_server"))
        .args(["--http", "--port", "0", "--state-key", "abc"])
        .output()
        .await
        .expect("run");
    assert!(!bad_key.status.success());
    assert!(String::from_utf8_lossy(&bad_key.stderr).contains("64 hex digits"));
}

#[tokio::test]
async fn a_response_stream_cut_on_a_is_resumed_through_b() {
    let cluster = Cluster::start(false).await;
    let mcp = Mcp::initialize(&cluster.url(C), &cluster.url(C), json!({})).await;
    let body = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "test_reconnection", "arguments": {}}});
    // The tool cuts its response stream at once and answers 200 ms later (SEP-1699).
    let mut cut = mcp.post(&cluster.url(A), &body).await.expect("POST");
    assert!(cut.is_sse());
    let priming = cut.next_event(WAIT).await.expect("priming event");
    let last = priming.id.expect("an id to resume from");
    assert!(cut.next_event(WAIT).await.is_none(), "the stream was cut");
    let mut resumed = mcp.get(&cluster.url(B), Some(&last)).await;
    if resumed.status != StatusCode::OK {
        let status = resumed.status;
        panic!("resuming `{last}`: {status} {}", resumed.json().await);
    }
    let answer = resumed.next_message(WAIT).await.expect("the answer");
    assert_eq!(answer["id"], 11);
    assert_eq!(text_of(&answer), "Reconnection test completed");
    assert!(
        resumed.next_event(WAIT).await.is_none(),
        "it ends after the answer"
    );
    // The same id from another session, and a stream that never existed, are refused.
    let other = Mcp::initialize(&cluster.url(B), &cluster.url(B), json!({})).await;
    let refused = other.get(&cluster.url(C), Some(&last)).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    let refused = mcp.get(&cluster.url(C), Some("12345-1")).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_listen_stream_on_a_hears_of_a_change_made_on_c() {
    let cluster = Cluster::start(false).await;
    let watched = "test://watched-resource";
    let body = json!({"jsonrpc": "2.0", "id": 40, "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": [watched]}, "_meta": meta()}});
    let mut listen = send(
        "POST",
        &cluster.url(A),
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ],
        Some(&body),
    )
    .await
    .expect("listen");
    assert_eq!(listen.status, StatusCode::OK);
    assert!(listen.is_sse());
    let ack = listen.next_message(WAIT).await.expect("acknowledged");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    // A change to a resource nobody listens for is not delivered; the watched one is, once.
    for uri in ["test://static-text", watched] {
        let (status, touched) = stateless_call(
            &cluster.url(C),
            41,
            json!({"name": "scale_out_touch", "arguments": {"uri": uri}, "_meta": meta()}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{touched}");
        assert_eq!(text_of(&touched), format!("touched {uri}"));
    }
    let heard = listen.next_message(WAIT).await.expect("the change");
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
    assert_eq!(heard["params"]["uri"], watched);
    let extra = tokio::time::timeout(Duration::from_millis(300), listen.next_message(WAIT)).await;
    assert!(extra.is_err(), "delivered more than once: {extra:?}");

    // A handshake-era session subscribed through B hears it too, on its GET stream held on A.
    let mcp = Mcp::initialize(&cluster.url(A), &cluster.url(B), json!({})).await;
    let subscribed = mcp
        .request(
            &cluster.url(B),
            42,
            "resources/subscribe",
            json!({"uri": watched}),
        )
        .await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    let mut get = mcp.get(&cluster.url(A), None).await;
    get.next_event(WAIT).await.expect("priming");
    let (status, _) = stateless_call(
        &cluster.url(C),
        43,
        json!({"name": "scale_out_touch", "arguments": {"uri": watched}, "_meta": meta()}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let heard = get
        .next_message(WAIT)
        .await
        .expect("the change on the GET stream");
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
    assert_eq!(heard["params"]["uri"], watched);
}

/// A GET without `Last-Event-ID` at `url`, polled until it is no longer refused with 409
/// (bounded; the lease it waits for lapses within seconds).
async fn get_once_free(mcp: &Mcp, url: &str) -> scale_out::Reply {
    for _ in 0..60 {
        let reply = mcp.get(url, None).await;
        if reply.status != StatusCode::CONFLICT {
            return reply;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("the GET stream's lease was never given up");
}

#[tokio::test]
async fn one_replica_holds_a_get_stream_and_a_dead_holders_lease_is_reclaimed() {
    let mut cluster = Cluster::start(true).await;
    let mcp = Mcp::initialize(&cluster.url(A), &cluster.url(A), json!({})).await;
    let mut on_a = mcp.get(&cluster.url(A), None).await;
    assert_eq!(on_a.status, StatusCode::OK);
    let priming = on_a.next_event(WAIT).await.expect("priming");
    // A second GET stream, on another replica, is refused while A holds it.
    let second = mcp.get(&cluster.url(B), None).await;
    assert_eq!(second.status, StatusCode::CONFLICT);
    // Resuming takes it over: A's stream ends.
    let on_c = mcp.get(&cluster.url(C), priming.id.as_deref()).await;
    assert_eq!(on_c.status, StatusCode::OK);
    assert!(on_a.next_event(WAIT).await.is_none(), "A's stream ends");
    // Closing it gives the stream up: B may open one now.
    drop(on_c);
    let mut on_b = get_once_free(&mcp, &cluster.url(B)).await;
    assert_eq!(on_b.status, StatusCode::OK);
    on_b.next_event(WAIT).await.expect("priming");
    // B dies holding it: its lease lapses and C serves a fresh GET.
    cluster.replicas[B].kill().await;
    let refused_at_first = mcp.get(&cluster.url(C), None).await;
    assert_eq!(refused_at_first.status, StatusCode::CONFLICT);
    let mut reclaimed = get_once_free(&mcp, &cluster.url(C)).await;
    assert_eq!(reclaimed.status, StatusCode::OK);
    reclaimed.next_event(WAIT).await.expect("priming");
    // And it carries what happens next.
    let called = mcp
        .request(
            &cluster.url(A),
            50,
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "after"}}),
        )
        .await;
    assert_eq!(text_of(&called), "Tool with progress executed successfully");
    let heard = reclaimed.next_message(WAIT).await.expect("progress");
    assert_eq!(note(&heard).as_deref(), Some("\"after\":0.0"));
}
