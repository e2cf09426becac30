//! Raw clients against oxmcp's WebSocket server: what each offers or sends, what the server
//! answers, and, after every one, a fresh client served end to end.

use std::sync::Arc;

use futures::SinkExt;

use http::StatusCode;
use oxmcp::{
    ErrorKind,
    server::Server,
    transport::ws::{SUBPROTOCOL, WsClientOptions, WsServerOptions, WsSettings},
};
use serde_json::json;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::{
    common::{Probe, client_options, test_server},
    expect_close, finish, initialize, next_json, raw, send, serve, still_serving,
};

fn server() -> Server {
    test_server(&Probe::default())
}

/// The status of a refused upgrade.
fn refused_with(result: Result<impl std::fmt::Debug, WsError>) -> StatusCode {
    match result {
        Err(WsError::Http(response)) => response.status(),
        other => panic!("expected an HTTP refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn no_subprotocol_offered_is_served_and_none_echoed() {
    let ws = serve(&server(), WsServerOptions::default()).await;
    let (mut socket, response) = raw(&ws.url(), &[]).await.expect("upgraded");
    assert!(
        !response.headers().contains_key("sec-websocket-protocol"),
        "{response:?}"
    );
    initialize(&mut socket).await;
    send(
        &mut socket,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "plain"}}}),
    )
    .await;
    let answer = next_json(&mut socket).await;
    assert_eq!(answer["result"]["content"][0]["text"], "plain", "{answer}");
    finish(socket).await;
    still_serving(&ws.url()).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn mcp_among_other_offers_is_echoed_alone() {
    let ws = serve(&server(), WsServerOptions::default()).await;
    for offer in ["mcp, x", "x, mcp", SUBPROTOCOL] {
        let (mut socket, response) = raw(&ws.url(), &[("sec-websocket-protocol", offer)])
            .await
            .expect("upgraded");
        assert_eq!(response.headers()["sec-websocket-protocol"], SUBPROTOCOL);
        initialize(&mut socket).await;
        finish(socket).await;
    }
    // Only other subprotocols: served, none chosen (the client library then fails the
    // connection itself, as RFC 6455 says a client that needs one must).
    let refused = raw(&ws.url(), &[("sec-websocket-protocol", "graphql-ws")]).await;
    assert!(
        matches!(refused, Err(WsError::Protocol(_))),
        "{:?}",
        refused.map(|(_, r)| r)
    );
    still_serving(&ws.url()).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn a_binary_frame_closes_with_1003() {
    let ws = serve(&server(), WsServerOptions::default()).await;
    let (mut socket, _) = raw(&ws.url(), &[]).await.unwrap();
    initialize(&mut socket).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    socket
        .send(Message::binary(ping.into_bytes()))
        .await
        .unwrap();
    expect_close(&mut socket, 1003).await;
    still_serving(&ws.url()).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn invalid_json_is_answered_and_the_connection_stays_up() {
    let ws = serve(&server(), WsServerOptions::default()).await;
    let (mut socket, _) = raw(&ws.url(), &[]).await.unwrap();
    initialize(&mut socket).await;
    for garbage in ["{not json", "", "[1,", "\u{feff}{}"] {
        socket.send(Message::text(garbage)).await.unwrap();
        let answer = next_json(&mut socket).await;
        assert_eq!(answer["error"]["code"], -32700, "{garbage:?}: {answer}");
        // 2025-11-25: an error about a message whose id could not be read omits the id.
        assert!(answer.get("id").is_none(), "{answer}");
    }
    // Valid JSON that is not JSON-RPC is an invalid request, not a parse error.
    socket.send(Message::text("[]")).await.unwrap();
    assert_eq!(next_json(&mut socket).await["error"]["code"], -32600);
    // The same connection still works.
    send(
        &mut socket,
        json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    )
    .await;
    assert_eq!(next_json(&mut socket).await["id"], 7);
    finish(socket).await;
    still_serving(&ws.url()).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn a_message_over_the_cap_closes_with_1009() {
    let ws = serve(&server(), WsServerOptions::default()).await;
    let (mut socket, _) = raw(&ws.url(), &[]).await.unwrap();
    initialize(&mut socket).await;
    let text = "x".repeat(20 << 20);
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": text}}});
    // The server may close while the frame is still going out; either way it says 1009.
    let _ = socket.send(Message::text(huge.to_string())).await;
    expect_close(&mut socket, 1009).await;
    still_serving(&ws.url()).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn the_cap_is_configurable_and_counts_fragments() {
    let options = WsServerOptions {
        websocket: WsSettings {
            max_message_bytes: 1024,
            ..WsSettings::default()
        },
        ..WsServerOptions::default()
    };
    let ws = serve(&server(), options).await;
    // Under the cap: served (a 4 MiB session cap does not apply twice).
    let (mut socket, _) = raw(&ws.url(), &[]).await.unwrap();
    initialize(&mut socket).await;
    send(
        &mut socket,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    )
    .await;
    assert_eq!(next_json(&mut socket).await["id"], 1);
    // Over it in fragments of 600 bytes each: closed once the total passes the cap.
    use tokio_tungstenite::tungstenite::protocol::frame::{
        Frame,
        coding::{Data, OpCode},
    };
    let part = "y".repeat(600);
    socket
        .send(Message::Frame(Frame::message(
            part.clone(),
            OpCode::Data(Data::Text),
            false,
        )))
        .await
        .unwrap();
    let _ = socket
        .send(Message::Frame(Frame::message(
            part,
            OpCode::Data(Data::Continue),
            true,
        )))
        .await;
    expect_close(&mut socket, 1009).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn a_foreign_origin_or_host_is_refused_before_the_upgrade() {
    let ws = serve(&server(), WsServerOptions::default()).await;
    let url = ws.url();
    let status = refused_with(raw(&url, &[("origin", "https://evil.example")]).await);
    assert_eq!(status, StatusCode::FORBIDDEN);
    let status = refused_with(raw(&url, &[("host", "evil.example")]).await);
    assert_eq!(status, StatusCode::FORBIDDEN);
    // A loopback origin is fine.
    let port = ws.local_addr().port();
    let origin = format!("http://localhost:{port}");
    let (socket, _) = raw(&url, &[("origin", &origin)]).await.expect("upgraded");
    drop(socket);
    // oxmcp's client names the refusal.
    let e = oxmcp::client::Client::connect_ws(
        &url,
        client_options(),
        WsClientOptions {
            headers: [(
                http::header::ORIGIN,
                "https://evil.example".parse().unwrap(),
            )]
            .into_iter()
            .collect(),
            ..WsClientOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
    assert!(e.to_string().contains("403"), "{e}");
    still_serving(&url).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn the_auth_hook_runs_before_the_upgrade() {
    let options = WsServerOptions {
        auth: Some(Arc::new(|headers: &http::HeaderMap| {
            match headers
                .get(http::header::AUTHORIZATION)
                .map(|v| v.as_bytes())
            {
                Some(b"Bearer right") => Ok(()),
                Some(_) => Err((StatusCode::FORBIDDEN, "wrong token".into())),
                None => Err((StatusCode::UNAUTHORIZED, "no token".into())),
            }
        })),
        ..WsServerOptions::default()
    };
    let ws = serve(&server(), options).await;
    let url = ws.url();
    assert_eq!(refused_with(raw(&url, &[]).await), StatusCode::UNAUTHORIZED);
    let wrong = refused_with(raw(&url, &[("authorization", "Bearer wrong")]).await);
    assert_eq!(wrong, StatusCode::FORBIDDEN);
    let with = |token: &str| WsClientOptions {
        headers: [(
            http::header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        )]
        .into_iter()
        .collect(),
        ..WsClientOptions::default()
    };
    let e = oxmcp::client::Client::connect_ws(&url, client_options(), with("wrong"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
    assert!(e.to_string().contains("wrong token"), "{e}");
    let client = oxmcp::client::Client::connect_ws(&url, client_options(), with("right"))
        .await
        .expect("the right token is let in");
    crate::common::assert_echo(&client, "authorized").await;
    client.close().await;
    ws.shutdown().await;
}

#[tokio::test]
async fn the_session_cap_is_a_503_before_the_upgrade() {
    let options = WsServerOptions {
        max_sessions: 1,
        ..WsServerOptions::default()
    };
    let ws = serve(&server(), options).await;
    let first = crate::connect(&ws.url(), client_options()).await;
    let status = refused_with(raw(&ws.url(), &[]).await);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    // Closing the first frees its place.
    first.close().await;
    crate::sessions::wait_until(|| ws.session_count() == 0).await;
    still_serving(&ws.url()).await;
    ws.shutdown().await;
}

#[tokio::test]
async fn a_malformed_upgrade_is_refused_and_the_server_stays_up() {
    let ws = serve(&server(), WsServerOptions::default()).await;
    let url = ws.url();
    let status = refused_with(raw(&url, &[("sec-websocket-version", "8")]).await);
    assert_eq!(status, StatusCode::UPGRADE_REQUIRED);
    let status = refused_with(raw(&url, &[("sec-websocket-key", "short")]).await);
    assert_eq!(status, StatusCode::BAD_REQUEST);
    still_serving(&url).await;
    ws.shutdown().await;
}
