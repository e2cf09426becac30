//! The WebSocket transport over real sockets on 127.0.0.1: oxmcp's client against oxmcp's
//! server (`sessions`), hostile clients against the server (`hostile_clients`), the client
//! against hostile servers (`hostile_servers`), and configs, a fixture child process and the
//! CLI (`host`). The hostile peers speak raw WebSocket through `tokio-tungstenite`, so each
//! test can send exactly the frame it is about.

#[path = "../common/mod.rs"]
mod common;

mod host;
mod hostile_clients;
mod hostile_servers;
mod sessions;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use oxmcp::{
    client::{Client, ClientOptions},
    server::Server,
    transport::ws::{WsClientOptions, WsServer, WsServerOptions},
};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{
        Message,
        client::IntoClientRequest,
        http::{HeaderValue, Request, Response},
    },
};

/// A raw client socket.
pub type Raw = WebSocketStream<TcpStream>;

/// How long any single step may take before the test fails (a guard against hangs, not a
/// timed assertion).
pub const STEP: Duration = Duration::from_secs(10);

/// Serves `server` over WebSocket alone, on a free port.
pub async fn serve(server: &Server, options: WsServerOptions) -> WsServer {
    server.serve_ws(options).await.expect("serve_ws")
}

/// Connects oxmcp's client.
pub async fn connect(url: &str, options: ClientOptions) -> Client {
    tokio::time::timeout(
        STEP,
        Client::connect_ws(url, options, WsClientOptions::default()),
    )
    .await
    .expect("connects in time")
    .expect("connects")
}

/// The upgrade request for `url` with `headers` added (`sec-websocket-protocol`, `origin`, …).
pub fn upgrade_request(url: &str, headers: &[(&str, &str)]) -> Request<()> {
    let mut request = url.into_client_request().expect("a ws:// URL");
    for (name, value) in headers {
        request.headers_mut().insert(
            tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    request
}

/// Upgrades a raw client with `headers`; the server's 101, or its refusal.
pub async fn raw(
    url: &str,
    headers: &[(&str, &str)],
) -> Result<(Raw, Response<Option<Vec<u8>>>), tokio_tungstenite::tungstenite::Error> {
    let addr = url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let tcp = TcpStream::connect(addr).await.expect("tcp connect");
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(None)
        .max_frame_size(None);
    tokio::time::timeout(
        STEP,
        tokio_tungstenite::client_async_with_config(
            upgrade_request(url, headers),
            tcp,
            Some(config),
        ),
    )
    .await
    .expect("the upgrade is answered in time")
}

/// Sends one JSON message as a text frame.
pub async fn send(socket: &mut Raw, message: Value) {
    socket
        .send(Message::text(message.to_string()))
        .await
        .expect("send");
}

/// The next data or close frame (pings and pongs skipped).
pub async fn next(socket: &mut Raw) -> Option<Message> {
    loop {
        let message = tokio::time::timeout(STEP, socket.next())
            .await
            .expect("a frame in time");
        match message {
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(m)) => return Some(m),
            Some(Err(_)) | None => return None,
        }
    }
}

/// The next message, which must be a JSON text frame.
pub async fn next_json(socket: &mut Raw) -> Value {
    match next(socket).await {
        Some(Message::Text(text)) => serde_json::from_str(&text).expect("JSON"),
        other => panic!("expected a text frame, got {other:?}"),
    }
}

/// Runs `initialize` and `notifications/initialized` on a raw socket.
pub async fn initialize(socket: &mut Raw) {
    send(
        socket,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let answer = next_json(socket).await;
    assert_eq!(answer["id"], 0, "{answer}");
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    send(
        socket,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
}

/// Expects the server to close `socket` with `code`, and answers its close frame.
pub async fn expect_close(socket: &mut Raw, code: u16) {
    match next(socket).await {
        Some(Message::Close(Some(frame))) => {
            assert_eq!(u16::from(frame.code), code, "closed with {frame:?}")
        }
        other => panic!("expected a close frame with {code}, got {other:?}"),
    }
    // Reading on sends our answering close frame, and sees the end.
    while next(socket).await.is_some() {}
}

/// Closes a raw socket the way a well-behaved client does: a close frame, the server's
/// answer, the end.
pub async fn finish(mut socket: Raw) {
    socket.close(None).await.expect("close frame sent");
    while next(&mut socket).await.is_some() {}
}

/// After a hostile exchange: the server still serves a fresh client end to end.
pub async fn still_serving(url: &str) {
    let client = connect(url, common::client_options()).await;
    common::assert_echo(&client, "still here").await;
    client.close().await;
}
