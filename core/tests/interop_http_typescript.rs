//! Interop with the official TypeScript MCP SDK (`@modelcontextprotocol/sdk` 1.32.2, pinned
//! in `tests/interop/node/package.json` and its lockfile) over HTTP, in both directions, with
//! real processes on loopback ports:
//!
//! - oxmcp's client (tapped so every JSON-RPC frame is validated against the official schema,
//!   behind a recording proxy so every HTTP exchange is kept) drives an SDK `McpServer` served
//!   by `tests/interop/node/http_server.mjs` with `StreamableHTTPServerTransport`: with a
//!   session id generator (one transport per session), with `sessionIdGenerator: undefined`
//!   (one transport per request), each also with `enableJsonResponse`. The SDK speaks no
//!   stateless revision, so auto mode must take the refused `server/discover` (HTTP 400) as a
//!   handshake-era server and fall back to `initialize`. Tools (text, structured, isError,
//!   unknown, bad arguments), log and progress notifications on a request's SSE stream,
//!   sampling and elicitation over the session, a server restart (a new session, started by
//!   the client) and a bogus session id (404).
//! - the legacy HTTP+SSE transport (2024-11-05, `SSEServerTransport`): `POST /sse` is refused
//!   with 405 and oxmcp's client falls back to `GET /sse` + `POST /messages?sessionId=…`.
//! - the SDK's own client (`tests/interop/node/http_client.mjs`, `StreamableHTTPClientTransport`)
//!   drives oxmcp's `conformance_server --http`, with sessions and `--stateless`. The script
//!   records its own HTTP exchanges and asserts both the results and the transport.
//!
//! The peers come from `make interop-deps`, which runs `npm ci` and exports
//! `OXMCP_INTEROP_NODE_DIR`; `node` is taken from `PATH`. Without the variable these tests are
//! skipped, unless `OXMCP_REQUIRE_INTEROP=1`.

mod interop_http;

use std::path::Path;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use interop_http::peers::{Asked, node_dir};
use interop_http::{
    Connected, Peer, assert_passed, capable, describe_output, rpc, wait_for_exchange,
};

use oxmcp::{
    ProtocolVersion,
    client::{ClientOptions, ProtocolMode},
    jsonrpc::codes,
    session::RequestOptions,
};
use serde_json::{Value, json};
use tokio::process::Command;

/// What `http_server.mjs` reports as its version: the SDK release actually installed.
const SERVER_VERSION: &str = "sdk-1.32.2";

/// What a crash of the Node server prints.
const CRASH: &str = "request failed:";

/// `node http_server.mjs MODE`: `stateful`, `stateless`, `stateful-json`, `stateless-json`
/// or `sse`.
async fn typescript_server(dir: &Path, mode: &str) -> Peer {
    let mut command = Command::new("node");
    command
        .arg(dir.join("http_server.mjs"))
        .arg(mode)
        .current_dir(dir);
    Peer::start(command).await
}

/// The tool calls every mode shares, with the answers `http_server.mjs`'s tools give.
async fn exercise_tools(c: &Connected) {
    let tools = c.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["greet", "add", "fail", "steps", "ask_model", "ask_user"]
    );

    assert_eq!(
        c.call("greet", json!({"name": "Ada"})).await,
        (false, "Hello, Ada!".into())
    );
    let result = c
        .client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("add");
    assert_eq!(result.structured_content, Some(json!({"sum": 5})));
    assert_eq!(
        c.call("fail", json!({"reason": "kaput"})).await,
        (true, "tool failed: kaput".into())
    );
    // Bad input: an unknown tool and arguments zod rejects are tool results.
    assert_eq!(
        c.call("nope", json!({})).await,
        (true, "MCP error -32602: Tool nope not found".into())
    );
    let (is_error, text) = c.call("add", json!({"a": "x", "b": 1})).await;
    assert!(
        is_error && text.contains("Invalid arguments for tool add"),
        "{text}"
    );
    c.wire.assert_valid();

    // Requests the schema forbids, sent on purpose: typed JSON-RPC errors.
    let e = rpc(c
        .client
        .request("no/such/method", None, RequestOptions::default())
        .await
        .expect_err("an unknown method"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (codes::METHOD_NOT_FOUND, "Method not found")
    );
}

