//! Interop with the official TypeScript MCP SDK (`@modelcontextprotocol/sdk` 1.32.2, pinned
//! in `tests/interop/node/package.json` and its lockfile) over stdio, for everything beyond
//! tools: resources, resource templates, subscriptions, prompts, completion, logging,
//! sampling, elicitation (with SEP-1034 defaults) and roots, in both directions. The SDK
//! speaks the handshake era only (up to 2025-11-25), so every server question is a
//! server-to-client request.
//!
//! - oxmcp's client drives the SDK's `McpServer` in `tests/interop/node/feature_server.mjs`
//!   (auto mode, which falls back to the 2025-11-25 handshake; resources and prompts also at
//!   2024-11-05). The server's tool results echo what the client answered, every happy path
//!   has a bad-input neighbour, and every frame both sides sent is validated against the
//!   official schema of the revision in use.
//! - the SDK's own client (`tests/interop/node/feature_client.mjs`) drives oxmcp's
//!   `conformance_server` example with its own sampling and elicitation handlers (and the
//!   SDK's own SEP-1034 `applyDefaults`), and asserts every result exactly. The fixture has no
//!   tool that asks for roots, so roots are covered in the first direction only.
//!
//! The peers come from `make interop-deps`, which runs `npm ci` and exports
//! `OXMCP_INTEROP_NODE_DIR`; `node` is taken from `PATH`. Without the variable these tests are
//! skipped, unless `OXMCP_REQUIRE_INTEROP=1`.

mod common;

use std::{collections::BTreeMap, path::Path, process::Stdio, time::Duration};

use common::peers::{Asked, Inbox, capable, node_dir};
use common::{Side, Wire};
use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode},
    jsonrpc::{ErrorObject, codes},
    protocol::{CompletionReference, ContentBlock, CreateMessageResult, LoggingLevel},
    transport::{
        Transport,
        child::{ChildCommand, StderrHandle},
        tap::tap,
    },
};
use serde::Serialize;
use serde_json::{Value, json};

/// What `feature_server.mjs` reports as its version: the SDK release actually installed.
const SERVER_VERSION: &str = "sdk-1.32.2";

/// The 1×1 red PNG both `feature_server.mjs` and the conformance fixture serve.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// oxmcp's client connected to `feature_server.mjs`, every frame recorded.
struct Features {
    client: Client,
    wire: Wire,
    stderr: StderrHandle,
    inbox: Inbox,
}

impl Features {
    /// Connects with `options` (their protocol mode included).
    async fn start(dir: &Path, options: ClientOptions) -> Features {
        let child = ChildCommand::new("node")
            .arg(dir.join("feature_server.mjs"))
            .spawn()
            .await
            .expect("start the TypeScript feature server");
        let stderr = child.stderr();
        let wire = Wire::new();
        let link = tap(child.into_link(), wire.observer(Side::Client));
        let inbox = Inbox::default();
        let mode = options.protocol.clone();
        let client = Client::connect(link, inbox.install(options))
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "connect to the TypeScript feature server in {mode:?}: {e}\n{}",
                    stderr.tail(4096)
                )
            });
        let features = Features {
            client,
            wire,
            stderr,
            inbox,
        };
        let details = features.client.server();
        assert_eq!(
            (details.info.name.as_str(), details.info.version.as_str()),
            ("typescript-features", SERVER_VERSION)
        );
        // The SDK has no server/discover: auto mode falls back to the newest handshake.
        let expected = match mode {
            ProtocolMode::Handshake(v) => v,
            _ => ProtocolVersion::V2025_11_25,
        };
        assert_eq!(features.client.protocol_version(), expected);
        features
    }

    /// The requests our client sent with this method, in order.
    fn sent(&self, method: &str) -> Vec<Value> {
        self.wire
            .sent_by(Side::Client)
            .into_iter()
            .filter(|m| m["method"] == method && m.get("id").is_some())
            .collect()
    }

    /// The requests the server sent to our client, by method.
    fn server_requests(&self) -> Vec<String> {
        self.wire
            .sent_by(Side::Server)
            .iter()
            .filter(|m| m.get("id").is_some())
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect()
    }

    /// Our client's answers to the server's requests, in order.
    fn answers(&self) -> Vec<Value> {
        let asked: Vec<Value> = self
            .wire
            .sent_by(Side::Server)
            .into_iter()
            .filter(|m| m.get("method").is_some() && m.get("id").is_some())
            .map(|m| m["id"].clone())
            .collect();
        self.wire
            .sent_by(Side::Client)
            .into_iter()
            .filter(|m| m.get("method").is_none() && asked.contains(&m["id"]))
            .collect()
    }

    async fn call(&self, tool: &str, arguments: Value) -> (bool, String) {
        let result = self
            .client
            .call_tool(tool, arguments)
            .await
            .unwrap_or_else(|e| panic!("call {tool}: {e}"));
        (result.is_error(), result.text_content())
    }

    /// Closes the connection and checks the server reported no error.
    async fn finish(self) {
        self.client.close().await;
        let stderr = self.stderr.tail(1 << 16);
        assert!(
            !stderr.contains("Error"),
            "the TypeScript server reported an error:\n{stderr}"
        );
    }
}

