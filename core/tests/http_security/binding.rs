//! Binding and authentication: a non-loopback address needs a host allowlist or an auth
//! hook, and a refusing auth hook answers with its status before the body is read (after the
//! `Host` check).

use std::{net::SocketAddr, sync::Arc};

use http::{HeaderMap, StatusCode};
use oxmcp::{
    Error,
    client::Client,
    transport::http::{HttpClientOptions, HttpServerOptions},
};
use serde_json::json;

use crate::{
    common::{
        Probe,
        http_harness::{raw_request, session_options},
        test_server,
    },
    raw::{
        ACCEPT_BOTH, JSON_TYPE, NEVER_SENT, bodiless, exchange, initialize_from, initialize_with,
    },
    start,
};

#[tokio::test(flavor = "multi_thread")]
async fn non_loopback_bind_needs_an_allowlist_or_an_auth_hook() {
    let server = test_server(&Probe::default());
    for bind in ["0.0.0.0:0", "[::]:0"] {
        let err = server
            .serve_http(HttpServerOptions {
                bind: bind.parse().unwrap(),
                ..Default::default()
            })
            .await
            .expect_err("a non-loopback bind without allowlist or auth");
        assert!(matches!(err, Error::InvalidArgument(_)), "{bind}: {err:?}");
    }
    // Other loopback addresses need nothing.
    let http = server
        .serve_http(HttpServerOptions {
            bind: "127.0.0.2:0".parse().unwrap(),
            ..Default::default()
        })
        .await
        .expect("127.0.0.2 is loopback");
    http.shutdown().await;

    // With an allowlist: bound, and the allowlist (not the loopback names) is enforced.
    let http = server
        .serve_http(HttpServerOptions {
            bind: "0.0.0.0:0".parse().unwrap(),
            allowed_hosts: Some(vec!["mcp.example.com".into()]),
            ..Default::default()
        })
        .await
        .expect("allowed with an allowlist");
    let addr = SocketAddr::from(([127, 0, 0, 1], http.local_addr().port()));
    for (host, expect) in [("mcp.example.com", 200), ("localhost", 403)] {
        let r = exchange(addr, &initialize_from(host, None)).await;
        assert_eq!(r.status, expect, "Host {host}");
    }
    http.shutdown().await;

    // With an auth hook only: bound.
    let http = server
        .serve_http(HttpServerOptions {
            bind: "0.0.0.0:0".parse().unwrap(),
            auth: Some(Arc::new(bearer("secret"))),
            ..Default::default()
        })
        .await
        .expect("allowed with an auth hook");
    let addr = SocketAddr::from(([127, 0, 0, 1], http.local_addr().port()));
    let request = initialize_with(&[b"Host: localhost", b"Authorization: Bearer secret"]);
    assert_eq!(exchange(addr, &request).await.status, 200);
    // Observed, not asserted as right or wrong: with only an auth hook the Host allowlist is
    // still the loopback names, so a remote client naming the machine is refused 403.
    let remote_host = format!("Host: 192.0.2.10:{}", addr.port());
    let request = initialize_with(&[remote_host.as_bytes(), b"Authorization: Bearer secret"]);
    let r = exchange(addr, &request).await;
    println!(
        "auth-only 0.0.0.0 server, authenticated, Host {remote_host} -> {}",
        r.status
    );
    http.shutdown().await;
}

/// An auth hook accepting only `Authorization: Bearer <token>`.
fn bearer(token: &str) -> impl Fn(&HeaderMap) -> Result<(), (StatusCode, String)> + use<> {
    let expected = format!("Bearer {token}");
    move |headers: &HeaderMap| {
        if headers
            .get(http::header::AUTHORIZATION)
            .is_some_and(|v| v.as_bytes() == expected.as_bytes())
        {
            Ok(())
        } else {
            Err((StatusCode::UNAUTHORIZED, "bearer token required".into()))
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refusing_auth_hook_answers_before_the_body_is_read() {
    let (_server, http) = start(HttpServerOptions {
        auth: Some(Arc::new(bearer("secret"))),
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    // The neighbour authenticates.
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::AUTHORIZATION,
        "Bearer secret".parse().unwrap(),
    );
    let neighbour = Client::connect_http(
        &http.url(),
        session_options(),
        HttpClientOptions {
            headers,
            ..Default::default()
        },
    )
    .await
    .expect("an authenticated client connects");
    for (method, auth) in [
        ("POST", None),
        ("POST", Some(&b"Authorization: Bearer wrong"[..])),
        ("POST", Some(&b"Authorization: Basic c2VjcmV0"[..])),
        ("GET", None),
        ("DELETE", None),
    ] {
        let mut lines: Vec<&[u8]> = vec![ACCEPT_BOTH, JSON_TYPE, NEVER_SENT];
        lines.extend(auth);
        let r = exchange(addr, &bodiless(method, &lines)).await;
        assert_eq!(r.status, 401, "{method} {auth:?}: {r:?}");
        assert!(String::from_utf8_lossy(&r.body).contains("bearer token required"));
    }
    // The Host check comes first: a hostile Host with a good token is still 403.
    let r = exchange(
        addr,
        &raw_request(
            "POST /mcp HTTP/1.1",
            &[
                b"Host: evil.example",
                b"Authorization: Bearer secret",
                ACCEPT_BOTH,
                JSON_TYPE,
                NEVER_SENT,
            ],
            b"",
        ),
    )
    .await;
    assert_eq!(r.status, 403);
    let r = neighbour
        .call_tool("echo", json!({"text": "authenticated"}))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("authenticated"));
    assert_eq!(http.session_count(), 1);
    neighbour.close().await;
}
