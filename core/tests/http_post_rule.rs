//! The POST rule (`core/src/transport/http/post_rule.rs`) as a table, over real sockets on
//! 127.0.0.1, both ways:
//!
//! - server side: every body shape × every revision × every mode (stateful, `json_response`,
//!   `stateless`, the 2026-07-28 stateless era, legacy `/messages`) gets exactly one HTTP
//!   answer within a deadline, with the status and JSON-RPC code the rule gives, nothing
//!   more on the legacy stream, and the session (or server) still serves a valid request
//!   afterwards;
//! - client side: a raw TCP server answering a pending request with each shape (as a JSON
//!   body and as an SSE event on a stream left open) gets the request resolved or failed
//!   within the deadline, never left to its timeout, and the client keeps working.
//!
//! The deadline only turns a hang into a failure (every answer here takes milliseconds); it
//! is not a speed claim.

mod common;

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use common::*;
use oxmcp::{
    ErrorKind,
    client::{Client, ProtocolMode},
    protocol::ProtocolVersion,
    transport::http::{HttpClientOptions, HttpClientTransport, HttpServer, HttpServerOptions},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// Every answer must be complete within this (a client-side deadline that fails the test).
const DEADLINE: Duration = Duration::from_secs(1);

static NEXT_ID: AtomicU64 = AtomicU64::new(1000);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP/1.1 over TCP: the bytes sent are exactly the bytes written here.
// ---------------------------------------------------------------------------------------------

#[derive(Debug)]
struct Reply {
    status: u16,
    content_type: String,
    session: Option<String>,
    /// The body, de-chunked; for SSE, the JSON of each `data:` line.
    body: Vec<u8>,
    events: Vec<Value>,
}

impl Reply {
    fn json(&self) -> Value {
        // An SSE answer ends with the response; what came before it is about the request.
        if let Some(last) = self.events.last() {
            return last.clone();
        }
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = find(raw, b"\r\n") {
        let size = std::str::from_utf8(&raw[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 || raw.len() < end + 2 + size {
            break;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[(end + 4 + size).min(raw.len())..];
    }
    out
}

fn sse_data(body: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter_map(|event| {
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data).unwrap_or(Value::Null))
        })
        .collect()
}

/// One request on its own connection (`Connection: close`), read to its end within the deadline.
async fn send(addr: SocketAddr, head: &str, extra: &[(String, String)], body: &[u8]) -> Reply {
    let mut request = format!("{head} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (n, v) in extra {
        request.push_str(&format!("{n}: {v}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    let raw = tokio::time::timeout(DEADLINE, async {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.write_all(&bytes).await.expect("write");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.expect("read");
        raw
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "no complete HTTP answer within {DEADLINE:?} to:\n{}",
            String::from_utf8_lossy(&bytes)
        )
    });
    let end = find(&raw, b"\r\n\r\n").unwrap_or_else(|| {
        panic!(
            "no HTTP answer at all to:\n{}",
            String::from_utf8_lossy(&bytes)
        )
    });
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let mut content_type = String::new();
    let mut session = None;
    let mut chunked = false;
    for line in lines {
        if let Some((n, v)) = line.split_once(':') {
            match n.trim().to_ascii_lowercase().as_str() {
                "content-type" => content_type = v.trim().to_owned(),
                "mcp-session-id" => session = Some(v.trim().to_owned()),
                "transfer-encoding" => chunked = v.contains("chunked"),
                _ => {}
            }
        }
    }
    let rest = &raw[end + 4..];
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    let events = if content_type.starts_with("text/event-stream") {
        sse_data(&body)
    } else {
        Vec::new()
    };
    Reply {
        status,
        content_type,
        session,
        body,
        events,
    }
}

// ---------------------------------------------------------------------------------------------
// Server side.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Stateful,
    JsonResponse,
    Stateless,
    /// The 2026-07-28 era on a default server.
    Modern,
    /// Legacy HTTP+SSE `/messages`.
    Legacy,
}

/// What the rule says a POST gets.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// 200 with the answer to this request (legacy: 202, the answer on the stream).
    Answer(u64),
    /// 200 with a batch response of this many elements (answering this request).
    Batch(usize, u64),
    /// 202, no body.
    Accepted,
    /// 400 with one error of this code (and this id, when readable).
    Refused(i64, Option<u64>),
    /// 400 with an array of this many -32600 errors, each `id: null`.
    RefusedEach(usize),
    /// This status and code.
    Status(u16, i64),
}

struct Target {
    mode: Mode,
    revision: ProtocolVersion,
    addr: SocketAddr,
    session: Option<String>,
    /// Legacy: the `/messages` URL path and the open stream with what it carried so far.
    legacy: Option<(String, TcpStream, Vec<u8>)>,
    _http: HttpServer,
}

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

impl Target {
    async fn start(mode: Mode, revision: ProtocolVersion) -> Target {
        let options = HttpServerOptions {
            json_response: mode == Mode::JsonResponse,
            stateless: mode == Mode::Stateless,
            ..Default::default()
        };
        let http = fixture_server()
            .serve_http(options)
            .await
            .expect("the server binds");
        let mut target = Target {
            mode,
            revision,
            addr: http.local_addr(),
            session: None,
            legacy: None,
            _http: http,
        };
        match mode {
            Mode::Stateful | Mode::JsonResponse => target.open_session().await,
            Mode::Legacy => target.open_legacy().await,
            Mode::Stateless | Mode::Modern => {}
        }
        target
    }

    fn initialize(&self) -> String {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": self.revision.as_str(), "capabilities": {},
                          "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string()
    }

    async fn open_session(&mut self) {
        let r = send(
            self.addr,
            "POST /mcp",
            &headers(&[ACCEPT, ("Content-Type", "application/json")]),
            self.initialize().as_bytes(),
        )
        .await;
        assert_eq!(r.status, 200, "initialize: {r:?}");
        assert_eq!(
            r.json()["result"]["protocolVersion"],
            self.revision.as_str()
        );
        self.session = r.session;
        let r = self
            .post(
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "application/json",
            )
            .await;
        assert_eq!(r.status, 202, "initialized: {r:?}");
    }

    async fn open_legacy(&mut self) {
        let mut stream = TcpStream::connect(self.addr).await.expect("connect");
        stream
            .write_all(b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            .await
            .expect("write");
        let mut seen = Vec::new();
        read_stream_until(&mut stream, &mut seen, b"sessionId=").await;
        read_stream_until(&mut stream, &mut seen, b"\n\n").await;
        let text = String::from_utf8_lossy(&seen).into_owned();
        let endpoint = text
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .expect("the endpoint event")
            .trim()
            .to_owned();
        self.legacy = Some((endpoint, stream, Vec::new()));
        let init = self.initialize();
        let r = self.post(&init, "application/json").await;
        assert_eq!(r.status, 202, "initialize: {r:?}");
        self.read_legacy_until(br#""protocolVersion":"2024-11-05""#)
            .await;
        let r = self
            .post(
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "application/json",
            )
            .await;
        assert_eq!(r.status, 202, "initialized: {r:?}");
    }

    /// What the legacy stream carried since the last call, up to `needle`.
    async fn read_legacy_until(&mut self, needle: &[u8]) -> Vec<u8> {
        let (_, stream, seen) = self.legacy.as_mut().expect("a legacy stream");
        read_stream_until(stream, seen, needle).await;
        std::mem::take(seen)
    }

    async fn post(&self, body: &str, content_type: &str) -> Reply {
        let mut extra = headers(&[ACCEPT, ("Content-Type", content_type)]);
        let path = match &self.legacy {
            Some((endpoint, ..)) => format!("POST {endpoint}"),
            None => "POST /mcp".to_owned(),
        };
        if let Some(s) = &self.session {
            extra.push(("Mcp-Session-Id".into(), s.clone()));
        }
        match self.mode {
            Mode::Stateful | Mode::JsonResponse if self.session.is_some() => {
                extra.push(("MCP-Protocol-Version".into(), self.revision.as_str().into()));
            }
            Mode::Stateless => {
                extra.push(("MCP-Protocol-Version".into(), self.revision.as_str().into()));
            }
            Mode::Modern => {
                extra.push(("MCP-Protocol-Version".into(), "2026-07-28".into()));
                // The headers mirror the body where there is a method to mirror.
                if let Some(method) = serde_json::from_str::<Value>(body)
                    .ok()
                    .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
                {
                    extra.push(("Mcp-Method".into(), method));
                }
            }
            _ => {}
        }
        send(self.addr, &path, &extra, body.as_bytes()).await
    }

    /// A request this target's revision serves: `ping`, or `server/discover` with `_meta`.
    fn request(&self, id: u64) -> Value {
        match self.mode {
            Mode::Modern => json!({"jsonrpc": "2.0", "id": id, "method": "server/discover",
                                   "params": {"_meta": stateless_meta()}}),
            _ => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        }
    }

    /// POSTs `body` and checks the answer against `expect`.
    async fn check(&mut self, name: &str, body: &str, content_type: &str, expect: Expect) {
        let what = format!("{:?} {} `{name}`", self.mode, self.revision.as_str());
        let r = self.post(body, content_type).await;
        let json = r.json();
        match expect {
            Expect::Answer(id) => {
                if self.mode == Mode::Legacy {
                    assert_eq!(r.status, 202, "{what}: {r:?}");
                    let seen = self
                        .read_legacy_until(format!(r#""id":{id},"#).as_bytes())
                        .await;
                    assert!(
                        find(&seen, b"\"result\"").is_some(),
                        "{what}: {}",
                        String::from_utf8_lossy(&seen)
                    );
                } else {
                    assert_eq!(r.status, 200, "{what}: {r:?}");
                    assert_eq!(json["id"], id, "{what}: {json}");
                    assert!(json.get("result").is_some(), "{what}: {json}");
                }
            }
            Expect::Batch(n, id) => {
                assert_eq!(r.status, 200, "{what}: {r:?}");
                let items = json
                    .as_array()
                    .unwrap_or_else(|| panic!("{what}: not an array: {json}"));
                assert_eq!(items.len(), n, "{what}: {json}");
                assert!(
                    items
                        .iter()
                        .any(|i| i["id"] == id && i.get("result").is_some()),
                    "{what}: {json}"
                );
                for item in items.iter().filter(|i| i["id"] != id) {
                    assert_eq!(item["id"], Value::Null, "{what}: {json}");
                    assert_eq!(item["error"]["code"], -32600, "{what}: {json}");
                }
            }
            Expect::Accepted => {
                assert_eq!(r.status, 202, "{what}: {r:?}");
                assert!(r.body.is_empty(), "{what}: {r:?}");
            }
            Expect::Refused(code, id) => {
                assert_eq!(r.status, 400, "{what}: {r:?}");
                assert!(
                    r.content_type.starts_with("application/json"),
                    "{what}: {r:?}"
                );
                assert_eq!(json["error"]["code"], code, "{what}: {json}");
                match id {
                    Some(id) => assert_eq!(json["id"], id, "{what}: {json}"),
                    None => assert!(json.get("id").is_none_or(Value::is_null), "{what}: {json}"),
                }
            }
            Expect::RefusedEach(n) => {
                assert_eq!(r.status, 400, "{what}: {r:?}");
                let items = json
                    .as_array()
                    .unwrap_or_else(|| panic!("{what}: not an array: {json}"));
                assert_eq!(items.len(), n, "{what}: {json}");
                for item in items {
                    assert_eq!(item["id"], Value::Null, "{what}: {json}");
                    assert_eq!(item["error"]["code"], -32600, "{what}: {json}");
                }
            }
            Expect::Status(status, code) => {
                assert_eq!(r.status, status, "{what}: {r:?}");
                assert_eq!(json["error"]["code"], code, "{what}: {json}");
            }
        }
        // The session (or server) still serves a valid request; on the legacy stream nothing
        // came for the body before that request's answer, unless its answer was due there.
        let id = next_id();
        let after = self.request(id).to_string();
        let r = self.post(&after, "application/json").await;
        if self.mode == Mode::Legacy {
            assert_eq!(r.status, 202, "{what}, then a request: {r:?}");
            let seen = self
                .read_legacy_until(format!(r#""id":{id},"#).as_bytes())
                .await;
            if !matches!(expect, Expect::Answer(_)) {
                let text = String::from_utf8_lossy(&seen);
                assert!(
                    !text.contains("\"error\""),
                    "{what}: a second answer on the stream: {text}"
                );
            }
        } else {
            assert_eq!(r.status, 200, "{what}, then a request: {r:?}");
            assert_eq!(r.json()["id"], id, "{what}, then a request: {r:?}");
        }
    }
}

async fn read_stream_until(stream: &mut TcpStream, seen: &mut Vec<u8>, needle: &[u8]) {
    let found = tokio::time::timeout(DEADLINE, async {
        let mut chunk = [0u8; 8192];
        while find(seen, needle).is_none() {
            let n = stream.read(&mut chunk).await.expect("read the stream");
            assert!(n > 0, "the legacy stream ended");
            seen.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    assert!(
        found.is_ok(),
        "`{}` not on the legacy stream within {DEADLINE:?}; it carried:\n{}",
        String::from_utf8_lossy(needle),
        String::from_utf8_lossy(seen)
    );
}

/// Every body shape against one target, with what the rule gives it.
async fn run_table(mode: Mode, revision: ProtocolVersion) -> usize {
    let mut t = Target::start(mode, revision).await;
    let batches = revision == ProtocolVersion::V2025_03_26;
    let refused = Expect::Refused(-32600, None);
    let note = r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;
    let mut rows = 0;
    macro_rules! row {
        ($name:expr, $body:expr, $expect:expr) => {
            let body: String = ($body).into();
            t.check($name, &body, "application/json", $expect).await;
            rows += 1;
        };
    }
    let id = next_id();
    row!("one request", t.request(id).to_string(), Expect::Answer(id));
    row!("one notification", note, Expect::Accepted);
    let response = r#"{"jsonrpc":"2.0","id":"nobody","result":{}}"#.to_owned();
    if mode == Mode::Modern {
        // A response has no method for Mcp-Method to mirror (and nothing to answer in 2026).
        row!("one response", response, Expect::Status(400, -32020));
    } else {
        row!("one response", response, Expect::Accepted);
    }
    let id = next_id();
    row!(
        "an object that is no message, with an id",
        format!(r#"{{"jsonrpc":"2.0","id":{id}}}"#),
        Expect::Refused(-32600, Some(id))
    );
    let id = next_id();
    row!(
        "a request with bad params",
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":3}}"#),
        Expect::Refused(-32600, Some(id))
    );
    let id = next_id();
    row!(
        "an array of one request",
        format!("[{}]", t.request(id)),
        if batches {
            Expect::Batch(1, id)
        } else {
            refused
        }
    );
    let id = next_id();
    row!(
        "an array of a request and a notification",
        format!("[{},{note}]", t.request(id)),
        if batches {
            Expect::Batch(1, id)
        } else {
            refused
        }
    );
    row!(
        "an array of notifications",
        format!("[{note},{note}]"),
        if batches { Expect::Accepted } else { refused }
    );
    row!("an empty array", "[]", refused);
    row!(
        "an array of invalid elements",
        "[1,2]",
        if batches {
            Expect::RefusedEach(2)
        } else {
            refused
        }
    );
    let id = next_id();
    row!(
        "an array of a request and an invalid element",
        format!("[{},1]", t.request(id)),
        if batches {
            Expect::Batch(2, id)
        } else {
            refused
        }
    );
    row!(
        "an array holding initialize",
        format!("[{}]", t.initialize()),
        refused
    );
    row!("a number", "123", refused);
    row!("null", "null", refused);
    row!("a string", r#""ping""#, refused);
    row!("an empty object", "{}", refused);
    row!("an object that is no message", r#"{"foo":"bar"}"#, refused);
    row!(
        "invalid JSON",
        r#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#,
        Expect::Status(400, -32700)
    );
    let id = next_id();
    t.check(
        "the wrong content type",
        &t.request(id).to_string(),
        "text/plain",
        Expect::Status(415, -32600),
    )
    .await;
    rows + 1
}

#[tokio::test]
async fn every_post_gets_the_answer_the_rule_gives() {
    use ProtocolVersion::*;
    let mut targets = vec![(Mode::Legacy, V2024_11_05), (Mode::Modern, V2026_07_28)];
    for revision in [V2025_03_26, V2025_06_18, V2025_11_25] {
        for mode in [Mode::Stateful, Mode::JsonResponse, Mode::Stateless] {
            targets.push((mode, revision));
        }
    }
    let mut rows = 0;
    for (mode, revision) in &targets {
        rows += run_table(*mode, *revision).await;
    }
    // 11 targets × 19 shapes: a table that silently shrank would pass vacuously.
    assert_eq!(targets.len(), 11);
    assert_eq!(rows, 11 * 19);
}

// ---------------------------------------------------------------------------------------------
// Client side.
// ---------------------------------------------------------------------------------------------

/// How the raw server answers the request under test (`{id}` is replaced by its id).
#[derive(Clone, Debug)]
struct Shape {
    name: &'static str,
    status: u16,
    content_type: &'static str,
    body: &'static str,
    /// SSE: leave the stream open after the event (the answer must not depend on its end).
    hold_open: bool,
    /// Whether the request succeeds.
    ok: bool,
}

const fn json_shape(name: &'static str, body: &'static str, ok: bool) -> Shape {
    Shape {
        name,
        status: 200,
        content_type: "application/json",
        body,
        hold_open: false,
        ok,
    }
}

const fn sse_shape(name: &'static str, body: &'static str, ok: bool, hold_open: bool) -> Shape {
    Shape {
        name,
        status: 200,
        content_type: "text/event-stream",
        body,
        hold_open,
        ok,
    }
}

const VALID: &str = r#"{"jsonrpc":"2.0","id":{id},"result":{}}"#;

/// The shapes a pending request's answer can take, as a JSON body and as an SSE event (on a
/// stream left open: the outcome must not wait for its end).
const MESSAGES: &[(&str, &str, bool)] = &[
    ("a valid response", VALID, true),
    (
        "an error for the request",
        r#"{"jsonrpc":"2.0","id":{id},"error":{"code":-32001,"message":"no"}}"#,
        false,
    ),
    (
        "an array holding the response",
        r#"[{"jsonrpc":"2.0","id":{id},"result":{}}]"#,
        true,
    ),
    ("an empty array", "[]", false),
    ("an array of invalid elements", "[1,2]", false),
    ("a number", "123", false),
    ("null", "null", false),
    ("an empty object", "{}", false),
    ("an object that is no message", r#"{"foo":"bar"}"#, false),
    (
        "a response without jsonrpc",
        r#"{"id":{id},"result":{}}"#,
        false,
    ),
    (
        "a response with result and error",
        r#"{"jsonrpc":"2.0","id":{id},"result":{},"error":{"code":1,"message":"x"}}"#,
        false,
    ),
    (
        "an error without id",
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"refused"}}"#,
        false,
    ),
    (
        "an error with a null id",
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"refused"}}"#,
        false,
    ),
    (
        "invalid JSON",
        r#"{"jsonrpc":"2.0","id":{id},"result":"#,
        false,
    ),
];

fn client_shapes() -> Vec<Shape> {
    let mut shapes = Vec::new();
    for (name, body, ok) in MESSAGES {
        shapes.push(json_shape(name, body, *ok));
        shapes.push(sse_shape(name, body, *ok, true));
    }
    // Not answers, but not malformed either: on a stream the request waits for its end (the
    // answer may still come), then fails; in a JSON body it fails at once.
    let other = r#"[{"jsonrpc":"2.0","id":"other","result":{}}]"#;
    shapes.push(sse_shape(
        "an array answering another request, then the end",
        other,
        false,
        false,
    ));
    shapes.push(json_shape(
        "an array answering another request",
        other,
        false,
    ));
    shapes.push(sse_shape("only a notification, then the end", r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#, false, false));
    shapes.push(json_shape("a notification as the JSON answer", r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#, false));
    shapes.push(Shape {
        name: "202 for a request",
        status: 202,
        content_type: "",
        body: "",
        hold_open: false,
        ok: false,
    });
    shapes.push(json_shape("an empty JSON body", "", false));
    shapes.push(Shape {
        name: "an HTML error page",
        status: 500,
        content_type: "text/html",
        body: "<h1>oops</h1>",
        hold_open: false,
        ok: false,
    });
    shapes.push(Shape {
        name: "400 with a JSON-RPC error",
        status: 400,
        content_type: "application/json",
        body: r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"refused"}}"#,
        hold_open: false,
        ok: false,
    });
    shapes
}

/// A raw server: `initialize` and notifications are answered properly, every other request
/// with the current shape.
struct RawServer {
    addr: SocketAddr,
    shape: Arc<Mutex<Shape>>,
    task: tokio::task::JoinHandle<()>,
}

impl RawServer {
    async fn start() -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let shape = Arc::new(Mutex::new(json_shape("valid", VALID, true)));
        let current = shape.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve_raw(stream, current.clone()));
            }
        });
        RawServer { addr, shape, task }
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve_raw(mut stream: TcpStream, shape: Arc<Mutex<Shape>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        // One request: its head, then `Content-Length` bytes of body.
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        while buf.len() < head_end + 4 + length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Vec<u8> = buf
            .drain(..head_end + 4 + length)
            .skip(head_end + 4)
            .collect();
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (status, content_type, answer, hold) = if !head.starts_with("post") {
            // No GET stream, and DELETE is fine.
            let status = if head.starts_with("delete") { 200 } else { 405 };
            (status, String::new(), String::new(), false)
        } else if message["method"] == "initialize" {
            let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "raw", "version": "0"}}});
            (
                200,
                "application/json".to_owned(),
                answer.to_string(),
                false,
            )
        } else if message.get("id").is_none() || message.get("method").is_none() {
            (202, String::new(), String::new(), false)
        } else {
            let shape = shape.lock().expect("shape").clone();
            let answer = shape.body.replace("{id}", &message["id"].to_string());
            let answer = if shape.content_type == "text/event-stream" {
                format!("data: {answer}\n\n")
            } else {
                answer
            };
            (
                shape.status,
                shape.content_type.to_owned(),
                answer,
                shape.hold_open,
            )
        };
        let mut out = format!("HTTP/1.1 {status} X\r\nMcp-Session-Id: raw-session\r\n");
        if !content_type.is_empty() {
            out.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        if hold {
            // An SSE stream that stays open: no length, the connection is the body.
            out.push_str("Connection: close\r\n\r\n");
            out.push_str(&answer);
            if stream.write_all(out.as_bytes()).await.is_err() {
                return;
            }
            // Until the client gives up on it.
            while let Ok(n) = stream.read(&mut chunk).await {
                if n == 0 {
                    return;
                }
            }
            return;
        }
        out.push_str(&format!("Content-Length: {}\r\n\r\n{answer}", answer.len()));
        if stream.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn every_answer_shape_resolves_or_fails_the_pending_request_promptly() {
    let server = RawServer::start().await;
    let options = HttpClientOptions {
        get_stream: false,
        legacy_fallback: false,
        max_resumptions: 0,
        ..Default::default()
    };
    let transport =
        HttpClientTransport::new(&format!("http://{}/mcp", server.addr), options).expect("url");
    let client = Client::connect(
        transport,
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
    )
    .await
    .expect("the handshake with the raw server");
    let shapes = client_shapes();
    assert_eq!(shapes.len(), 2 * MESSAGES.len() + 8);
    for shape in &shapes {
        let what = format!("{} ({} {})", shape.name, shape.status, shape.content_type);
        *server.shape.lock().expect("shape") = shape.clone();
        let outcome = tokio::time::timeout(DEADLINE, client.ping())
            .await
            .unwrap_or_else(|_| panic!("{what}: the request was left pending past {DEADLINE:?}"));
        match (&outcome, shape.ok) {
            (Ok(()), true) => {}
            (Err(e), false) => {
                // A typed failure of this request, from the transport or the server (never a
                // timeout, never the connection given up).
                assert_eq!(e.kind(), ErrorKind::Rpc, "{what}: {e}");
            }
            _ => panic!(
                "{what}: expected {}, got {outcome:?}",
                if shape.ok { "success" } else { "a failure" }
            ),
        }
        // The client keeps working.
        *server.shape.lock().expect("shape") = json_shape("valid", VALID, true);
        tokio::time::timeout(DEADLINE, client.ping())
            .await
            .unwrap_or_else(|_| panic!("after {what}: a valid answer was left pending"))
            .unwrap_or_else(|e| panic!("after {what}: a valid answer failed: {e}"));
    }
    client.close().await;
}

#[tokio::test]
async fn a_server_error_without_id_reaches_the_caller_with_its_code() {
    let server = RawServer::start().await;
    let transport = HttpClientTransport::new(
        &format!("http://{}/mcp", server.addr),
        HttpClientOptions {
            get_stream: false,
            legacy_fallback: false,
            ..Default::default()
        },
    )
    .expect("url");
    let client = Client::connect(
        transport,
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
    )
    .await
    .expect("connect");
    for shape in [
        sse_shape(
            "sse",
            r#"{"jsonrpc":"2.0","error":{"code":-32042,"message":"refused"}}"#,
            false,
            true,
        ),
        json_shape(
            "json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32042,"message":"refused"}}"#,
            false,
        ),
    ] {
        *server.shape.lock().expect("shape") = shape.clone();
        let e = tokio::time::timeout(DEADLINE, client.ping())
            .await
            .expect("prompt")
            .expect_err("an error");
        assert_eq!(e.code(), Some(-32042), "{}: {e}", shape.name);
    }
    // A malformed answer names what was wrong with it.
    *server.shape.lock().expect("shape") = sse_shape("bad", "[]", false, true);
    let e = tokio::time::timeout(DEADLINE, client.ping())
        .await
        .expect("prompt")
        .expect_err("an error");
    assert!(e.to_string().contains("no JSON-RPC response"), "{e}");
    client.close().await;
}
