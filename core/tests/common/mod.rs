//! Shared test harness: a server with test tools, a client/server pair over the memory
//! transport with every frame recorded for schema validation, a raw JSON peer for driving a
//! server with hand-written (and malformed) messages, and the paths of example binaries.
#![allow(dead_code)]

pub mod cli;
pub mod concurrent;
pub mod host;
pub mod http_harness;
pub mod peers;
pub mod schema;

mod examples;
// Not every suite starts an example; those that do find it here.
#[allow(unused_imports)]
pub use examples::example_bin;

#[path = "../../../examples/rust/conformance/fixture.rs"]
pub mod fixture;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use oxmcp::{
    client::{Client, ClientOptions},
    protocol::{CallToolResult, ContentBlock, Tool},
    server::{Server, ToolError},
    session::Session,
    transport::{HttpFrame, Inbound, Link, OutFrame, Outbound, Route, Transport, memory, tap::tap},
};
pub use schema::{Side, Wire};
use serde_json::{Value, json};

/// Things test tools observed (cancellations, mostly), for assertions. In a server process
/// the events also go to stderr as `probe: <event>`, where a test reads them back.
#[derive(Clone, Default)]
pub struct Probe(Arc<Mutex<Vec<String>>>, bool);

impl Probe {
    /// A probe that also writes each event to stderr.
    pub fn to_stderr() -> Self {
        Probe(Arc::default(), true)
    }

    pub fn push(&self, event: impl Into<String>) {
        let event = event.into();
        if self.1 {
            eprintln!("probe: {event}");
        }
        self.0.lock().unwrap().push(event);
    }

