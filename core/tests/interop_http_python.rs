//! Interop with the official Python MCP SDK (`mcp` 2.3.0, pinned in
//! `tests/interop/python/requirements.txt`) over HTTP, in both directions, with real
//! processes on loopback ports:
//!
//! - oxmcp's client (`Client::connect_http`'s transport, tapped so every JSON-RPC frame is
//!   validated against the official schema) drives the SDK's `MCPServer` served by
//!   `tests/interop/python/http_server.py` over Streamable HTTP with sessions, without
//!   (`stateless_http=True`), with JSON answers (`json_response=True`) and both, in auto mode
//!   (the SDK serves 2026-07-28 over HTTP as self-contained POSTs, whatever its mode) and in a
//!   forced 2025-11-25 handshake. A recording proxy between the two keeps every HTTP exchange,
//!   so the tests also assert the transport: the session id the server handed out and that
//!   every later request carried it, the `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name`
//!   headers, JSON versus SSE answers, the GET stream and the closing DELETE. Tools (text,
//!   structured, isError, unknown, bad arguments), log notifications on a request's SSE
//!   stream, sampling and elicitation (server-to-client requests over the session, or
//!   `InputRequiredResult` rounds in 2026-07-28), a server restart (the client starts a new
//!   session transparently), a server that is gone (a typed error, at once) and a bogus
//!   session id (404).
//! - the legacy HTTP+SSE transport (2024-11-05): the SDK's `sse_app` refuses the Streamable
//!   HTTP POST with 405, and oxmcp's client must fall back to `GET /sse` + `POST /messages/`
//!   and work as usual there, at 2025-11-25 and at 2024-11-05.
//! - the SDK's own client (`tests/interop/python/http_client.py`, which reuses
//!   feature_client.py's checks) drives oxmcp's `conformance_server --http` (sessions) and
//!   `--http --stateless`, in auto, legacy and pinned-2026-07-28 modes. The script records its
//!   own HTTP exchanges and asserts both the results and the transport.
//!
//! The peers come from `make interop-deps`, which exports `OXMCP_INTEROP_PYTHON`; the
//! `conformance_server` example must be built (`make interop-test` does it). Without the
//! variable these tests are skipped, unless `OXMCP_REQUIRE_INTEROP=1`.

mod interop_http;

use std::path::Path;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use interop_http::peers::{Asked, python_script as script, venv_python};
use interop_http::{
    Connected, Peer, assert_passed, capable, describe_output, rpc, wait_for_exchange,
};

use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode},
    jsonrpc::codes,
    session::RequestOptions,
    transport::http::HttpClientOptions,
};
use serde_json::{Value, json};
use tokio::process::Command;

/// What the SDK servers report as their version: the release actually running.
const SERVER_VERSION: &str = "mcp-2.3.0";

const HANDSHAKE: ProtocolMode = ProtocolMode::Handshake(ProtocolVersion::V2025_11_25);

/// `http_server.py APP TRANSPORT`: `tools` (greet, add, fail) or `features`, served as
/// `streamable`, `stateless`, `json`, `stateless-json` or `sse`.
async fn python_server(python: &Path, app: &str, transport: &str) -> Peer {
    let mut command = Command::new(python);
    command
        .arg(script("http_server.py"))
        .args([app, transport])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    Peer::start(command).await
}

/// The tool calls every mode shares, with the answers `server.py`'s tools give.
async fn exercise_tools(c: &Connected) {
    let tools = c.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["greet", "add", "fail"]);

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
        (true, "Error executing tool fail: tool failed: kaput".into())
    );
    // Bad input: an unknown tool and arguments pydantic rejects are tool results.
    assert_eq!(
        c.call("nope", json!({})).await,
        (true, "Unknown tool: nope".into())
    );
    let (is_error, text) = c.call("add", json!({"a": "x", "b": 1})).await;
    assert!(
        is_error && text.contains("Input should be a valid integer"),
        "{text}"
    );
    c.wire.assert_valid();

    // Requests the schema forbids, sent on purpose (after the wire was validated): typed
    // JSON-RPC errors, whatever HTTP status carried them.
    let e = rpc(c
        .client
        .request(
            "tools/call",
            Some(json!({"arguments": {}})),
            RequestOptions::default(),
        )
        .await
        .expect_err("tools/call without a name"));
    assert_eq!(e.code, codes::INVALID_PARAMS, "{e:?}");
    let e = rpc(c
        .client
        .request("no/such/method", None, RequestOptions::default())
        .await
        .expect_err("an unknown method"));
    assert_eq!(e.code, codes::METHOD_NOT_FOUND, "{e:?}");
}

