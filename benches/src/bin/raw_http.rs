//! The HTTP limit: hyper http1 with `application/json` answers, session ids issued on
//! `initialize` and checked on every other request, TCP_NODELAY, nothing else.
//! `raw_http PORT` listens on 127.0.0.1:PORT.

use std::{
    collections::HashSet,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode, body::Incoming, service::service_fn};
use hyper_util::rt::TokioIo;
use oxmcp_bench::raw::answer;

type Sessions = Arc<Mutex<HashSet<String>>>;

async fn handle(
    req: Request<Incoming>,
    sessions: Sessions,
    next: Arc<AtomicU64>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let session = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = req.into_body().collect().await?.to_bytes();
    let is_init = memchr_initialize(&body);
    let mut new_session = None;
    if is_init {
        let id = format!("s{:016x}", next.fetch_add(1, Ordering::Relaxed));
        sessions.lock().expect("sessions").insert(id.clone());
        new_session = Some(id);
    } else {
        let known = session
            .as_deref()
            .is_some_and(|s| sessions.lock().expect("sessions").contains(s));
        if !known {
            return Ok(Response::builder()
                .status(StatusCode::NOT_FOUND)
                .body(Full::new(Bytes::new()))
                .expect("response"));
        }
    }
    let mut builder = Response::builder();
    if let Some(id) = new_session {
        builder = builder.header("mcp-session-id", id);
    }
    Ok(match answer(&body) {
        Some(out) => builder
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(out))),
        None => builder
            .status(StatusCode::ACCEPTED)
            .body(Full::new(Bytes::new())),
    }
    .expect("response"))
}

fn memchr_initialize(body: &[u8]) -> bool {
    let pattern: &[u8] = b"\"method\":\"initialize\"";
    body.windows(pattern.len()).any(|w| w == pattern)
}

fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind");
        eprintln!(
            "listening on http://{}/mcp",
            listener.local_addr().expect("addr")
        );
        let sessions: Sessions = Arc::default();
        let next = Arc::new(AtomicU64::new(1));
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let (sessions, next) = (sessions.clone(), next.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req| handle(req, sessions.clone(), next.clone()));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}
