//! What a server sends while a client's handshake is open (issue 41).
//!
//! The lifecycle: a server sends nothing before its `initialize` answer, and nothing but pings
//! and logging before the client's `notifications/initialized`. Servers register at runtime,
//! also in that gap, so here a raw peer opens the handshake and, before it sends
//! `initialized`, the server registers tools, prompts and resources and updates a subscribed
//! resource again and again. Nothing but the `initialize` answer (and the answers to what the
//! peer asks) may reach the peer; once `initialized` is in, each kind of change arrives
//! exactly once. The same over a real child process on stdio and over Streamable HTTP on
//! 127.0.0.1, and with registrations racing the `initialize` request itself (hundreds of
//! rounds, so the window between "initializing" and the answer going out is hit).
//!
//! Bad input next to it: a client that never sends `initialized` hears no change and is
//! still served (a late `initialized` flushes); a second `initialized` sends nothing twice;
//! changes made before `initialize` are not announced at all; a handler that asks its client
//! (elicitation) before `initialized` waits for it, and when it never comes gets
//! `Error::HandshakeIncomplete` while the client never sees the request.
//!
//! Ordering is proved by round trips, not by waiting: the engine queues a change's
//! notification before the registration call returns, so a `ping` sent afterwards is
//! answered after anything that change sent.

mod common;
#[allow(dead_code)]
#[path = "http_reliability/sse.rs"]
mod sse;

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use common::{Probe, RawPeer, example_bin, test_server};
use oxmcp::{
    ProtocolVersion,
    protocol::{
        CallToolResult, ElicitRequestParams, GetPromptResult, LoggingLevel, Prompt,
        ReadResourceResult, Resource, Tool,
    },
    server::{Context, Server},
    session::{Role, SessionConfig},
    transport::{
        child::{ChildCommand, ChildTransport},
        http::HttpServerOptions,
    },
};
use serde_json::{Value, json};
use tokio::{net::TcpStream, sync::mpsc};

const TOOLS_CHANGED: &str = "notifications/tools/list_changed";
const PROMPTS_CHANGED: &str = "notifications/prompts/list_changed";
const RESOURCES_CHANGED: &str = "notifications/resources/list_changed";
const UPDATED: &str = "notifications/resources/updated";
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn initialize(id: u64, capabilities: Value) -> Value {
    initialize_at("2025-11-25", id, capabilities)
}

fn initialize_at(version: &str, id: u64, capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities,
        "clientInfo": {"name": "raw", "version": "0"}}})
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Sends `message` and reads until its answer: the answer, and everything before it.
async fn ask(peer: &mut RawPeer, message: Value) -> (Value, Vec<Value>) {
    let id = message["id"].clone();
    peer.send(message).await;
    let mut before = Vec::new();
    loop {
        let m = peer.recv().await;
        if m["id"] == id && m.get("method").is_none() {
            return (m, before);
        }
        before.push(m);
    }
}

/// A `ping` round trip: whatever the server sent before answering it.
async fn sent_before_ping(peer: &mut RawPeer, id: u64) -> Vec<Value> {
    ask(peer, json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .await
        .1
}

/// Each message's method (or `answer <id>`), to show in a failure and compare.
fn methods(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m["method"].as_str() {
            Some(method) if method == UPDATED => format!("{method} {}", m["params"]["uri"]),
            Some(method) => method.to_owned(),
            None => format!("answer {}", m["id"]),
        })
        .collect()
}

/// How many times each method was heard (updates counted per URI).
fn counted(messages: &[Value]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for m in methods(messages) {
        *counts.entry(m).or_default() += 1;
    }
    counts
}

fn expected(heard: &[&str]) -> BTreeMap<String, usize> {
    heard.iter().map(|m| (m.to_string(), 1)).collect()
}

fn updated(uri: &str) -> String {
    format!("{UPDATED} \"{uri}\"")
}

