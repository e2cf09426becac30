//! The cluster the scale-out suites run against: a private `redis-server` on a free loopback
//! port (nothing saved), three replicas of the conformance fixture server sharing it, and the
//! round-robin proxy (`examples/scale-out/rr_proxy.rs`) in front of them. Every process is
//! killed when the cluster is dropped.
//!
//! The HTTP client here opens a new connection for every request, so consecutive requests
//! through the proxy land on consecutive replicas, and a request sent to one replica's own
//! address lands exactly there (the tests that need "on A … through C" use those).
#![allow(dead_code)]

#[path = "../common/examples.rs"]
mod examples;

use std::{
    net::SocketAddr,
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

#[allow(unused_imports)]
pub use self::examples::example_bin;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    net::TcpStream,
    process::{Child, Command},
};

pub const STATE_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
pub const OTHER_KEY: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A private Redis on a loopback port.
pub struct Redis {
    pub port: u16,
    child: Option<Child>,
}

impl Redis {
    pub async fn start() -> Redis {
        let mut redis = Redis {
            port: free_port(),
            child: None,
        };
        redis.restart().await;
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts it (again) on the same port.
    pub async fn restart(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("redis-server on PATH (make test installs it with apt-get)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).await.is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kills it (SIGKILL): everything it held is gone.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }
}

/// One replica of the fixture server.
pub struct Replica {
    pub addr: SocketAddr,
    child: Child,
}

impl Replica {
    pub async fn start(redis: &Redis, state_key: &str, json_response: bool) -> Replica {
        let extra: &[&str] = if json_response {
            &["--json-response"]
        } else {
            &[]
        };
        Replica::start_with(redis, state_key, extra).await
    }

    /// A replica with more command-line flags.
    pub async fn start_with(redis: &Redis, state_key: &str, extra: &[&str]) -> Replica {
        let mut command = Command::new(example_bin("conformance_server"));
        command
            .args(["--http", "--port", "0", "--store", &redis.url()])
            .args(["--state-key", state_key])
            .args(extra)
            .env("RUST_LOG", "warn");
        let (child, addr) = spawn_announcing(command, "listening on http://").await;
        Replica { addr, child }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// SIGKILL: no shutdown of any kind.
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }
}

/// Runs `command` until it prints `<marker>HOST:PORT` on stderr; keeps draining stderr to
/// this test's stderr afterwards.
async fn spawn_announcing(command: Command, marker: &str) -> (Child, SocketAddr) {
    spawn_recording(command, marker, None).await
}

/// Like [`spawn_announcing`], keeping every later stderr line in `record` too.
async fn spawn_recording(
    mut command: Command,
    marker: &str,
    record: Option<Arc<Mutex<Vec<String>>>>,
) -> (Child, SocketAddr) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("spawn");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("read stderr") {
            if let Some(rest) = line.split(marker).nth(1) {
                let hostport = rest.split('/').next().unwrap_or(rest);
                return hostport.parse::<SocketAddr>().expect("an address");
            }
            eprintln!("{line}");
        }
        panic!("exited before listening")
    })
    .await
    .expect("announced within 30 s");
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("[peer] {line}");
            if let Some(record) = &record {
                record.lock().expect("lock").push(line);
            }
        }
    });
    (child, addr)
}

/// Redis, three replicas (A, B, C) and the proxy.
pub struct Cluster {
    pub redis: Redis,
    pub replicas: Vec<Replica>,
    pub proxy: SocketAddr,
    _proxy: Child,
    /// The proxy's lines, one per connection: `proxy: connection N -> HOST:PORT`.
    proxy_log: Arc<Mutex<Vec<String>>>,
}

impl Cluster {
    pub async fn start(json_response: bool) -> Cluster {
        let redis = Redis::start().await;
        let mut replicas = Vec::new();
        for _ in 0..3 {
            replicas.push(Replica::start(&redis, STATE_KEY, json_response).await);
        }
        let mut command = Command::new(example_bin("rr_proxy"));
        command.args(["--port", "0"]);
        for r in &replicas {
            command.args(["--backend", &r.addr.to_string()]);
        }
        let proxy_log = Arc::new(Mutex::new(Vec::new()));
        let (proxy_child, proxy) =
            spawn_recording(command, "proxy listening on ", Some(proxy_log.clone())).await;
        Cluster {
            redis,
            replicas,
            proxy,
            _proxy: proxy_child,
            proxy_log,
        }
    }

    pub fn proxy_url(&self) -> String {
        format!("http://{}/mcp", self.proxy)
    }

    pub fn url(&self, replica: usize) -> String {
        self.replicas[replica].url()
    }

    /// How many connections the proxy sent to each replica, in replica order.
    pub fn connections_per_replica(&self) -> Vec<usize> {
        let log = self.proxy_log.lock().expect("lock");
        self.replicas
            .iter()
            .map(|r| {
                let target = format!("-> {}", r.addr);
                log.iter().filter(|l| l.ends_with(&target)).count()
            })
            .collect()
    }
}

/// A response whose body can still be streaming.
pub struct Reply {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    body: Incoming,
    buffer: Vec<u8>,
}

/// One SSE event.
#[derive(Clone, Debug)]
pub struct Event {
    pub id: Option<String>,
    pub data: Option<Value>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    pub fn is_sse(&self) -> bool {
        self.header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"))
    }

