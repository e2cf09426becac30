//! Interop with the official Python MCP SDK (`mcp` 2.3.0, pinned in
//! `tests/interop/python/requirements.txt`) over stdio, for everything beyond tools:
//! resources, resource templates, subscriptions, prompts, completion, logging, sampling,
//! elicitation (with SEP-1034 defaults) and roots, in both directions and in both eras.
//!
//! - oxmcp's client drives the SDK's `MCPServer` in `tests/interop/python/feature_server.py`,
//!   in auto mode (which must settle on 2026-07-28: the server asks for input with
//!   `InputRequiredResult` and the client retries) and in a forced 2025-11-25 handshake (the
//!   server sends `sampling/createMessage`, `elicitation/create` and `roots/list` requests).
//!   The server's tool results echo what the client answered, and every happy path has a
//!   bad-input neighbour. Every frame both sides sent is validated against the official schema
//!   of the revision in use.
//! - the SDK's own client (`tests/interop/python/feature_client.py`) drives oxmcp's
//!   `conformance_server` example in auto mode (2026-07-28) and legacy mode (2025-11-25),
//!   with its own sampling and elicitation callbacks, and asserts every result exactly. The
//!   fixture has no tool that asks for roots, so roots are covered in the first direction only.
//!
//! The peers come from `make interop-deps`, which exports `OXMCP_INTEROP_PYTHON` (the venv's
//! python). Without it these tests are skipped, unless `OXMCP_REQUIRE_INTEROP=1`.

mod common;

use std::{collections::BTreeMap, path::Path, process::Stdio, time::Duration};

use common::peers::{Asked, Inbox, capable, python_script as script, venv_python};
use common::{Side, Wire};
use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode},
    jsonrpc::{ErrorObject, codes},
    protocol::{CompletionReference, CreateMessageResult, LoggingLevel, SubscriptionFilter},
    session::RequestOptions,
    transport::{
        Transport,
        child::{ChildCommand, StderrHandle},
        tap::tap,
    },
};
use serde::Serialize;
use serde_json::{Value, json};

/// What `feature_server.py` reports as its version: the SDK release actually running.
const SERVER_VERSION: &str = "mcp-2.3.0";

/// The 1×1 red PNG both `feature_server.py` and the conformance fixture serve.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// The two eras these tests cover against the Python server.
const AUTO: ProtocolMode = ProtocolMode::Auto;
const HANDSHAKE: ProtocolMode = ProtocolMode::Handshake(ProtocolVersion::V2025_11_25);

/// oxmcp's client connected to `feature_server.py`, every frame recorded.
struct Features {
    client: Client,
    wire: Wire,
    stderr: StderrHandle,
    inbox: Inbox,
}