/// A resource whose contents never change (only the notifications matter here).
fn add_resource(server: &Server, uri: &str) {
    server.add_resource(Resource::new(uri, "r"), |uri: String, _v, _c| async move {
        Ok(ReadResourceResult::text(uri, None, "x"))
    });
}

fn add_tool(server: &Server, name: &str) {
    server
        .add_tool(
            Tool::new(name, "t", json!({"type": "object"})),
            |_a: Value, _c| async move { Ok(CallToolResult::text("t")) },
        )
        .unwrap();
}

fn add_prompt(server: &Server, name: &str) {
    server
        .add_prompt(Prompt::new(name, "p", vec![]), |_a, _c| async move {
            Ok(GetPromptResult::default())
        })
        .unwrap();
}

/// Changes every kind of thing several times: three tools (one removed again), two prompts,
/// two resources, and `test://watched` and `test://dropped` updated three times each.
fn change_everything(server: &Server, round: &str) {
    for i in 0..3 {
        add_tool(server, &format!("{round}_tool_{i}"));
    }
    assert!(server.remove_tool(&format!("{round}_tool_0")));
    add_prompt(server, &format!("{round}_prompt_a"));
    add_prompt(server, &format!("{round}_prompt_b"));
    add_resource(server, &format!("test://{round}/a"));
    add_resource(server, &format!("test://{round}/b"));
    for _ in 0..3 {
        server.notify_resource_updated("test://watched");
        server.notify_resource_updated("test://dropped");
    }
}

#[tokio::test]
async fn changes_during_the_handshake_wait_for_initialized_and_arrive_once() {
    for version in ProtocolVersion::handshake_versions() {
        changes_during_the_handshake_at(version.as_str()).await;
    }
}

async fn changes_during_the_handshake_at(version: &str) {
    let server = test_server(&Probe::default());
    let (mut peer, _session) = RawPeer::connect(&server);
    let (answer, before) = ask(&mut peer, initialize_at(version, 0, json!({}))).await;
    assert!(
        before.is_empty(),
        "{version}: before the answer: {:?}",
        methods(&before)
    );
    assert_eq!(answer["result"]["protocolVersion"], version);
    // The client may ask between `initialize` and `initialized`: it is served meanwhile.
    for (id, uri) in [(1, "test://watched"), (2, "test://dropped")] {
        let (r, before) = ask(
            &mut peer,
            request(id, "resources/subscribe", json!({"uri": uri})),
        )
        .await;
        assert!(
            r.get("result").is_some() && before.is_empty(),
            "{r} {before:?}"
        );
    }
    change_everything(&server, "early");
    let (listed, before) = ask(&mut peer, request(3, "tools/list", json!({}))).await;
    assert!(
        before.is_empty(),
        "during the handshake: {:?}",
        methods(&before)
    );
    assert!(listed["result"]["tools"].as_array().unwrap().len() > 2);
    // Unsubscribed before the handshake completes: its held updates are no longer wanted.
    let (_, before) = ask(
        &mut peer,
        request(4, "resources/unsubscribe", json!({"uri": "test://dropped"})),
    )
    .await;
    assert!(
        before.is_empty(),
        "during the handshake: {:?}",
        methods(&before)
    );
    let heard = sent_before_ping(&mut peer, 5).await;
    assert!(
        heard.is_empty(),
        "during the handshake: {:?}",
        methods(&heard)
    );

    peer.send_bytes(INITIALIZED.as_bytes()).await;
    let heard = sent_before_ping(&mut peer, 6).await;
    assert_eq!(
        counted(&heard),
        expected(&[
            TOOLS_CHANGED,
            PROMPTS_CHANGED,
            RESOURCES_CHANGED,
            &updated("test://watched")
        ]),
        "once each after initialized: {:?}",
        methods(&heard)
    );
    // Once the handshake is complete a change is told at once, every time.
    add_tool(&server, "late");
    add_tool(&server, "later");
    server.notify_resource_updated("test://watched");
    let heard = sent_before_ping(&mut peer, 7).await;
    assert_eq!(
        methods(&heard),
        [TOOLS_CHANGED, TOOLS_CHANGED, &updated("test://watched")],
    );
    peer.close().await;
    peer.wire.assert_valid();
}