    /// The whole body as JSON.
    pub async fn json(self) -> Value {
        let bytes = self.body.collect().await.expect("body").to_bytes();
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| panic!("JSON body, got {}", String::from_utf8_lossy(&bytes)))
    }

    /// The next SSE event (`None` when the stream ends), waiting at most `within`.
    pub async fn next_event(&mut self, within: Duration) -> Option<Event> {
        tokio::time::timeout(within, self.next_event_inner())
            .await
            .expect("an SSE event in time")
    }

    async fn next_event_inner(&mut self) -> Option<Event> {
        loop {
            let text = String::from_utf8_lossy(&self.buffer).into_owned();
            if let Some(end) = text.find("\n\n") {
                let raw = text[..end].to_owned();
                self.buffer.drain(..end + 2);
                let mut event = Event {
                    id: None,
                    data: None,
                };
                let mut data = String::new();
                for line in raw.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        event.id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if !data.is_empty() {
                    event.data = serde_json::from_str(&data).ok();
                }
                return Some(event);
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Some(chunk) = frame.data_ref() {
                        self.buffer.extend_from_slice(chunk);
                    }
                }
                _ => return None,
            }
        }
    }

    /// The next event that carries a message.
    pub async fn next_message(&mut self, within: Duration) -> Option<Value> {
        loop {
            let event = self.next_event(within).await?;
            if let Some(data) = event.data {
                return Some(data);
            }
        }
    }
}

/// One HTTP request on a connection of its own.
pub async fn send(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Result<Reply, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{e}"))?;
    let authority = uri.authority().ok_or("no authority")?.to_string();
    let stream = TcpStream::connect(&authority)
        .await
        .map_err(|e| format!("connect {authority}: {e}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let mut request = Request::builder()
        .method(method)
        .uri(uri.path())
        .header("host", &authority)
        .header("accept", "application/json, text/event-stream");
    if body.is_some() {
        request = request.header("content-type", "application/json");
    }
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
    let response = tokio::time::timeout(
        Duration::from_secs(20),
        sender.send_request(request.body(Full::new(bytes)).map_err(|e| e.to_string())?),
    )
    .await
    .map_err(|_| "no response head within 20 s".to_owned())?
    .map_err(|e| e.to_string())?;
    let (parts, body) = response.into_parts();
    Ok(Reply {
        status: parts.status,
        headers: parts.headers,
        body,
        buffer: Vec::new(),
    })
}

/// A handshake-era client session spread over the cluster, request by request.
pub struct Mcp {
    pub session: String,
    pub version: String,
    pub authorization: Option<String>,
}

pub const VERSION: &str = "2025-11-25";

impl Mcp {
    /// `initialize` at `url` (then `notifications/initialized` at `then`).
    pub async fn initialize(url: &str, then: &str, capabilities: Value) -> Mcp {
        Self::initialize_as(url, then, capabilities, None).await
    }

    pub async fn initialize_as(
        url: &str,
        then: &str,
        capabilities: Value,
        authorization: Option<&str>,
    ) -> Mcp {
        let mut headers = vec![];
        if let Some(a) = authorization {
            headers.push(("authorization", a));
        }
        let body = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": capabilities,
                "clientInfo": {"name": "scale-out-test", "version": "1"}
            }
        });
        let reply = send("POST", url, &headers, Some(&body))
            .await
            .expect("initialize");
        assert_eq!(reply.status, StatusCode::OK);
        let session = reply.header("mcp-session-id").expect("a session id");
        let answer = first_message(reply).await;
        assert_eq!(answer["result"]["protocolVersion"], VERSION, "{answer}");
        let mcp = Mcp {
            session,
            version: VERSION.into(),
            authorization: authorization.map(str::to_owned),
        };
        let reply = mcp
            .post(
                then,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await
            .expect("initialized");
        assert_eq!(reply.status, StatusCode::ACCEPTED);
        mcp
    }

    fn headers(&self) -> Vec<(&str, &str)> {
        let mut h = vec![
            ("mcp-session-id", self.session.as_str()),
            ("mcp-protocol-version", self.version.as_str()),
        ];
        if let Some(a) = &self.authorization {
            h.push(("authorization", a.as_str()));
        }
        h
    }

    pub async fn post(&self, url: &str, body: &Value) -> Result<Reply, String> {
        send("POST", url, &self.headers(), Some(body)).await
    }

    /// A request at `url`; its answer (from JSON or the end of an SSE stream).
    pub async fn request(&self, url: &str, id: i64, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let reply = self.post(url, &body).await.expect("request");
        assert_eq!(reply.status, StatusCode::OK, "{method} at {url}");
        answer_of(reply, id).await
    }

    pub async fn get(&self, url: &str, last_event_id: Option<&str>) -> Reply {
        let mut headers = self.headers();
        if let Some(last) = last_event_id {
            headers.push(("last-event-id", last));
        }
        send("GET", url, &headers, None).await.expect("GET")
    }
}

/// The first JSON-RPC message of a reply (JSON body or first SSE message).
pub async fn first_message(mut reply: Reply) -> Value {
    if reply.is_sse() {
        reply
            .next_message(Duration::from_secs(20))
            .await
            .expect("a message")
    } else {
        reply.json().await
    }
}

/// The response to `id` in a reply, skipping what comes before it on an SSE stream.
pub async fn answer_of(mut reply: Reply, id: i64) -> Value {
    if !reply.is_sse() {
        return reply.json().await;
    }
    loop {
        let message = reply
            .next_message(Duration::from_secs(20))
            .await
            .expect("the answer before the stream ends");
        if message["id"] == id && message.get("method").is_none() {
            return message;
        }
    }
}
