//! oxmcp's client against hostile WebSocket servers: a 101 naming a subprotocol it never
//! offered, binary frames, garbage, a server that never answers, one that closes in the
//! middle of a request. Every case ends in a typed error, in time, with nothing left running.

use std::{future::Future, time::Duration};

use futures::{SinkExt, StreamExt};
use oxmcp::{
    ErrorKind, ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode},
    transport::ws::{WsClientOptions, WsSettings},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{
        Message,
        handshake::{
            derive_accept_key,
            server::{ErrorResponse, Request, Response},
        },
        protocol::frame::coding::CloseCode,
    },
};

use crate::{STEP, common::client_options};

type Socket = WebSocketStream<TcpStream>;

/// A server on a free port that upgrades one connection (echoing `mcp`) and hands it to
/// `script`; returns the URL and the script's outcome.
async fn fake<F, Fut, T>(script: F) -> (String, tokio::task::JoinHandle<T>)
where
    F: FnOnce(Socket) -> Fut + Send + 'static,
    Fut: Future<Output = T> + Send,
    T: Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let socket = tokio_tungstenite::accept_hdr_async(tcp, echo_mcp)
            .await
            .unwrap();
        script(socket).await
    });
    (url, task)
}

/// The fake server's upgrade: `mcp` echoed, as oxmcp's client offers it.
#[allow(clippy::result_large_err, reason = "the library's callback signature")]
fn echo_mcp(_: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
    response
        .headers_mut()
        .insert("sec-websocket-protocol", "mcp".parse().unwrap());
    Ok(response)
}

/// A client pinned to the handshake era (the first message is then `initialize`).
fn handshake_client() -> ClientOptions {
    client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25))
}

/// Connects with `options`, bounded by `STEP`.
async fn try_connect(
    url: &str,
    options: ClientOptions,
    ws: WsClientOptions,
) -> oxmcp::Result<Client> {
    tokio::time::timeout(STEP, Client::connect_ws(url, options, ws))
        .await
        .expect("connect_ws ends in time")
}

/// The next JSON text frame the client sent.
async fn read_json(socket: &mut Socket) -> Value {
    loop {
        match tokio::time::timeout(STEP, socket.next()).await.unwrap() {
            Some(Ok(Message::Text(t))) => return serde_json::from_str(&t).unwrap(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("expected a JSON text frame, got {other:?}"),
        }
    }
}

/// The close code the client ends with.
async fn close_code(socket: &mut Socket) -> Option<u16> {
    loop {
        match tokio::time::timeout(STEP, socket.next()).await.unwrap() {
            Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => return None,
        }
    }
}

/// Answers `initialize` as a 2025-11-25 server would.
async fn answer_initialize(socket: &mut Socket) {
    let init = read_json(socket).await;
    assert_eq!(init["method"], "initialize", "{init}");
    let reply = json!({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "fake", "version": "0"}}});
    socket.send(Message::text(reply.to_string())).await.unwrap();
    let initialized = read_json(socket).await;
    assert_eq!(initialized["method"], "notifications/initialized");
}

#[tokio::test]
async fn a_subprotocol_that_was_not_offered_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8];
            if tcp.read(&mut byte).await.unwrap() == 0 {
                return;
            }
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).unwrap();
        let key = head
            .lines()
            .find_map(|l| {
                l.strip_prefix("sec-websocket-key: ")
                    .or_else(|| l.strip_prefix("Sec-WebSocket-Key: "))
            })
            .expect("a key")
            .trim();
        let answer = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: graphql-ws\r\n\r\n",
            derive_accept_key(key.as_bytes())
        );
        tcp.write_all(answer.as_bytes()).await.unwrap();
        // Hold the connection: the client must fail on its own.
        let _ = tcp.read(&mut [0u8; 1]).await;
    });
    let e = try_connect(&url, client_options(), WsClientOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("`graphql-ws`"), "{e}");
    tokio::time::timeout(STEP, server).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_binary_frame_from_the_server_closes_with_1003() {
    let (url, server) = fake(|mut socket| async move {
        let _init = read_json(&mut socket).await;
        socket
            .send(Message::binary(b"{\"jsonrpc\":\"2.0\"}".to_vec()))
            .await
            .unwrap();
        close_code(&mut socket).await
    })
    .await;
    let e = try_connect(&url, handshake_client(), WsClientOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    assert!(e.to_string().contains("binary frame"), "{e}");
    let code = tokio::time::timeout(STEP, server).await.unwrap().unwrap();
    assert_eq!(code, Some(u16::from(CloseCode::Unsupported)));
}

#[tokio::test]
async fn garbage_from_the_server_is_answered_and_the_client_carries_on() {
    let (url, server) = fake(|mut socket| async move {
        // Garbage first: the client answers -32700 and keeps the connection.
        let init = read_json(&mut socket).await;
        socket.send(Message::text("}{ not json")).await.unwrap();
        let parse_error = read_json(&mut socket).await;
        // Then a proper answer to the still pending initialize.
        let reply = json!({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0"}}});
        socket.send(Message::text(reply.to_string())).await.unwrap();
        let _initialized = read_json(&mut socket).await;
        let _ = close_code(&mut socket).await;
        parse_error
    })
    .await;
    let client = try_connect(&url, handshake_client(), WsClientOptions::default())
        .await
        .expect("connects despite the garbage");
    assert_eq!(client.server().info.name, "fake");
    client.close().await;
    let parse_error = tokio::time::timeout(STEP, server).await.unwrap().unwrap();
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
}

#[tokio::test]
async fn a_server_that_never_answers_the_upgrade_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    let _held = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(tcp);
    });
    let ws = WsClientOptions {
        connect_timeout: Duration::from_millis(300),
        ..WsClientOptions::default()
    };
    let e = try_connect(&url, client_options(), ws).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
}