#[tokio::test]
async fn changes_before_initialize_are_not_announced() {
    let server = test_server(&Probe::default());
    let (mut peer, _session) = RawPeer::connect(&server);
    // The session exists, but its client has not even asked to initialize: it will list
    // whatever is there by the time it does.
    change_everything(&server, "before");
    let heard = sent_before_ping(&mut peer, 1).await;
    assert!(heard.is_empty(), "before initialize: {:?}", methods(&heard));
    let (_, before) = ask(&mut peer, initialize(2, json!({}))).await;
    assert!(
        before.is_empty(),
        "before the answer: {:?}",
        methods(&before)
    );
    peer.send_bytes(INITIALIZED.as_bytes()).await;
    let heard = sent_before_ping(&mut peer, 3).await;
    assert!(
        heard.is_empty(),
        "nothing changed since initialize: {:?}",
        methods(&heard)
    );
    let (listed, _) = ask(&mut peer, request(4, "tools/list", json!({}))).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"before_tool_2"), "{names:?}");
    peer.close().await;
}

#[tokio::test]
async fn a_client_that_never_sends_initialized_hears_no_change_and_is_still_served() {
    let server = test_server(&Probe::default());
    let (mut peer, session) = RawPeer::connect(&server);
    ask(&mut peer, initialize(0, json!({}))).await;
    for round in 0..5 {
        change_everything(&server, &format!("r{round}"));
        let (called, before) = ask(
            &mut peer,
            request(
                10 + round,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "still here"}}),
            ),
        )
        .await;
        assert!(before.is_empty(), "round {round}: {:?}", methods(&before));
        assert_eq!(called["result"]["content"][0]["text"], "still here");
    }
    // Time passes too; nothing leaks out on its own.
    assert!(peer.recv_within(Duration::from_millis(200)).await.is_none());
    assert!(!session.is_closed() && !session.state().is_ready());
    // A late `initialized` still completes the handshake, and the many changes are one each.
    peer.send_bytes(INITIALIZED.as_bytes()).await;
    let heard = sent_before_ping(&mut peer, 20).await;
    assert_eq!(
        counted(&heard),
        expected(&[TOOLS_CHANGED, PROMPTS_CHANGED, RESOURCES_CHANGED]),
        "{:?}",
        methods(&heard)
    );
    assert!(session.state().is_ready());
    peer.close().await;
    peer.wire.assert_valid();
}

#[tokio::test]
async fn a_second_initialized_sends_nothing_twice() {
    let server = test_server(&Probe::default());
    let (mut peer, _session) = RawPeer::connect(&server);
    ask(&mut peer, initialize(0, json!({}))).await;
    change_everything(&server, "held");
    peer.send_bytes(INITIALIZED.as_bytes()).await;
    let heard = sent_before_ping(&mut peer, 1).await;
    assert_eq!(heard.len(), 3, "{:?}", methods(&heard));
    add_tool(&server, "after");
    let heard = sent_before_ping(&mut peer, 2).await;
    assert_eq!(methods(&heard), [TOOLS_CHANGED]);
    for id in 3..6 {
        peer.send_bytes(INITIALIZED.as_bytes()).await;
        let heard = sent_before_ping(&mut peer, id).await;
        assert!(heard.is_empty(), "initialized again: {:?}", methods(&heard));
    }
    // And a change after that is still told exactly once.
    add_prompt(&server, "after");
    assert_eq!(
        methods(&sent_before_ping(&mut peer, 9).await),
        [PROMPTS_CHANGED]
    );
    peer.close().await;
}