/// A result as JSON.
fn to_json(result: impl Serialize) -> Value {
    serde_json::to_value(result).unwrap()
}

/// The JSON-RPC error inside `err`.
fn rpc(err: Error) -> ErrorObject {
    match err {
        Error::Rpc(e) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Resources, templates, prompts and completion, with their bad-input neighbours.
async fn resources_prompts_and_completion(mode: ProtocolMode) {
    let Some(dir) = node_dir() else { return };
    let server = Features::start(
        &dir,
        ClientOptions::new("oxmcp-interop", "1.0.0").protocol(mode),
    )
    .await;
    let client = &server.client;
    let caps = &client.server().capabilities;
    assert!(caps.resources.is_some() && caps.prompts.is_some() && caps.completions.is_some());

    let resources = client.list_all_resources().await.expect("resources/list");
    assert_eq!(
        to_json(&resources),
        json!([
            {"uri": "test://static-text", "name": "static-text",
             "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary",
             "description": "A static binary resource (a PNG)", "mimeType": "image/png"},
            {"uri": "test://watched", "name": "watched",
             "description": "A resource clients may subscribe to", "mimeType": "text/plain"}
        ])
    );
    let text = client
        .read_resource("test://static-text")
        .await
        .expect("read text");
    assert_eq!(
        to_json(&text),
        json!({"contents": [{"uri": "test://static-text", "mimeType": "text/plain",
                             "text": "Static text from the TypeScript SDK."}]})
    );
    let blob = client
        .read_resource("test://static-binary")
        .await
        .expect("read blob");
    assert_eq!(
        to_json(&blob),
        json!({"contents": [{"uri": "test://static-binary", "mimeType": "image/png",
                             "blob": PNG}]})
    );

    let templates = client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    assert_eq!(
        to_json(&templates),
        json!([{"uriTemplate": "test://template/{id}/data", "name": "template",
                "description": "A templated resource", "mimeType": "application/json"}])
    );
    let item = client
        .read_resource("test://template/42/data")
        .await
        .expect("read through the template");
    assert_eq!(
        to_json(&item),
        json!({"contents": [{"uri": "test://template/42/data", "mimeType": "application/json",
                             "text": r#"{"id":"42","source":"typescript"}"#}]})
    );

    let prompts = client.list_all_prompts().await.expect("prompts/list");
    assert_eq!(
        to_json(&prompts),
        json!([
            {"name": "simple_prompt", "description": "A prompt without arguments"},
            {"name": "greeting",
             "description": "A greeting with a required name and an optional style",
             "arguments": [{"name": "name", "required": true},
                           {"name": "style", "required": false}]},
            {"name": "embedded_resource", "description": "A prompt that embeds a resource",
             "arguments": [{"name": "resourceUri", "required": true}]},
            {"name": "image_prompt", "description": "A prompt with an image"}
        ])
    );
    let simple = client
        .get_prompt("simple_prompt", BTreeMap::new())
        .await
        .expect("simple_prompt");
    assert_eq!(
        to_json(&simple),
        json!({"messages": [{"role": "user", "content": {
            "type": "text", "text": "A simple prompt from the TypeScript SDK."}}]})
    );
    let greeting = client
        .get_prompt("greeting", args(&[("name", "Ada")]))
        .await
        .expect("greeting");
    assert_eq!(
        greeting.messages[0].content,
        ContentBlock::text("Write a friendly greeting for Ada.")
    );
    let greeting = client
        .get_prompt("greeting", args(&[("name", "Ada"), ("style", "formal")]))
        .await
        .expect("greeting with both arguments");
    assert_eq!(
        greeting.messages[0].content,
        ContentBlock::text("Write a formal greeting for Ada.")
    );
    let embedded = client
        .get_prompt(
            "embedded_resource",
            args(&[("resourceUri", "test://static-text")]),
        )
        .await
        .expect("embedded_resource");
    assert_eq!(
        to_json(&embedded),
        json!({"messages": [
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "test://static-text", "mimeType": "text/plain",
                "text": "Embedded resource text."}}},
            {"role": "user", "content": {"type": "text",
                                         "text": "Please summarise the resource above."}}
        ]})
    );
    let image = client
        .get_prompt("image_prompt", BTreeMap::new())
        .await
        .expect("image_prompt");
    assert_eq!(
        to_json(&image),
        json!({"messages": [
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "Describe the image above."}}
        ]})
    );

    // Completion through `completable` and through the template's `complete` callbacks.
    let names = client
        .complete(
            CompletionReference::Prompt {
                name: "greeting".into(),
            },
            "name",
            "al",
            BTreeMap::new(),
        )
        .await
        .expect("complete a prompt argument");
    assert_eq!(
        to_json(&names),
        json!({"completion": {"values": ["Alan", "Alonzo"], "total": 2, "hasMore": false}})
    );
    let ids = client
        .complete(
            CompletionReference::ResourceTemplate {
                uri: "test://template/{id}/data".into(),
            },
            "id",
            "4",
            BTreeMap::new(),
        )
        .await
        .expect("complete a template variable");
    assert_eq!(
        to_json(&ids),
        json!({"completion": {"values": ["42"], "total": 1, "hasMore": false}})
    );
    server.wire.assert_valid();

    // Bad input. The SDK words its errors as `MCP error <code>: …` on the wire too.
    let e = rpc(client.read_resource("test://nope").await.unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            codes::INVALID_PARAMS,
            "MCP error -32602: Resource test://nope not found"
        )
    );
    // A URI the template does not match is just as unknown.
    let e = rpc(client
        .read_resource("test://template/42")
        .await
        .unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            codes::INVALID_PARAMS,
            "MCP error -32602: Resource test://template/42 not found"
        )
    );
    let e = rpc(client
        .get_prompt("greeting", args(&[("style", "formal")]))
        .await
        .unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            codes::INVALID_PARAMS,
            "MCP error -32602: Invalid arguments for prompt greeting: \
             Invalid input: expected string, received undefined at name"
        )
    );
    let e = rpc(client
        .get_prompt("nope", BTreeMap::new())
        .await
        .unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            codes::INVALID_PARAMS,
            "MCP error -32602: Prompt nope not found"
        )
    );
    let e = rpc(client
        .complete(
            CompletionReference::Prompt {
                name: "nope".into(),
            },
            "name",
            "",
            BTreeMap::new(),
        )
        .await
        .unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            codes::INVALID_PARAMS,
            "MCP error -32602: Prompt nope not found"
        )
    );
    let e = rpc(client
        .complete(
            CompletionReference::ResourceTemplate {
                uri: "test://other/{id}".into(),
            },
            "id",
            "",
            BTreeMap::new(),
        )
        .await
        .unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            codes::INVALID_PARAMS,
            "MCP error -32602: Resource template test://other/{id} not found"
        )
    );
    // An argument that is not completable: an empty completion.
    let none = client
        .complete(
            CompletionReference::Prompt {
                name: "greeting".into(),
            },
            "style",
            "f",
            BTreeMap::new(),
        )
        .await
        .expect("complete an argument without suggestions");
    assert!(none.completion.values.is_empty(), "{none:?}");
    server.wire.assert_valid();
    server.finish().await;
}

