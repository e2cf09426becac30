//! The inspector's HTTP server (hyper, HTTP/1.1) on 127.0.0.1 only: every request goes
//! through the [`Guard`] first, then to the page or the JSON API.
//!
//! Bodies are read only after the guard passed, capped at [`MAX_BODY`], and must be JSON
//! (`Content-Type: application/json`, which a cross-site form cannot send). Connections are
//! capped at [`MAX_CONNECTIONS`]; a slow header is dropped after [`HEADER_TIMEOUT`].

use std::{convert::Infallible, net::SocketAddr, sync::Arc, time::Duration};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{Value, json};
use tokio::{net::TcpListener, sync::Semaphore};
use tokio_util::sync::CancellationToken;

use super::{
    api,
    guard::{Guard, Token},
    page,
    servers::Servers,
};

/// The largest request body accepted.
pub(crate) const MAX_BODY: usize = 1024 * 1024;
/// Connections served at once (the page keeps one or two; a flood waits).
pub(crate) const MAX_CONNECTIONS: usize = 64;
/// How long a request's head may take to arrive.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The inspector, listening.
pub(crate) struct Inspector {
    listener: TcpListener,
    addr: SocketAddr,
    guard: Guard,
}

impl Inspector {
    /// Listens on `127.0.0.1:port` (`0`: a free port) with a fresh token.
    pub(crate) async fn bind(port: u16) -> std::io::Result<Inspector> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        Ok(Inspector {
            listener,
            addr,
            guard: Guard::new(Token::generate(), addr.port()),
        })
    }

    /// The URL to open: the page, with the token.
    pub(crate) fn url(&self) -> String {
        format!(
            "http://{}/?token={}",
            self.addr,
            self.guard.token().as_str()
        )
    }

    /// Serves until `stop` fires.
    pub(crate) async fn serve(self, servers: Arc<Servers>, stop: CancellationToken) {
        let guard = Arc::new(self.guard);
        let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        loop {
            let stream = tokio::select! {
                () = stop.cancelled() => return,
                accepted = self.listener.accept() => match accepted {
                    Ok((s, _)) => s,
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return;
            };
            let (guard, servers, stop) = (guard.clone(), servers.clone(), stop.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let (guard, servers) = (guard.clone(), servers.clone());
                    async move { Ok::<_, Infallible>(handle(&guard, &servers, req).await) }
                });
                let conn = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(Some(HEADER_TIMEOUT))
                    .serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    _ = conn => {}
                    () = stop.cancelled() => {}
                }
                drop(slot);
            });
        }
    }
}

fn respond(
    status: StatusCode,
    content_type: &str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    for (k, v) in page::COMMON_HEADERS {
        h.insert(k, http::HeaderValue::from_static(v));
    }
    if let Ok(v) = http::HeaderValue::from_str(content_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    r
}

fn json_reply(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    respond(
        status,
        "application/json",
        serde_json::to_vec(body).unwrap_or_default(),
    )
}

async fn handle(
    guard: &Guard,
    servers: &Arc<Servers>,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
    let query = req.uri().query().map(str::to_owned);
    if let Err(refusal) = guard.check(&method, &path, query.as_deref(), req.headers()) {
        // The reason only: nothing about the servers.
        return json_reply(refusal.status, &json!({"error": refusal.reason}));
    }
    match (&method, path.as_str()) {
        (&Method::GET, "/") => {
            let (body, csp) = page::document();
            let mut r = respond(StatusCode::OK, "text/html; charset=utf-8", body);
            if let Ok(v) = http::HeaderValue::from_str(&csp) {
                r.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
            }
            r
        }
        (&Method::GET, "/api/state") => json_reply(StatusCode::OK, &servers.describe_all().await),
        (&Method::GET, "/api/events") => {
            let (status, body) = api::events(servers, query.as_deref()).await;
            json_reply(status, &body)
        }
        (&Method::POST, p) if p.starts_with("/api/") => {
            let is_json = req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| {
                    v.split(';')
                        .next()
                        .is_some_and(|t| t.trim() == "application/json")
                });
            if !is_json {
                return json_reply(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    &json!({"error": "the body must be application/json"}),
                );
            }
            let declared = req
                .headers()
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            if declared.is_some_and(|n| n > MAX_BODY as u64) {
                return json_reply(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &json!({"error": format!("the body is over {MAX_BODY} bytes")}),
                );
            }
            let name = p.trim_start_matches("/api/").to_owned();
            let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => {
                    return json_reply(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &json!({"error": format!("the body is over {MAX_BODY} bytes or was cut")}),
                    );
                }
            };
            let Ok(value) = serde_json::from_slice::<Value>(&body) else {
                return json_reply(
                    StatusCode::BAD_REQUEST,
                    &json!({"error": "the body is not JSON"}),
                );
            };
            let (status, out) = api::post(servers, &name, value).await;
            json_reply(status, &out)
        }
        _ => json_reply(StatusCode::NOT_FOUND, &json!({"error": "not found"})),
    }
}