    pub fn events(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Waits (real time) until `event` has been seen, up to 5 s.
    pub async fn wait_for(&self, event: &str) {
        for _ in 0..500 {
            if self.events().iter().any(|e| e == event) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("event `{event}` not seen; saw {:?}", self.events());
    }
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// Pushes an event when dropped while armed (a handler future dropped by cancellation).
pub struct DropRecorder(Option<(Probe, String)>);

impl DropRecorder {
    pub fn armed(probe: Probe, event: String) -> Self {
        DropRecorder(Some((probe, event)))
    }

    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for DropRecorder {
    fn drop(&mut self) {
        if let Some((probe, event)) = self.0.take() {
            probe.push(event);
        }
    }
}

/// A server with the tools the protocol tests use.
pub fn test_server(probe: &Probe) -> Server {
    test_server_with(
        Server::builder("test-server", "1.0.0").instructions("test instructions"),
        probe,
    )
}

/// The test tools on a server named `name` that speaks only the revisions `versions`.
pub fn test_server_speaking(
    name: &str,
    versions: impl IntoIterator<Item = oxmcp::ProtocolVersion>,
) -> Server {
    test_server_with(
        Server::builder(name, "1").protocol_versions(versions),
        &Probe::default(),
    )
}

/// The test tools on a server built from `builder`.
pub fn test_server_with(builder: oxmcp::server::ServerBuilder, probe: &Probe) -> Server {
    let server = builder.build();
    server
        .add_tool(
            Tool::new(
                "echo",
                "Echo the text back",
                object_schema(json!({"text": {"type": "string"}}), &["text"]),
            ),
            |args: Value, _ctx| async move {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "add",
                "Add two numbers",
                object_schema(
                    json!({"a": {"type": "number"}, "b": {"type": "number"}}),
                    &["a", "b"],
                ),
            )
            .with_output_schema(object_schema(json!({"sum": {"type": "number"}}), &["sum"])),
            |args: Value, _ctx| async move {
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                Ok(CallToolResult {
                    structured_content: Some(json!({ "sum": sum })),
                    ..Default::default()
                })
            },
        )
        .unwrap();
    let p = probe.clone();
    server
        .add_tool(
            Tool::new(
                "sleep",
                "Sleep for ms milliseconds",
                object_schema(json!({"ms": {"type": "integer"}}), &["ms"]),
            ),
            move |args: Value, ctx: oxmcp::server::Context| {
                let p = p.clone();
                async move {
                    let ms = args["ms"].as_u64().unwrap_or(0);
                    // The engine drops this future when the request is cancelled; the guard
                    // records that.
                    let guard = DropRecorder::armed(p, format!("cancelled:{}", ctx.id()));
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    guard.disarm();
                    Ok(CallToolResult::text(format!("slept {ms}")))
                }
            },
        )
        .unwrap();
    let p = probe.clone();
    server
        .add_tool(
            Tool::new(
                "wait_for_cancel",
                "Block until cancelled",
                object_schema(json!({}), &[]),
            ),
            move |_args: Value, ctx: oxmcp::server::Context| {
                let p = p.clone();
                async move {
                    p.push("started");
                    // Record the cancellation from a guard, since the engine drops this
                    // future when the token fires.
                    struct OnDrop(Probe, String);
                    impl Drop for OnDrop {
                        fn drop(&mut self) {
                            self.0.push(self.1.clone());
                        }
                    }
                    let _guard = OnDrop(p.clone(), "dropped".into());
                    let token = ctx.cancellation().clone();
                    let p2 = p.clone();
                    tokio::spawn(async move {
                        token.cancelled().await;
                        p2.push("token fired");
                    });
                    ctx.cancelled().await;
                    Ok(CallToolResult::text("unreachable"))
                }
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "progress",
                "Report progress",
                object_schema(json!({"steps": {"type": "integer"}}), &["steps"]),
            ),
            |args: Value, ctx: oxmcp::server::Context| async move {
                let steps = args["steps"].as_u64().unwrap_or(3);
                for i in 1..=steps {
                    ctx.report_progress(i as f64, Some(steps as f64), Some(&format!("step {i}")))
                        .await?;
                }
                Ok(CallToolResult::text("done"))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "tick",
                "Report progress every interval_ms, steps times",
                object_schema(
                    json!({"interval_ms": {"type": "integer"}, "steps": {"type": "integer"}}),
                    &["interval_ms", "steps"],
                ),
            ),
            |args: Value, ctx: oxmcp::server::Context| async move {
                let interval = Duration::from_millis(args["interval_ms"].as_u64().unwrap_or(0));
                let steps = args["steps"].as_u64().unwrap_or(0);
                for i in 1..=steps {
                    tokio::time::sleep(interval).await;
                    ctx.report_progress(i as f64, None, None).await?;
                }
                Ok(CallToolResult::text(format!("ticked {steps}")))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("fail", "Always fails", object_schema(json!({}), &[])),
            |_args: Value, _ctx| async move {
                Err::<CallToolResult, _>(ToolError::failed("boom: the tool failed"))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "bad_output",
                "Returns output that breaks its schema",
                object_schema(json!({}), &[]),
            )
            .with_output_schema(object_schema(json!({"n": {"type": "integer"}}), &["n"])),
            |_args: Value, _ctx| async move {
                Ok(CallToolResult {
                    structured_content: Some(json!({"n": "not a number"})),
                    ..Default::default()
                })
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("panic", "Panics", object_schema(json!({}), &[])),
            |_args: Value, _ctx| async move {
                if std::hint::black_box(true) {
                    panic!("deliberate test panic");
                }
                Ok(CallToolResult::text("unreachable"))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("image", "Returns an image", object_schema(json!({}), &[])),
            |_args: Value, _ctx| async move {
                Ok(CallToolResult {
                    content: vec![ContentBlock::image("iVBORw0KGgo=", "image/png")],
                    ..Default::default()
                })
            },
        )
        .unwrap();
    server
}

/// A client and server connected over the memory transport, every frame recorded.
pub struct Pair {
    pub client: Client,
    pub server_session: Session,
    pub wire: Wire,
}

impl Pair {
    /// Calls the tool `name` with `args` and returns its result, which may be a tool error;
    /// a failed request (JSON-RPC error, closed transport) fails the test.
    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        self.client
            .call_tool(name, args)
            .await
            .unwrap_or_else(|e| panic!("calling `{name}`: {e}"))
    }

    /// Closes the client, waits for the server side, and validates the wire.
    pub async fn finish(self) {
        self.client.close().await;
        tokio::time::timeout(Duration::from_secs(5), self.server_session.closed())
            .await
            .expect("server session closes");
        self.wire.assert_valid();
    }
}

/// Connects `options` to `server` over an in-memory duplex.
pub async fn pair(server: &Server, options: ClientOptions) -> Pair {
    try_pair(server, options).await.expect("client connects")
}

/// The test server with a fresh probe, and a client connected to it with `options`: where
/// most protocol tests start. The server is returned to be kept (and added to) by the test.
pub async fn test_pair(options: ClientOptions) -> (Probe, Server, Pair) {
    let probe = Probe::default();
    let server = test_server(&probe);
    let pair = pair(&server, options).await;
    (probe, server, pair)
}

/// The conformance fixture server, and a client connected to it with `options`.
pub async fn fixture_pair(options: ClientOptions) -> (Server, Pair) {
    let server = fixture_server();
    let pair = pair(&server, options).await;
    (server, pair)
}

/// The test server with a fresh probe, and a [`RawPeer`] connected to it (not yet
/// initialized) with the server's session.
pub fn test_peer() -> (Probe, Server, RawPeer, Session) {
    let probe = Probe::default();
    let server = test_server(&probe);
    let (peer, session) = RawPeer::connect(&server);
    (probe, server, peer, session)
}

/// Like [`pair`], returning the connect error.
pub async fn try_pair(
    server: &Server,
    options: ClientOptions,
) -> Result<Pair, (oxmcp::Error, Wire)> {
    let (a, b) = memory::pair();
    let wire = Wire::new();
    // One tap, on the client's link, sees both directions exactly once.
    let server_session = server.serve(b);
    match Client::connect(tap(a.into_link(), wire.observer(Side::Client)), options).await {
        Ok(client) => Ok(Pair {
            client,
            server_session,
            wire,
        }),
        Err(e) => Err((e, wire)),
    }
}

/// Calls the test tool `echo` and checks the text comes back.
pub async fn assert_echo(client: &Client, text: &str) {
    let r = client
        .call_tool("echo", json!({ "text": text }))
        .await
        .expect("echo");
    assert_eq!(r.text_content(), text);
}

/// Calls `tool` in a task of its own, cancellable with the returned token.
pub fn cancellable_call(
    client: &Client,
    tool: &'static str,
    args: Value,
) -> (
    tokio_util::sync::CancellationToken,
    tokio::task::JoinHandle<oxmcp::Result<CallToolResult>>,
) {
    let token = tokio_util::sync::CancellationToken::new();
    let options = oxmcp::session::RequestOptions::default().cancel_with(token.clone());
    let client = client.clone();
    let call = tokio::spawn(async move { client.call_tool_with(tool, args, options).await });
    (token, call)
}

/// Client options for a test.
pub fn client_options() -> ClientOptions {
    ClientOptions::new("test-client", "1.0.0")
}

/// The conformance fixture server.
pub fn fixture_server() -> Server {
    fixture::build(Server::builder("fixture", "1.0.0")).expect("the fixture builds")
}

/// Client options with every client feature answered: sampling replies with a canned
/// message, elicitation accepts `answer`, roots lists one directory.
pub fn capable_client(answer: Value) -> ClientOptions {
    use oxmcp::protocol::{CreateMessageResult, ElicitResult, ListRootsResult, Role, Root};
    client_options()
        .sampling(
            |params: oxmcp::protocol::CreateMessageRequestParams, _cancel| async move {
                let asked = params
                    .messages
                    .first()
                    .and_then(|m| m.content.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: json!({"type": "text", "text": format!("echo: {asked}")}),
                    model: "test-model".into(),
                    stop_reason: Some("endTurn".into()),
                    meta: None,
                    extra: Default::default(),
                })
            },
        )
        .elicitation(move |_params, _cancel| {
            let answer = answer.clone();
            async move { Ok(ElicitResult::accept(answer)) }
        })
        .roots(|_cancel| async move {
            Ok(ListRootsResult {
                roots: vec![Root {
                    uri: "file:///workspace".into(),
                    name: Some("workspace".into()),
                    meta: None,
                }],
                meta: None,
            })
        })
}

/// Like [`capable_client`], but its elicitation answers fill every property of the requested
/// schema (the first choice of an enum, `1`, `true` or `"x"`), so any form a tool asks for is
/// accepted.
pub fn schema_filling_client() -> ClientOptions {
    use oxmcp::protocol::ElicitResult;
    capable_client(json!({})).elicitation(
        |params: oxmcp::protocol::ElicitRequestParams, _cancel| async move {
            let mut answer = serde_json::Map::new();
            let properties = params
                .requested_schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            fn fill(property: &Value) -> Value {
                let first_choice = |p: &Value| {
                    p["enum"].get(0).cloned().or_else(|| {
                        ["oneOf", "anyOf"]
                            .iter()
                            .find_map(|k| p[*k].get(0).map(|c| c["const"].clone()))
                    })
                };
                if let Some(choice) = first_choice(property) {
                    return choice;
                }
                match property["type"].as_str() {
                    Some("array") => {
                        json!([first_choice(&property["items"]).unwrap_or(json!("x"))])
                    }
                    Some("integer" | "number") => json!(1),
                    Some("boolean") => json!(true),
                    _ => json!("x"),
                }
            }
            for (name, property) in properties {
                answer.insert(name, fill(&property));
            }
            Ok(ElicitResult::accept(Value::Object(answer)))
        },
    )
}

/// Every era a client can be in: each handshake revision, and the stateless one.
pub fn all_modes() -> Vec<oxmcp::client::ProtocolMode> {
    let mut modes: Vec<oxmcp::client::ProtocolMode> = oxmcp::ProtocolVersion::handshake_versions()
        .map(oxmcp::client::ProtocolMode::Handshake)
        .collect();
    modes.push(oxmcp::client::ProtocolMode::Auto);
    modes
}

/// A peer that speaks raw JSON to a server, recording what the server sends.
pub struct RawPeer {
    link: Link,
    pub wire: Wire,
    /// Notifications received while waiting for responses.
    pub notifications: Vec<Value>,
}

impl RawPeer {
    /// Connects to `server` over memory; only the server's messages are schema-checked.
    pub fn connect(server: &Server) -> (RawPeer, Session) {
        let (a, b) = memory::pair();
        let session = server.serve(b);
        (
            RawPeer {
                link: a.into_link(),
                wire: Wire::checking_only(Side::Server),
                notifications: Vec::new(),
            },
            session,
        )
    }

    /// Wraps any link (a child process, say).
    pub fn over(transport: impl Transport) -> RawPeer {
        RawPeer {
            link: transport.into_link(),
            wire: Wire::checking_only(Side::Server),
            notifications: Vec::new(),
        }
    }

    /// Sends raw bytes as one frame.
    pub async fn send_bytes(&self, bytes: &[u8]) {
        self.wire.record(Side::Client, bytes);
        self.link
            .outbound
            .send(Outbound::Frame(OutFrame {
                bytes: bytes.to_vec(),
                route: Route::Unrelated,
            }))
            .await
            .expect("link open");
    }

    /// Sends a JSON value as one frame.
    pub async fn send(&self, value: Value) {
        self.send_bytes(value.to_string().as_bytes()).await;
    }

    /// The next frame, parsed, within `within`; `None` if nothing came or the link closed.
    pub async fn recv_within(&mut self, within: Duration) -> Option<Value> {
        loop {
            let item = tokio::time::timeout(within, self.link.inbound.recv())
                .await
                .ok()??;
            match item {
                Inbound::Frame(bytes)
                | Inbound::FrameWithHeaders(HttpFrame { bytes, .. })
                | Inbound::Message(bytes) => {
                    self.wire.record(Side::Server, &bytes);
                    return Some(serde_json::from_slice(&bytes).expect("server sends valid JSON"));
                }
                Inbound::Closed(_) => return None,
                Inbound::Oversized { .. } => continue,
            }
        }
    }

    /// The next frame, within 5 s.
    pub async fn recv(&mut self) -> Value {
        self.recv_within(Duration::from_secs(5))
            .await
            .expect("a message from the server")
    }

    /// The next response (skipping and keeping notifications).
    pub async fn response(&mut self) -> Value {
        loop {
            let m = self.recv().await;
            if m.get("method").is_some() && m.get("id").is_none() {
                self.notifications.push(m);
                continue;
            }
            return m;
        }
    }

    /// Sends a request and returns its response.
    pub async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
        self.response().await
    }

    /// Sends a stateless-era (2026-07-28) request: `params` with the [`stateless_meta`].
    pub async fn stateless_request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.request(id, method, with_meta(params)).await
    }

    /// Handshake-era initialize + initialized with `version`; returns the result.
    pub async fn initialize(&mut self, version: &str) -> Value {
        let r = self
            .request(
                json!(0),
                "initialize",
                json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        r["result"].clone()
    }

    /// Closes our side.
    pub async fn close(&self) {
        let _ = self.link.outbound.send(Outbound::Close).await;
    }
}

/// `params` with the stateless `_meta` a 2026-07-28 request carries.
pub fn with_meta(mut params: Value) -> Value {
    params["_meta"] = stateless_meta();
    params
}

/// The stateless `_meta` with its `io.modelcontextprotocol/<field>` set to `value` (another
/// revision, other client capabilities).
pub fn stateless_meta_with(field: &str, value: Value) -> Value {
    let mut meta = stateless_meta();
    meta[format!("io.modelcontextprotocol/{field}")] = value;
    meta
}

/// Checks a stateless-era response completed with the default cache hints: private to
/// this client, stale at once.
pub fn assert_complete_uncached(response: &Value) {
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    assert_eq!(response["result"]["ttlMs"], 0, "{response}");
    assert_eq!(response["result"]["cacheScope"], "private", "{response}");
}

/// The stateless `_meta` a 2026-07-28 request carries.
pub fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    })
}
