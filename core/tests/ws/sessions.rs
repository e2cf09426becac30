//! oxmcp's client against oxmcp's server over WebSocket: the handshake, tools, progress, a
//! question from the server, cancellation both ways, a closed socket cancelling a handler,
//! the stateless era, and WebSocket beside Streamable HTTP on one path. Each happy path has
//! its bad-input neighbour here or in `hostile_clients`.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use oxmcp::{
    Error, ErrorKind, ProtocolVersion,
    client::ProtocolMode,
    protocol::{CallToolResult, ElicitRequestParams, ElicitResult, Tool},
    server::{Context, Server},
    session::RequestOptions,
    transport::{
        http::{HttpClientOptions, HttpServerOptions},
        ws::{SUBPROTOCOL, WsClientOptions, WsServer, WsServerOptions, WsSettings},
    },
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::{
    STEP,
    common::{Probe, assert_echo, cancellable_call, client_options, test_server},
    connect, serve,
};

/// The test server plus `ask`, which asks the client a question and waits for the answer.
fn server_with_questions(probe: &Probe) -> Server {
    let server = test_server(probe);
    let p = probe.clone();
    server
        .add_tool(
            Tool::new("ask", "Asks the user", json!({"type": "object"})),
            move |_args: Value, ctx: Context| {
                let p = p.clone();
                async move {
                    p.push("asking");
                    let answer = ctx
                        .elicit(ElicitRequestParams::form(
                            "Your name?",
                            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                        ))
                        .await?;
                    Ok(CallToolResult::text(format!(
                        "hello {}",
                        answer.content.unwrap_or_default()["name"]
                    )))
                }
            },
        )
        .unwrap();
    server
}

/// A client whose elicitation handler answers `name`, or, with `hold`, waits for its
/// cancellation (recording it).
fn answering_client(probe: &Probe, hold: bool) -> oxmcp::client::ClientOptions {
    let p = probe.clone();
    client_options().elicitation(move |_params, cancel: CancellationToken| {
        let p = p.clone();
        async move {
            if hold {
                p.push("question held");
                // The engine drops this future when the question is cancelled: a task of its
                // own records that.
                tokio::spawn(async move {
                    cancel.cancelled().await;
                    p.push("question cancelled");
                });
                std::future::pending::<()>().await;
            }
            Ok(ElicitResult::accept(json!({"name": "ada"})))
        }
    })
}

#[tokio::test]
async fn handshake_tools_progress_and_a_question() {
    let probe = Probe::default();
    let server = server_with_questions(&probe);
    let ws = serve(&server, WsServerOptions::default()).await;
    assert!(ws.url().starts_with("ws://127.0.0.1:") && ws.url().ends_with("/mcp"));
    let client = connect(&ws.url(), answering_client(&probe, false)).await;
    // The handshake era, over one socket: initialize, then requests.
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.server().info.name, "test-server");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    assert_echo(&client, "over a socket").await;
    // Progress arrives before the result.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let options =
        RequestOptions::default().on_progress(move |p| s.lock().unwrap().push(p.progress));
    let result = client
        .call_tool_with("progress", json!({"steps": 3}), options)
        .await
        .unwrap();
    assert_eq!(result.text_content(), "done");
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0]);
    // A question from the server, answered by the client.
    let result = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(result.text_content(), r#"hello "ada""#);
    // A tool error is a result, not a broken connection.
    let result = client.call_tool("fail", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_echo(&client, "still up").await;
    assert_eq!(ws.session_count(), 1);
    client.close().await;
    wait_until(|| ws.session_count() == 0).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn both_eras_over_the_socket() {
    let probe = Probe::default();
    let server = server_with_questions(&probe);
    let ws = serve(&server, WsServerOptions::default()).await;
    for mode in [
        ProtocolMode::Handshake(ProtocolVersion::V2025_11_25),
        ProtocolMode::Handshake(ProtocolVersion::V2024_11_05),
        ProtocolMode::Stateless(ProtocolVersion::V2026_07_28),
    ] {
        let client = connect(
            &ws.url(),
            answering_client(&probe, false).protocol(mode.clone()),
        )
        .await;
        assert_echo(&client, "either era").await;
        if mode == ProtocolMode::Handshake(ProtocolVersion::V2024_11_05) {
            // No elicitation before 2025-06-18: refused, the socket unharmed.
            let r = client.call_tool("ask", json!({})).await.unwrap();
            assert_eq!(r.is_error, Some(true));
            assert!(r.text_content().contains("2025-06-18"), "{r:?}");
            assert_echo(&client, "still fine").await;
            client.close().await;
            continue;
        }
        // In 2026-07-28 the question rides on an input-required round, in the handshake era
        // on a server→client request: the same socket carries both.
        let result = client.call_tool("ask", json!({})).await.unwrap();
        assert_eq!(result.text_content(), r#"hello "ada""#, "{mode:?}");
        client.close().await;
    }
    ws.shutdown().await;
}

#[tokio::test]
async fn cancellation_both_ways() {
    let probe = Probe::default();
    let server = server_with_questions(&probe);
    let ws = serve(&server, WsServerOptions::default()).await;
    let client = connect(
        &ws.url(),
        answering_client(&probe, true)
            .protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
    )
    .await;
    // Client → server: the caller's token cancels the call, the handler's token fires.
    let (token, call) = cancellable_call(&client, "wait_for_cancel", json!({}));
    probe.wait_for("started").await;
    token.cancel();
    assert!(matches!(call.await.unwrap(), Err(Error::Cancelled)));
    probe.wait_for("token fired").await;
    // Server → client: dropping the call that asked drops the server's question, and the
    // client's elicitation handler sees its cancellation.
    let asked = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("ask", json!({})).await }
    });
    probe.wait_for("question held").await;
    asked.abort();
    probe.wait_for("question cancelled").await;
    assert_echo(&client, "after both").await;
    client.close().await;
    ws.shutdown().await;
}