/// Auto mode against a Python server in `transport`: the SDK answers `server/discover`, so
/// every request is a self-contained 2026-07-28 POST, with no session, answered with JSON.
async fn auto_mode(transport: &str) {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "tools", transport).await;
    let c = Connected::start(peer, ClientOptions::new("oxmcp-http", "1.0.0")).await;
    assert_eq!(c.client.protocol_version(), ProtocolVersion::V2026_07_28);
    let details = c.client.server();
    assert_eq!(details.supported_versions, ["2026-07-28"]);
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        ("python-interop", SERVER_VERSION)
    );
    exercise_tools(&c).await;
    c.client.close().await;

    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    assert_eq!(
        exchanges[0].rpc_method().as_deref(),
        Some("server/discover")
    );
    for e in &exchanges {
        assert_eq!(e.method, "POST", "{log}");
        let method = e.rpc_method().unwrap_or_default();
        assert_eq!(
            e.request_header("mcp-protocol-version").as_deref(),
            Some("2026-07-28")
        );
        assert_eq!(
            e.request_header("mcp-method"),
            Some(method.clone()),
            "{log}"
        );
        assert_eq!(e.request_header("mcp-session-id"), None, "{log}");
        assert_eq!(e.response_header("mcp-session-id"), None, "{log}");
        // Nothing to stream: each answer is a JSON body.
        assert_eq!(
            e.content_type().as_deref(),
            Some("application/json"),
            "{log}"
        );
        if method == "tools/call" {
            let body: Value = serde_json::from_slice(&e.request_body).unwrap();
            let name = body["params"]["name"].as_str().map(str::to_owned);
            assert_eq!(e.request_header("mcp-name"), name, "{log}");
        }
    }
    // The SDK maps the errors of its modern entry to HTTP statuses: 404 for an unknown method.
    let unknown = exchanges
        .iter()
        .find(|e| e.rpc_method().as_deref() == Some("no/such/method"))
        .unwrap();
    assert_eq!(unknown.status, 404, "{log}");
    assert!(
        !exchanges
            .iter()
            .any(|e| e.rpc_method().as_deref() == Some("initialize"))
    );
    c.finish("Traceback").await;
}

#[tokio::test]
async fn auto_mode_speaks_2026_07_28_to_the_python_server_with_sessions() {
    auto_mode("streamable").await;
}

#[tokio::test]
async fn auto_mode_speaks_2026_07_28_to_the_stateless_python_server() {
    auto_mode("stateless").await;
}

#[tokio::test]
async fn auto_mode_speaks_2026_07_28_to_the_python_server_with_json_responses() {
    auto_mode("json").await;
}

#[tokio::test]
async fn auto_mode_speaks_2026_07_28_to_the_stateless_python_server_with_json_responses() {
    auto_mode("stateless-json").await;
}

