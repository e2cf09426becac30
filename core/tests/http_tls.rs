//! The HTTP client over `https://`, and the WebSocket client over `wss://` (the same rustls
//! setup): a real TLS listener on 127.0.0.1 (rustls, a certificate made for the test)
//! terminating in front of the oxmcp server. The certificate must chain to a trusted root and
//! name the host; anything else is a typed error, never a hang.

mod common;

use std::{sync::Arc, time::Duration};

use common::*;
use oxmcp::{
    client::{Client, ProtocolMode},
    protocol::ProtocolVersion,
    transport::{
        http::{HttpClientOptions, HttpClientTransport, HttpServerOptions},
        ws::{WsClientOptions, WsClientTransport, WsServerOptions},
    },
};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_rustls::{
    TlsAcceptor,
    rustls::{
        ServerConfig,
        pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer},
    },
};

/// A TLS front for `backend`; returns its port and the certificate to trust (DER).
async fn tls_front(backend: std::net::SocketAddr, names: &[&str]) -> (u16, Vec<u8>) {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let certified = rcgen::generate_simple_self_signed(names).expect("a certificate");
    let cert_der = certified.cert.der().to_vec();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(cert_der.clone())], key)
        .expect("server config");
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client that fails the handshake just goes away.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    (port, cert_der)
}

fn trusting(cert: &[u8]) -> HttpClientOptions {
    HttpClientOptions {
        extra_root_certificates: vec![cert.to_vec()],
        ..Default::default()
    }
}

#[tokio::test]
async fn both_eras_work_over_https() {
    let http = fixture_server()
        .serve_http(HttpServerOptions::default())
        .await
        .expect("binds");
    let (port, cert) = tls_front(http.local_addr(), &["localhost"]).await;
    let url = format!("https://localhost:{port}/mcp");
    for mode in [
        ProtocolMode::Auto,
        ProtocolMode::Handshake(ProtocolVersion::V2025_11_25),
    ] {
        let client = Client::connect_http(
            &url,
            client_options().protocol(mode.clone()),
            trusting(&cert),
        )
        .await
        .unwrap_or_else(|e| panic!("{mode:?}: connects over TLS: {e}"));
        let result = client
            .call_tool("test_simple_text", json!({}))
            .await
            .expect("a call over TLS");
        assert!(!result.is_error(), "{mode:?}");
        client.close().await;
    }
    http.shutdown().await;
}

#[tokio::test]
async fn untrusted_or_misnamed_certificates_are_refused_promptly() {
    let http = fixture_server()
        .serve_http(HttpServerOptions::default())
        .await
        .expect("binds");
    let (port, cert) = tls_front(http.local_addr(), &["localhost"]).await;
    let cases = [
        // Self-signed and not trusted.
        (
            format!("https://localhost:{port}/mcp"),
            HttpClientOptions::default(),
        ),
        // Trusted, but made for another name.
        (format!("https://127.0.0.1:{port}/mcp"), trusting(&cert)),
        // Plain HTTP spoken to a TLS port.
        (format!("http://localhost:{port}/mcp"), trusting(&cert)),
    ];
    for (url, options) in cases {
        let attempt = tokio::time::timeout(
            Duration::from_secs(20),
            Client::connect_http(&url, client_options(), options),
        )
        .await
        .unwrap_or_else(|_| panic!("{url}: no answer within 20 s"));
        assert!(attempt.is_err(), "{url}: connected: {attempt:?}");
    }
    assert_eq!(http.session_count(), 0, "nothing reached the server");
    http.shutdown().await;
}

#[test]
fn bad_urls_and_roots_are_invalid_arguments() {
    for url in [
        "ftp://localhost/mcp",
        "localhost:80/mcp",
        "https://",
        "http://[::1/mcp",
    ] {
        let e = HttpClientTransport::new(url, HttpClientOptions::default())
            .expect_err(&format!("{url} accepted"));
        assert_eq!(e.kind(), oxmcp::ErrorKind::InvalidArgument, "{url}: {e}");
    }
    let garbage = HttpClientOptions {
        extra_root_certificates: vec![b"not a certificate".to_vec()],
        ..Default::default()
    };
    let e = HttpClientTransport::new("https://localhost/mcp", garbage).expect_err("garbage root");
    assert_eq!(e.kind(), oxmcp::ErrorKind::InvalidArgument, "{e}");
}

#[tokio::test]
async fn websocket_over_wss_trusts_the_same_roots() {
    let ws = fixture_server()
        .serve_ws(WsServerOptions::default())
        .await
        .expect("binds");
    let (port, cert) = tls_front(ws.local_addr(), &["localhost"]).await;
    let url = format!("wss://localhost:{port}/mcp");
    let trusted = WsClientOptions {
        extra_root_certificates: vec![cert.clone()],
        ..Default::default()
    };
    let client = Client::connect_ws(&url, client_options(), trusted.clone())
        .await
        .expect("connects over wss://");
    let result = client
        .call_tool("test_simple_text", json!({}))
        .await
        .expect("a call over wss://");
    assert!(!result.is_error());
    client.close().await;
    // Untrusted, misnamed, or plain ws:// to the TLS port: refused in time, typed.
    let quick = WsClientOptions {
        connect_timeout: Duration::from_secs(5),
        ..trusted.clone()
    };
    for (url, options) in [
        (url.clone(), WsClientOptions::default()),
        (format!("wss://127.0.0.1:{port}/mcp"), trusted.clone()),
        (format!("ws://localhost:{port}/mcp"), quick),
    ] {
        let attempt = tokio::time::timeout(
            Duration::from_secs(20),
            Client::connect_ws(&url, client_options(), options),
        )
        .await
        .unwrap_or_else(|_| panic!("{url}: no answer within 20 s"));
        assert!(attempt.is_err(), "{url}: connected");
    }
    let garbage = WsClientOptions {
        extra_root_certificates: vec![b"not a certificate".to_vec()],
        ..Default::default()
    };
    let e = WsClientTransport::connect(&url, garbage)
        .await
        .expect_err("garbage root");
    assert_eq!(e.kind(), oxmcp::ErrorKind::InvalidArgument, "{e}");
    // Every client is gone (the server's side of the first closes a moment after it).
    for _ in 0..500 {
        if ws.session_count() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(ws.session_count(), 0);
    ws.shutdown().await;
}
