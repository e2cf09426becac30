//! A raw HTTP/1.1 client for the reliability tests, with an incremental chunked and SSE
//! decoder independent of the crate's own SSE code: it reads a stream byte by byte when it has
//! to, so a test can cut a connection at an exact byte and resume it with `Last-Event-ID`.

use std::net::SocketAddr;

use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::common::http_harness::{find, parse_head, raw_request};

/// [`raw_request`] from text header lines and a text body.
fn request(request_line: &str, lines: &[String], body: &str) -> Vec<u8> {
    let lines: Vec<&[u8]> = lines.iter().map(String::as_bytes).collect();
    raw_request(request_line, &lines, body.as_bytes())
}

/// The head of a response, and the bytes read past it.
pub struct Head {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub rest: Vec<u8>,
}

impl Head {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Writes `request` and reads the response head.
pub async fn send_head(stream: &mut TcpStream, request: &[u8]) -> Head {
    stream.write_all(request).await.expect("write the request");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let end = loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut chunk).await.expect("read the head");
        assert!(n > 0, "connection closed before a response head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let (status, headers) = parse_head(&buf[..end]);
    Head {
        status,
        headers,
        rest: buf[end + 4..].to_vec(),
    }
}

/// Reads a Content-Length body after `head`.
pub async fn read_sized_body(stream: &mut TcpStream, head: Head) -> Vec<u8> {
    let len: usize = head
        .header("content-length")
        .expect("a sized body")
        .parse()
        .unwrap();
    let mut body = head.rest;
    let mut chunk = [0u8; 8192];
    while body.len() < len {
        let n = stream.read(&mut chunk).await.expect("read the body");
        assert!(n > 0, "body cut short");
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(len);
    body
}

/// Incremental `Transfer-Encoding: chunked` decoder.
#[derive(Default)]
struct Dechunk {
    pending: Vec<u8>,
    /// Bytes left in the current chunk, then its CRLF.
    in_chunk: usize,
    crlf: bool,
    done: bool,
}

impl Dechunk {
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        self.pending.extend_from_slice(input);
        loop {
            if self.done {
                return;
            }
            if self.in_chunk > 0 {
                let n = self.in_chunk.min(self.pending.len());
                if n == 0 {
                    return;
                }
                out.extend(self.pending.drain(..n));
                self.in_chunk -= n;
                if self.in_chunk == 0 {
                    self.crlf = true;
                }
                continue;
            }
            if self.crlf {
                if self.pending.len() < 2 {
                    return;
                }
                assert_eq!(&self.pending[..2], b"\r\n", "chunk framing");
                self.pending.drain(..2);
                self.crlf = false;
                continue;
            }
            let Some(end) = find(&self.pending, b"\r\n") else {
                return;
            };
            let size = String::from_utf8_lossy(&self.pending[..end]).into_owned();
            let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
            self.pending.drain(..end + 2);
            if size == 0 {
                self.done = true;
                return;
            }
            self.in_chunk = size;
        }
    }
}

/// One SSE event as a client sees it.
#[derive(Clone, Debug, Default)]
pub struct Event {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
    pub retry: Option<u64>,
}

/// Incremental SSE parser for `\n` line ends (what this server writes); an event ends at a
/// blank line.
#[derive(Default)]
struct Sse {
    buf: Vec<u8>,
}

impl Sse {
    pub fn push(&mut self, input: &[u8]) -> Vec<Event> {
        self.buf.extend_from_slice(input);
        let mut events = Vec::new();
        while let Some(end) = find(&self.buf, b"\n\n") {
            let block: Vec<u8> = self.buf.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&block);
            let mut e = Event::default();
            let mut data = Vec::new();
            for line in text.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => e.id = Some(value.to_owned()),
                    "event" => e.event = Some(value.to_owned()),
                    "data" => data.push(value.to_owned()),
                    "retry" => e.retry = value.parse().ok(),
                    _ => {}
                }
            }
            e.data = data.join("\n");
            events.push(e);
        }
        events
    }
}

/// Reads SSE events from `stream` until the stream ends, `stop` says so, or `budget` raw body
/// bytes have been taken (then the rest is never looked at: the connection is cut there).
/// With `budget_after_id`, the budget only starts counting once an event carrying an id has
/// arrived (before that a client has nothing to resume from). Returns the events and whether
/// the stream ended on its own.
pub async fn read_events(
    stream: &mut TcpStream,
    rest: Vec<u8>,
    budget: Option<usize>,
    budget_after_id: bool,
    mut stop: impl FnMut(&Event) -> bool,
) -> (Vec<Event>, bool) {
    let mut dechunk = Dechunk::default();
    let mut sse = Sse::default();
    let mut events = Vec::new();
    let mut counting = !budget_after_id;
    let mut taken = 0usize;
    let mut incoming = rest;
    let mut chunk = vec![0u8; 4096];
    loop {
        let mut at = 0;
        while at < incoming.len() {
            // Until counting starts, one byte at a time, so it starts at the exact byte.
            let piece = match (counting, budget) {
                (false, _) => 1,
                (true, Some(b)) => (incoming.len() - at).min(b - taken),
                (true, None) => incoming.len() - at,
            };
            if piece == 0 {
                break;
            }
            let mut body = Vec::new();
            dechunk.push(&incoming[at..at + piece], &mut body);
            at += piece;
            if counting {
                taken += piece;
            }
            for e in sse.push(&body) {
                counting |= e.id.is_some();
                let done = stop(&e);
                events.push(e);
                if done {
                    return (events, false);
                }
            }
            if dechunk.done {
                return (events, true);
            }
        }
        if counting && budget.is_some_and(|b| taken >= b) {
            return (events, false);
        }
        let n = stream.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return (events, true);
        }
        incoming = chunk[..n].to_vec();
    }
}

/// An MCP POST of `body`, on `session` (at 2025-11-25) when given.
pub fn post(session: Option<&str>, body: &str) -> Vec<u8> {
    let mut lines = vec![
        "Host: localhost".to_owned(),
        "Accept: application/json, text/event-stream".to_owned(),
        "Content-Type: application/json".to_owned(),
        format!("Content-Length: {}", body.len()),
    ];
    if let Some(s) = session {
        lines.push(format!("Mcp-Session-Id: {s}"));
        lines.push("MCP-Protocol-Version: 2025-11-25".to_owned());
    }
    request("POST /mcp HTTP/1.1", &lines, body)
}

/// A GET resuming `session`'s stream after `last_event_id`.
pub fn resume(session: &str, last_event_id: &str) -> Vec<u8> {
    request(
        "GET /mcp HTTP/1.1",
        &[
            "Host: localhost".to_owned(),
            "Accept: text/event-stream".to_owned(),
            format!("Mcp-Session-Id: {session}"),
            "MCP-Protocol-Version: 2025-11-25".to_owned(),
            format!("Last-Event-ID: {last_event_id}"),
        ],
        "",
    )
}

/// A 2025-11-25 session (the revision whose streams carry priming events) over raw HTTP.
pub async fn raw_session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = send_head(&mut s, &post(None, &init)).await;
    assert_eq!(head.status, 200);
    let id = head
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let body = read_sized_body(&mut s, head).await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let head = send_head(&mut s, &post(Some(&id), note)).await;
    assert_eq!(head.status, 202);
    id
}