impl Features {
    /// Connects with `options` (their protocol mode included).
    async fn start(python: &Path, options: ClientOptions) -> Features {
        let child = ChildCommand::new(python)
            .arg(script("feature_server.py"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .spawn()
            .await
            .expect("start the Python feature server");
        let stderr = child.stderr();
        let wire = Wire::new();
        let link = tap(child.into_link(), wire.observer(Side::Client));
        let inbox = Inbox::default();
        let mode = options.protocol.clone();
        let client = Client::connect(link, inbox.install(options))
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "connect to the Python feature server in {mode:?}: {e}\n{}",
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
            ("python-features", SERVER_VERSION)
        );
        let expected = match mode {
            ProtocolMode::Handshake(v) => v,
            _ => ProtocolVersion::V2026_07_28,
        };
        assert_eq!(features.client.protocol_version(), expected);
        features
    }

    fn stateless(&self) -> bool {
        self.client.protocol_version().is_stateless()
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

    /// The results the server sent that asked for input (2026-07-28).
    fn input_required(&self) -> Vec<Value> {
        self.wire
            .sent_by(Side::Server)
            .into_iter()
            .filter(|m| m["result"]["resultType"] == "input_required")
            .map(|m| m["result"].clone())
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

    /// Closes the connection and checks the server did not crash. The SDK logs a traceback
    /// for a prompt that fails to render (it answers with an error); nothing else may.
    async fn finish(self) {
        self.client.close().await;
        let stderr = self.stderr.tail(1 << 16);
        for traceback in stderr.split("Traceback (most recent call last):").skip(1) {
            // The exception line is the first unindented one after the frames.
            let raised = traceback
                .lines()
                .skip(1)
                .find(|l| !l.is_empty() && !l.starts_with(' '))
                .unwrap_or_default();
            assert!(
                raised.starts_with("ValueError: Unknown prompt: ")
                    || raised.starts_with("ValueError: Missing required arguments: "),
                "the Python server crashed:\n{stderr}"
            );
        }
    }
}

/// A result as JSON, without the keys only 2026-07-28 adds (`_meta` with `serverInfo`,
/// `ttlMs`, `cacheScope`, `resultType`), so both eras compare against the same value.
fn plain(result: impl Serialize) -> Value {
    let mut value = serde_json::to_value(result).unwrap();
    if let Value::Object(map) = &mut value {
        for key in ["_meta", "ttlMs", "cacheScope", "resultType"] {
            map.remove(key);
        }
    }
    value
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

/// Resources, templates, prompts and completion: the same answers in both eras, except the
/// errors, which the SDK words per era.
async fn resources_prompts_and_completion(mode: ProtocolMode) {
    let Some(python) = venv_python() else { return };
    let server = Features::start(
        &python,
        ClientOptions::new("oxmcp-interop", "1.0.0").protocol(mode),
    )
    .await;
    let client = &server.client;
    let caps = &client.server().capabilities;
    assert!(caps.resources.is_some() && caps.prompts.is_some() && caps.completions.is_some());

    // resources/list, exactly as the SDK lists the decorated functions.
    let resources = client.list_all_resources().await.expect("resources/list");
    assert_eq!(
        plain(&resources),
        json!([
            {"uri": "test://static-text", "name": "static-text",
             "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary",
             "description": "A static binary resource (a PNG)", "mimeType": "image/png"},
            {"uri": "test://watched", "name": "watched",
             "description": "A resource clients may subscribe to", "mimeType": "text/plain"}
        ])
    );

    // A text resource and a binary one (bytes come back as a base64 blob).
    let text = client
        .read_resource("test://static-text")
        .await
        .expect("read text");
    assert_eq!(
        plain(&text),
        json!({"contents": [{"uri": "test://static-text", "mimeType": "text/plain",
                             "text": "Static text from the Python SDK."}]})
    );
    if server.stateless() {
        // 2026-07-28 results carry the revision's own members.
        assert_eq!(text.extra["resultType"], "complete");
        assert_eq!(text.extra["ttlMs"], 0);
        assert_eq!(
            text.meta.as_ref().unwrap()["io.modelcontextprotocol/serverInfo"]["name"],
            "python-features"
        );
    }
    let blob = client
        .read_resource("test://static-binary")
        .await
        .expect("read blob");
    assert_eq!(
        plain(&blob),
        json!({"contents": [{"uri": "test://static-binary", "mimeType": "image/png",
                             "blob": PNG}]})
    );

    // The template, listed and read through.
    let templates = client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    assert_eq!(
        plain(&templates),
        json!([{"uriTemplate": "test://template/{id}/data", "name": "template",
                "description": "A templated resource", "mimeType": "application/json"}])
    );
    let item = client
        .read_resource("test://template/42/data")
        .await
        .expect("read through the template");
    assert_eq!(
        plain(&item),
        json!({"contents": [{"uri": "test://template/42/data", "mimeType": "application/json",
                             "text": r#"{"id": "42", "source": "python"}"#}]})
    );

    // Prompts: listed with their arguments, rendered with arguments, an embedded resource and
    // an image.
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    assert_eq!(
        plain(&prompts),
        json!([
            {"name": "simple_prompt", "description": "A prompt without arguments", "arguments": []},
            {"name": "greeting",
             "description": "A greeting with a required name and an optional style",
             "arguments": [{"name": "name", "required": true},
                           {"name": "style", "required": false}]},
            {"name": "embedded_resource", "description": "A prompt that embeds a resource",
             "arguments": [{"name": "resourceUri", "required": true}]},
            {"name": "image_prompt", "description": "A prompt with an image", "arguments": []}
        ])
    );
    let simple = client
        .get_prompt("simple_prompt", BTreeMap::new())
        .await
        .expect("simple_prompt");
    assert_eq!(
        plain(&simple)["messages"],
        json!([{"role": "user", "content": {"type": "text",
                                            "text": "A simple prompt from the Python SDK."}}])
    );
    let greeting = client
        .get_prompt("greeting", args(&[("name", "Ada")]))
        .await
        .expect("greeting");
    assert_eq!(
        plain(&greeting),
        json!({"description": "A greeting with a required name and an optional style",
               "messages": [{"role": "user", "content": {"type": "text",
                             "text": "Write a friendly greeting for Ada."}}]})
    );
    let greeting = client
        .get_prompt("greeting", args(&[("name", "Ada"), ("style", "formal")]))
        .await
        .expect("greeting with both arguments");
    assert_eq!(
        greeting.messages[0].content,
        oxmcp::protocol::ContentBlock::text("Write a formal greeting for Ada.")
    );
    let embedded = client
        .get_prompt(
            "embedded_resource",
            args(&[("resourceUri", "test://static-text")]),
        )
        .await
        .expect("embedded_resource");
    assert_eq!(
        plain(&embedded)["messages"],
        json!([
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "test://static-text", "mimeType": "text/plain",
                "text": "Embedded resource text."}}},
            {"role": "user", "content": {"type": "text",
                                         "text": "Please summarise the resource above."}}
        ])
    );
    let image = client
        .get_prompt("image_prompt", BTreeMap::new())
        .await
        .expect("image_prompt");
    assert_eq!(
        plain(&image)["messages"],
        json!([
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "Describe the image above."}}
        ])
    );

    // Completion of a prompt argument and of a template variable.
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
        plain(&names),
        json!({"completion": {"values": ["Alan", "Alonzo"], "total": 2, "hasMore": false}})
    );
    let ids = client
        .complete(
            CompletionReference::ResourceTemplate {
                uri: "test://template/{id}/data".into(),
            },
            "id",
            "4",
            args(&[("unused", "context")]),
        )
        .await
        .expect("complete a template variable");
    assert_eq!(
        plain(&ids),
        json!({"completion": {"values": ["42"], "total": 1, "hasMore": false}})
    );
    // The context went over the wire as the schema wants it.
    let sent = server.sent("completion/complete");
    assert_eq!(
        sent[1]["params"]["context"],
        json!({"arguments": {"unused": "context"}})
    );

    // Every frame so far, both ways, against the official schema.
    server.wire.assert_valid();

    // The bad-input neighbours. An unknown resource: the SDK answers -32602 in both eras
    // (2025-11-25 asks for -32002, Resource not found; 2026-07-28 moved it to -32602).
    let e = rpc(client.read_resource("test://nope").await.unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str(), e.data),
        (
            codes::INVALID_PARAMS,
            "Unknown resource: test://nope",
            Some(json!({"uri": "test://nope"}))
        )
    );
    // A URI the template does not match is just as unknown.
    let e = rpc(client
        .read_resource("test://template/42")
        .await
        .unwrap_err());
    assert_eq!(e.code, codes::INVALID_PARAMS, "{e:?}");

    // A missing required prompt argument and an unknown prompt. MCPServer raises ValueError
    // for both, which its handshake-era loop answers with code 0 and the message, and its
    // 2026-07-28 path with a generic -32603.
    let missing = rpc(client
        .get_prompt("greeting", args(&[("style", "formal")]))
        .await
        .unwrap_err());
    let unknown = rpc(client
        .get_prompt("nope", BTreeMap::new())
        .await
        .unwrap_err());
    if server.stateless() {
        for e in [&missing, &unknown] {
            assert_eq!(
                (e.code, e.message.as_str()),
                (codes::INTERNAL_ERROR, "Internal server error")
            );
        }
    } else {
        assert_eq!(
            (missing.code, missing.message.as_str()),
            (0, "Missing required arguments: {'name'}")
        );
        assert_eq!(
            (unknown.code, unknown.message.as_str()),
            (0, "Unknown prompt: nope")
        );
    }

    // Completion against an unknown prompt and an unknown template.
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
        (codes::INVALID_PARAMS, "Unknown prompt: nope")
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
            "Unknown resource template: test://other/{id}"
        )
    );
    // An argument the completer does not know: an empty completion, not an error.
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
async fn resources_prompts_and_completion_with_the_python_server_over_2026_07_28() {
    resources_prompts_and_completion(AUTO).await;
}

