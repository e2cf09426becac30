//! The legacy HTTP+SSE transport (2024-11-05) served beside Streamable HTTP, over real
//! sockets on 127.0.0.1: oxmcp's own client falling back to it (the official SDKs' legacy
//! clients are in the interop suite's `legacy_sse_*` cells), and a raw TCP peer sending it bad
//! input. The session lives as long as its stream; bad POSTs are refused without harming the
//! stream.

mod common;

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use common::*;
use oxmcp::{
    client::{Client, ProtocolMode},
    protocol::ProtocolVersion,
    session::RequestOptions,
    transport::http::{HttpClientOptions, HttpServer, HttpServerOptions},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

async fn serve(options: HttpServerOptions) -> HttpServer {
    fixture_server()
        .serve_http(options)
        .await
        .expect("the server binds")
}

fn base(http: &HttpServer) -> String {
    format!("http://{}", http.local_addr())
}

async fn wait_sessions(http: &HttpServer, n: usize) {
    http_harness::wait_sessions(http, n, Duration::from_secs(5)).await;
}

/// An HTTP/1.1 exchange on its own connection: the status and whatever of the body arrived
/// (the whole body, or for a stream what came before `until` appeared).
async fn exchange(
    addr: SocketAddr,
    request: String,
    until: Option<&str>,
) -> (u16, String, TcpStream) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let read = async {
        loop {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.expect("read");
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf);
            let Some(head_end) = text.find("\r\n\r\n") else {
                continue;
            };
            match until {
                Some(needle) if text[head_end..].contains(needle) => break,
                Some(_) => {}
                None => {
                    let length = text[..head_end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if buf.len() >= head_end + 4 + length {
                        break;
                    }
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .expect("the server answers within 5 s");
    let (status, _) = http_harness::parse_head(&buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    (status, text, stream)
}

fn get(path: &str, accept: &str, host: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: {accept}\r\n\r\n")
}

fn post(path: &str, content_type: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Opens a legacy stream; returns its message path and the open connection.
async fn open_stream(addr: SocketAddr) -> (String, TcpStream) {
    let (status, text, stream) = exchange(
        addr,
        get("/sse", "text/event-stream", "127.0.0.1"),
        Some("sessionId="),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("text/event-stream"), "{text}");
    let endpoint = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("an endpoint event")
        .trim()
        .to_owned();
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    (endpoint, stream)
}

/// Reads the stream until `needle` shows up.
async fn read_until(stream: &mut TcpStream, seen: &mut String, needle: &str) {
    let read = async {
        while !seen.contains(needle) {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "the stream ended before `{needle}`:\n{seen}");
            seen.push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .unwrap_or_else(|_| panic!("`{needle}` never came:\n{seen}"));
}

#[tokio::test]
async fn our_client_falls_back_to_our_legacy_transport_and_uses_every_direction() {
    let http = serve(HttpServerOptions::default()).await;
    // The stream's own URL: POSTing there is refused, so the client opens it as a stream.
    let url = format!("{}/sse", base(&http));
    let client = Client::connect_http(
        &url,
        capable_client(json!({"username": "ada", "email": "ada@x"})),
        HttpClientOptions::default(),
    )
    .await
    .expect("connects over the legacy transport");
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(http.session_count(), 1);

    // Progress rides the one stream, in order, before the answer.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = RequestOptions::default()
        .on_progress(move |p| sink.lock().expect("not poisoned").push(p.progress));
    let result = client
        .call_tool_with("test_tool_with_progress", json!({}), options)
        .await
        .expect("the call succeeds");
    assert_eq!(
        result.text_content(),
        "Tool with progress executed successfully"
    );
    assert_eq!(*seen.lock().expect("not poisoned"), vec![0.0, 50.0, 100.0]);

    // A server-to-client request goes out on the stream; the answer comes back by POST.
    let sampled = client
        .call_tool("test_sampling", json!({"prompt": "2+2?"}))
        .await
        .expect("sampling works");
    assert!(!sampled.is_error(), "{}", sampled.text_content());
    assert!(
        sampled.text_content().contains("echo: 2+2?"),
        "{}",
        sampled.text_content()
    );

    // Errors come back on the stream too.
    let unknown = client.call_tool("no_such_tool", json!({})).await;
    assert!(unknown.is_err());

    client.close().await;
    wait_sessions(&http, 0).await;
    http.shutdown().await;
}

#[tokio::test]
async fn a_pinned_2024_11_05_client_speaks_it_over_the_legacy_transport() {
    let http = serve(HttpServerOptions::default()).await;
    let client = Client::connect_http(
        &format!("{}/sse", base(&http)),
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2024_11_05)),
        HttpClientOptions::default(),
    )
    .await
    .expect("connects");
    assert_eq!(client.protocol_version(), ProtocolVersion::V2024_11_05);
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "test_simple_text"));
    client.close().await;
    wait_sessions(&http, 0).await;
}

#[tokio::test]
async fn bad_posts_are_refused_and_the_stream_survives_them() {
    let http = serve(HttpServerOptions {
        max_body_bytes: 4096,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let (endpoint, mut stream) = open_stream(addr).await;
    wait_sessions(&http, 1).await;
    let mut seen = String::new();

    let refusals = [
        (
            post("/messages", "application/json", "{}"),
            400,
            "sessionId",
        ),
        (
            post("/messages?sessionId=nope", "application/json", "{}"),
            404,
            "Session not found",
        ),
        (
            post("/messages?sessionId=", "application/json", "{}"),
            400,
            "sessionId",
        ),
        (post(&endpoint, "text/plain", "{}"), 415, "application/json"),
        (
            post(&endpoint, "application/json", "{not json"),
            400,
            "-32700",
        ),
        (
            post(&endpoint, "application/json", &"x".repeat(5000)),
            413,
            "cap",
        ),
        (get("/messages", "*/*", "127.0.0.1"), 405, ""),
        (post("/sse", "application/json", "{}"), 405, ""),
        (
            get("/sse", "application/json", "127.0.0.1"),
            406,
            "text/event-stream",
        ),
    ];
    for (request, status, needle) in refusals {
        let first_line = request.lines().next().unwrap_or_default().to_owned();
        let (got, text, _) = exchange(addr, request, None).await;
        assert_eq!(got, status, "{first_line}:\n{text}");
        assert!(
            text.contains(needle),
            "{first_line}: `{needle}` missing:\n{text}"
        );
    }

    // JSON that is not a valid message is refused on the POST itself (never a 202 for it,
    // the rule in `transport::http::post_rule`), with its id when it could be read.
    for (body, answer) in [
        (
            r#"{"jsonrpc":"2.0","id":7}"#,
            r#""id":7,"error":{"code":-32600"#,
        ),
        (
            "[]",
            r#""error":{"code":-32600,"message":"Invalid request: empty batch"#,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":8,"method":"ping"}]"#,
            r#""error":{"code":-32600,"message":"Invalid request: JSON-RPC batches"#,
        ),
        ("[1,2]", r#""error":{"code":-32600"#),
        ("null", r#""error":{"code":-32600"#),
    ] {
        let (got, text, _) = exchange(addr, post(&endpoint, "application/json", body), None).await;
        assert_eq!(got, 400, "{body}: {text}");
        assert!(text.contains(answer), "{body}: `{answer}` missing:\n{text}");
    }

    // After all of that the session still works.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}
    });
    let (got, _, _) = exchange(
        addr,
        post(&endpoint, "application/json", &initialize.to_string()),
        None,
    )
    .await;
    assert_eq!(got, 202);
    read_until(&mut stream, &mut seen, r#""protocolVersion":"2024-11-05""#).await;
    let event = seen
        .split("\n\n")
        .find(|e| e.contains(r#""id":1"#))
        .expect("the initialize answer");
    let data: Value = serde_json::from_str(
        event
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .expect("data"),
    )
    .expect("the answer is JSON");
    assert_eq!(data["result"]["serverInfo"]["name"], "fixture");
    assert_eq!(http.session_count(), 1);
    http.shutdown().await;
}

#[tokio::test]
async fn a_client_that_goes_away_ends_its_session() {
    let http = serve(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let (endpoint, stream) = open_stream(addr).await;
    let (_second, other) = open_stream(addr).await;
    wait_sessions(&http, 2).await;
    drop(stream);
    wait_sessions(&http, 1).await;
    // Its endpoint is gone with it.
    let (got, _, _) = exchange(addr, post(&endpoint, "application/json", "{}"), None).await;
    assert_eq!(got, 404);
    drop(other);
    wait_sessions(&http, 0).await;
}

#[tokio::test]
async fn shutting_the_server_down_ends_legacy_streams() {
    let http = serve(HttpServerOptions::default()).await;
    let (_endpoint, mut stream) = open_stream(http.local_addr()).await;
    http.shutdown().await;
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
    assert!(ended.is_ok(), "the stream stays open after shutdown");
    assert_eq!(http.session_count(), 0);
}

#[tokio::test]
async fn the_legacy_transport_obeys_host_checks_and_the_session_cap() {
    let http = serve(HttpServerOptions {
        max_sessions: 1,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    // DNS rebinding: a foreign Host is refused before a session exists.
    let (got, _, _) = exchange(addr, get("/sse", "text/event-stream", "evil.example"), None).await;
    assert_eq!(got, 403);
    assert_eq!(http.session_count(), 0);
    let (_endpoint, stream) = open_stream(addr).await;
    let (got, text, _) = exchange(addr, get("/sse", "text/event-stream", "127.0.0.1"), None).await;
    assert_eq!(got, 503, "{text}");
    drop(stream);
    wait_sessions(&http, 0).await;
    let (_endpoint, _stream) = open_stream(addr).await;
}

#[tokio::test]
async fn the_legacy_transport_can_be_turned_off() {
    let http = serve(HttpServerOptions {
        legacy_sse_path: None,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let (got, _, _) = exchange(addr, get("/sse", "text/event-stream", "127.0.0.1"), None).await;
    assert_eq!(got, 404);
    let (got, _, _) = exchange(
        addr,
        post("/messages?sessionId=x", "application/json", "{}"),
        None,
    )
    .await;
    assert_eq!(got, 404);
    // Without it, a legacy-only client cannot connect: a typed error, not a hang.
    let refused = Client::connect_http(
        &format!("{}/sse", base(&http)),
        client_options(),
        HttpClientOptions::default(),
    )
    .await;
    assert!(refused.is_err());
}