/// Registers the tool `racer` over and over on a thread of its own (registration is
/// synchronous), so registrations run truly alongside the session answering `initialize`.
struct Adder {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Adder {
    /// Starts registering, and returns once the first registration is done.
    fn start(server: &Server) -> Adder {
        let stop = Arc::new(AtomicBool::new(false));
        let (server, flag) = (server.clone(), stop.clone());
        let (started, running) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            add_tool(&server, "racer");
            let _ = started.send(());
            while !flag.load(Ordering::Relaxed) {
                add_tool(&server, "racer");
            }
        });
        running.recv().expect("the adder starts");
        Adder { stop, thread }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the adder ran");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_racing_initialize_never_precedes_its_answer() {
    for round in 0..500 {
        let server = Server::builder("racer", "1").build();
        let (mut peer, _session) = RawPeer::connect(&server);
        let adder = Adder::start(&server);
        peer.send(initialize(0, json!({}))).await;
        let first = peer.recv().await;
        assert_eq!(
            first["id"], 0,
            "round {round}: the first message was {first}"
        );
        assert!(first.get("result").is_some(), "round {round}: {first}");
        adder.stop();
        // The handshake is open now (the answer is out): one more change, held for sure.
        add_tool(&server, "held");
        let heard = sent_before_ping(&mut peer, 1).await;
        assert!(heard.is_empty(), "round {round}: {:?}", methods(&heard));
        peer.send_bytes(INITIALIZED.as_bytes()).await;
        let heard = sent_before_ping(&mut peer, 2).await;
        assert_eq!(methods(&heard), [TOOLS_CHANGED], "round {round}");
        peer.close().await;
    }
}