#[tokio::test]
async fn resources_prompts_and_completion_with_the_python_server_over_2025_11_25() {
    resources_prompts_and_completion(HANDSHAKE).await;
}

/// Handshake era: `resources/subscribe`, then an update the server sends (the `touch` tool
/// triggers it), delivered to `on_notification`; after `resources/unsubscribe` nothing.
#[tokio::test]
async fn resource_subscriptions_with_the_python_server_over_2025_11_25() {
    let Some(python) = venv_python() else { return };
    let options = ClientOptions::new("oxmcp-interop", "1.0.0").protocol(HANDSHAKE);
    let server = Features::start(&python, options).await;
    let client = &server.client;
    let resources = client.server().capabilities.resources.clone().unwrap();
    assert_eq!(resources.subscribe, Some(true));

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
    // The notice is written before the tool's result, and notifications are handed to the
    // callback as they are read, so it is there already.
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
    assert_eq!(
        server.inbox.take("notifications/resources/updated"),
        [] as [Value; 0]
    );

    // Both answers were the empty result.
    let answers: Vec<Value> = server
        .wire
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| {
            let id = &m["id"];
            server
                .sent("resources/subscribe")
                .iter()
                .chain(server.sent("resources/unsubscribe").iter())
                .any(|r| &r["id"] == id)
        })
        .map(|m| m["result"].clone())
        .collect();
    assert_eq!(answers, [json!({}), json!({})]);
    server.wire.assert_valid();
    server.finish().await;
}

