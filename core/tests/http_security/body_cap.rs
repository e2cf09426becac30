//! The body cap: 413 for a declared length over the cap (the body never sent) and for a
//! chunked body streaming past it, decided before parsing; bodies at or under the cap are
//! served; the default cap is 4 MiB; malformed framing is refused.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use oxmcp::transport::http::HttpServerOptions;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    Neighbour,
    common::http_harness::{find, raw_request},
    raw::{ACCEPT_BOTH, INITIALIZE, JSON_TYPE, PATIENCE, Reply, bodiless, exchange, mcp_post},
    start,
};

/// An initialize request padded with trailing whitespace (valid JSON) to exactly `len` bytes.
fn padded_initialize(len: usize) -> String {
    assert!(len >= INITIALIZE.len());
    let mut body = INITIALIZE.to_owned();
    body.push_str(&" ".repeat(len - INITIALIZE.len()));
    body
}

/// A POST whose body is declared `declared` bytes long and never sent.
fn declared_only(declared: usize) -> Vec<u8> {
    let length = format!("Content-Length: {declared}");
    bodiless("POST", &[ACCEPT_BOTH, JSON_TYPE, length.as_bytes()])
}

/// A chunked POST: the head, then `body` (already framed as chunks).
fn chunked_post(body: &[u8]) -> Vec<u8> {
    let lines: [&[u8]; 4] = [
        b"Host: localhost",
        ACCEPT_BOTH,
        JSON_TYPE,
        b"Transfer-Encoding: chunked",
    ];
    raw_request("POST /mcp HTTP/1.1", &lines, body)
}

/// Streams `total` bytes of chunked body (never terminated) while reading the response on
/// the same connection; returns the response and how many body bytes were written before it.
async fn chunked_past_cap(addr: SocketAddr, total: usize) -> (Reply, usize) {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut read, mut write) = stream.into_split();
    let head = chunked_post(b"");
    let written = Arc::new(AtomicUsize::new(0));
    let w = written.clone();
    let writer = tokio::spawn(async move {
        write.write_all(&head).await.expect("head");
        let chunk = vec![b' '; 4096];
        let mut sent = 0;
        // A valid JSON prefix, then whitespace, never ending: only the cap can stop it.
        let prefix = r#"{"jsonrpc":"2.0","#;
        let first = format!("{:x}\r\n{prefix}\r\n", prefix.len());
        if write.write_all(first.as_bytes()).await.is_err() {
            return write;
        }
        while sent < total {
            let frame = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
            // The server may close once it has answered; that ends the flood.
            if write.write_all(&frame).await.is_err() {
                break;
            }
            sent += chunk.len();
            w.store(sent, Ordering::Relaxed);
        }
        write
    });
    let reply = tokio::time::timeout(PATIENCE, async {
        let mut stream_buf = Vec::new();
        // Read the response with a plain loop on the read half (no TcpStream here).
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(end) = find(&stream_buf, b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&stream_buf[..end]).into_owned();
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if stream_buf.len() >= end + 4 + len {
                    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
                    let body = stream_buf[end + 4..end + 4 + len].to_vec();
                    break Reply {
                        status,
                        headers: vec![],
                        body,
                    };
                }
            }
            let n = read.read(&mut chunk).await.expect("read");
            assert!(n > 0, "connection closed without a response");
            stream_buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .expect("a response while the body is still streaming");
    let sent = written.load(Ordering::Relaxed);
    writer.abort();
    (reply, sent)
}

#[tokio::test(flavor = "multi_thread")]
async fn body_cap_is_enforced_before_parsing() {
    const CAP: usize = 1024;
    let (_server, http) = start(HttpServerOptions {
        max_body_bytes: CAP,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let neighbour = Neighbour::start(&http.url()).await;

    // Declared over the cap, body never sent: refused from the header alone.
    for declared in [CAP + 1, 10 * CAP, 1 << 40] {
        let r = exchange(addr, &declared_only(declared)).await;
        println!("Content-Length {declared} (no body) -> {}", r.status);
        assert_eq!(r.status, 413, "{r:?}");
        assert_eq!(r.rpc_code(), Some(-32600));
    }

    // Chunked, streaming far past the cap: refused once the cap is crossed, while the
    // client is still sending.
    let (r, sent) = chunked_past_cap(addr, 64 * CAP).await;
    println!(
        "chunked past a {CAP}-byte cap -> {} after {sent} bytes",
        r.status
    );
    assert_eq!(r.status, 413, "{r:?}");

    // At the cap and just under it: served. One byte over with a real body: 413.
    for (len, expect) in [(CAP - 1, 200), (CAP, 200), (CAP + 1, 413)] {
        let r = exchange(addr, &mcp_post(None, &[], &padded_initialize(len))).await;
        println!("body of {len} bytes, cap {CAP} -> {}", r.status);
        assert_eq!(r.status, expect, "{len} bytes: {r:?}");
    }
    // Chunked at exactly the cap: served.
    let body = padded_initialize(CAP);
    let (a, b) = body.split_at(CAP / 2);
    let chunked =
        [format!("{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n", a.len(), b.len()).as_bytes()].concat();
    let r = exchange(addr, &chunked_post(&chunked)).await;
    assert_eq!(r.status, 200, "{r:?}");

    // The neighbour plus the three sessions the bodies within the cap opened.
    assert_eq!(http.session_count(), 4);
    neighbour.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn default_body_cap_is_4_mib() {
    const CAP: usize = 4 * 1024 * 1024;
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let r = exchange(addr, &declared_only(CAP + 1)).await;
    assert_eq!(r.status, 413, "{r:?}");
    let (r, sent) = chunked_past_cap(addr, 2 * CAP).await;
    println!(
        "chunked past the 4 MiB cap -> {} after {sent} bytes",
        r.status
    );
    assert_eq!(r.status, 413);
    let r = exchange(addr, &mcp_post(None, &[], &padded_initialize(CAP))).await;
    assert_eq!(r.status, 200, "a body of exactly 4 MiB is served");
    assert_eq!(http.session_count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_framing_is_refused() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let neighbour = Neighbour::start(&http.url()).await;
    let cases: &[(&str, &[&[u8]])] = &[
        (
            "Content-Length overflowing u64",
            &[b"Content-Length: 99999999999999999999999"],
        ),
        ("negative Content-Length", &[b"Content-Length: -1"]),
        (
            "two different Content-Lengths",
            &[b"Content-Length: 5", b"Content-Length: 6"],
        ),
        ("non-numeric Content-Length", &[b"Content-Length: 1e3"]),
        ("unknown transfer coding", &[b"Transfer-Encoding: gzip"]),
    ];
    for (name, lines) in cases {
        let all = [&[ACCEPT_BOTH, JSON_TYPE][..], lines].concat();
        let r = exchange(addr, &bodiless("POST", &all)).await;
        println!("{name:34} -> {}", r.status);
        assert_eq!(r.status, 400, "{name}: {r:?}");
    }
    assert_eq!(http.session_count(), 1);
    neighbour.finish().await;
}