#[tokio::test]
async fn resources_prompts_and_completion_with_the_typescript_server_over_2025_11_25() {
    resources_prompts_and_completion(ProtocolMode::Auto).await;
}

#[tokio::test]
async fn resources_prompts_and_completion_with_the_typescript_server_over_2024_11_05() {
    resources_prompts_and_completion(ProtocolMode::Handshake(ProtocolVersion::V2024_11_05)).await;
}

/// `resources/subscribe`, an update the server sends (the `touch` tool triggers it)
/// delivered to `on_notification`, then `resources/unsubscribe` and nothing.
#[tokio::test]
async fn resource_subscriptions_with_the_typescript_server() {
    let Some(dir) = node_dir() else { return };
    let server = Features::start(&dir, ClientOptions::new("oxmcp-interop", "1.0.0")).await;
    let client = &server.client;
    let resources = client.server().capabilities.resources.clone().unwrap();
    assert_eq!(
        (resources.subscribe, resources.list_changed),
        (Some(true), Some(true))
    );
    client
        .subscribe_resource("test://watched")
        .await
        .expect("resources/subscribe");
    let (is_error, text) = server.call("touch", json!({"uri": "test://watched"})).await;
    assert!(!is_error);
    assert_eq!(
        text,
        "touched test://watched, 1 subscription notice(s) sent"
    );
    // Written before the tool's result; notifications are handed over as they are read.
    assert_eq!(
        server.inbox.take("notifications/resources/updated"),
        [json!({"uri": "test://watched"})]
    );
    client
        .unsubscribe_resource("test://watched")
        .await
        .expect("resources/unsubscribe");
    let (_, text) = server.call("touch", json!({"uri": "test://watched"})).await;
    assert_eq!(
        text,
        "touched test://watched, 0 subscription notice(s) sent"
    );
    assert!(
        server
            .inbox
            .take("notifications/resources/updated")
            .is_empty()
    );
    assert_eq!(server.sent("resources/subscribe").len(), 1);
    assert_eq!(server.sent("resources/unsubscribe").len(), 1);
    server.wire.assert_valid();
    server.finish().await;
}