/// A forced 2025-11-25 handshake against a Python server in `transport`.
async fn handshake(transport: &str) {
    let Some(python) = venv_python() else { return };
    let stateless = transport.starts_with("stateless");
    let json_only = transport.ends_with("json");
    let peer = python_server(&python, "tools", transport).await;
    let c = Connected::start(
        peer,
        ClientOptions::new("oxmcp-http", "1.0.0").protocol(HANDSHAKE),
    )
    .await;
    assert_eq!(c.client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(c.client.server().info.name, "python-interop");
    exercise_tools(&c).await;
    c.client.close().await;
    if !stateless {
        // Closing ends the session.
        let deleted = wait_for_exchange(&c.proxy, |e| e.method == "DELETE").await;
        assert_eq!(deleted.status, 200, "{}", c.log());
    }

    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    let init = &exchanges[0];
    assert_eq!(init.rpc_method().as_deref(), Some("initialize"), "{log}");
    assert_eq!(init.request_header("mcp-session-id"), None);
    let session = init.response_header("mcp-session-id");
    if stateless {
        assert_eq!(session, None, "{log}");
        // No session, no stream for server-initiated messages: the client does not ask.
        assert!(!exchanges.iter().any(|e| e.method != "POST"), "{log}");
    } else {
        let session = session.expect("a session id");
        assert_eq!(session.len(), 32, "{session}");
        for e in &exchanges[1..] {
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
    for e in exchanges.iter().filter(|e| e.method == "POST").skip(1) {
        assert_eq!(
            e.request_header("mcp-protocol-version").as_deref(),
            Some("2025-11-25"),
            "{log}"
        );
        assert_eq!(e.request_header("mcp-method"), None, "{log}");
    }
    for e in exchanges.iter().filter(|e| e.is_rpc_request()) {
        // Requests are answered in SSE unless the server was told to use JSON.
        assert_eq!(e.is_sse(), !json_only, "{log}");
    }
    c.finish("Traceback").await;
}

#[tokio::test]
async fn handshake_with_the_python_server_with_sessions() {
    handshake("streamable").await;
}

#[tokio::test]
async fn handshake_with_the_stateless_python_server() {
    handshake("stateless").await;
}

#[tokio::test]
async fn handshake_with_the_python_server_with_json_responses() {
    handshake("json").await;
}

#[tokio::test]
async fn handshake_with_the_stateless_python_server_with_json_responses() {
    handshake("stateless-json").await;
}

/// The protocol revision rides every request after the handshake (2025-06-18 onwards:
/// "the client MUST include the MCP-Protocol-Version header on all subsequent requests"),
/// the DELETE that ends the session included.
#[tokio::test]
async fn every_request_after_the_handshake_declares_the_protocol_version() {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "tools", "streamable").await;
    let c = Connected::start(
        peer,
        ClientOptions::new("oxmcp-http", "1.0.0").protocol(HANDSHAKE),
    )
    .await;
    c.client.close().await;
    wait_for_exchange(&c.proxy, |e| e.method == "DELETE").await;
    for e in &c.proxy.exchanges()[1..] {
        assert_eq!(
            e.request_header("mcp-protocol-version").as_deref(),
            Some("2025-11-25"),
            "{}",
            e.describe()
        );
    }
}

fn log_lines(levels: &[&str]) -> Vec<Value> {
    levels
        .iter()
        .map(|l| json!({"level": l, "logger": "python-features", "data": format!("{l} message")}))
        .collect()
}

/// `feature_server.py` over HTTP with sessions: log messages, sampling and elicitation.
/// In 2026-07-28 the questions are `InputRequiredResult` rounds (plain JSON POSTs); in the
/// handshake era they are requests on the tool call's SSE stream, answered with POSTs.
async fn server_asks_the_client(mode: ProtocolMode, transport: &str) {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "features", transport).await;
    let asked = Asked::default();
    let c = Connected::start(peer, capable(mode, &asked)).await;
    let modern = c.client.protocol_version().is_stateless();

    // Log messages at info and above (the level rides `_meta`, or logging/setLevel).
    c.proxy.clear();
    let (_, text) = c.call("log_messages", json!({})).await;
    assert!(text.starts_with("logged"), "{text}");
    assert_eq!(
        c.inbox.take("notifications/message"),
        log_lines(&["info", "warning", "error"]),
        "{}",
        c.log()
    );
    // They came on the call's own response stream, before its answer.
    let call = &c.proxy.exchanges()[0];
    assert_eq!(
        (call.status, call.is_sse()),
        (200, true),
        "{}",
        call.describe()
    );
    assert_eq!(
        call.response_body()
            .matches("notifications/message")
            .count(),
        3
    );

    // Sampling and elicitation, accepted and declined.
    c.proxy.clear();
    assert_eq!(
        c.call("ask_model", json!({"prompt": "What is 2+2?"})).await,
        (
            false,
            "model oxmcp-test-model said 'echo: What is 2+2?' (stopReason endTurn)".into()
        )
    );
    let asked_now = asked.take();
    assert_eq!(asked_now.len(), 1);
    assert_eq!(
        asked_now[0].1["messages"][0]["content"]["text"],
        "What is 2+2?"
    );
    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    if modern {
        // Two self-contained POSTs: the first answered "input_required", the retry the result.
        let calls: Vec<_> = exchanges.iter().filter(|e| e.is_rpc_request()).collect();
        assert_eq!(calls.len(), 2, "{log}");
        assert!(calls[0].response_body().contains("input_required"), "{log}");
        assert!(
            !exchanges
                .iter()
                .any(|e| e.request_header("mcp-session-id").is_some())
        );
    } else {
        // The question came on the tool call's stream; our answer was a POST of its own.
        let call = exchanges.iter().find(|e| e.is_rpc_request()).unwrap();
        assert!(call.is_sse(), "{log}");
        assert!(
            call.response_body().contains("sampling/createMessage"),
            "{log}"
        );
        let answer = exchanges
            .iter()
            .find(|e| e.method == "POST" && e.rpc_method().is_none())
            .expect("the POST of our answer");
        assert_eq!(answer.status, 202, "{log}");
        assert_eq!(
            answer.request_header("mcp-session-id"),
            call.request_header("mcp-session-id")
        );
    }
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

    // Bad input: an answer that breaks the requested schema never reaches the tool.
    let (is_error, text) = c.call("ask_user", json!({"message": "sloppy"})).await;
    assert!(
        is_error && text.contains("does not match the requested schema"),
        "{text}"
    );
    c.finish("Traceback").await;
}

#[tokio::test]
async fn the_python_server_asks_the_client_over_http_in_2026_07_28() {
    server_asks_the_client(ProtocolMode::Auto, "streamable").await;
}

#[tokio::test]
async fn the_python_server_asks_the_client_over_an_http_session() {
    server_asks_the_client(HANDSHAKE, "streamable").await;
}

/// A stateless handshake-era server has no way to ask the client anything (its answer would
/// have nowhere to go): the SDK fails the tool at once instead of hanging.
#[tokio::test]
async fn the_stateless_python_server_cannot_ask_the_client() {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "features", "stateless").await;
    let asked = Asked::default();
    let c = Connected::start(peer, capable(HANDSHAKE, &asked)).await;
    let err = c
        .client
        .call_tool("ask_model", json!({"prompt": "hi"}))
        .await;
    let failed = match &err {
        Ok(result) => result.is_error(),
        Err(Error::Rpc(_)) => true,
        Err(_) => false,
    };
    assert!(failed, "{err:?}\n{}", c.log());
    assert!(asked.take().is_empty());
    c.finish("Traceback").await;
}

