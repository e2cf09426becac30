//! Raw HTTP/1.1 over TCP for the server-side table: the bytes sent are exactly the bytes
//! written here, one request per connection (`Connection: close`), read to its end within the
//! deadline, the body de-chunked and an SSE body split into its events' JSON.

use std::net::SocketAddr;

use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    DEADLINE,
    common::http_harness::{find, parse_head},
};

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub session: Option<String>,
    /// The body, de-chunked; for SSE, the JSON of each `data:` line.
    pub body: Vec<u8>,
    pub events: Vec<Value>,
}

impl Reply {
    pub fn json(&self) -> Value {
        // An SSE answer ends with the response; what came before it is about the request.
        if let Some(last) = self.events.last() {
            return last.clone();
        }
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = find(raw, b"\r\n") {
        let size = std::str::from_utf8(&raw[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 || raw.len() < end + 2 + size {
            break;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[(end + 4 + size).min(raw.len())..];
    }
    out
}

fn sse_data(body: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter_map(|event| {
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data).unwrap_or(Value::Null))
        })
        .collect()
}

/// One request on its own connection (`Connection: close`), read to its end within the deadline.
pub async fn send(addr: SocketAddr, head: &str, extra: &[(String, String)], body: &[u8]) -> Reply {
    let mut request = format!("{head} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (n, v) in extra {
        request.push_str(&format!("{n}: {v}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    let raw = tokio::time::timeout(DEADLINE, async {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.write_all(&bytes).await.expect("write");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.expect("read");
        raw
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "no complete HTTP answer within {DEADLINE:?} to:\n{}",
            String::from_utf8_lossy(&bytes)
        )
    });
    let end = find(&raw, b"\r\n\r\n").unwrap_or_else(|| {
        panic!(
            "no HTTP answer at all to:\n{}",
            String::from_utf8_lossy(&bytes)
        )
    });
    let (status, headers) = parse_head(&raw[..end]);
    let mut content_type = String::new();
    let mut session = None;
    let mut chunked = false;
    for (name, value) in headers {
        match name.to_ascii_lowercase().as_str() {
            "content-type" => content_type = value,
            "mcp-session-id" => session = Some(value),
            "transfer-encoding" => chunked = value.contains("chunked"),
            _ => {}
        }
    }
    let rest = &raw[end + 4..];
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    let events = if content_type.starts_with("text/event-stream") {
        sse_data(&body)
    } else {
        Vec::new()
    };
    Reply {
        status,
        content_type,
        session,
        body,
        events,
    }
}