/// Auto mode against the TypeScript server in `mode`: the probe is refused with HTTP 400, the
/// client falls back to a 2025-11-25 handshake, and everything else works.
async fn auto_mode(mode: &str) {
    let Some(dir) = node_dir() else { return };
    let stateless = mode.starts_with("stateless");
    let json_only = mode.ends_with("json");
    let peer = typescript_server(&dir, mode).await;
    let c = Connected::start(peer, ClientOptions::new("oxmcp-http", "1.0.0")).await;
    assert_eq!(c.client.protocol_version(), ProtocolVersion::V2025_11_25);
    let details = c.client.server();
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        ("typescript-http", SERVER_VERSION)
    );
    exercise_tools(&c).await;
    c.client.close().await;
    if !stateless {
        let deleted = wait_for_exchange(&c.proxy, |e| e.method == "DELETE").await;
        assert_eq!(deleted.status, 200, "{}", c.log());
    }

    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    let probe = &exchanges[0];
    assert_eq!(
        probe.rpc_method().as_deref(),
        Some("server/discover"),
        "{log}"
    );
    assert_eq!(probe.status, 400, "{log}");
    let refusal: Value = serde_json::from_str(&probe.response_body()).unwrap();
    // The stateful routing refuses a request without a session; the stateless transport
    // refuses the revision in MCP-Protocol-Version.
    let why = refusal["error"]["message"].as_str().unwrap_or_default();
    if stateless {
        assert!(
            why.starts_with("Bad Request: Unsupported protocol version: 2026-07-28"),
            "{why}"
        );
    } else {
        assert_eq!(why, "Bad Request: No valid session ID provided");
    }
    let init = &exchanges[1];
    assert_eq!(init.rpc_method().as_deref(), Some("initialize"), "{log}");
    assert_eq!(init.request_header("mcp-protocol-version"), None, "{log}");
    let session = init.response_header("mcp-session-id");
    if stateless {
        assert_eq!(session, None, "{log}");
        assert!(!exchanges.iter().any(|e| e.method != "POST"), "{log}");
    } else {
        let session = session.expect("a session id");
        assert_eq!(session.len(), 36, "a UUID: {session}");
        for e in &exchanges[2..] {
            assert_eq!(
                e.request_header("mcp-session-id"),
                Some(session.clone()),
                "{log}"
            );
        }
        let get = exchanges
            .iter()
            .find(|e| e.method == "GET")
            .expect("a GET stream");
        assert_eq!((get.status, get.is_sse()), (200, true), "{log}");
    }
    for e in exchanges[2..].iter().filter(|e| e.method == "POST") {
        assert_eq!(
            e.request_header("mcp-protocol-version").as_deref(),
            Some("2025-11-25"),
            "{log}"
        );
    }
    for e in exchanges[1..].iter().filter(|e| e.is_rpc_request()) {
        assert_eq!(e.is_sse(), !json_only, "{log}");
    }
    c.finish(CRASH).await;
}

#[tokio::test]
async fn auto_mode_falls_back_to_a_handshake_with_the_typescript_server_with_sessions() {
    auto_mode("stateful").await;
}

#[tokio::test]
async fn auto_mode_falls_back_to_a_handshake_with_the_stateless_typescript_server() {
    auto_mode("stateless").await;
}

#[tokio::test]
async fn auto_mode_with_the_typescript_server_with_json_responses() {
    auto_mode("stateful-json").await;
}

#[tokio::test]
async fn auto_mode_with_the_stateless_typescript_server_with_json_responses() {
    auto_mode("stateless-json").await;
}

