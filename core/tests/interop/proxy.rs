//! A recording reverse proxy for the HTTP cells: it sits between a client and a server and
//! keeps every HTTP exchange (method, headers, status, body).
//!
//! It is how the tests see HTTP itself rather than just the JSON-RPC frames: which session id
//! a server handed out and whether every later request carried it, whether an answer came as
//! JSON or as an SSE stream, which `MCP-Protocol-Version` each request declared. Pointing it
//! at another upstream mid-test stands in for a server restart.

use std::{
    convert::Infallible,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::{
    client::legacy::{Client as HyperClient, connect::HttpConnector},
    rt::{TokioExecutor, TokioIo},
};
use tokio::net::TcpListener;

/// One request through the proxy and what came back.
#[derive(Debug)]
pub struct Exchange {
    pub method: String,
    /// Path and query.
    pub path: String,
    pub request_headers: HeaderMap,
    pub request_body: Bytes,
    pub status: u16,
    pub response_headers: HeaderMap,
    /// Grows while the response streams (an SSE body).
    response_body: Arc<Mutex<Vec<u8>>>,
}

impl Exchange {
    pub fn request_header(&self, name: &str) -> Option<String> {
        header(&self.request_headers, name)
    }

    pub fn response_header(&self, name: &str) -> Option<String> {
        header(&self.response_headers, name)
    }

    /// The response's media type, without parameters (`None` for an empty response).
    pub fn content_type(&self) -> Option<String> {
        self.response_header("content-type")
            .map(|ct| ct.split(';').next().unwrap_or_default().trim().to_owned())
    }

    pub fn is_sse(&self) -> bool {
        self.content_type().as_deref() == Some("text/event-stream")
    }

    pub fn response_body(&self) -> String {
        String::from_utf8_lossy(&self.response_body.lock().unwrap()).into_owned()
    }

    /// The JSON-RPC method of the request body (`None` for a GET, a DELETE or a response).
    pub fn rpc_method(&self) -> Option<String> {
        serde_json::from_slice::<serde_json::Value>(&self.request_body)
            .ok()?
            .get("method")?
            .as_str()
            .map(str::to_owned)
    }

    /// Whether the request body is a JSON-RPC request (it has a method and an id).
    pub fn is_rpc_request(&self) -> bool {
        serde_json::from_slice::<serde_json::Value>(&self.request_body)
            .is_ok_and(|v| v.get("method").is_some() && v.get("id").is_some())
    }

    /// One line for failure messages and reports.
    pub fn describe(&self) -> String {
        let mut body = self.response_body();
        if body.len() > 600 {
            body.truncate(600);
            body.push('…');
        }
        format!(
            "{} {} [{}] mcp-session-id={:?} mcp-protocol-version={:?} mcp-method={:?} \
             -> {} {:?} mcp-session-id={:?}\n    > {}\n    < {}",
            self.method,
            self.path,
            self.rpc_method().unwrap_or_default(),
            self.request_header("mcp-session-id"),
            self.request_header("mcp-protocol-version"),
            self.request_header("mcp-method"),
            self.status,
            self.content_type(),
            self.response_header("mcp-session-id"),
            String::from_utf8_lossy(&self.request_body),
            body.replace('\n', "\\n"),
        )
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

type ProxyBody = UnsyncBoxBody<Bytes, hyper::Error>;

struct ProxyState {
    upstream: Mutex<String>,
    exchanges: Mutex<Vec<Arc<Exchange>>>,
    /// Requests still waiting for their response headers, by arrival number.
    pending: Mutex<Vec<(u64, String)>>,
    arrivals: std::sync::atomic::AtomicU64,
    http: HyperClient<HttpConnector, Full<Bytes>>,
}

/// A recording reverse proxy on 127.0.0.1 (dropped: it stops accepting).
pub struct Proxy {
    addr: SocketAddr,
    state: Arc<ProxyState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Forwards everything to `upstream` (`http://host:port`, any path is ignored).
    pub async fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(ProxyState {
            upstream: Mutex::new(origin(upstream)),
            exchanges: Mutex::new(Vec::new()),
            pending: Mutex::new(Vec::new()),
            arrivals: std::sync::atomic::AtomicU64::new(0),
            http: HyperClient::builder(TokioExecutor::new()).build(HttpConnector::new()),
        });
        let accept_state = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let state = accept_state.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(forward(&state, req).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Proxy { addr, state, task }
    }

    /// The proxy's URL for the path and query of `upstream_url`.
    pub fn url_for(&self, upstream_url: &str) -> String {
        let uri: Uri = upstream_url.parse().expect("a URL");
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        format!("http://{}{path}", self.addr)
    }

    /// From now on, forwards to `upstream` (a restarted server, say).
    pub fn set_upstream(&self, upstream: &str) {
        *self.state.upstream.lock().unwrap() = origin(upstream);
    }

    /// Every exchange so far, in the order the responses started.
    pub fn exchanges(&self) -> Vec<Arc<Exchange>> {
        self.state.exchanges.lock().unwrap().clone()
    }

    /// Forgets the exchanges so far.
    pub fn clear(&self) {
        self.state.exchanges.lock().unwrap().clear();
    }

    /// Every exchange, described, then the requests still unanswered, for failure messages.
    pub fn log(&self) -> String {
        let mut lines: Vec<String> = self.exchanges().iter().map(|e| e.describe()).collect();
        for (_, request) in self.state.pending.lock().unwrap().iter() {
            lines.push(format!("{request} -> (no response yet)"));
        }
        lines.join("\n")
    }
}

fn origin(url: &str) -> String {
    let uri: Uri = url.parse().expect("a URL");
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("http"),
        uri.authority().expect("a URL with a host")
    )
}

async fn forward(state: &ProxyState, req: Request<Incoming>) -> Response<ProxyBody> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let upstream = state.upstream.lock().unwrap().clone();
    let arrival = state
        .arrivals
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    state.pending.lock().unwrap().push((
        arrival,
        format!(
            "{} {path} mcp-session-id={:?}\n    > {}",
            parts.method,
            header(&parts.headers, "mcp-session-id"),
            String::from_utf8_lossy(&body)
        ),
    ));
    let mut out = Request::builder()
        .method(parts.method.clone())
        .uri(format!("{upstream}{path}"));
    for (name, value) in &parts.headers {
        out = out.header(name, value);
    }
    let out = out.body(Full::new(body.clone())).expect("a request");
    let (status, response_headers, upstream_body) = match state.http.request(out).await {
        Ok(r) => {
            let (p, b) = r.into_parts();
            (p.status, p.headers, Some(b))
        }
        // The upstream is down (killed between a restart, say): a gateway error.
        Err(_) => (StatusCode::BAD_GATEWAY, HeaderMap::new(), None),
    };
    state.pending.lock().unwrap().retain(|(n, _)| *n != arrival);
    let recorded = Arc::new(Mutex::new(Vec::new()));
    state.exchanges.lock().unwrap().push(Arc::new(Exchange {
        method: parts.method.to_string(),
        path,
        request_headers: parts.headers,
        request_body: body,
        status: status.as_u16(),
        response_headers: response_headers.clone(),
        response_body: recorded.clone(),
    }));
    let body: ProxyBody = match upstream_body {
        Some(b) => b
            .map_frame(move |frame| {
                if let Some(data) = frame.data_ref() {
                    recorded.lock().unwrap().extend_from_slice(data);
                }
                frame
            })
            .boxed_unsync(),
        None => Full::new(Bytes::new())
            .map_err(|never| match never {})
            .boxed_unsync(),
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = response_headers;
    response
}

/// Waits (a 5 s guard) until the proxy saw an exchange matching `what`.
pub async fn wait_for_exchange(proxy: &Proxy, what: impl Fn(&Exchange) -> bool) -> Arc<Exchange> {
    for _ in 0..500 {
        if let Some(e) = proxy.exchanges().into_iter().find(|e| what(e)) {
            return e;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no such exchange:\n{}", proxy.log());
}
