//! The client side of the POST rule: a raw TCP server answers a pending request with each
//! shape (as a JSON body and as an SSE event on a stream left open), and the request is
//! resolved or failed within the deadline, never left to its timeout; the client keeps
//! working.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use oxmcp::{
    ErrorKind,
    client::{Client, ProtocolMode},
    protocol::ProtocolVersion,
    transport::http::{HttpClientOptions, HttpClientTransport},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

use crate::{
    DEADLINE,
    common::{client_options, http_harness::find},
};

#[derive(Clone, Debug)]
struct Shape {
    name: &'static str,
    status: u16,
    content_type: &'static str,
    body: &'static str,
    /// SSE: leave the stream open after the event (the answer must not depend on its end).
    hold_open: bool,
    /// Whether the request succeeds.
    ok: bool,
}

const fn json_shape(name: &'static str, body: &'static str, ok: bool) -> Shape {
    Shape {
        name,
        status: 200,
        content_type: "application/json",
        body,
        hold_open: false,
        ok,
    }
}

const fn sse_shape(name: &'static str, body: &'static str, ok: bool, hold_open: bool) -> Shape {
    Shape {
        content_type: "text/event-stream",
        hold_open,
        ..json_shape(name, body, ok)
    }
}

const VALID: &str = r#"{"jsonrpc":"2.0","id":{id},"result":{}}"#;

/// The shapes a pending request's answer can take, as a JSON body and as an SSE event (on a
/// stream left open: the outcome must not wait for its end).
const MESSAGES: &[(&str, &str, bool)] = &[
    ("a valid response", VALID, true),
    (
        "an error for the request",
        r#"{"jsonrpc":"2.0","id":{id},"error":{"code":-32001,"message":"no"}}"#,
        false,
    ),
    (
        "an array holding the response",
        r#"[{"jsonrpc":"2.0","id":{id},"result":{}}]"#,
        true,
    ),
    ("an empty array", "[]", false),
    ("an array of invalid elements", "[1,2]", false),
    ("a number", "123", false),
    ("null", "null", false),
    ("an empty object", "{}", false),
    ("an object that is no message", r#"{"foo":"bar"}"#, false),
    (
        "a response without jsonrpc",
        r#"{"id":{id},"result":{}}"#,
        false,
    ),
    (
        "a response with result and error",
        r#"{"jsonrpc":"2.0","id":{id},"result":{},"error":{"code":1,"message":"x"}}"#,
        false,
    ),
    (
        "an error without id",
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"refused"}}"#,
        false,
    ),
    (
        "an error with a null id",
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"refused"}}"#,
        false,
    ),
    (
        "invalid JSON",
        r#"{"jsonrpc":"2.0","id":{id},"result":"#,
        false,
    ),
];

fn client_shapes() -> Vec<Shape> {
    let mut shapes = Vec::new();
    for (name, body, ok) in MESSAGES {
        shapes.push(json_shape(name, body, *ok));
        shapes.push(sse_shape(name, body, *ok, true));
    }
    // Not answers, but not malformed either: on a stream the request waits for its end (the
    // answer may still come), then fails; in a JSON body it fails at once.
    let other = r#"[{"jsonrpc":"2.0","id":"other","result":{}}]"#;
    shapes.push(sse_shape(
        "an array answering another request, then the end",
        other,
        false,
        false,
    ));
    shapes.push(json_shape(
        "an array answering another request",
        other,
        false,
    ));
    shapes.push(sse_shape("only a notification, then the end", r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#, false, false));
    shapes.push(json_shape("a notification as the JSON answer", r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#, false));
    shapes.push(Shape {
        name: "202 for a request",
        status: 202,
        content_type: "",
        body: "",
        hold_open: false,
        ok: false,
    });
    shapes.push(json_shape("an empty JSON body", "", false));
    shapes.push(Shape {
        name: "an HTML error page",
        status: 500,
        content_type: "text/html",
        body: "<h1>oops</h1>",
        hold_open: false,
        ok: false,
    });
    shapes.push(Shape {
        name: "400 with a JSON-RPC error",
        status: 400,
        content_type: "application/json",
        body: r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"refused"}}"#,
        hold_open: false,
        ok: false,
    });
    shapes
}

/// A raw server: `initialize` and notifications are answered properly, every other request
/// with the current shape.
struct RawServer {
    addr: SocketAddr,
    shape: Arc<Mutex<Shape>>,
    task: tokio::task::JoinHandle<()>,
}

impl RawServer {
    async fn start() -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let shape = Arc::new(Mutex::new(json_shape("valid", VALID, true)));
        let current = shape.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve_raw(stream, current.clone()));
            }
        });
        RawServer { addr, shape, task }
    }

    /// An oxmcp client of this server at 2025-11-25, its handshake done.
    async fn connect(&self, options: HttpClientOptions) -> Client {
        let url = format!("http://{}/mcp", self.addr);
        let transport = HttpClientTransport::new(&url, options).expect("url");
        let options =
            client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25));
        Client::connect(transport, options)
            .await
            .expect("the handshake with the raw server")
    }
}