/// A server whose `ask` tool elicits a name, whose `log` tool logs, and whose requests to the
/// client wait `initialized_wait` for the handshake.
fn asking_server(initialized_wait: Duration) -> Server {
    let mut config = SessionConfig::for_role(Role::Server);
    config.initialized_wait = initialized_wait;
    let server = Server::builder("asker", "1").session_config(config).build();
    server
        .add_tool(
            Tool::new("ask", "Elicits a name", json!({"type": "object"})),
            |_a: Value, ctx: Context| async move {
                let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                Ok(CallToolResult::text(
                    match ctx.elicit(ElicitRequestParams::form("Name?", form)).await {
                        Ok(answer) => {
                            format!("answered {}", answer.content.unwrap_or_default()["name"])
                        }
                        Err(e) => format!("{}: {e}", e.kind()),
                    },
                ))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("log", "Logs", json!({"type": "object"})),
            |_a: Value, ctx: Context| async move {
                ctx.log(LoggingLevel::Info, None, json!("logging is allowed early"))
                    .await?;
                Ok(CallToolResult::text("logged"))
            },
        )
        .unwrap();
    server
}

fn call(id: u64, tool: &str) -> Value {
    request(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

#[tokio::test]
async fn a_handler_asking_before_initialized_gets_handshake_incomplete_and_nothing_is_sent() {
    let server = asking_server(Duration::from_millis(300));
    let (mut peer, _session) = RawPeer::connect(&server);
    ask(&mut peer, initialize(0, json!({"elicitation": {}}))).await;
    let (answer, before) = ask(&mut peer, call(1, "ask")).await;
    assert!(
        before.is_empty(),
        "the client was sent {:?}",
        methods(&before)
    );
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("handshake_incomplete: `elicitation/create` was not sent"),
        "{text}"
    );
    // Logging is allowed before `initialized` (so are pings).
    let (answer, before) = ask(&mut peer, call(2, "log")).await;
    assert_eq!(methods(&before), ["notifications/message"]);
    assert_eq!(answer["result"]["content"][0]["text"], "logged");
    // The client's capability was never the problem: after `initialized` the question goes.
    peer.send_bytes(INITIALIZED.as_bytes()).await;
    peer.send(call(3, "ask")).await;
    let asked = peer.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    peer.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    let answer = peer.recv().await;
    assert_eq!(answer["result"]["content"][0]["text"], "answered \"Ada\"");
    peer.close().await;
    peer.wire.assert_valid();
}

#[tokio::test]
async fn a_question_asked_just_before_initialized_waits_for_it() {
    let server = asking_server(Duration::from_secs(30));
    let (mut peer, _session) = RawPeer::connect(&server);
    ask(&mut peer, initialize(0, json!({"elicitation": {}}))).await;
    // The call overtakes `initialized` (two concurrent POSTs can do that over HTTP).
    peer.send(call(1, "ask")).await;
    assert!(
        peer.recv_within(Duration::from_millis(150)).await.is_none(),
        "nothing may be asked before initialized"
    );
    peer.send_bytes(INITIALIZED.as_bytes()).await;
    let asked = peer.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    peer.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Bo"}}}))
        .await;
    let answer = peer.recv().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "answered \"Bo\"");
    peer.close().await;
    peer.wire.assert_valid();
}

#[tokio::test]
async fn over_stdio_a_child_changed_mid_handshake_announces_each_change_once_after_initialized() {
    let child =
        ChildTransport::spawn(ChildCommand::new(example_bin("protocol_server")).arg("--mutator"))
            .await
            .expect("the protocol server starts");
    let mut peer = RawPeer::over(child);
    let (answer, before) = ask(&mut peer, initialize(0, json!({}))).await;
    assert!(
        before.is_empty() && answer.get("result").is_some(),
        "{answer} {before:?}"
    );
    let (_, before) = ask(
        &mut peer,
        request(1, "resources/subscribe", json!({"uri": "test://watched"})),
    )
    .await;
    assert!(before.is_empty(), "{:?}", methods(&before));
    // The process changes itself twice while the handshake is open.
    for id in [2, 3] {
        let (answer, before) = ask(&mut peer, call(id, "mutate")).await;
        assert!(
            before.is_empty(),
            "during the handshake: {:?}",
            methods(&before)
        );
        assert!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("mutated")
        );
    }
    assert!(sent_before_ping(&mut peer, 4).await.is_empty());
    peer.send_bytes(INITIALIZED.as_bytes()).await;
    let heard = sent_before_ping(&mut peer, 5).await;
    assert_eq!(
        counted(&heard),
        expected(&[
            TOOLS_CHANGED,
            PROMPTS_CHANGED,
            RESOURCES_CHANGED,
            &updated("test://watched")
        ]),
        "{:?}",
        methods(&heard)
    );
    // After the handshake, a change is told as it happens (three updates, three times).
    let (_, heard) = ask(&mut peer, call(6, "mutate")).await;
    let mut expected_now = expected(&[TOOLS_CHANGED, PROMPTS_CHANGED, RESOURCES_CHANGED]);
    expected_now.insert(updated("test://watched"), 3);
    assert_eq!(counted(&heard), expected_now, "{:?}", methods(&heard));
    peer.close().await;
    peer.wire.assert_valid();
}

/// One POST on a connection of its own: the status, the session id the response names, and
/// the JSON-RPC messages of its body (one for a JSON body; every event's for an SSE body).
async fn post(
    addr: SocketAddr,
    session: Option<&str>,
    body: &str,
) -> (u16, Option<String>, Vec<Value>) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = sse::send_head(&mut stream, &sse::post(session, body)).await;
    let status = head.status;
    let id = head.header("mcp-session-id").map(str::to_owned);
    let json = head
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json"));
    let messages = if status == 202 {
        Vec::new()
    } else if json {
        let body = sse::read_sized_body(&mut stream, head).await;
        vec![serde_json::from_slice(&body).unwrap()]
    } else {
        let (events, _) = sse::read_events(&mut stream, head.rest, None, false, |_| false).await;
        events
            .iter()
            .filter(|e| !e.data.is_empty())
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect()
    };
    (status, id, messages)
}

/// Opens the session's GET stream; its messages arrive on the receiver.
async fn get_stream(addr: SocketAddr, session: &str) -> mpsc::UnboundedReceiver<Value> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    let head = sse::send_head(&mut stream, request.as_bytes()).await;
    assert_eq!(head.status, 200, "GET: {:?}", head.headers);
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        sse::read_events(&mut stream, head.rest, None, false, |e| {
            if !e.data.is_empty() {
                let _ = tx.send(serde_json::from_str(&e.data).unwrap());
            }
            tx.is_closed()
        })
        .await;
    });
    rx
}