/// A bogus session id is answered 404 with a JSON-RPC error, before anything else.
#[tokio::test]
async fn the_python_server_answers_an_unknown_session_with_404() {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "tools", "streamable").await;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let request = http::Request::post(&peer.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", "0123456789abcdef0123456789abcdef")
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
    assert_eq!(body["error"]["code"], codes::INVALID_REQUEST);
}

/// The server restarts (a new process that knows no session): the next request is answered
/// 404, and oxmcp's client starts a new session by itself and retries.
#[tokio::test]
async fn a_restarted_python_server_gets_a_new_session() {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "tools", "streamable").await;
    let c = Connected::start(
        peer,
        ClientOptions::new("oxmcp-http", "1.0.0").protocol(HANDSHAKE),
    )
    .await;
    assert_eq!(
        c.call("greet", json!({"name": "Ada"})).await.1,
        "Hello, Ada!"
    );
    let first = c.proxy.exchanges()[0]
        .response_header("mcp-session-id")
        .unwrap();

    let restarted = python_server(&python, "tools", "streamable").await;
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
    let log = proxy.log();
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
        "{log}"
    );
    assert_eq!(
        calls[0].request_header("mcp-session-id"),
        Some(first.clone())
    );
    assert_eq!(calls[1].request_header("mcp-session-id"), None);
    let second = calls[1].response_header("mcp-session-id").unwrap();
    assert_ne!(first, second);
    assert_eq!(calls[3].request_header("mcp-session-id"), Some(second));
    client.close().await;
    drop(restarted);
}

/// Bad input for the recovery: the server that comes back refuses a new session (here: it
/// serves the legacy transport only, so `POST /mcp` is 404). The call fails at once with a
/// typed error that says why, instead of hanging or looping.
#[tokio::test]
async fn a_lost_session_that_cannot_be_reopened_is_a_typed_error() {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "tools", "streamable").await;
    let c = Connected::start(
        peer,
        ClientOptions::new("oxmcp-http", "1.0.0").protocol(HANDSHAKE),
    )
    .await;
    let elsewhere = python_server(&python, "tools", "sse").await;
    c.proxy.set_upstream(&elsewhere.url);
    c.proxy.clear();
    let e = rpc(c
        .client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .expect_err("no session to be had"));
    assert_eq!(e.code, codes::INTERNAL_ERROR, "{e:?}");
    assert!(
        e.message
            .contains("re-initializing after a lost session failed: HTTP 404"),
        "{e:?}\n{}",
        c.proxy.log()
    );
    let summary: Vec<_> = c
        .proxy
        .exchanges()
        .iter()
        .filter(|e| e.method == "POST")
        .map(|e| (e.rpc_method().unwrap_or_default(), e.status))
        .collect();
    assert_eq!(
        summary,
        [
            ("tools/call".to_owned(), 404),
            ("initialize".to_owned(), 404)
        ],
        "{}",
        c.proxy.log()
    );
    c.finish("Traceback").await;
}