/// 2026-07-28 has no `resources/subscribe`: updates come on a `subscriptions/listen` stream.
#[tokio::test]
async fn resource_updates_on_a_listen_stream_with_the_python_server_over_2026_07_28() {
    let Some(python) = venv_python() else { return };
    let server = Features::start(&python, ClientOptions::new("oxmcp-interop", "1.0.0")).await;
    let client = &server.client;
    let filter: SubscriptionFilter =
        serde_json::from_value(json!({"resourceSubscriptions": ["test://watched"]})).unwrap();
    let mut stream = client.listen(filter).await.expect("subscriptions/listen");
    assert_eq!(
        serde_json::to_value(stream.acknowledged()).unwrap(),
        json!({"resourceSubscriptions": ["test://watched"]})
    );
    let (_, text) = server.call("touch", json!({"uri": "test://watched"})).await;
    assert_eq!(
        text,
        "touched test://watched, 0 subscription notice(s) sent"
    );
    // A guard against a hang, not a timed assertion.
    let update = tokio::time::timeout(Duration::from_secs(20), stream.next())
        .await
        .expect("an update on the listen stream")
        .expect("the stream is open");
    assert_eq!(update.method, "notifications/resources/updated");
    assert_eq!(update.params.as_ref().unwrap()["uri"], "test://watched");
    // It went to the stream, not to the connection-wide callback.
    assert!(
        server
            .inbox
            .take("notifications/resources/updated")
            .is_empty()
    );
    drop(stream);
    server.wire.assert_valid();

    // The handshake-era method is gone: sent anyway, the SDK does not route it.
    let e = rpc(client
        .request(
            "resources/subscribe",
            Some(json!({"uri": "test://watched"})),
            RequestOptions::default(),
        )
        .await
        .unwrap_err());
    assert_eq!(
        (e.code, e.message.as_str(), e.data),
        (
            codes::METHOD_NOT_FOUND,
            "Method not found",
            Some(json!("resources/subscribe"))
        )
    );
    server.finish().await;
}

