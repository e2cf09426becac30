//! A small OAuth 2.1 authorization server written with hyper for the tests (metadata,
//! dynamic registration, an auto-approving authorization endpoint, a token endpoint checking
//! PKCE, refresh), and an oxmcp MCP server behind a [`ResourceServer`] that trusts its tokens.
//! Shared by `auth_flow` (the flow in-process) and `cli_login` (`oxmcp login` as a child).

#![allow(dead_code)]

use std::{
    collections::HashMap,
    convert::Infallible,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use oxmcp::{
    Error,
    auth::{
        AccessClaims, OAuthClient, OAuthOptions, ProtectedResourceMetadata, ResourceServer,
        TargetPolicy,
    },
    client::{Client, ClientOptions},
    protocol::{CallToolResult, Tool},
    server::Server,
    transport::http::{HttpClientOptions, HttpServer, HttpServerOptions},
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

/// Only ever turns a hang into a failure.
pub const PATIENCE: Duration = Duration::from_secs(30);
pub const REDIRECT: &str = "http://127.0.0.1:1/callback";

pub type Handler =
    Arc<dyn Fn(Request<Bytes>) -> BoxFuture<'static, Response<Full<Bytes>>> + Send + Sync>;

/// Serves `handler` on 127.0.0.1; returns the address.
pub async fn serve(handler: Handler) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let handler = handler.clone();
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = body
                            .collect()
                            .await
                            .map(|c| c.to_bytes())
                            .unwrap_or_default();
                        Ok::<_, Infallible>(handler(Request::from_parts(parts, body)).await)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

pub fn json_response(status: StatusCode, v: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .expect("response")
}

/// An empty answer with `status` and one header: the redirects and challenges the stubs send.
fn empty_with(status: StatusCode, name: header::HeaderName, value: &str) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(name, value)
        .body(Full::new(Bytes::new()))
        .expect("response")
}

/// A redirect (`status` 302, 307, …) to `location`.
pub fn redirect(status: StatusCode, location: &str) -> Response<Full<Bytes>> {
    empty_with(status, header::LOCATION, location)
}

/// A 401 answer carrying this `WWW-Authenticate` challenge.
pub fn challenge(www_authenticate: &str) -> Response<Full<Bytes>> {
    empty_with(
        StatusCode::UNAUTHORIZED,
        header::WWW_AUTHENTICATE,
        www_authenticate,
    )
}

pub fn form(body: &[u8]) -> HashMap<String, String> {
    String::from_utf8_lossy(body)
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| {
            let d = |s: &str| {
                percent_encoding::percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (d(k), d(v))
        })
        .collect()
}

/// A listener that only counts who reached it.
pub async fn canary() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = hits.clone();
    tokio::spawn(async move {
        while let Ok((_stream, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    });
    (addr, hits)
}

// ---------------------------------------------------------------------------------------------
// The authorization server.
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
pub struct AsState {
    /// Live access tokens and what they grant.
    pub tokens: HashMap<String, AccessClaims>,
    pub refresh: HashMap<String, Vec<String>>,
    /// code → (challenge, scopes, resource)
    pub codes: HashMap<String, (String, Vec<String>, String)>,
    pub authorizations: usize,
    pub refreshes: usize,
    pub registrations: usize,
    /// Every Authorization header the AS saw.
    pub authorization_headers: Vec<String>,
    pub resources: Vec<String>,
    pub next: usize,
    /// Scopes granted whatever was asked (None: what was asked).
    pub grant_only: Option<Vec<String>>,
    /// A body the token endpoint answers with instead of tokens (200).
    pub token_reply: Option<String>,
}

pub struct AuthServer {
    pub addr: SocketAddr,
    pub state: Arc<Mutex<AsState>>,
}

impl AuthServer {
    pub fn issuer(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn start(metadata_override: Value) -> AuthServer {
        let state = Arc::new(Mutex::new(AsState::default()));
        let slot: Arc<Mutex<String>> = Arc::default();
        let st = state.clone();
        let issuer_slot = slot.clone();
        let handler: Handler = Arc::new(move |req: Request<Bytes>| {
            let st = st.clone();
            let issuer = issuer_slot.lock().unwrap().clone();
            let overrides = metadata_override.clone();
            Box::pin(async move {
                let mut s = st.lock().unwrap();
                if let Some(h) = req.headers().get(header::AUTHORIZATION) {
                    s.authorization_headers
                        .push(h.to_str().unwrap_or_default().to_owned());
                }
                let path = req.uri().path().to_owned();
                match path.as_str() {
                    "/.well-known/oauth-authorization-server" => {
                        let mut doc = json!({
                            "issuer": issuer,
                            "authorization_endpoint": format!("{issuer}/authorize"),
                            "token_endpoint": format!("{issuer}/token"),
                            "registration_endpoint": format!("{issuer}/register"),
                            "response_types_supported": ["code"],
                            "code_challenge_methods_supported": ["S256"],
                            "token_endpoint_auth_methods_supported": ["none"],
                            "authorization_response_iss_parameter_supported": true,
                        });
                        if let (Value::Object(d), Value::Object(o)) = (&mut doc, &overrides) {
                            for (k, v) in o {
                                d.insert(k.clone(), v.clone());
                            }
                        }
                        json_response(StatusCode::OK, doc)
                    }
                    "/register" => {
                        s.registrations += 1;
                        json_response(StatusCode::CREATED, json!({"client_id": "client-1"}))
                    }
                    "/authorize" => {
                        s.authorizations += 1;
                        let q = form(req.uri().query().unwrap_or_default().as_bytes());
                        assert_eq!(
                            q.get("code_challenge_method").map(String::as_str),
                            Some("S256")
                        );
                        assert_eq!(q.get("response_type").map(String::as_str), Some("code"));
                        s.next += 1;
                        let code = format!("code-{}", s.next);
                        let scopes: Vec<String> = q
                            .get("scope")
                            .map(|x| x.split(' ').map(str::to_owned).collect())
                            .unwrap_or_default();
                        let resource = q.get("resource").cloned().unwrap_or_default();
                        s.resources.push(resource.clone());
                        s.codes.insert(
                            code.clone(),
                            (
                                q.get("code_challenge").cloned().unwrap_or_default(),
                                scopes,
                                resource,
                            ),
                        );
                        let location = format!(
                            "{}?code={code}&state={}&iss={}",
                            q.get("redirect_uri").cloned().unwrap_or_default(),
                            q.get("state").cloned().unwrap_or_default(),
                            percent_encoding::utf8_percent_encode(
                                &issuer,
                                percent_encoding::NON_ALPHANUMERIC
                            )
                        );
                        redirect(StatusCode::FOUND, &location)
                    }
                    "/token" if s.token_reply.is_some() => Response::builder()
                        .status(StatusCode::OK)
                        .header(header::CONTENT_TYPE, "application/json")
                        .body(Full::new(Bytes::from(
                            s.token_reply.clone().unwrap_or_default(),
                        )))
                        .expect("response"),
                    "/token" => {
                        let f = form(&req.into_body());
                        let (scopes, resource) = match f.get("grant_type").map(String::as_str) {
                            Some("authorization_code") => {
                                let Some((challenge, scopes, resource)) =
                                    f.get("code").and_then(|c| s.codes.remove(c))
                                else {
                                    return json_response(
                                        StatusCode::BAD_REQUEST,
                                        json!({"error": "invalid_grant"}),
                                    );
                                };
                                let verifier = f.get("code_verifier").cloned().unwrap_or_default();
                                if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
                                    != challenge
                                {
                                    return json_response(
                                        StatusCode::BAD_REQUEST,
                                        json!({"error": "invalid_grant", "error_description": "PKCE"}),
                                    );
                                }
                                (scopes, resource)
                            }
                            Some("refresh_token") => {
                                let Some(scopes) = f
                                    .get("refresh_token")
                                    .and_then(|r| s.refresh.get(r))
                                    .cloned()
                                else {
                                    return json_response(
                                        StatusCode::BAD_REQUEST,
                                        json!({"error": "invalid_grant"}),
                                    );
                                };
                                s.refreshes += 1;
                                (scopes, f.get("resource").cloned().unwrap_or_default())
                            }
                            _ => {
                                return json_response(
                                    StatusCode::BAD_REQUEST,
                                    json!({"error": "unsupported_grant_type"}),
                                );
                            }
                        };
                        let scopes = s.grant_only.clone().unwrap_or(scopes);
                        s.next += 1;
                        let access = format!("at-{}", s.next);
                        let refresh = format!("rt-{}", s.next);
                        s.tokens.insert(
                            access.clone(),
                            AccessClaims {
                                scopes: scopes.clone(),
                                audience: vec![resource],
                                expires_at: None,
                                ..Default::default()
                            },
                        );
                        s.refresh.insert(refresh.clone(), scopes.clone());
                        json_response(
                            StatusCode::OK,
                            json!({
                                "access_token": access,
                                "refresh_token": refresh,
                                "token_type": "Bearer",
                                "expires_in": 3600,
                                "scope": scopes.join(" "),
                            }),
                        )
                    }
                    _ => json_response(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
                }
            })
        });
        let addr = serve(handler).await;
        *slot.lock().unwrap() = format!("http://{addr}");
        AuthServer { addr, state }
    }
}

// ---------------------------------------------------------------------------------------------
// The MCP server.
// ---------------------------------------------------------------------------------------------

pub fn mcp_server() -> Server {
    let server = Server::builder("protected", "1.0.0").build();
    server
        .add_tool(
            Tool::new(
                "whoami",
                "Says hello",
                json!({"type": "object", "properties": {}}),
            ),
            |_args: Value, _ctx| async move { Ok(CallToolResult::text("hello")) },
        )
        .expect("tool");
    server
}

/// Binds on a free port first so the resource URL (with the port) is known in advance.
pub async fn protected(
    auth: &AuthServer,
    required: &[&str],
    scopes_supported: Option<Vec<String>>,
) -> (Server, HttpServer, String) {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = probe.local_addr().expect("addr").port();
    drop(probe);
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let tokens = auth.state.clone();
    let verifier = Arc::new(
        move |token: String| -> BoxFuture<'static, Result<AccessClaims, Error>> {
            let claims = tokens.lock().unwrap().tokens.get(&token).cloned();
            Box::pin(async move { claims.ok_or_else(|| Error::Auth("unknown token".into())) })
        },
    );
    let rs = ResourceServer::new(
        ProtectedResourceMetadata {
            resource: resource.clone(),
            authorization_servers: vec![auth.issuer()],
            scopes_supported,
            ..Default::default()
        },
        required.iter().map(|s| s.to_string()).collect(),
        verifier,
    )
    .expect("resource server");
    let server = mcp_server();
    let http = server
        .serve_http(HttpServerOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], port)),
            resource_server: Some(Arc::new(rs)),
            ..Default::default()
        })
        .await
        .expect("the server binds");
    (server, http, resource)
}

pub fn oauth(allowed: &[String]) -> OAuthOptions {
    let mut o = OAuthOptions::new("oxmcp-test", REDIRECT);
    let mut policy = TargetPolicy::public_only();
    for origin in allowed {
        policy = policy.allow_origin(origin.clone());
    }
    o.targets = policy;
    o
}

pub async fn connect(url: &str, options: OAuthOptions) -> Result<Client, Error> {
    let http = HttpClientOptions {
        auth: Some(Arc::new(OAuthClient::new(options)?)),
        ..Default::default()
    };
    tokio::time::timeout(
        PATIENCE,
        Client::connect_http(url, ClientOptions::new("t", "0"), http),
    )
    .await
    .expect("connect does not hang")
}

pub fn origin(url: &str) -> String {
    let u: http::Uri = url.parse().unwrap();
    format!("http://{}", u.authority().unwrap())
}