/// A forced older handshake: the revision asked for rides every later request.
#[tokio::test]
async fn a_2025_03_26_handshake_with_the_typescript_server() {
    let Some(dir) = node_dir() else { return };
    let peer = typescript_server(&dir, "stateful").await;
    let v = ProtocolVersion::V2025_03_26;
    let options = ClientOptions::new("oxmcp-http", "1.0.0").protocol(ProtocolMode::Handshake(v));
    let c = Connected::start(peer, options).await;
    assert_eq!(c.client.protocol_version(), v);
    exercise_tools(&c).await;
    let exchanges = c.proxy.exchanges();
    assert_eq!(exchanges[0].rpc_method().as_deref(), Some("initialize"));
    for e in exchanges[1..].iter().filter(|e| e.method == "POST") {
        assert_eq!(
            e.request_header("mcp-protocol-version").as_deref(),
            Some("2025-03-26"),
            "{}",
            c.proxy.log()
        );
    }
    c.finish(CRASH).await;
}

/// Log and progress notifications of a tool call, and the server's questions, over a session.
async fn notifications_and_questions(mode: &str) {
    let Some(dir) = node_dir() else { return };
    let json_only = mode.ends_with("json");
    let peer = typescript_server(&dir, mode).await;
    let asked = Asked::default();
    let c = Connected::start(peer, capable(ProtocolMode::Auto, &asked)).await;
    assert_eq!(c.client.protocol_version(), ProtocolVersion::V2025_11_25);
    let get_stream = wait_for_exchange(&c.proxy, |e| e.method == "GET").await;
    assert!(get_stream.is_sse(), "{}", get_stream.describe());

    c.proxy.clear();
    let progress = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = progress.clone();
    let options = RequestOptions {
        on_progress: Some(Box::new(move |p| {
            seen.lock().unwrap().push((p.progress, p.total));
        })),
        ..Default::default()
    };
    let result = c
        .client
        .call_tool_with("steps", json!({"count": 3}), options)
        .await
        .unwrap_or_else(|e| panic!("steps: {e}\n{}", c.log()));
    assert_eq!(result.text_content(), "did 3 steps");
    let call = c
        .proxy
        .exchanges()
        .into_iter()
        .find(|e| e.is_rpc_request())
        .unwrap();
    let logs = c.inbox.take("notifications/message");
    if json_only {
        // A JSON answer has no room for what came before it: the SDK drops it.
        assert!(!call.is_sse(), "{}", call.describe());
        assert!(logs.is_empty(), "{logs:?}");
        assert!(progress.lock().unwrap().is_empty());
    } else {
        assert!(call.is_sse(), "{}", call.describe());
        let data: Vec<_> = logs.iter().map(|l| l["data"].clone()).collect();
        assert_eq!(data, [json!("step 1"), json!("step 2"), json!("step 3")]);
        assert_eq!(
            *progress.lock().unwrap(),
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
        );
    }

    // Sampling and elicitation: server-to-client requests, answered with POSTs.
    c.proxy.clear();
    assert_eq!(
        c.call("ask_model", json!({"prompt": "What is 2+2?"})).await,
        (
            false,
            r#"model oxmcp-test-model said "echo: What is 2+2?""#.into()
        )
    );
    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    let answer = exchanges
        .iter()
        .find(|e| e.method == "POST" && e.rpc_method().is_none())
        .expect("the POST of our answer");
    assert_eq!(answer.status, 202, "{log}");
    // The question came on the call's own stream, or (JSON only) on the session's GET stream.
    let call = exchanges.iter().find(|e| e.is_rpc_request()).unwrap();
    assert_eq!(call.is_sse(), !json_only, "{log}");
    let carrier = if json_only {
        assert!(
            !call.response_body().contains("sampling/createMessage"),
            "{log}"
        );
        // Opened right after the handshake, before the proxy's log was cleared.
        get_stream.clone()
    } else {
        call.clone()
    };
    assert!(
        carrier.response_body().contains("sampling/createMessage"),
        "{log}"
    );
    let asked_now = asked.take();
    assert_eq!(asked_now.len(), 1);
    assert_eq!(
        asked_now[0].1["messages"][0]["content"]["text"],
        "What is 2+2?"
    );
    assert_eq!(
        c.call("ask_user", json!({"message": "Who are you?"})).await,
        (
            false,
            r#"accept: {"username":"ada","email":"ada@example.com"}"#.into()
        )
    );
    assert_eq!(
        c.call("ask_user", json!({"message": "decline, please"}))
            .await,
        (false, "decline".into())
    );
    assert_eq!(asked.take().len(), 2);
    c.wire.assert_valid();

    // Bad input: an answer that breaks the requested schema fails the tool.
    let (is_error, text) = c.call("ask_user", json!({"message": "sloppy"})).await;
    assert!(is_error, "{text}");
    c.finish(CRASH).await;
}