/// `Client::subscribe_resource` and `unsubscribe_resource` refuse the stateless era locally,
/// as `set_logging_level` does (and `listen` the handshake era), rather than put a method
/// 2026-07-28 does not define on the wire.
#[tokio::test]
async fn resources_subscribe_is_refused_locally_over_2026_07_28() {
    let Some(python) = venv_python() else { return };
    let server = Features::start(&python, ClientOptions::new("oxmcp-interop", "1.0.0")).await;
    let err = server
        .client
        .subscribe_resource("test://watched")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    let err = server
        .client
        .unsubscribe_resource("test://watched")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    server.wire.assert_valid();
    server.finish().await;
}

/// The log lines `log_messages` sends at `levels`, as `notifications/message` params.
fn log_lines(levels: &[&str]) -> Vec<Value> {
    levels
        .iter()
        .map(|l| json!({"level": l, "logger": "python-features", "data": format!("{l} message")}))
        .collect()
}

/// Handshake era: `ClientOptions::log_level` sends `logging/setLevel` right after the
/// handshake; the server logs at that level and above during a tool call.
#[tokio::test]
async fn logging_with_the_python_server_over_2025_11_25() {
    let Some(python) = venv_python() else { return };
    let options = ClientOptions::new("oxmcp-interop", "1.0.0")
        .protocol(HANDSHAKE)
        .log_level(LoggingLevel::Warning);
    let server = Features::start(&python, options).await;
    assert!(server.client.server().capabilities.logging.is_some());
    let (_, text) = server.call("log_messages", json!({})).await;
    assert_eq!(text, "logged (setLevel: warning)");
    assert_eq!(
        server.inbox.take("notifications/message"),
        log_lines(&["warning", "error"])
    );
    let set = server.sent("logging/setLevel");
    assert_eq!(set.len(), 1);
    assert_eq!(set[0]["params"], json!({"level": "warning"}));

    // Lowered at runtime: everything.
    server
        .client
        .set_logging_level(LoggingLevel::Debug)
        .await
        .expect("logging/setLevel");
    let (_, text) = server.call("log_messages", json!({})).await;
    assert_eq!(text, "logged (setLevel: debug)");
    assert_eq!(
        server.inbox.take("notifications/message"),
        log_lines(&["debug", "info", "warning", "error"])
    );
    server.wire.assert_valid();
    server.finish().await;
}

/// 2026-07-28: no `logging/setLevel`; the level rides each request's `_meta` and the SDK
/// sends only what the request opted in to.
#[tokio::test]
async fn logging_with_the_python_server_over_2026_07_28() {
    let Some(python) = venv_python() else { return };
    let options = ClientOptions::new("oxmcp-interop", "1.0.0").log_level(LoggingLevel::Warning);
    let server = Features::start(&python, options).await;
    let (_, text) = server.call("log_messages", json!({})).await;
    assert_eq!(text, "logged (setLevel: none)");
    assert_eq!(
        server.inbox.take("notifications/message"),
        log_lines(&["warning", "error"])
    );
    assert!(server.sent("logging/setLevel").is_empty());
    let call = &server.sent("tools/call")[0];
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/logLevel"],
        "warning"
    );
    // The client refuses to send the removed method.
    let err = server
        .client
        .set_logging_level(LoggingLevel::Debug)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    server.wire.assert_valid();
    // Sent anyway, the server does not know it.
    let e = rpc(server
        .client
        .request(
            "logging/setLevel",
            Some(json!({"level": "debug"})),
            RequestOptions::default(),
        )
        .await
        .unwrap_err());
    assert_eq!(e.code, codes::METHOD_NOT_FOUND);
    server.finish().await;

    // A client that asked for no level gets no log messages at all.
    let server = Features::start(&python, ClientOptions::new("oxmcp-interop", "1.0.0")).await;
    let (_, text) = server.call("log_messages", json!({})).await;
    assert_eq!(text, "logged (setLevel: none)");
    assert!(server.inbox.take("notifications/message").is_empty());
    server.wire.assert_valid();
    server.finish().await;
}

