//! A session's first requests wait for its GET stream to be answered.
//!
//! A server may send the requests it makes while handling ours (an elicitation inside a tool
//! call) on the session's GET stream, and the TypeScript SDK's server drops them when that
//! stream is not open yet: the conformance scenario `elicitation-sep1034-client-defaults`
//! then waits out its 60 s timeout. The oxmcp client sends its GET right after `initialize`
//! and holds the session's first requests until the server answered it, for at most
//! two seconds (a server that never answers its GET delays one request, it does not hang).
//!
//! The server here is a few lines of HTTP/1.1 on 127.0.0.1 so that the test decides when
//! the GET is answered and records the order in which requests arrive.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use oxmcp::client::{Client, ClientOptions, ProtocolMode};
use oxmcp::transport::http::{HttpClientOptions, HttpClientTransport};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

#[derive(Debug, Clone, PartialEq)]
enum Seen {
    GetAnswered,
    Post(String),
}

/// Reads one request (head and a Content-Length body); None when the peer closed.
async fn read_request(stream: &mut TcpStream) -> Option<(String, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).to_string();
    Some((head, body))
}

async fn answer(stream: &mut TcpStream, status: &str, extra: &str, body: &str) {
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
}

/// A stateful 2025-11-25 server whose GET stream is answered after `get_delay` (never when
/// None), recording what arrives in order.
async fn server(get_delay: Option<Duration>) -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let Some((head, body)) = read_request(&mut stream).await else {
                    return;
                };
                if head.starts_with("GET ") {
                    let Some(delay) = get_delay else {
                        // Hold the connection open and never answer.
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        return;
                    };
                    tokio::time::sleep(delay).await;
                    log.lock().unwrap().push(Seen::GetAnswered);
                    let _ = stream
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n: open\n\n",
                        )
                        .await;
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    return;
                }
                if head.starts_with("DELETE ") {
                    answer(&mut stream, "200 OK", "", "").await;
                    return;
                }
                let message: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                let method = message["method"].as_str().unwrap_or_default().to_owned();
                log.lock().unwrap().push(Seen::Post(method.clone()));
                let id = message["id"].clone();
                let result = match method.as_str() {
                    "initialize" => serde_json::json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "get-first", "version": "1.0.0"}
                    }),
                    "tools/list" => serde_json::json!({"tools": []}),
                    _ if id.is_null() => {
                        answer(&mut stream, "202 Accepted", "", "").await;
                        return;
                    }
                    _ => serde_json::json!({}),
                };
                let body =
                    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                answer(&mut stream, "200 OK", "", &body).await;
            });
        }
    });
    (addr, seen)
}

async fn connect(addr: SocketAddr) -> Client {
    let url = format!("http://{addr}/mcp");
    let transport =
        HttpClientTransport::new(&url, HttpClientOptions::default()).expect("transport");
    let options = ClientOptions::new("get-first", "1.0.0")
        .protocol(ProtocolMode::Handshake(oxmcp::ProtocolVersion::V2025_11_25));
    Client::connect(transport, options).await.expect("connect")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_request_after_the_handshake_waits_for_the_get_stream() {
    let (addr, seen) = server(Some(Duration::from_millis(400))).await;
    let client = connect(addr).await;
    client.list_all_tools().await.expect("tools/list");
    let seen = seen.lock().unwrap().clone();
    let get = seen.iter().position(|s| *s == Seen::GetAnswered);
    let list = seen
        .iter()
        .position(|s| *s == Seen::Post("tools/list".into()));
    assert!(
        matches!((get, list), (Some(g), Some(l)) if g < l),
        "tools/list must follow the GET stream's answer: {seen:?}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_get_stream_that_is_never_answered_delays_the_first_request_and_nothing_hangs() {
    let (addr, seen) = server(None).await;
    let client = connect(addr).await;
    let started = Instant::now();
    client.list_all_tools().await.expect("tools/list");
    let waited = started.elapsed();
    // The wait is bounded (2 s), then the request goes anyway; later ones do not wait again.
    assert!(waited < Duration::from_secs(10), "waited {waited:?}");
    let again = Instant::now();
    client.list_all_tools().await.expect("tools/list again");
    assert!(
        again.elapsed() < Duration::from_millis(1500),
        "the second call waited {:?}",
        again.elapsed()
    );
    assert!(!seen.lock().unwrap().contains(&Seen::GetAnswered));
    client.close().await;
}