/// The log lines `log_messages` sends at `levels`, as `notifications/message` params.
fn log_lines(levels: &[&str]) -> Vec<Value> {
    levels
        .iter()
        .map(|l| {
            json!({"level": l, "logger": "typescript-features", "data": format!("{l} message")})
        })
        .collect()
}

/// `ClientOptions::log_level` sends `logging/setLevel` after the handshake; the SDK drops
/// the messages below it.
#[tokio::test]
async fn logging_with_the_typescript_server() {
    let Some(dir) = node_dir() else { return };
    let options = ClientOptions::new("oxmcp-interop", "1.0.0").log_level(LoggingLevel::Warning);
    let server = Features::start(&dir, options).await;
    assert!(server.client.server().capabilities.logging.is_some());
    let (_, text) = server.call("log_messages", json!({})).await;
    assert_eq!(text, "logged");
    assert_eq!(
        server.inbox.take("notifications/message"),
        log_lines(&["warning", "error"])
    );
    let set = server.sent("logging/setLevel");
    assert_eq!(set.len(), 1);
    assert_eq!(set[0]["params"], json!({"level": "warning"}));

    server
        .client
        .set_logging_level(LoggingLevel::Error)
        .await
        .expect("logging/setLevel");
    server.call("log_messages", json!({})).await;
    assert_eq!(
        server.inbox.take("notifications/message"),
        log_lines(&["error"])
    );
    server
        .client
        .set_logging_level(LoggingLevel::Debug)
        .await
        .expect("logging/setLevel");
    server.call("log_messages", json!({})).await;
    assert_eq!(
        server.inbox.take("notifications/message"),
        log_lines(&["debug", "info", "warning", "error"])
    );
    server.wire.assert_valid();
    server.finish().await;
}

