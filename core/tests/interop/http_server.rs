//! oxmcp's HTTP client against each SDK's HTTP server (`http_server.py`, `http_server.mjs`)
//! in each of its Streamable HTTP flavours, through the recording proxy, so the cells assert
//! the transport as well as the results: the session id the server handed out and that
//! every later request carried it, the `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name`
//! headers, JSON versus SSE answers, the GET stream and the closing DELETE.
//!
//! Auto mode speaks 2026-07-28 as self-contained POSTs where the SDK answers
//! `server/discover`, and falls back to a handshake where it refuses it. Then the era's
//! details: the server's questions (as `InputRequiredResult` rounds, or as requests on the
//! tool call's stream answered with POSTs), log and progress notifications on a request's
//! stream, and what becomes of a session: a bogus id (404), a restarted server (a new
//! session, started by the client), one that cannot be reopened and a server that is gone
//! (typed errors, at once).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ProtocolMode},
    jsonrpc::codes,
    session::RequestOptions,
    transport::http::HttpClientOptions,
};
use serde_json::{Value, json};

use crate::common::peers::Asked;
use crate::features::rpc;
use crate::http::{App, Connected, Flavour, capable, options, sdk_server};
use crate::proxy::{Exchange, wait_for_exchange};
use crate::sdk::{Sdk, assert_text, skip};
use crate::tools::{exercise_tools, malformed_requests};

/// The tools app's calls, the wire check, then the malformed requests.
pub async fn exercise(c: &Connected, sdk: &Sdk) {
    exercise_tools(&c.client, sdk, sdk.http.tools).await;
    c.wire.assert_valid();
    malformed_requests(&c.client, sdk).await;
}

/// Auto mode: where the SDK answers `server/discover`, every request is a self-contained
/// 2026-07-28 POST with no session, answered with JSON; else the probe is refused (HTTP 400)
/// and the client falls back to a 2025-11-25 handshake.
pub async fn auto_mode(sdk: &'static Sdk, flavour: Flavour) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let peer = sdk_server(sdk, &launcher, App::Tools, flavour).await;
    let c = Connected::start(peer, options(ProtocolMode::Auto)).await;
    assert_eq!(c.client.protocol_version(), sdk.auto_version);
    let details = c.client.server();
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        (sdk.http.tools_name, sdk.version)
    );
    if !sdk.stateless() {
        exercise(&c, sdk).await;
        return handshake_transport(c, sdk, flavour, 1, ProtocolVersion::V2025_11_25).await;
    }
    assert_eq!(details.supported_versions, ["2026-07-28"]);
    exercise(&c, sdk).await;
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
    // The errors of the stateless entry map to HTTP statuses: 404 for an unknown method.
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
    c.finish(sdk).await;
}

/// A forced handshake at `version` in `flavour`.
pub async fn handshake(sdk: &'static Sdk, flavour: Flavour, version: ProtocolVersion) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let peer = sdk_server(sdk, &launcher, App::Tools, flavour).await;
    let c = Connected::start(peer, options(ProtocolMode::Handshake(version))).await;
    assert_eq!(c.client.protocol_version(), version);
    assert_eq!(c.client.server().info.name, sdk.http.tools_name);
    exercise(&c, sdk).await;
    handshake_transport(c, sdk, flavour, 0, version).await;
}

