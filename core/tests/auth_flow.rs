//! The OAuth 2.1 flow end to end over real sockets on 127.0.0.1: an oxmcp client with an
//! [`OAuthClient`] against an oxmcp HTTP server protected by a [`ResourceServer`], and a
//! small authorization server written here with hyper (metadata, dynamic registration, an
//! auto-approving authorization endpoint, a token endpoint checking PKCE, refresh).
//!
//! - The happy path: 401 → discovery → registration → authorization → token → the tool call
//!   succeeds; the authorization server saw S256, `state`, `resource`; the access token never
//!   reached it.
//! - Refresh: a token revoked at the authorization server gets a 401, the client refreshes and
//!   carries on without a new authorization.
//! - A server that keeps answering 403 `insufficient_scope` stops after three authorizations.
//! - Hostile token responses (no token, not JSON, CR/LF in the token, another or no token
//!   type, oversized) fail with `ErrorKind::Auth`.
//! - SSRF: metadata URLs at loopback in odd spellings (decimal, octal, hex, short, IPv6-mapped),
//!   link-local and private addresses, an authorization server at loopback, and a redirect to
//!   loopback never reach a canary listener when only the test servers' exact origins are
//!   allowed.
//! - Hostile authorization URLs never reach the user step.
//! - A bearer token never follows a redirect to another origin.
//! - The resource server: no token, expired, wrong audience → 401; missing scope → 403
//!   `insufficient_scope`; the metadata document; duplicate `Authorization` headers.
//!
//! The file store's 0600 files are tested in `core/src/auth/store.rs`.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use oxmcp::{
    Error, ErrorKind,
    auth::{AccessClaims, Authorizer},
    client::{Client, ClientOptions},
    transport::http::HttpClientOptions,
};
use serde_json::{Value, json};

mod auth_server;

use auth_server::*;

#[tokio::test]
async fn the_flow_runs_on_a_401_and_the_call_succeeds() {
    let auth = AuthServer::start(json!({})).await;
    let (_server, http, url) = protected(&auth, &["mcp:read"], Some(vec!["mcp:read".into()])).await;
    let client = connect(&url, oauth(&[auth.issuer(), origin(&url)]))
        .await
        .expect("connects through the OAuth flow");
    let r = client.call_tool("whoami", json!({})).await.expect("call");
    assert_eq!(r.text_content(), "hello");
    {
        let s = auth.state.lock().unwrap();
        assert_eq!(
            s.authorizations, 1,
            "one authorization for the whole session"
        );
        assert_eq!(s.registrations, 1);
        assert_eq!(
            s.resources,
            vec![url.clone()],
            "resource= names the MCP server (RFC 8707)"
        );
        // The authorization server never saw a bearer token (public client, method `none`).
        assert!(
            s.authorization_headers
                .iter()
                .all(|h| !h.starts_with("Bearer")),
            "{:?}",
            s.authorization_headers
        );
    }
    client.close().await;
    http.shutdown().await;
}

#[tokio::test]
async fn a_revoked_token_is_refreshed_without_a_new_authorization() {
    let auth = AuthServer::start(json!({})).await;
    let (_server, http, url) = protected(&auth, &[], None).await;
    let client = connect(&url, oauth(&[auth.issuer(), origin(&url)]))
        .await
        .expect("connects");
    // Revoke every access token: the next request gets 401 and must refresh.
    auth.state.lock().unwrap().tokens.clear();
    let r = client
        .call_tool("whoami", json!({}))
        .await
        .expect("call after refresh");
    assert_eq!(r.text_content(), "hello");
    {
        let s = auth.state.lock().unwrap();
        assert_eq!(s.refreshes, 1);
        assert_eq!(s.authorizations, 1);
    }
    // A revoked refresh token too: the client authorizes again.
    {
        let mut s = auth.state.lock().unwrap();
        s.tokens.clear();
        s.refresh.clear();
    }
    client
        .call_tool("whoami", json!({}))
        .await
        .expect("call after re-authorization");
    assert_eq!(auth.state.lock().unwrap().authorizations, 2);
    client.close().await;
    http.shutdown().await;
}

#[tokio::test]
async fn a_server_that_keeps_refusing_the_scope_stops_after_three_authorizations() {
    let auth = AuthServer::start(json!({})).await;
    auth.state.lock().unwrap().grant_only = Some(vec![]);
    let (_server, http, url) = protected(&auth, &["mcp:admin"], None).await;
    let e = connect(&url, oauth(&[auth.issuer(), origin(&url)]))
        .await
        .expect_err("never authorized enough");
    assert!(
        e.to_string()
            .contains("refusing the token for lack of scope"),
        "{e}"
    );
    let n = auth.state.lock().unwrap().authorizations;
    assert!((1..=3).contains(&n), "{n} authorizations");
    http.shutdown().await;
}