/// The test server over WebSocket, and a raw client whose `wait_for_cancel` call is running.
async fn a_handler_in_flight(probe: &Probe) -> (WsServer, crate::Raw) {
    let ws = serve(&test_server(probe), WsServerOptions::default()).await;
    let (mut socket, _) = crate::raw(&ws.url(), &[("sec-websocket-protocol", SUBPROTOCOL)])
        .await
        .unwrap();
    crate::initialize(&mut socket).await;
    crate::send(
        &mut socket,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "wait_for_cancel", "arguments": {}}}),
    )
    .await;
    probe.wait_for("started").await;
    (ws, socket)
}

#[tokio::test]
async fn a_closed_socket_cancels_the_handler_in_flight() {
    let probe = Probe::default();
    let (ws, socket) = a_handler_in_flight(&probe).await;
    // Gone without a close frame: the handler is cancelled at once, not after a grace period
    // (no answer could reach the client any more).
    drop(socket);
    probe.wait_for("token fired").await;
    probe.wait_for("dropped").await;
    wait_until(|| ws.session_count() == 0).await;
    crate::still_serving(&ws.url()).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn a_closing_handshake_also_cancels_the_handler_in_flight() {
    let probe = Probe::default();
    let (ws, mut socket) = a_handler_in_flight(&probe).await;
    socket.close(None).await.unwrap();
    // The server answers the close frame and the socket ends; the handler was cancelled.
    assert!(matches!(
        crate::next(&mut socket).await,
        Some(tokio_tungstenite::tungstenite::Message::Close(_)) | None
    ));
    probe.wait_for("token fired").await;
    wait_until(|| ws.session_count() == 0).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn shutting_the_server_down_fails_the_pending_call() {
    let probe = Probe::default();
    let server = test_server(&probe);
    let ws = serve(&server, WsServerOptions::default()).await;
    let client = connect(&ws.url(), client_options()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("wait_for_cancel", json!({})).await }
    });
    probe.wait_for("started").await;
    ws.shutdown().await;
    let result = tokio::time::timeout(STEP, call).await.unwrap().unwrap();
    let error = result.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ConnectionClosed, "{error}");
    probe.wait_for("token fired").await;
}