/// The server is gone and stays gone: the call fails at once with a typed error that says
/// it was the HTTP transport, instead of waiting for the request timeout.
#[tokio::test]
async fn a_python_server_that_is_gone_is_a_typed_error() {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "tools", "streamable").await;
    let url = peer.url.clone();
    let client = Client::connect_http(
        &url,
        ClientOptions::new("oxmcp-http", "1.0.0").protocol(HANDSHAKE),
        HttpClientOptions::default(),
    )
    .await
    .expect("connect");
    peer.stop().await;
    let e = rpc(client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .expect_err("a call to a dead server"));
    assert_eq!(e.code, codes::INTERNAL_ERROR, "{e:?}");
    assert!(e.message.starts_with("HTTP transport:"), "{e:?}");
    assert_eq!(
        e.data.as_ref().map(|d| d["transport"].clone()),
        Some(json!("http"))
    );
    client.close().await;
}

/// The legacy HTTP+SSE transport: `POST /sse` is refused with 405, so the client falls back
/// to `GET /sse`, waits for the `endpoint` event and posts its messages there.
async fn legacy_sse(mode: ProtocolMode, expected: ProtocolVersion) {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "tools", "sse").await;
    let auto = mode == ProtocolMode::Auto;
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
        // Auto mode probes first; the refusal of the probe is not a fallback signal.
        expected_refusals.insert(0, ("server/discover".to_owned(), 405));
    }
    assert_eq!(refused, expected_refusals, "{log}");
    let stream = &exchanges[refused.len()];
    assert_eq!(
        (stream.method.as_str(), stream.path.as_str()),
        ("GET", "/sse"),
        "{log}"
    );
    assert!(stream.is_sse() && stream.status == 200, "{log}");
    let endpoint = stream
        .response_body()
        .lines()
        .find_map(|l| {
            l.strip_prefix("data: /messages/?session_id=")
                .map(str::to_owned)
        })
        .expect("an endpoint event");
    for e in &exchanges[refused.len() + 1..] {
        assert_eq!(e.method, "POST", "{log}");
        assert_eq!(e.path, format!("/messages/?session_id={endpoint}"), "{log}");
        assert_eq!(e.status, 202, "{log}");
    }
    // Every answer came on the one SSE stream.
    let answers = stream.response_body().matches("event: message").count();
    let requests = exchanges.iter().filter(|e| e.is_rpc_request()).count() - refused.len();
    assert_eq!(answers, requests, "{log}");
    c.finish("Traceback").await;
}

#[tokio::test]
async fn auto_mode_falls_back_to_the_python_legacy_sse_server() {
    legacy_sse(ProtocolMode::Auto, ProtocolVersion::V2025_11_25).await;
}

#[tokio::test]
async fn a_2024_11_05_handshake_over_the_python_legacy_sse_server() {
    let v = ProtocolVersion::V2024_11_05;
    legacy_sse(ProtocolMode::Handshake(v), v).await;
}

/// Bad input for the fallback: with it turned off, the 405 is a typed error; a URL that is
/// neither transport (404 to the POST and to the GET) fails the same way.
#[tokio::test]
async fn without_the_fallback_the_python_legacy_sse_server_is_refused() {
    let Some(python) = venv_python() else { return };
    let peer = python_server(&python, "tools", "sse").await;
    let no_fallback = HttpClientOptions {
        legacy_fallback: false,
        ..Default::default()
    };
    let (e, log) = Connected::start_with(
        peer,
        ClientOptions::new("oxmcp-http", "1.0.0").protocol(HANDSHAKE),
        no_fallback,
    )
    .await
    .err()
    .expect("no connection without the fallback");
    let e = rpc(e);
    assert_eq!(
        e.data.as_ref().map(|d| d["status"].clone()),
        Some(json!(405)),
        "{log}"
    );

    let peer = python_server(&python, "tools", "sse").await;
    let url = peer.url.replace("/sse", "/nothing");
    let err = Client::connect_http(
        &url,
        ClientOptions::new("oxmcp-http", "1.0.0").protocol(HANDSHAKE),
        HttpClientOptions::default(),
    )
    .await
    .expect_err("no MCP server at /nothing");
    let e = rpc(err);
    assert_eq!(
        e.data.as_ref().map(|d| d["status"].clone()),
        Some(json!(404))
    );
}