#[tokio::test]
async fn hostile_token_responses_are_refused_with_a_typed_error() {
    for reply in [
        "{}".to_owned(),
        "not json".to_owned(),
        r#"{"access_token": ""}"#.to_owned(),
        r#"{"access_token": "a\r\nX-Injected: 1"}"#.to_owned(),
        r#"{"access_token": "t", "token_type": "mac"}"#.to_owned(),
        // RFC 6749 §5.1: token_type is required; a token of no stated type is not Bearer.
        r#"{"access_token": "t", "expires_in": 60}"#.to_owned(),
        r#"{"access_token": 42}"#.to_owned(),
        format!(r#"{{"access_token": "{}"}}"#, "x".repeat(2 << 20)),
    ] {
        let auth = AuthServer::start(json!({})).await;
        auth.state.lock().unwrap().token_reply = Some(reply.clone());
        let (_server, http, url) = protected(&auth, &[], None).await;
        let e = connect(&url, oauth(&[auth.issuer(), origin(&url)]))
            .await
            .expect_err("refused");
        assert_eq!(
            e.kind(),
            ErrorKind::Auth,
            "{}: {e}",
            &reply[..reply.len().min(60)]
        );
        http.shutdown().await;
    }
}

/// An MCP "server" that answers every request 401 pointing at `metadata`.
async fn challenging_server(metadata: String) -> String {
    let handler: Handler = Arc::new(move |_req| {
        let m = metadata.clone();
        Box::pin(async move { challenge(&format!("Bearer resource_metadata=\"{m}\"")) })
    });
    format!("http://{}/mcp", serve(handler).await)
}

#[tokio::test]
async fn discovery_never_reaches_private_or_loopback_targets() {
    let (canary, hits) = canary().await;
    let port = canary.port();
    for target in [
        format!("http://2130706433:{port}/prm"),
        format!("http://0177.0.0.1:{port}/prm"),
        format!("http://0x7f.0.0.1:{port}/prm"),
        format!("http://127.1:{port}/prm"),
        format!("http://[::ffff:127.0.0.1]:{port}/prm"),
        format!("http://localhost:{port}/prm"),
        format!("https://127.0.0.1:{port}/prm"),
        "https://169.254.169.254/latest/meta-data".to_owned(),
        "https://10.0.0.1/prm".to_owned(),
        "https://192.168.1.1/prm".to_owned(),
        "https://[fe80::1]/prm".to_owned(),
    ] {
        let url = challenging_server(target.clone()).await;
        let e = connect(&url, oauth(&[origin(&url)]))
            .await
            .expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::Auth, "{target}: {e}");
        assert!(e.to_string().contains("refusing"), "{target}: {e}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the canary was reached");
}

#[tokio::test]
async fn a_redirect_or_an_authorization_server_at_loopback_is_refused() {
    let (canary, hits) = canary().await;
    // Protected-resource metadata that redirects to the canary.
    let to_canary = format!("http://127.0.0.1:{}/steal", canary.port());
    let location = to_canary.clone();
    let redirecting: Handler = Arc::new(move |_req| {
        let r = location.clone();
        Box::pin(async move { redirect(StatusCode::FOUND, &r) })
    });
    let metadata_host = format!("http://{}", serve(redirecting).await);
    let url = challenging_server(format!("{metadata_host}/prm")).await;
    let e = connect(&url, oauth(&[origin(&url), metadata_host.clone()]))
        .await
        .expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
    assert!(e.to_string().contains("refusing"), "{e}");
    // Protected-resource metadata naming the canary as the authorization server.
    let canary_as = format!("http://127.0.0.1:{}", canary.port());
    let prm = json!({"resource": "", "authorization_servers": [canary_as]});
    let prm_handler: Handler = Arc::new(move |req| {
        let mut doc = prm.clone();
        let host = req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        doc["resource"] = json!(format!("http://{host}/mcp"));
        Box::pin(async move {
            if req
                .uri()
                .path()
                .starts_with("/.well-known/oauth-protected-resource")
            {
                json_response(StatusCode::OK, doc)
            } else {
                challenge("Bearer")
            }
        })
    });
    let url = format!("http://{}/mcp", serve(prm_handler).await);
    let e = connect(&url, oauth(&[origin(&url)]))
        .await
        .expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
    assert!(e.to_string().contains("refusing"), "{e}");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the canary was reached");
}

struct RecordingAuthorizer(Arc<AtomicUsize>);

impl Authorizer for RecordingAuthorizer {
    fn authorize(&self, _url: String) -> BoxFuture<'_, Result<String, Error>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(Error::Auth("the test's user declined".into())) })
    }
}