#[tokio::test]
async fn a_caller_that_gives_up_leaves_no_connection_behind() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        // Reads the upgrade request, never answers, and waits for the client to hang up.
        let mut buf = vec![0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    let ws = WsClientOptions {
        connect_timeout: Duration::from_secs(60),
        ..WsClientOptions::default()
    };
    let gave_up = tokio::time::timeout(
        Duration::from_millis(300),
        Client::connect_ws(&url, client_options(), ws),
    )
    .await;
    assert!(gave_up.is_err(), "the server never answers");
    // Dropping the future closed the connection: the server sees its end.
    tokio::time::timeout(STEP, server)
        .await
        .expect("the connection was closed")
        .unwrap();
}

#[tokio::test]
async fn a_server_silent_after_the_upgrade_times_out() {
    let (url, _server) = fake(|mut socket| async move {
        // Reads (so pings are answered) but never says anything itself.
        while let Some(Ok(_)) = socket.next().await {}
    })
    .await;
    let mut options = handshake_client();
    options.session.request_timeout = Duration::from_millis(300);
    let e = try_connect(&url, options, WsClientOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
}

#[tokio::test]
async fn a_server_that_stops_answering_pings_is_taken_for_gone() {
    let (url, _server) = fake(|mut socket| async move {
        answer_initialize(&mut socket).await;
        // Never polled again: pings go unanswered.
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(socket);
    })
    .await;
    let ws = WsClientOptions {
        websocket: WsSettings {
            ping_interval: Duration::from_millis(100),
            ping_timeout: Duration::from_millis(200),
            ..WsSettings::default()
        },
        ..WsClientOptions::default()
    };
    let client = try_connect(&url, handshake_client(), ws).await.unwrap();
    let options = oxmcp::session::RequestOptions::without_timeout();
    let e = tokio::time::timeout(STEP, client.call_tool_with("anything", json!({}), options))
        .await
        .expect("the call fails in time")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionClosed, "{e}");
    assert!(e.to_string().contains("ping"), "{e}");
}

#[tokio::test]
async fn a_server_that_closes_mid_request_fails_the_call() {
    for how in ["close 1011", "drop"] {
        let (url, _server) = fake(move |mut socket| async move {
            answer_initialize(&mut socket).await;
            let call = read_json(&mut socket).await;
            assert_eq!(call["method"], "tools/call");
            if how == "drop" {
                drop(socket);
            } else {
                let frame = tokio_tungstenite::tungstenite::protocol::CloseFrame {
                    code: CloseCode::Error,
                    reason: "crashed".into(),
                };
                let _ = socket.close(Some(frame)).await;
                let _ = close_code(&mut socket).await;
            }
        })
        .await;
        let client = try_connect(&url, handshake_client(), WsClientOptions::default())
            .await
            .unwrap();
        let e = tokio::time::timeout(STEP, client.call_tool("slow", json!({})))
            .await
            .expect("the call fails in time")
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionClosed, "{how}: {e}");
        if how != "drop" {
            assert!(e.to_string().contains("1011 (crashed)"), "{e}");
        }
        // The client is closed too: a later call fails at once.
        let again = client.call_tool("slow", json!({})).await.unwrap_err();
        assert_eq!(again.kind(), ErrorKind::ConnectionClosed, "{again}");
    }
}

#[tokio::test]
async fn a_message_over_the_clients_cap_closes_with_1009() {
    let (url, server) = fake(|mut socket| async move {
        answer_initialize(&mut socket).await;
        let call = read_json(&mut socket).await;
        let big = "z".repeat(2048);
        let reply = json!({"jsonrpc": "2.0", "id": call["id"], "result": {
            "content": [{"type": "text", "text": big}]}});
        let _ = socket.send(Message::text(reply.to_string())).await;
        close_code(&mut socket).await
    })
    .await;
    let ws = WsClientOptions {
        websocket: WsSettings {
            max_message_bytes: 1024,
            ..WsSettings::default()
        },
        ..WsClientOptions::default()
    };
    let client = try_connect(&url, handshake_client(), ws).await.unwrap();
    let e = tokio::time::timeout(STEP, client.call_tool("big", json!({})))
        .await
        .expect("the call fails in time")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    let code = tokio::time::timeout(STEP, server).await.unwrap().unwrap();
    assert_eq!(code, Some(1009));
}

#[tokio::test]
async fn bad_urls_are_typed_errors() {
    for (url, kind) in [
        ("http://127.0.0.1:1/mcp", ErrorKind::InvalidArgument),
        ("ws:///mcp", ErrorKind::InvalidArgument),
        ("not a url", ErrorKind::InvalidArgument),
    ] {
        let e = try_connect(url, client_options(), WsClientOptions::default())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), kind, "{url}: {e}");
    }
    // Nobody listening: an I/O error, at once.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let e = try_connect(&url, client_options(), WsClientOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
}