#[tokio::test]
async fn notifications_and_questions_with_the_typescript_server_with_sessions() {
    notifications_and_questions("stateful").await;
}

#[tokio::test]
async fn notifications_and_questions_with_the_typescript_server_with_json_responses() {
    notifications_and_questions("stateful-json").await;
}

/// A bogus session id is answered 404 with a JSON-RPC error.
#[tokio::test]
async fn the_typescript_server_answers_an_unknown_session_with_404() {
    let Some(dir) = node_dir() else { return };
    let peer = typescript_server(&dir, "stateful").await;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let request = http::Request::post(&peer.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", "00000000-0000-0000-0000-000000000000")
        .header("mcp-protocol-version", "2025-11-25")
        .body(Full::new(Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        )))
        .unwrap();
    let response = client.request(request).await.expect("a response");
    assert_eq!(response.status(), 404);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&body).expect("a JSON body");
    assert_eq!(body["error"]["message"], "Session not found", "{body}");
}

/// The server restarts and knows no session: oxmcp's client gets 404, starts a new session
/// by itself and retries.
#[tokio::test]
async fn a_restarted_typescript_server_gets_a_new_session() {
    let Some(dir) = node_dir() else { return };
    let peer = typescript_server(&dir, "stateful").await;
    let c = Connected::start(peer, ClientOptions::new("oxmcp-http", "1.0.0")).await;
    assert_eq!(
        c.call("greet", json!({"name": "Ada"})).await.1,
        "Hello, Ada!"
    );
    let first = c
        .proxy
        .exchanges()
        .iter()
        .find_map(|e| e.response_header("mcp-session-id"))
        .unwrap();

    let restarted = typescript_server(&dir, "stateful").await;
    c.proxy.set_upstream(&restarted.url);
    let Connected {
        client,
        proxy,
        peer,
        ..
    } = c;
    peer.stop().await;
    proxy.clear();
    let result = client
        .call_tool("greet", json!({"name": "Grace"}))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", proxy.log()));
    assert_eq!(result.text_content(), "Hello, Grace!");

    let calls: Vec<_> = proxy
        .exchanges()
        .into_iter()
        .filter(|e| e.method == "POST")
        .collect();
    let summary: Vec<_> = calls
        .iter()
        .map(|e| (e.rpc_method().unwrap_or_default(), e.status))
        .collect();
    assert_eq!(
        summary,
        [
            ("tools/call".to_owned(), 404),
            ("initialize".to_owned(), 200),
            ("notifications/initialized".to_owned(), 202),
            ("tools/call".to_owned(), 200),
        ],
        "{}",
        proxy.log()
    );
    let second = calls[1].response_header("mcp-session-id").unwrap();
    assert_ne!(first, second);
    assert_eq!(calls[3].request_header("mcp-session-id"), Some(second));
    client.close().await;
    drop(restarted);
}

