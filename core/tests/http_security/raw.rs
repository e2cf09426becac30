//! A raw HTTP/1.1 client for the security tests: the bytes on the wire are exactly the bytes
//! written here (hyper's client would normalise or refuse some of them), and each response is
//! read off the socket as it comes (sized, chunked or close-delimited).

use std::{net::SocketAddr, time::Duration};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::common::http_harness::{find, raw_request};

/// Long enough for a debug build on a loaded machine; only ever turns a hang into a failure.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#
);
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
pub const ACCEPT_BOTH: &[u8] = b"Accept: application/json, text/event-stream";
pub const JSON_TYPE: &[u8] = b"Content-Type: application/json";
/// What a GET opening a stream accepts.
pub const EVENT_STREAM: &[u8] = b"Accept: text/event-stream";
/// Declared but never sent: a server that reads the body before deciding would wait forever.
pub const NEVER_SENT: &[u8] = b"Content-Length: 1000000";

/// One response as read off the socket.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not JSON ({e}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The JSON-RPC error code of the body, if it is a JSON-RPC error.
    pub fn rpc_code(&self) -> Option<i64> {
        serde_json::from_slice::<Value>(&self.body)
            .ok()?
            .pointer("/error/code")?
            .as_i64()
    }

    pub fn session_id(&self) -> String {
        self.header("mcp-session-id")
            .unwrap_or_else(|| panic!("no Mcp-Session-Id on {self:?}"))
    }
}

/// A well-formed MCP POST to `/mcp` with `Host: localhost`, plus `extra` header lines.
pub fn mcp_post(session: Option<&str>, extra: &[&[u8]], body: &str) -> Vec<u8> {
    let length = format!("Content-Length: {}", body.len());
    let session = session.map(|s| format!("Mcp-Session-Id: {s}"));
    let mut lines: Vec<&[u8]> = vec![b"Host: localhost", ACCEPT_BOTH, JSON_TYPE];
    lines.push(length.as_bytes());
    if let Some(s) = &session {
        lines.push(s.as_bytes());
    }
    lines.extend_from_slice(extra);
    raw_request("POST /mcp HTTP/1.1", &lines, body.as_bytes())
}

/// Reads until `buf` holds at least `want` bytes; false at end of stream.
async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let mut chunk = [0u8; 16 * 1024];
    while buf.len() < want {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(false);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(true)
}

/// Reads until `buf` contains `needle`; its position, or `None` at end of stream.
async fn fill_until(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    needle: &[u8],
) -> std::io::Result<Option<usize>> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(i) = find(buf, needle) {
            return Ok(Some(i));
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Reads one response; `buf` carries bytes already read past the previous response.
pub async fn read_reply(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<Reply> {
    let eof = || std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
    let end = fill_until(stream, buf, b"\r\n\r\n")
        .await?
        .ok_or_else(eof)?;
    let head: Vec<u8> = buf.drain(..end + 4).collect();
    let head = String::from_utf8_lossy(&head[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers: Vec<(String, Vec<u8>)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().as_bytes().to_vec()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| String::from_utf8_lossy(v).to_ascii_lowercase())
    };
    let body = if let Some(len) = get("content-length") {
        let len: usize = len.parse().expect("numeric Content-Length");
        if !fill(stream, buf, len).await? {
            return Err(eof());
        }
        buf.drain(..len).collect()
    } else if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        let mut body = Vec::new();
        loop {
            let line_end = fill_until(stream, buf, b"\r\n").await?.ok_or_else(eof)?;
            let size_text = String::from_utf8_lossy(&buf[..line_end]).into_owned();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .expect("chunk size");
            buf.drain(..line_end + 2);
            if size == 0 {
                // No trailers from this server: the final CRLF follows.
                fill(stream, buf, 2).await?;
                buf.drain(..2.min(buf.len()));
                break;
            }
            if !fill(stream, buf, size + 2).await? {
                return Err(eof());
            }
            body.extend(buf.drain(..size));
            buf.drain(..2);
        }
        body
    } else if status == 204 || status == 304 || (100..200).contains(&status) {
        Vec::new()
    } else {
        // Close-delimited.
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await?;
        buf.extend_from_slice(&rest);
        std::mem::take(buf)
    };
    Ok(Reply {
        status,
        headers,
        body,
    })
}

/// Sends `request` on a fresh connection and reads the response, within [`PATIENCE`].
pub async fn exchange(addr: SocketAddr, request: &[u8]) -> Reply {
    tokio::time::timeout(PATIENCE, async {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.write_all(request).await.expect("write request");
        let mut buf = Vec::new();
        read_reply(&mut stream, &mut buf).await.expect("a response")
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "no response within {PATIENCE:?} (was the body awaited?) to:\n{}",
            String::from_utf8_lossy(&request[..request.len().min(600)])
        )
    })
}

/// A keep-alive connection for many requests in a row.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    pub async fn open(addr: SocketAddr) -> Conn {
        Conn {
            stream: TcpStream::connect(addr).await.expect("connect"),
            buf: Vec::new(),
        }
    }

    pub async fn send(&mut self, request: &[u8]) -> Reply {
        tokio::time::timeout(PATIENCE, async {
            self.stream.write_all(request).await.expect("write");
            read_reply(&mut self.stream, &mut self.buf)
                .await
                .expect("a response")
        })
        .await
        .expect("a response in time")
    }
}

/// Initializes a session over raw HTTP and completes the handshake; returns its id.
pub async fn raw_session(addr: SocketAddr) -> String {
    let r = exchange(addr, &mcp_post(None, &[], INITIALIZE)).await;
    assert_eq!(r.status, 200, "initialize: {r:?}");
    let id = r.session_id();
    let r = exchange(addr, &mcp_post(Some(&id), &[], INITIALIZED)).await;
    assert_eq!(r.status, 202, "initialized: {r:?}");
    id
}

pub fn tools_call(id: u64, text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": text}}})
    .to_string()
}

/// A complete initialize POST to `/mcp`: these header lines (`Host` among them), then the
/// JSON types and the body's length.
pub fn initialize_with(lines: &[&[u8]]) -> Vec<u8> {
    let length = format!("Content-Length: {}", INITIALIZE.len());
    let mut all = lines.to_vec();
    all.extend_from_slice(&[ACCEPT_BOTH, JSON_TYPE, length.as_bytes()]);
    raw_request("POST /mcp HTTP/1.1", &all, INITIALIZE.as_bytes())
}

/// [`initialize_with`] a `Host` of this name and, when given, an `Origin`.
pub fn initialize_from(host: &str, origin: Option<&str>) -> Vec<u8> {
    let host = format!("Host: {host}");
    let origin = origin.map(|o| format!("Origin: {o}"));
    let mut lines = vec![host.as_bytes()];
    lines.extend(origin.as_ref().map(String::as_bytes));
    initialize_with(&lines)
}

/// A request to `/mcp` with `Host: localhost` and these header lines, and no body.
pub fn bodiless(method: &str, lines: &[&[u8]]) -> Vec<u8> {
    let mut all: Vec<&[u8]> = vec![b"Host: localhost"];
    all.extend_from_slice(lines);
    raw_request(&format!("{method} /mcp HTTP/1.1"), &all, b"")
}

/// `DELETE /mcp` for this session.
pub fn delete(session: &str) -> Vec<u8> {
    bodiless("DELETE", &[format!("Mcp-Session-Id: {session}").as_bytes()])
}
