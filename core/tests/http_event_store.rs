//! The pluggable SSE event store of the Streamable HTTP server: a store supplied in the
//! options receives every event of a resumable stream and answers the client's
//! `Last-Event-ID` resumption; without any store a cut stream cannot be resumed and the call
//! fails with a typed error instead of hanging.

mod common;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use common::*;
use futures::future::BoxFuture;
use oxmcp::{
    client::{Client, ProtocolMode},
    protocol::ProtocolVersion,
    transport::http::{
        EventStore, HttpClientOptions, HttpServer, HttpServerOptions, InMemoryEventStore,
    },
};
use serde_json::json;

/// Counts what the server asks of it and keeps the events in the default store.
#[derive(Default)]
struct Counting {
    inner: Option<InMemoryEventStore>,
    appended: AtomicUsize,
    replays: AtomicUsize,
    forgotten_sessions: AtomicUsize,
}

impl EventStore for Counting {
    fn append(&self, session: &str, stream: u64, seq: u64, event: Bytes) {
        self.appended.fetch_add(1, Ordering::SeqCst);
        if let Some(inner) = &self.inner {
            inner.append(session, stream, seq, event);
        }
    }

    fn replay(
        &self,
        session: &str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'static, Vec<(u64, Bytes)>> {
        self.replays.fetch_add(1, Ordering::SeqCst);
        match &self.inner {
            Some(inner) => inner.replay(session, stream, after),
            None => Box::pin(std::future::ready(Vec::new())),
        }
    }

    fn forget_stream(&self, session: &str, stream: u64) {
        if let Some(inner) = &self.inner {
            inner.forget_stream(session, stream);
        }
    }

    fn forget_session(&self, session: &str) {
        self.forgotten_sessions.fetch_add(1, Ordering::SeqCst);
        if let Some(inner) = &self.inner {
            inner.forget_session(session);
        }
    }
}

impl Counting {
    /// Counting in front of the in-memory store.
    fn over_memory() -> Arc<Counting> {
        Arc::new(Counting {
            inner: Some(InMemoryEventStore::new(16)),
            ..Default::default()
        })
    }
}

/// The conformance fixture (whose `test_reconnection` cuts its own stream) with this store,
/// this many resumable events, and a short retry hint.
async fn serve(store: Option<Arc<dyn EventStore>>, resumable_events: usize) -> HttpServer {
    let options = HttpServerOptions {
        event_store: store,
        resumable_events,
        sse_retry: Duration::from_millis(50),
        ..Default::default()
    };
    fixture_server().serve_http(options).await.expect("binds")
}

/// An oxmcp client holding a 2025-11-25 session (the revision whose streams resume).
async fn connect(http: &HttpServer) -> Client {
    let options = client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25));
    Client::connect_http(&http.url(), options, HttpClientOptions::default())
        .await
        .expect("connects")
}

#[tokio::test]
async fn a_plugged_in_store_carries_a_cut_stream_to_its_answer() {
    let store = Counting::over_memory();
    let http = serve(Some(store.clone()), 256).await;
    let client = connect(&http).await;
    // The fixture cuts its own response stream, then answers: only the store can deliver it.
    let result = client
        .call_tool("test_reconnection", json!({}))
        .await
        .expect("the answer arrives on the resumed stream");
    assert_eq!(result.text_content(), "Reconnection test completed");
    assert!(store.appended.load(Ordering::SeqCst) >= 1);
    assert!(store.replays.load(Ordering::SeqCst) >= 1);
    client.close().await;
    // The session's events are dropped with it.
    for _ in 0..200 {
        if store.forgotten_sessions.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(store.forgotten_sessions.load(Ordering::SeqCst), 1);
    http.shutdown().await;
}

/// One raw HTTP/1.1 exchange; returns the status line's code and the head.
async fn raw(addr: std::net::SocketAddr, request: String) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let read = async {
        let mut chunk = [0u8; 4096];
        while !String::from_utf8_lossy(&buf).contains("\r\n\r\n") {
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "closed before the head");
            buf.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .expect("an answer within 5 s");
    let (status, _) = http_harness::parse_head(&buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    (status, text)
}

#[tokio::test]
async fn resumption_ids_that_name_no_stream_are_refused() {
    let store = Counting::over_memory();
    let http = serve(Some(store.clone()), 256).await;
    let addr = http.local_addr();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let (status, head) = raw(
        addr,
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{init}",
            init.len()
        ),
    )
    .await;
    assert_eq!(status, 200, "{head}");
    let session = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|v| v.trim().to_owned())
        })
        .expect("a session id");
    for last in ["999-0", "garbage", "1-x", "-1-0", "18446744073709551616-0"] {
        let (status, head) = raw(
            addr,
            format!(
                "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
                 Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
                 Last-Event-ID: {last}\r\n\r\n"
            ),
        )
        .await;
        assert_eq!(status, 404, "Last-Event-ID {last}: {head}");
    }
    // Unknown streams never reach the store.
    assert_eq!(store.replays.load(Ordering::SeqCst), 0);
    http.shutdown().await;
}

#[tokio::test]
async fn without_resumption_a_cut_stream_is_a_typed_error() {
    let http = serve(None, 0).await;
    let client = connect(&http).await;
    let outcome = client.call_tool("test_reconnection", json!({})).await;
    assert!(outcome.is_err(), "{outcome:?}");
    let echo = client
        .call_tool("test_simple_text", json!({}))
        .await
        .expect("other calls still work");
    assert!(!echo.is_error());
    client.close().await;
    http.shutdown().await;
}
