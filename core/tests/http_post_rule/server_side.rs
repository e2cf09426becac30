//! The server side of the POST rule: every body shape × every revision × every mode gets
//! exactly one HTTP answer within the deadline, with the status and JSON-RPC code the rule
//! gives, nothing more on the legacy stream, and the session (or server) still serves a valid
//! request afterwards.

use std::net::SocketAddr;

use oxmcp::{
    protocol::ProtocolVersion,
    transport::http::{HttpServer, HttpServerOptions},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    DEADLINE,
    common::{fixture_server, http_harness::find, stateless_meta},
    next_id,
    raw::{Reply, send},
};

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
    // Arrays: batches where the revision has them (2025-03-26), refused everywhere else.
    let batch = |expect| if batches { expect } else { refused };
    let id = next_id();
    row!(
        "an array of one request",
        format!("[{}]", t.request(id)),
        batch(Expect::Batch(1, id))
    );
    let id = next_id();
    row!(
        "an array of a request and a notification",
        format!("[{},{note}]", t.request(id)),
        batch(Expect::Batch(1, id))
    );
    row!(
        "an array of notifications",
        format!("[{note},{note}]"),
        batch(Expect::Accepted)
    );
    row!("an empty array", "[]", refused);
    row!(
        "an array of invalid elements",
        "[1,2]",
        batch(Expect::RefusedEach(2))
    );
    let id = next_id();
    row!(
        "an array of a request and an invalid element",
        format!("[{},1]", t.request(id)),
        batch(Expect::Batch(2, id))
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