/// Closes `c` and checks the handshake era's transport, from the `initialize` at
/// `exchanges[init]` on (a refused probe may come before it): the session id on every later
/// request and the GET stream (or, without sessions, POSTs only), the revision on every later
/// POST, SSE answers unless the server was told to use JSON, and the DELETE that ends the
/// session.
async fn handshake_transport(
    c: Connected,
    sdk: &Sdk,
    flavour: Flavour,
    init: usize,
    version: ProtocolVersion,
) {
    c.client.close().await;
    if flavour.sessions() {
        let deleted = wait_for_exchange(&c.proxy, |e| e.method == "DELETE").await;
        assert_eq!(deleted.status, 200, "{}", c.log());
    }
    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    if init == 1 {
        assert_probe_refused(&exchanges[0], sdk, flavour, &log);
    }
    let first = &exchanges[init];
    assert_eq!(first.rpc_method().as_deref(), Some("initialize"), "{log}");
    assert_eq!(first.request_header("mcp-session-id"), None, "{log}");
    assert_eq!(first.request_header("mcp-protocol-version"), None, "{log}");
    let session = first.response_header("mcp-session-id");
    if flavour.sessions() {
        let session = session.expect("a session id");
        assert_eq!(session.len(), sdk.http.session_id_len, "{session}");
        for e in &exchanges[init + 1..] {
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
    } else {
        assert_eq!(session, None, "{log}");
        // No session, no stream for server-initiated messages: the client does not ask.
        assert!(!exchanges.iter().any(|e| e.method != "POST"), "{log}");
    }
    for e in exchanges[init + 1..].iter().filter(|e| e.method == "POST") {
        assert_eq!(
            e.request_header("mcp-protocol-version").as_deref(),
            Some(version.as_str()),
            "{log}"
        );
        assert_eq!(e.request_header("mcp-method"), None, "{log}");
    }
    for e in exchanges[init..].iter().filter(|e| e.is_rpc_request()) {
        // Requests are answered in SSE unless the server was told to use JSON.
        assert_eq!(e.is_sse(), !flavour.json(), "{log}");
    }
    c.finish(sdk).await;
}

/// The refusal of the probe by a server without the stateless revision.
fn assert_probe_refused(probe: &Exchange, sdk: &Sdk, flavour: Flavour, log: &str) {
    let refusal = sdk.http.probe_refusal.expect("a refusal in the peer table");
    assert_eq!(
        probe.rpc_method().as_deref(),
        Some("server/discover"),
        "{log}"
    );
    assert_eq!(probe.status, refusal.status, "{log}");
    let body: Value = serde_json::from_str(&probe.response_body()).unwrap();
    let why = body["error"]["message"].as_str().unwrap_or_default();
    let expected = if flavour.sessions() {
        refusal.with_sessions
    } else {
        refusal.stateless
    };
    assert_text(why, expected);
}

/// The protocol revision rides every request after the handshake (2025-06-18 onwards:
/// "the client MUST include the MCP-Protocol-Version header on all subsequent requests"),
/// the DELETE that ends the session included.
pub async fn every_request_declares_the_protocol_version(sdk: &'static Sdk) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let peer = sdk_server(sdk, &launcher, App::Tools, Flavour::Sessions).await;
    let v = ProtocolVersion::V2025_11_25;
    let c = Connected::start(peer, options(ProtocolMode::Handshake(v))).await;
    c.client.close().await;
    wait_for_exchange(&c.proxy, |e| e.method == "DELETE").await;
    for e in &c.proxy.exchanges()[1..] {
        assert_eq!(
            e.request_header("mcp-protocol-version").as_deref(),
            Some(v.as_str()),
            "{}",
            e.describe()
        );
    }
}

/// The feature app over HTTP at `version`, with a capable client; `None` where the peer is
/// not installed or does not speak `version`.
async fn features(
    sdk: &'static Sdk,
    version: ProtocolVersion,
    flavour: Flavour,
    asked: &Asked,
) -> Option<Connected> {
    let mode = sdk.mode_for(version).map_err(skip).ok()?;
    let launcher = sdk.launcher()?;
    let peer = sdk_server(sdk, &launcher, App::Features, flavour).await;
    let c = Connected::start(peer, capable(mode, asked)).await;
    assert_eq!(c.client.protocol_version(), version);
    Some(c)
}

/// `log_messages` with the client asking for info and above (the level rides `_meta`, or
/// `logging/setLevel`): the messages come on the call's own response stream, before its
/// answer.
pub async fn log_messages(sdk: &'static Sdk, version: ProtocolVersion) {
    if let Some(why) = sdk.gap("log_messages") {
        return skip(why);
    }
    let asked = Asked::default();
    let Some(c) = features(sdk, version, Flavour::Sessions, &asked).await else {
        return;
    };
    c.proxy.clear();
    let (_, text) = c.call("log_messages", json!({})).await;
    assert!(text.starts_with("logged"), "{text}");
    let lines: Vec<Value> = ["info", "warning", "error"]
        .iter()
        .map(|l| json!({"level": l, "logger": sdk.names.features, "data": format!("{l} message")}))
        .collect();
    assert_eq!(c.inbox.take("notifications/message"), lines, "{}", c.log());
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
    c.wire.assert_valid();
    c.finish(sdk).await;
}

/// `steps`: log and progress notifications of a tool call on its own SSE stream; a JSON
/// answer has no room for what came before it, so there the SDK drops them.
pub async fn progress_and_logs(sdk: &'static Sdk, flavour: Flavour) {
    if let Some(why) = sdk.gap("progress_and_logs") {
        return skip(why);
    }
    let asked = Asked::default();
    let Some(c) = features(sdk, ProtocolVersion::V2025_11_25, flavour, &asked).await else {
        return;
    };
    c.proxy.clear();
    let progress = Arc::new(Mutex::new(Vec::new()));
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
    assert_eq!(call.is_sse(), !flavour.json(), "{}", call.describe());
    if flavour.json() {
        assert!(logs.is_empty(), "{logs:?}");
        assert!(progress.lock().unwrap().is_empty());
    } else {
        let data: Vec<_> = logs.iter().map(|l| l["data"].clone()).collect();
        assert_eq!(data, [json!("step 1"), json!("step 2"), json!("step 3")]);
        assert_eq!(
            *progress.lock().unwrap(),
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
        );
    }
    c.wire.assert_valid();
    c.finish(sdk).await;
}

/// Sampling and elicitation (accepted, declined, an answer that breaks the schema) over HTTP.
/// In 2026-07-28 the questions are `InputRequiredResult` rounds (plain JSON POSTs); in the
/// handshake era they are requests on the tool call's SSE stream (with JSON answers, on the
/// session's GET stream), answered with POSTs of their own.
pub async fn questions(sdk: &'static Sdk, version: ProtocolVersion, flavour: Flavour) {
    if let Some(why) = sdk.gap("questions_json").filter(|_| flavour.json()) {
        return skip(why);
    }
    let asked = Asked::default();
    let Some(c) = features(sdk, version, flavour, &asked).await else {
        return;
    };
    let get_stream = if c.client.protocol_version().is_stateless() {
        None
    } else {
        let get = wait_for_exchange(&c.proxy, |e| e.method == "GET").await;
        assert!(get.is_sse(), "{}", get.describe());
        Some(get)
    };

    c.proxy.clear();
    assert_eq!(
        c.call("ask_model", json!({"prompt": "What is 2+2?"})).await,
        (false, sdk.http.sampling_reply.into())
    );
    let asked_now = asked.take();
    assert_eq!(asked_now.len(), 1);
    assert_eq!(
        asked_now[0].1["messages"][0]["content"]["text"],
        "What is 2+2?"
    );
    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    match get_stream {
        None => {
            // Two self-contained POSTs: the first answered "input_required", the retry the
            // result.
            let calls: Vec<_> = exchanges.iter().filter(|e| e.is_rpc_request()).collect();
            assert_eq!(calls.len(), 2, "{log}");
            assert!(calls[0].response_body().contains("input_required"), "{log}");
            assert!(
                !exchanges
                    .iter()
                    .any(|e| e.request_header("mcp-session-id").is_some())
            );
        }
        Some(get_stream) => {
            // The question came on the call's own stream, or (JSON only) on the session's GET
            // stream (opened right after the handshake, before the proxy's log was cleared);
            // our answer was a POST of its own, in the same session.
            let call = exchanges.iter().find(|e| e.is_rpc_request()).unwrap();
            assert_eq!(call.is_sse(), !flavour.json(), "{log}");
            let on_call = call.response_body().contains("sampling/createMessage");
            let on_get = get_stream
                .response_body()
                .contains("sampling/createMessage");
            assert_eq!(
                (on_call, on_get),
                (!flavour.json(), flavour.json()),
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
    assert!(is_error, "{text}");
    assert_text(&text, sdk.http.sloppy_answer);
    c.finish(sdk).await;
}

/// A stateless handshake-era server has no way to ask the client anything (its answer would
/// have nowhere to go): the SDK fails the tool at once instead of hanging.
pub async fn stateless_server_cannot_ask(sdk: &'static Sdk) {
    if let Some(why) = sdk.gap("stateless_server_cannot_ask") {
        return skip(why);
    }
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let peer = sdk_server(sdk, &launcher, App::Features, Flavour::Stateless).await;
    let asked = Asked::default();
    let v = ProtocolVersion::V2025_11_25;
    let c = Connected::start(peer, capable(ProtocolMode::Handshake(v), &asked)).await;
    let outcome = c
        .client
        .call_tool("ask_model", json!({"prompt": "hi"}))
        .await;
    let failed = match &outcome {
        Ok(result) => result.is_error(),
        Err(Error::Rpc(_)) => true,
        Err(_) => false,
    };
    assert!(failed, "{outcome:?}\n{}", c.log());
    assert!(asked.take().is_empty());
    c.finish(sdk).await;
}

/// A bogus session id is answered 404 with a JSON-RPC error, before anything else.
pub async fn unknown_session_is_404(sdk: &'static Sdk) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let peer = sdk_server(sdk, &launcher, App::Tools, Flavour::Sessions).await;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let request = http::Request::post(&peer.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", sdk.http.bogus_session)
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
    if let Some(code) = sdk.http.unknown_session_code {
        assert_eq!(body["error"]["code"], code);
    }
}

/// The server restarts (a new process that knows no session): the next request is answered
/// 404, and oxmcp's client starts a new session by itself and retries.
pub async fn restarted_server_gets_a_new_session(sdk: &'static Sdk) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let mode = sdk.mode_for(ProtocolVersion::V2025_11_25).unwrap();
    let peer = sdk_server(sdk, &launcher, App::Tools, Flavour::Sessions).await;
    let c = Connected::start(peer, options(mode)).await;
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

    let restarted = sdk_server(sdk, &launcher, App::Tools, Flavour::Sessions).await;
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
    assert_eq!(
        summary(&calls),
        [
            ("tools/call".to_owned(), 404),
            ("initialize".to_owned(), 200),
            ("notifications/initialized".to_owned(), 202),
            ("tools/call".to_owned(), 200),
        ],
        "{}",
        proxy.log()
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

/// Each POST's JSON-RPC method and status.
fn summary(exchanges: &[Arc<Exchange>]) -> Vec<(String, u16)> {
    exchanges
        .iter()
        .filter(|e| e.method == "POST")
        .map(|e| (e.rpc_method().unwrap_or_default(), e.status))
        .collect()
}

/// Bad input for the recovery: the server that comes back refuses a new session (here: it
/// serves the legacy transport only, so `POST /mcp` is 404). The call fails at once with a
/// typed error that says why, instead of hanging or looping.
pub async fn lost_session_that_cannot_be_reopened(sdk: &'static Sdk) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let peer = sdk_server(sdk, &launcher, App::Tools, Flavour::Sessions).await;
    let v = ProtocolVersion::V2025_11_25;
    let c = Connected::start(peer, options(ProtocolMode::Handshake(v))).await;
    let elsewhere = sdk_server(sdk, &launcher, App::Tools, Flavour::LegacySse).await;
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
    assert_eq!(
        summary(&c.proxy.exchanges()),
        [
            ("tools/call".to_owned(), 404),
            ("initialize".to_owned(), 404)
        ],
        "{}",
        c.proxy.log()
    );
    c.finish(sdk).await;
}

/// The server is gone and stays gone: the call fails at once with a typed error that says
/// it was the HTTP transport, instead of waiting for the request timeout.
pub async fn server_that_is_gone(sdk: &'static Sdk) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let peer = sdk_server(sdk, &launcher, App::Tools, Flavour::Sessions).await;
    let url = peer.url.clone();
    let v = ProtocolVersion::V2025_11_25;
    let client = Client::connect_http(
        &url,
        options(ProtocolMode::Handshake(v)),
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