/// Sampling, elicitation (accept, decline, SEP-1034 defaults) and roots: the server asks
/// with requests, our handlers answer, the tool results echo the answers.
#[tokio::test]
async fn the_typescript_server_asks_the_client() {
    let Some(dir) = node_dir() else { return };
    let asked = Asked::default();
    let server = Features::start(
        &dir,
        capable(ClientOptions::new("oxmcp-interop", "1.0.0"), &asked),
    )
    .await;

    let (is_error, text) = server
        .call("ask_model", json!({"prompt": "What is 2+2?"}))
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        text,
        r#"model oxmcp-test-model said "echo: What is 2+2?" (stopReason endTurn)"#
    );
    let [(kind, params)]: [_; 1] = asked.take().try_into().unwrap();
    assert_eq!(kind, "sampling");
    assert_eq!(
        params,
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
               "systemPrompt": "Answer briefly.", "maxTokens": 64})
    );

    let (is_error, text) = server
        .call("ask_user", json!({"message": "Who are you?"}))
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        text,
        r#"accept: {"username":"ada","email":"ada@example.com"}"#
    );
    let [(kind, params)]: [_; 1] = asked.take().try_into().unwrap();
    assert_eq!(kind, "elicitation");
    assert_eq!(
        params,
        json!({"mode": "form", "message": "Who are you?", "requestedSchema": {
            "type": "object",
            "properties": {"username": {"type": "string", "description": "Your user name"},
                           "email": {"type": "string", "description": "Your email address"}},
            "required": ["username", "email"]}})
    );
    let (is_error, text) = server
        .call("ask_user", json!({"message": "decline, please"}))
        .await;
    assert_eq!((is_error, text.as_str()), (false, "decline"));

    // SEP-1034: the user only gave a name; the client fills in the other defaults.
    let (is_error, text) = server.call("ask_with_defaults", json!({})).await;
    assert!(!is_error, "{text}");
    let (head, content) = text.split_once(", content=").unwrap();
    assert_eq!(head, "request: action=accept");
    assert_eq!(
        serde_json::from_str::<Value>(content).unwrap(),
        json!({"name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": true})
    );
    asked.take();

    let (is_error, text) = server.call("list_client_roots", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!([{"uri": "file:///workspace", "name": "workspace"},
               {"uri": "file:///tmp/scratch", "name": null}])
    );
    assert_eq!(asked.take().len(), 1);
    server
        .client
        .notify_roots_changed()
        .await
        .expect("roots/list_changed");

    assert_eq!(
        server.server_requests(),
        [
            "sampling/createMessage",
            "elicitation/create",
            "elicitation/create",
            "elicitation/create",
            "roots/list"
        ]
    );
    assert!(server.answers().iter().all(|a| a.get("result").is_some()));
    server.wire.assert_valid();

    // Bad input: an answer that breaks the requested schema; the SDK checks it (ajv) and the
    // tool fails.
    let (is_error, text) = server.call("ask_user", json!({"message": "sloppy"})).await;
    assert!(is_error, "{text}");
    assert!(
        text.starts_with(
            "MCP error -32602: Elicitation response content does not match requested schema"
        ),
        "{text}"
    );
    server.wire.assert_valid();
    server.finish().await;
}