#[tokio::test]
async fn dropping_the_server_closes_its_sockets() {
    let server = test_server(&Probe::default());
    let ws = serve(&server, WsServerOptions::default()).await;
    let client = connect(&ws.url(), client_options()).await;
    drop(ws);
    let reason = tokio::time::timeout(STEP, client.session().closed())
        .await
        .expect("the socket closes");
    // A normal close (1000): the session ends without an error of the transport's own.
    assert!(reason.is_some_and(|e| e.kind() == ErrorKind::ConnectionClosed));
    wait_until(|| server.session_count() == 0).await;
}

#[tokio::test]
async fn the_streamable_http_server_upgrades_on_its_own_path() {
    let probe = Probe::default();
    let server = test_server(&probe);
    let options = HttpServerOptions {
        websocket: Some(WsSettings::default()),
        ..HttpServerOptions::default()
    };
    let http = server.serve_http(options).await.unwrap();
    assert_eq!(http.ws_url(), http.url().replacen("http://", "ws://", 1));
    // One port, one path, both transports at once.
    let over_ws = connect(&http.ws_url(), client_options()).await;
    let over_http = oxmcp::client::Client::connect_http(
        &http.url(),
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
        HttpClientOptions::default(),
    )
    .await
    .unwrap();
    assert_echo(&over_ws, "socket").await;
    assert_echo(&over_http, "post").await;
    assert_eq!(http.session_count(), 2);
    over_ws.close().await;
    over_http.close().await;
    http.shutdown().await;
}

#[tokio::test]
async fn without_websocket_the_streamable_http_server_refuses_the_upgrade() {
    let server = test_server(&Probe::default());
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let e = oxmcp::client::Client::connect_ws(
        &http.ws_url(),
        client_options(),
        WsClientOptions::default(),
    )
    .await
    .unwrap_err();
    // A Streamable HTTP GET without `Accept: text/event-stream`: refused, never upgraded.
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("HTTP 4"), "{e}");
    http.shutdown().await;
}

#[tokio::test]
async fn a_websocket_only_server_tells_plain_http_to_upgrade() {
    let server = test_server(&Probe::default());
    let ws = serve(&server, WsServerOptions::default()).await;
    let url = ws.url().replacen("ws://", "http://", 1);
    let e = oxmcp::client::Client::connect_http(
        &url,
        client_options(),
        HttpClientOptions {
            legacy_fallback: false,
            ..HttpClientOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert!(
        e.to_string().contains("426") || e.to_string().contains("Upgrade Required"),
        "{e}"
    );
    crate::still_serving(&ws.url()).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn a_silent_peer_is_closed_by_the_keepalive() {
    let server = test_server(&Probe::default());
    let settings = WsSettings {
        ping_interval: Duration::from_millis(100),
        ping_timeout: Duration::from_millis(200),
        ..WsSettings::default()
    };
    let ws = serve(
        &server,
        WsServerOptions {
            websocket: settings,
            ..WsServerOptions::default()
        },
    )
    .await;
    // A raw client that is never polled answers no ping: the server closes on it.
    let (mut socket, _) = crate::raw(&ws.url(), &[]).await.unwrap();
    crate::initialize(&mut socket).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    wait_until(|| ws.session_count() == 0).await;
    // A client that answers pings (oxmcp's, idle, pinging nothing itself) stays connected
    // past several intervals.
    let quiet = WsClientOptions {
        websocket: WsSettings {
            ping_interval: Duration::ZERO,
            ..WsSettings::default()
        },
        ..WsClientOptions::default()
    };
    let client = oxmcp::client::Client::connect_ws(&ws.url(), client_options(), quiet)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(ws.session_count(), 1);
    assert_echo(&client, "kept alive").await;
    client.close().await;
    // Absurd settings are held to sane ones, not a panic.
    let forever = WsClientOptions {
        websocket: WsSettings {
            ping_interval: Duration::MAX,
            ping_timeout: Duration::MAX,
            ..WsSettings::default()
        },
        ..WsClientOptions::default()
    };
    let client = oxmcp::client::Client::connect_ws(&ws.url(), client_options(), forever)
        .await
        .unwrap();
    assert_echo(&client, "no overflow").await;
    client.close().await;
    ws.shutdown().await;
}

/// Waits (real time, up to `STEP`) until `done` holds.
pub async fn wait_until(done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + STEP;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition not reached in {STEP:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