#[tokio::test]
async fn hostile_authorization_urls_never_reach_the_user() {
    for endpoint in [
        "javascript:alert(1)//",
        "file:///etc/passwd",
        "http://a.example/authorize\r\nX-Injected: 1",
        "http://a.example/authorize?x=$(touch /tmp/pwned)",
        "ms-settings:privacy",
    ] {
        let auth = AuthServer::start(json!({ "authorization_endpoint": endpoint })).await;
        let (_server, http, url) = protected(&auth, &[], None).await;
        let called = Arc::new(AtomicUsize::new(0));
        let mut o = oauth(&[auth.issuer(), origin(&url)]);
        o.authorizer = Some(Arc::new(RecordingAuthorizer(called.clone())));
        let e = connect(&url, o).await.expect_err("refused");
        assert_eq!(
            called.load(Ordering::SeqCst),
            0,
            "{endpoint}: reached the user step"
        );
        assert!(e.to_string().contains("authoriz"), "{endpoint}: {e}");
        http.shutdown().await;
    }
}

#[tokio::test]
async fn a_bearer_token_never_follows_a_redirect_to_another_origin() {
    let (canary, hits) = canary().await;
    let target = format!("http://127.0.0.1:{}/mcp", canary.port());
    let redirecting: Handler = Arc::new(move |_req| {
        let t = target.clone();
        Box::pin(async move { redirect(StatusCode::TEMPORARY_REDIRECT, &t) })
    });
    let url = format!("http://{}/mcp", serve(redirecting).await);
    let token: oxmcp::transport::http::client::TokenProvider =
        Arc::new(|| Box::pin(async { Some("secret-token".to_owned()) }));
    let http = HttpClientOptions {
        token: Some(token),
        legacy_fallback: false,
        ..Default::default()
    };
    let r = tokio::time::timeout(
        PATIENCE,
        Client::connect_http(&url, ClientOptions::new("t", "0"), http),
    )
    .await
    .expect("no hang");
    assert!(r.is_err());
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the redirect was followed");
}

// ---------------------------------------------------------------------------------------------
// The resource server, spoken to directly.
// ---------------------------------------------------------------------------------------------

async fn raw_post(url: &str, authorization: &[&str]) -> (StatusCode, Option<String>) {
    let mut b = Request::builder()
        .method("POST")
        .uri(url)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    for a in authorization {
        b = b.header(header::AUTHORIZATION, *a);
    }
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let req = b.body(Full::new(Bytes::from(body))).expect("request");
    let client: hyper_util::client::legacy::Client<_, Full<Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    let r = client.request(req).await.expect("answer");
    let www = r
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (r.status(), www)
}

#[tokio::test]
async fn the_resource_server_refuses_bad_tokens_with_the_right_challenge() {
    let auth = AuthServer::start(json!({})).await;
    let (_server, http, url) = protected(&auth, &["mcp:read"], None).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    {
        let mut s = auth.state.lock().unwrap();
        let claims = |aud: &str, scopes: &[&str], exp: Option<u64>| AccessClaims {
            audience: vec![aud.to_owned()],
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            expires_at: exp,
            ..Default::default()
        };
        s.tokens
            .insert("good".into(), claims(&url, &["mcp:read"], Some(now + 600)));
        s.tokens
            .insert("expired".into(), claims(&url, &["mcp:read"], Some(now - 1)));
        s.tokens.insert(
            "elsewhere".into(),
            claims("http://other.example/mcp", &["mcp:read"], None),
        );
        s.tokens
            .insert("weak".into(), claims(&url, &["mcp:other"], None));
    }
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", origin(&url));
    let (status, www) = raw_post(&url, &[]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let www = www.expect("WWW-Authenticate");
    assert!(
        www.contains(&format!("resource_metadata=\"{metadata}\"")),
        "{www}"
    );
    assert!(www.contains("scope=\"mcp:read\""), "{www}");
    for token in ["expired", "elsewhere", "unknown"] {
        let (status, www) = raw_post(&url, &[&format!("Bearer {token}")]).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token}");
        assert!(
            www.unwrap_or_default().contains("error=\"invalid_token\""),
            "{token}"
        );
    }
    let (status, www) = raw_post(&url, &["Bearer weak"]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let www = www.expect("WWW-Authenticate");
    assert!(
        www.contains("error=\"insufficient_scope\"") && www.contains("scope=\"mcp:read\""),
        "{www}"
    );
    let (status, _) = raw_post(&url, &["Bearer good", "Bearer weak"]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = raw_post(&url, &["Basic Z29vZDp4"]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = raw_post(&url, &["Bearer good"]).await;
    assert_eq!(status, StatusCode::OK);
    // The metadata document.
    let client: hyper_util::client::legacy::Client<_, Full<Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    let r = client
        .get(metadata.parse().unwrap())
        .await
        .expect("metadata");
    assert_eq!(r.status(), StatusCode::OK);
    let doc: Value =
        serde_json::from_slice(&r.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(doc["resource"], json!(url));
    assert_eq!(doc["authorization_servers"], json!([auth.issuer()]));
    http.shutdown().await;
}