/// Runs `http_client.py MODE KIND URL` against oxmcp's conformance server.
async fn python_client(mode: &str, stateless: bool) {
    let Some(python) = venv_python() else { return };
    let server = interop_http::conformance_server(stateless).await;
    let kind = if stateless { "stateless" } else { "stateful" };
    let mut command = Command::new(&python);
    command
        .arg(script("http_client.py"))
        .args([mode, kind, &server.url])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let output = interop_http::run_client(command).await;
    assert_passed(
        &output,
        &format!(
            "http_client.py {mode} {kind}\n--- server ---\n{}",
            server.output()
        ),
    );
}

#[tokio::test]
async fn python_client_auto_mode_over_http_with_sessions() {
    python_client("auto", false).await;
}

#[tokio::test]
async fn python_client_legacy_mode_over_http_with_sessions() {
    python_client("legacy", false).await;
}

#[tokio::test]
async fn python_client_pinned_2026_07_28_over_http() {
    python_client("2026-07-28", false).await;
}

#[tokio::test]
async fn python_client_auto_mode_over_stateless_http() {
    python_client("auto", true).await;
}

#[tokio::test]
async fn python_client_legacy_mode_over_stateless_http() {
    python_client("legacy", true).await;
}

/// The script's checks are real: pointed at a server that is not the conformance server
/// (the SDK's own, over HTTP), it fails and says why.
#[tokio::test]
async fn python_http_client_script_rejects_another_server() {
    let Some(python) = venv_python() else { return };
    let server = python_server(&python, "features", "streamable").await;
    let mut command = Command::new(&python);
    command
        .arg(script("http_client.py"))
        .args(["legacy", "stateful", &server.url])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let output = interop_http::run_client(command).await;
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        describe_output(&output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "MISMATCH: serverInfo.name: expected 'oxmcp-conformance', got 'python-features'"
        ),
        "{}",
        describe_output(&output)
    );
}

#[path = "../../examples/rust/conformance/fixture.rs"]
mod fixture;

/// oxmcp's HTTP server told to answer in JSON only (`HttpServerOptions::json_response`),
/// in-process with the conformance fixture, driven by the SDK client in legacy mode (through
/// the recording proxy). The progress and log messages of a request are dropped (there is no
/// stream to carry them); the tools that ask the client must still get their answer.
#[tokio::test]
async fn python_client_legacy_mode_with_json_responses() {
    let Some(python) = venv_python() else { return };
    let server = fixture::build(oxmcp::server::Server::builder("oxmcp-conformance", "0.0.0"))
        .expect("the fixture");
    let http = server
        .serve_http(oxmcp::transport::http::HttpServerOptions {
            json_response: true,
            ..Default::default()
        })
        .await
        .expect("serve HTTP");
    let proxy = interop_http::Proxy::start(&http.url()).await;
    let mut command = Command::new(&python);
    command
        .arg(script("http_client.py"))
        .args(["legacy", "json", &proxy.url_for(&http.url())])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let output = interop_http::run_client(command).await;
    http.shutdown().await;
    assert_passed(
        &output,
        &format!("http_client.py legacy json\n--- HTTP ---\n{}", proxy.log()),
    );
}

/// The SDK's legacy HTTP+SSE client (`mcp.client.sse.sse_client`, the 2024-11-05 transport)
/// against oxmcp's server at `/sse`.
#[tokio::test]
async fn python_legacy_sse_client_against_oxmcp() {
    let Some(python) = venv_python() else { return };
    let server = interop_http::conformance_server(false).await;
    let url = server.url.replace("/mcp", "/sse");
    let mut command = Command::new(&python);
    command
        .arg(script("http_client.py"))
        .args(["legacy", "sse", &url])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let output = interop_http::run_client(command).await;
    assert_passed(
        &output,
        &format!(
            "http_client.py legacy sse\n--- server ---\n{}",
            server.output()
        ),
    );
}