/// Client options without the GET stream or the legacy fallback: the raw server has neither.
fn no_streams() -> HttpClientOptions {
    HttpClientOptions {
        get_stream: false,
        legacy_fallback: false,
        ..Default::default()
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve_raw(mut stream: TcpStream, shape: Arc<Mutex<Shape>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        // One request: its head, then `Content-Length` bytes of body.
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        while buf.len() < head_end + 4 + length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Vec<u8> = buf
            .drain(..head_end + 4 + length)
            .skip(head_end + 4)
            .collect();
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (status, content_type, answer, hold) = if !head.starts_with("post") {
            // No GET stream, and DELETE is fine.
            let status = if head.starts_with("delete") { 200 } else { 405 };
            (status, String::new(), String::new(), false)
        } else if message["method"] == "initialize" {
            let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "raw", "version": "0"}}});
            (
                200,
                "application/json".to_owned(),
                answer.to_string(),
                false,
            )
        } else if message.get("id").is_none() || message.get("method").is_none() {
            (202, String::new(), String::new(), false)
        } else {
            let shape = shape.lock().expect("shape").clone();
            let answer = shape.body.replace("{id}", &message["id"].to_string());
            let answer = if shape.content_type == "text/event-stream" {
                format!("data: {answer}\n\n")
            } else {
                answer
            };
            (
                shape.status,
                shape.content_type.to_owned(),
                answer,
                shape.hold_open,
            )
        };
        let mut out = format!("HTTP/1.1 {status} X\r\nMcp-Session-Id: raw-session\r\n");
        if !content_type.is_empty() {
            out.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        if hold {
            // An SSE stream that stays open: no length, the connection is the body.
            out.push_str("Connection: close\r\n\r\n");
            out.push_str(&answer);
            if stream.write_all(out.as_bytes()).await.is_err() {
                return;
            }
            // Until the client gives up on it.
            while let Ok(n) = stream.read(&mut chunk).await {
                if n == 0 {
                    return;
                }
            }
            return;
        }
        out.push_str(&format!("Content-Length: {}\r\n\r\n{answer}", answer.len()));
        if stream.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn every_answer_shape_resolves_or_fails_the_pending_request_promptly() {
    let server = RawServer::start().await;
    let client = server
        .connect(HttpClientOptions {
            max_resumptions: 0,
            ..no_streams()
        })
        .await;
    let shapes = client_shapes();
    assert_eq!(shapes.len(), 2 * MESSAGES.len() + 8);
    for shape in &shapes {
        let what = format!("{} ({} {})", shape.name, shape.status, shape.content_type);
        *server.shape.lock().expect("shape") = shape.clone();
        let outcome = tokio::time::timeout(DEADLINE, client.ping())
            .await
            .unwrap_or_else(|_| panic!("{what}: the request was left pending past {DEADLINE:?}"));
        match (&outcome, shape.ok) {
            (Ok(()), true) => {}
            (Err(e), false) => {
                // A typed failure of this request, from the transport or the server (never a
                // timeout, never the connection given up).
                assert_eq!(e.kind(), ErrorKind::Rpc, "{what}: {e}");
            }
            _ => panic!(
                "{what}: expected {}, got {outcome:?}",
                if shape.ok { "success" } else { "a failure" }
            ),
        }
        // The client keeps working.
        *server.shape.lock().expect("shape") = json_shape("valid", VALID, true);
        tokio::time::timeout(DEADLINE, client.ping())
            .await
            .unwrap_or_else(|_| panic!("after {what}: a valid answer was left pending"))
            .unwrap_or_else(|e| panic!("after {what}: a valid answer failed: {e}"));
    }
    client.close().await;
}

#[tokio::test]
async fn a_server_error_without_id_reaches_the_caller_with_its_code() {
    let server = RawServer::start().await;
    let client = server.connect(no_streams()).await;
    for shape in [
        sse_shape(
            "sse",
            r#"{"jsonrpc":"2.0","error":{"code":-32042,"message":"refused"}}"#,
            false,
            true,
        ),
        json_shape(
            "json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32042,"message":"refused"}}"#,
            false,
        ),
    ] {
        *server.shape.lock().expect("shape") = shape.clone();
        let e = tokio::time::timeout(DEADLINE, client.ping())
            .await
            .expect("prompt")
            .expect_err("an error");
        assert_eq!(e.code(), Some(-32042), "{}: {e}", shape.name);
    }
    // A malformed answer names what was wrong with it.
    *server.shape.lock().expect("shape") = sse_shape("bad", "[]", false, true);
    let e = tokio::time::timeout(DEADLINE, client.ping())
        .await
        .expect("prompt")
        .expect_err("an error");
    assert!(e.to_string().contains("no JSON-RPC response"), "{e}");
    client.close().await;
}
