//! Methods and headers: 405/406/415/400/404/202 as the transport specification says, each
//! decided before the body is read where it can be; a client that never finishes its headers
//! is cut off.

use std::time::Duration;

use oxmcp::transport::http::HttpServerOptions;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    Neighbour,
    common::http_harness::raw_request,
    raw::{
        ACCEPT_BOTH, EVENT_STREAM, JSON_TYPE, NEVER_SENT, PATIENCE, bodiless, exchange, mcp_post,
        raw_session, tools_call,
    },
    start,
};

/// Sends a bodiless `method` with the header lines `base` plus each of `variants` in turn
/// (`None`: the header left out), and checks every one is answered `want`.
async fn each_variant_gets(
    addr: std::net::SocketAddr,
    method: &str,
    base: &[&[u8]],
    variants: &[Option<&[u8]>],
    want: u16,
) {
    for variant in variants {
        let mut lines = base.to_vec();
        lines.extend(variant);
        let r = exchange(addr, &bodiless(method, &lines)).await;
        assert_eq!(r.status, want, "{method} with {variant:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn methods_and_headers_get_the_specified_statuses() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let neighbour = Neighbour::start(&http.url()).await;
    let session = raw_session(addr).await;
    let sid = format!("Mcp-Session-Id: {session}");
    let sid = sid.as_bytes();

    // Unsupported methods: 405 with Allow, before the body.
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let r = exchange(addr, &bodiless(method, &[JSON_TYPE, NEVER_SENT])).await;
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow").as_deref(), Some("GET, POST, DELETE"));
    }
    // GET without text/event-stream: 406 (the last one with no Accept at all).
    let accepts = [
        Some(&b"Accept: application/json"[..]),
        Some(b"Accept: text/html"),
        None,
    ];
    each_variant_gets(addr, "GET", &[sid], &accepts, 406).await;
    // POST without both types: 406, decided before the body.
    let accepts = [
        None,
        Some(&b"Accept: application/json"[..]),
        Some(b"Accept: text/event-stream"),
        Some(b"Accept: application/*"),
    ];
    each_variant_gets(addr, "POST", &[JSON_TYPE, NEVER_SENT, sid], &accepts, 406).await;
    // Wrong or missing Content-Type: 415, before the body.
    let content_types = [
        None,
        Some(&b"Content-Type: text/plain"[..]),
        Some(b"Content-Type: application/x-www-form-urlencoded"),
        Some(b"Content-Type: application/json-seq"),
        Some(b"Content-Type: multipart/form-data; boundary=x"),
    ];
    each_variant_gets(
        addr,
        "POST",
        &[ACCEPT_BOTH, NEVER_SENT, sid],
        &content_types,
        415,
    )
    .await;
    // Content-Type parameters are fine.
    let charset: &[u8] = b"Content-Type: application/json; charset=utf-8";
    let r = exchange(
        addr,
        &mcp_post(Some(&session), &[charset], &tools_call(50, "charset")),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    // Malformed JSON: 400 with a parse error.
    for body in ["{", "{\"jsonrpc\":\"2.0\",", "\u{0}", "[1,2", "nul"] {
        let r = exchange(addr, &mcp_post(Some(&session), &[], body)).await;
        assert_eq!(r.status, 400, "{body:?}");
        assert_eq!(r.rpc_code(), Some(-32700), "{body:?}: {r:?}");
    }
    // A notification: 202, no body.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;
    let r = exchange(addr, &mcp_post(Some(&session), &[], note)).await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());

    // Then a status per request, in this order: what each request is, and what it must get.
    let steps: Vec<(&str, Vec<u8>, u16)> = vec![
        (
            "POST without a session id",
            mcp_post(None, &[], &tools_call(51, "x")),
            400,
        ),
        (
            "GET without a session id",
            bodiless("GET", &[EVENT_STREAM]),
            400,
        ),
        ("DELETE without a session id", bodiless("DELETE", &[]), 400),
        (
            "POST with an unknown session id",
            mcp_post(Some("no-such-session"), &[], &tools_call(52, "x")),
            404,
        ),
        (
            "POST to the wrong path",
            raw_request(
                "POST /mcp/ HTTP/1.1",
                &[b"Host: localhost", ACCEPT_BOTH, JSON_TYPE, NEVER_SENT],
                b"",
            ),
            404,
        ),
        ("DELETE of the session", bodiless("DELETE", &[sid]), 200),
        // Any reuse after the DELETE: 404.
        (
            "POST on the deleted session",
            mcp_post(Some(&session), &[], &tools_call(53, "x")),
            404,
        ),
        (
            "GET on the deleted session",
            bodiless("GET", &[EVENT_STREAM, sid]),
            404,
        ),
        (
            "DELETE of the deleted session",
            bodiless("DELETE", &[sid]),
            404,
        ),
    ];
    for (what, request, expect) in steps {
        let r = exchange(addr, &request).await;
        assert_eq!(r.status, expect, "{what}: {r:?}");
    }
    assert_eq!(
        http.session_count(),
        1,
        "only the neighbour's session is left"
    );
    neighbour.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let (_server, http) = start(HttpServerOptions {
        header_read_timeout: Duration::from_millis(300),
        ..Default::default()
    })
    .await;
    let neighbour = Neighbour::start(&http.url()).await;
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(http.local_addr()).await.unwrap();
        s.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json")
            .await
            .unwrap();
        slow.push(s);
    }
    for mut s in slow {
        let mut rest = Vec::new();
        // The server closes the connection (it may say 408 first); it never waits forever.
        let read = tokio::time::timeout(PATIENCE, s.read_to_end(&mut rest))
            .await
            .expect("the server hung up on a client that never finished its headers");
        if let Ok(n) = read
            && n > 0
        {
            assert!(
                rest.starts_with(b"HTTP/1.1 408"),
                "{:?}",
                String::from_utf8_lossy(&rest)
            );
        }
    }
    neighbour.finish().await;
}