/// The legacy HTTP+SSE transport (`SSEServerTransport`): the Streamable HTTP POST is refused
/// with 405, and the client falls back to `GET /sse` and `POST /messages?sessionId=…`.
async fn legacy_sse(mode: ProtocolMode, expected: ProtocolVersion) {
    let Some(dir) = node_dir() else { return };
    let auto = mode == ProtocolMode::Auto;
    let peer = typescript_server(&dir, "sse").await;
    let c = Connected::start(
        peer,
        ClientOptions::new("oxmcp-http", "1.0.0").protocol(mode),
    )
    .await;
    assert_eq!(c.client.protocol_version(), expected);
    exercise_tools(&c).await;

    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    let refused: Vec<_> = exchanges
        .iter()
        .take_while(|e| e.path == "/sse" && e.method == "POST")
        .map(|e| (e.rpc_method().unwrap_or_default(), e.status))
        .collect();
    let mut expected_refusals = vec![("initialize".to_owned(), 405)];
    if auto {
        expected_refusals.insert(0, ("server/discover".to_owned(), 405));
    }
    assert_eq!(refused, expected_refusals, "{log}");
    let stream = &exchanges[refused.len()];
    assert_eq!(
        (stream.method.as_str(), stream.path.as_str(), stream.status),
        ("GET", "/sse", 200),
        "{log}"
    );
    assert!(stream.is_sse(), "{log}");
    let session = stream
        .response_body()
        .lines()
        .find_map(|l| {
            l.strip_prefix("data: /messages?sessionId=")
                .map(str::to_owned)
        })
        .expect("an endpoint event");
    for e in &exchanges[refused.len() + 1..] {
        assert_eq!(
            (e.method.as_str(), e.path.clone(), e.status),
            ("POST", format!("/messages?sessionId={session}"), 202),
            "{log}"
        );
    }
    c.finish(CRASH).await;
}

#[tokio::test]
async fn auto_mode_falls_back_to_the_typescript_legacy_sse_server() {
    legacy_sse(ProtocolMode::Auto, ProtocolVersion::V2025_11_25).await;
}

#[tokio::test]
async fn a_2024_11_05_handshake_over_the_typescript_legacy_sse_server() {
    let v = ProtocolVersion::V2024_11_05;
    legacy_sse(ProtocolMode::Handshake(v), v).await;
}

/// Runs `node http_client.mjs KIND URL` against oxmcp's conformance server.
async fn typescript_client(stateless: bool) {
    let Some(dir) = node_dir() else { return };
    let server = interop_http::conformance_server(stateless).await;
    let kind = if stateless { "stateless" } else { "stateful" };
    let mut command = Command::new("node");
    command
        .arg(dir.join("http_client.mjs"))
        .args([kind, &server.url])
        .current_dir(&dir);
    let output = interop_http::run_client(command).await;
    assert_passed(
        &output,
        &format!(
            "http_client.mjs {kind}\n--- server ---\n{}",
            server.output()
        ),
    );
}

#[tokio::test]
async fn typescript_client_over_http_with_sessions() {
    typescript_client(false).await;
}

#[tokio::test]
async fn typescript_client_over_stateless_http() {
    typescript_client(true).await;
}

/// The script's checks are real: pointed at another server (the SDK's own), it fails and
/// says why.
#[tokio::test]
async fn typescript_http_client_script_rejects_another_server() {
    let Some(dir) = node_dir() else { return };
    let server = typescript_server(&dir, "stateful").await;
    let mut command = Command::new("node");
    command
        .arg(dir.join("http_client.mjs"))
        .args(["stateful", &server.url])
        .current_dir(&dir);
    let output = interop_http::run_client(command).await;
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        describe_output(&output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("MISMATCH: serverInfo.name") && stderr.contains("'typescript-http'"),
        "{}",
        describe_output(&output)
    );
}

/// The SDK's legacy HTTP+SSE client (`SSEClientTransport`, the 2024-11-05 transport) against
/// oxmcp's server at `/sse`.
#[tokio::test]
async fn typescript_legacy_sse_client_against_oxmcp() {
    let Some(dir) = node_dir() else { return };
    let server = interop_http::conformance_server(false).await;
    let url = server.url.replace("/mcp", "/sse");
    let mut command = Command::new("node");
    command
        .arg(dir.join("http_client.mjs"))
        .args(["sse", &url])
        .current_dir(&dir);
    let output = interop_http::run_client(command).await;
    assert_passed(
        &output,
        &format!("http_client.mjs sse\n--- server ---\n{}", server.output()),
    );
}