/// Ends a raw session.
async fn delete(addr: SocketAddr, session: &str) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    let head = sse::send_head(&mut stream, request.as_bytes()).await;
    assert_eq!(head.status, 200);
}

/// What the GET stream carries until `until` arrives (included), within 10 s.
async fn heard_until(
    rx: &mut mpsc::UnboundedReceiver<Value>,
    until: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut heard = Vec::new();
    loop {
        let m = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap_or_else(|_| panic!("waited in vain; heard {:?}", methods(&heard)))
            .expect("the GET stream is open");
        let done = until(&m);
        heard.push(m);
        if done {
            return heard;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_changes_during_the_handshake_reach_the_get_stream_once_after_initialized() {
    let server = test_server(&Probe::default());
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let addr = http.local_addr();
    let (_, id, answer) = post(addr, None, &initialize(0, json!({})).to_string()).await;
    assert_eq!(methods(&answer), ["answer 0"]);
    let id = id.expect("a session id");
    // The GET stream opens while the handshake is open: it must stay silent until the end.
    let mut rx = get_stream(addr, &id).await;
    let subscribe = request(1, "resources/subscribe", json!({"uri": "test://watched"}));
    let (_, _, answer) = post(addr, Some(&id), &subscribe.to_string()).await;
    assert_eq!(methods(&answer), ["answer 1"]);
    change_everything(&server, "http");
    let (_, _, answer) = post(
        addr,
        Some(&id),
        &request(2, "tools/list", json!({})).to_string(),
    )
    .await;
    assert_eq!(methods(&answer), ["answer 2"]);
    // The changes were queued before tools/list was even sent; the router needs moments.
    tokio::time::sleep(Duration::from_millis(300)).await;
    if let Ok(m) = rx.try_recv() {
        panic!("the GET stream carried {m} before initialized");
    }
    let (status, _, _) = post(addr, Some(&id), INITIALIZED).await;
    assert_eq!(status, 202);
    let heard = heard_until(&mut rx, |m| m["method"] == UPDATED).await;
    // The list changes are flushed before the updates; then a marker change, told at once
    // now, closes the window: nothing else came in between.
    add_prompt(&server, "marker");
    let rest = heard_until(&mut rx, |m| m["method"] == PROMPTS_CHANGED).await;
    assert_eq!(methods(&rest), [PROMPTS_CHANGED]);
    assert_eq!(
        counted(&heard),
        expected(&[
            TOOLS_CHANGED,
            PROMPTS_CHANGED,
            RESOURCES_CHANGED,
            &updated("test://watched")
        ]),
    );
    delete(addr, &id).await;
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_registration_racing_initialize_never_reaches_the_client_early() {
    let server = Server::builder("racer", "1").build();
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let addr = http.local_addr();
    for round in 0..200 {
        let adder = Adder::start(&server);
        let (_, id, answer) = post(addr, None, &initialize(0, json!({})).to_string()).await;
        assert_eq!(
            methods(&answer),
            ["answer 0"],
            "round {round}: the initialize POST carried more"
        );
        let id = id.expect("a session id");
        let mut rx = get_stream(addr, &id).await;
        adder.stop();
        add_tool(&server, "held");
        let (status, _, _) = post(addr, Some(&id), INITIALIZED).await;
        assert_eq!(status, 202);
        // A marker after the flush (held with it, or told at once: either way it comes last).
        add_prompt(&server, &format!("marker_{round}"));
        let heard = heard_until(&mut rx, |m| m["method"] == PROMPTS_CHANGED).await;
        assert_eq!(
            methods(&heard),
            [TOOLS_CHANGED, PROMPTS_CHANGED],
            "round {round}"
        );
        delete(addr, &id).await;
    }
    http.shutdown().await;
}