/// A client that refuses to sample, and one that declared no capabilities at all.
#[tokio::test]
async fn a_client_that_cannot_answer_the_typescript_server() {
    let Some(dir) = node_dir() else { return };
    let refusing = ClientOptions::new("oxmcp-interop", "1.0.0").sampling(|_p, _c| async move {
        Err::<CreateMessageResult, _>(ErrorObject::new(-1, "User rejected sampling"))
    });
    let server = Features::start(&dir, refusing).await;
    let (is_error, text) = server.call("ask_model", json!({"prompt": "hi"})).await;
    assert_eq!(
        (is_error, text.as_str()),
        (true, "MCP error -1: User rejected sampling")
    );
    let [refusal]: [_; 1] = server.answers().try_into().unwrap();
    assert_eq!(
        refusal["error"],
        json!({"code": -1, "message": "User rejected sampling"})
    );
    server.wire.assert_valid();
    server.finish().await;

    // No capabilities. The SDK checks elicitation before asking; sampling and roots it asks
    // anyway, and our client answers -32601 for a feature it did not declare.
    let server = Features::start(&dir, ClientOptions::new("oxmcp-interop", "1.0.0")).await;
    let (is_error, text) = server.call("ask_user", json!({"message": "hi"})).await;
    assert_eq!(
        (is_error, text.as_str()),
        (true, "Client does not support form elicitation.")
    );
    let (is_error, text) = server.call("ask_model", json!({"prompt": "hi"})).await;
    assert_eq!(
        (is_error, text.as_str()),
        (
            true,
            "MCP error -32601: Method not found: sampling/createMessage"
        )
    );
    let (is_error, text) = server.call("list_client_roots", json!({})).await;
    assert_eq!(
        (is_error, text.as_str()),
        (true, "MCP error -32601: Method not found: roots/list")
    );
    assert_eq!(
        server.server_requests(),
        ["sampling/createMessage", "roots/list"]
    );
    for answer in server.answers() {
        assert_eq!(answer["error"]["code"], codes::METHOD_NOT_FOUND, "{answer}");
    }
    server.wire.assert_valid();
    server.finish().await;
}

// --- The SDK's client against oxmcp's conformance server ------------------------------------

/// Runs `node feature_client.mjs SERVER...`.
async fn run_feature_client(dir: &Path, server: &[&Path]) -> std::process::Output {
    let mut command = tokio::process::Command::new("node");
    command
        .arg(dir.join("feature_client.mjs"))
        .args(server)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    // A guard against a hang, not a timed assertion: the script takes about a second.
    tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("feature_client.mjs finished within 60 s")
        .expect("run node feature_client.mjs (is node on PATH?)")
}

fn describe(output: &std::process::Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test]
async fn typescript_client_drives_the_conformance_server_over_2025_11_25() {
    let Some(dir) = node_dir() else { return };
    let conformance = common::example_bin("conformance_server");
    let output = run_feature_client(&dir, &[&conformance]).await;
    assert!(
        output.status.success(),
        "feature_client.mjs failed against conformance_server\n{}",
        describe(&output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("ok: connected on 2025-11-25\n"),
        "{}",
        describe(&output)
    );
    assert!(
        stdout.ends_with("all checks passed\n"),
        "{}",
        describe(&output)
    );
}

/// The script's checks are real: pointed at the SDK's own feature server, it must fail, and
/// say why.
#[tokio::test]
async fn typescript_feature_client_rejects_a_server_that_is_not_the_conformance_server() {
    let Some(dir) = node_dir() else { return };
    let node = Path::new("node");
    let server_mjs = dir.join("feature_server.mjs");
    let output = run_feature_client(&dir, &[node, &server_mjs]).await;
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("MISMATCH: serverInfo.name") && stderr.contains("'typescript-features'"),
        "{}",
        describe(&output)
    );
}