/// Sampling, elicitation (accept, decline, SEP-1034 defaults) and roots: the server asks,
/// our handlers answer, the tool results echo the answers. In 2026-07-28 the questions come
/// as `InputRequiredResult`s and the client retries; in the handshake era as requests.
async fn server_asks_the_client(mode: ProtocolMode) {
    let Some(python) = venv_python() else { return };
    let asked = Asked::default();
    let options = capable(
        ClientOptions::new("oxmcp-interop", "1.0.0").protocol(mode),
        &asked,
    );
    let server = Features::start(&python, options).await;

    // Sampling.
    let (is_error, text) = server
        .call("ask_model", json!({"prompt": "What is 2+2?"}))
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        text,
        "model oxmcp-test-model said 'echo: What is 2+2?' (stopReason endTurn)"
    );
    let [(kind, params)]: [_; 1] = asked.take().try_into().unwrap();
    assert_eq!(kind, "sampling");
    assert_eq!(
        params,
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
               "systemPrompt": "Answer briefly.", "maxTokens": 64})
    );

    // Elicitation, accepted and declined.
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
    let mut schema = json!({
        "type": "object",
        "properties": {"username": {"title": "Username", "type": "string"},
                       "email": {"title": "Email", "type": "string"}},
        "required": ["username", "email"]
    });
    if !server.stateless() {
        // The handshake-era request keeps pydantic's title and docstring; the 2026-07-28
        // model of the request drops them.
        schema["title"] = json!("Contact");
        schema["description"] = json!("What `ask_user` asks for.");
    }
    assert_eq!(
        params,
        json!({"mode": "form", "message": "Who are you?", "requestedSchema": schema})
    );
    let (is_error, text) = server
        .call("ask_user", json!({"message": "decline, please"}))
        .await;
    assert_eq!((is_error, text.as_str()), (false, "decline"));

    // SEP-1034: the user only gave a name; the client fills every other default in, and the
    // server (which echoes the raw answer) sees a complete form.
    let (is_error, text) = server.call("ask_with_defaults", json!({})).await;
    assert!(!is_error, "{text}");
    let round = if server.stateless() {
        "retry after round-1"
    } else {
        "request"
    };
    let (head, content) = text.split_once(", content=").unwrap();
    assert_eq!(head, format!("{round}: action=accept"));
    assert_eq!(
        serde_json::from_str::<Value>(content).unwrap(),
        json!({"name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": true})
    );
    asked.take();

    // Roots.
    let (is_error, text) = server.call("list_client_roots", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!([{"uri": "file:///workspace", "name": "workspace"},
               {"uri": "file:///tmp/scratch", "name": null}])
    );
    assert_eq!(asked.take().len(), 1);
    // Handshake era: the client may say its roots changed; the server takes it quietly.
    server
        .client
        .notify_roots_changed()
        .await
        .expect("roots/list_changed");

    // Three questions in one call: in 2026-07-28 they come in one round, answered together.
    let (is_error, text) = server
        .call(
            "ask_everything",
            json!({"prompt": "Hello?", "message": "Who are you?"}),
        )
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(text, "model said 'echo: Hello?'; user ada; 2 root(s)");
    let mut kinds: Vec<&str> = asked.take().into_iter().map(|(kind, _)| kind).collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["elicitation", "roots", "sampling"]);

    // How the questions travelled.
    let asks = [
        "sampling/createMessage",
        "elicitation/create",
        "elicitation/create",
        "elicitation/create",
        "roots/list",
    ];
    if server.stateless() {
        assert!(
            server.server_requests().is_empty(),
            "{:?}",
            server.server_requests()
        );
        let mut rounds = server.input_required();
        let everything = rounds.pop().expect("the round of ask_everything");
        let methods: Vec<&str> = rounds
            .iter()
            .map(|r| {
                let requests = r["inputRequests"].as_object().unwrap();
                assert_eq!(requests.len(), 1, "{r}");
                assert!(r["requestState"].is_string(), "{r}");
                requests.values().next().unwrap()["method"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(methods, asks);
        let requests = everything["inputRequests"].as_object().unwrap();
        let mut methods: Vec<&str> = requests
            .values()
            .map(|r| r["method"].as_str().unwrap())
            .collect();
        methods.sort_unstable();
        assert_eq!(
            methods,
            ["elicitation/create", "roots/list", "sampling/createMessage"]
        );
        // The retry answered every key of that round.
        let retry = server.sent("tools/call").pop().unwrap();
        let answered = retry["params"]["inputResponses"].as_object().unwrap();
        let mut keys: Vec<&String> = answered.keys().collect();
        keys.sort_unstable();
        let mut asked_keys: Vec<&String> = requests.keys().collect();
        asked_keys.sort_unstable();
        assert_eq!(keys, asked_keys);
        // The hand-written round uses its own key; the retry answered it under that key and
        // echoed the (sealed) state.
        let defaults = &rounds[3];
        assert!(
            defaults["inputRequests"].get("prefs").is_some(),
            "{defaults}"
        );
        let retry = server
            .sent("tools/call")
            .into_iter()
            .find(|r| r["params"]["inputResponses"].get("prefs").is_some())
            .expect("the retry of ask_with_defaults");
        assert_eq!(retry["params"]["requestState"], defaults["requestState"]);
        assert_eq!(
            retry["params"]["inputResponses"]["prefs"]["content"]["age"],
            30
        );
        assert!(server.sent("notifications/roots/list_changed").is_empty());
    } else {
        let requests = server.server_requests();
        assert_eq!(requests[..5], asks);
        let mut everything = requests[5..].to_vec();
        everything.sort_unstable();
        assert_eq!(
            everything,
            ["elicitation/create", "roots/list", "sampling/createMessage"]
        );
        assert!(server.input_required().is_empty());
    }
    server.wire.assert_valid();

    // Bad input: an elicitation answer that breaks the requested schema is refused by the
    // SDK, and the tool fails.
    let (is_error, text) = server.call("ask_user", json!({"message": "sloppy"})).await;
    assert!(is_error, "{text}");
    assert!(
        text.starts_with("Error executing tool ask_user: Resolver '__main__:contact_question'")
            && text.contains("does not match the requested schema"),
        "{text}"
    );
    server.wire.assert_valid();
    server.finish().await;
}

#[tokio::test]
async fn the_python_server_asks_the_client_over_2026_07_28() {
    server_asks_the_client(AUTO).await;
}

#[tokio::test]
async fn the_python_server_asks_the_client_over_2025_11_25() {
    server_asks_the_client(HANDSHAKE).await;
}

/// A client that refuses to sample, and one that declared no capabilities at all.
async fn a_client_that_cannot_answer(mode: ProtocolMode) {
    let Some(python) = venv_python() else { return };
    let refusing = ClientOptions::new("oxmcp-interop", "1.0.0")
        .protocol(mode.clone())
        .sampling(|_p, _c| async move {
            Err::<CreateMessageResult, _>(ErrorObject::new(-1, "User rejected sampling"))
        });
    let server = Features::start(&python, refusing).await;
    let err = server
        .client
        .call_tool("ask_model", json!({"prompt": "hi"}))
        .await
        .unwrap_err();
    if server.stateless() {
        // The client could not answer the round: it gives up and says why.
        let Error::Protocol(why) = &err else {
            panic!("{err:?}")
        };
        assert!(
            why.contains("sampling/createMessage") && why.contains("User rejected sampling"),
            "{why}"
        );
    } else {
        // The refusal reached the server, which passes the error on as the call's error.
        let e = rpc(err);
        assert_eq!((e.code, e.message.as_str()), (-1, "User rejected sampling"));
        let refusal = server
            .wire
            .sent_by(Side::Client)
            .into_iter()
            .find(|m| m.get("error").is_some())
            .expect("the client's error answer to sampling/createMessage");
        assert_eq!(refusal["error"]["message"], "User rejected sampling");
    }
    server.wire.assert_valid();
    server.finish().await;

    // No capabilities: the SDK checks before asking, in both eras, with the 2026-07-28 code.
    let bare = ClientOptions::new("oxmcp-interop", "1.0.0").protocol(mode);
    let server = Features::start(&python, bare).await;
    for (tool, arguments, capability) in [
        (
            "ask_model",
            json!({"prompt": "hi"}),
            json!({"sampling": {}}),
        ),
        (
            "ask_user",
            json!({"message": "hi"}),
            json!({"elicitation": {"form": {}}}),
        ),
        ("list_client_roots", json!({}), json!({"roots": {}})),
    ] {
        let e = rpc(server.client.call_tool(tool, arguments).await.unwrap_err());
        assert_eq!(
            e.code,
            codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "{tool}: {e:?}"
        );
        assert_eq!(
            e.data,
            Some(json!({"requiredCapabilities": capability})),
            "{tool}"
        );
    }
    assert!(server.server_requests().is_empty());
    server.wire.assert_valid();
    server.finish().await;
}

#[tokio::test]
async fn a_client_that_cannot_answer_the_python_server_over_2026_07_28() {
    a_client_that_cannot_answer(AUTO).await;
}

#[tokio::test]
async fn a_client_that_cannot_answer_the_python_server_over_2025_11_25() {
    a_client_that_cannot_answer(HANDSHAKE).await;
}

// --- The SDK's client against oxmcp's conformance server ------------------------------------

/// Runs `feature_client.py MODE SERVER...`.
async fn run_feature_client(python: &Path, mode: &str, server: &[&Path]) -> std::process::Output {
    let mut command = tokio::process::Command::new(python);
    command
        .arg(script("feature_client.py"))
        .arg(mode)
        .args(server)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    // A guard against a hang, not a timed assertion: the script takes a few seconds.
    tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("feature_client.py finished within 60 s")
        .expect("run feature_client.py")
}

fn describe(output: &std::process::Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

async fn python_client_drives_the_conformance_server(mode: &str, version: &str) {
    let Some(python) = venv_python() else { return };
    let conformance = common::example_bin("conformance_server");
    let output = run_feature_client(&python, mode, &[&conformance]).await;
    assert!(
        output.status.success(),
        "feature_client.py {mode} failed against conformance_server\n{}",
        describe(&output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout
            .contains(&format!("ok: connected in mode {mode:?} on {version}\n").replace('"', "'")),
        "{}",
        describe(&output)
    );
    assert!(
        stdout.ends_with("all checks passed\n"),
        "{}",
        describe(&output)
    );
}

#[tokio::test]
async fn python_client_auto_mode_drives_the_conformance_server_over_2026_07_28() {
    python_client_drives_the_conformance_server("auto", "2026-07-28").await;
}

#[tokio::test]
async fn python_client_legacy_mode_drives_the_conformance_server_over_2025_11_25() {
    python_client_drives_the_conformance_server("legacy", "2025-11-25").await;
}

/// The script's checks are real: pointed at the SDK's own feature server, it must fail, and
/// say why.
#[tokio::test]
async fn python_feature_client_rejects_a_server_that_is_not_the_conformance_server() {
    let Some(python) = venv_python() else { return };
    let server_py = script("feature_server.py");
    let output = run_feature_client(&python, "legacy", &[&python, &server_py]).await;
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "MISMATCH: serverInfo.name: expected 'oxmcp-conformance', got 'python-features'"
        ),
        "{}",
        describe(&output)
    );
}
