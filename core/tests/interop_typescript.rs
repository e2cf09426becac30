//! Interop with the official TypeScript MCP SDK (`@modelcontextprotocol/sdk` 1.32.2, pinned
//! in `tests/interop/node/package.json` and its lockfile) over stdio, in both directions, with
//! real child processes:
//!
//! - oxmcp's client drives an SDK `McpServer` (`tests/interop/node/server.mjs`). The SDK
//!   speaks no stateless revision, so auto mode must take the `server/discover` refusal as a
//!   legacy server and fall back to `initialize` at 2025-11-25; forced handshakes at
//!   2025-11-25 and 2024-11-05 must be granted as asked, and a forced stateless mode must fail
//!   with the server's error. In every mode the same calls give the same answers: tools/list,
//!   a text result, a structured result, a failing tool, an unknown tool, bad arguments, a
//!   malformed request and an unknown method. Every frame both sides sent is validated
//!   against the official schema of the revision in use.
//! - the SDK's own client (`tests/interop/node/client.mjs`) drives oxmcp's example
//!   `weather_server`. The script records the wire, asserts what it received and exits
//!   non-zero on any mismatch.
//!
//! The peers come from `make interop-deps`, which runs `npm ci` and exports
//! `OXMCP_INTEROP_NODE_DIR` (the directory holding the scripts and their `node_modules`);
//! `node` is taken from `PATH`. Without the variable these tests are skipped, unless
//! `OXMCP_REQUIRE_INTEROP=1`.

mod common;

use std::{path::Path, process::Stdio, time::Duration};

use common::peers::node_dir;
use common::{Side, Wire};
use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode},
    jsonrpc::codes,
    session::RequestOptions,
    transport::{
        Transport,
        child::{ChildCommand, StderrHandle},
        tap::tap,
    },
};
use serde_json::{Value, json};

/// What `server.mjs` reports as its version: the SDK release actually installed, which
/// proves `npm ci` installed the pinned one.
const SERVER_VERSION: &str = "sdk-1.32.2";

/// oxmcp's client connected to the TypeScript server, with every frame recorded.
struct TypeScriptServer {
    client: Client,
    wire: Wire,
    stderr: StderrHandle,
}

fn server_command(dir: &Path) -> ChildCommand {
    ChildCommand::new("node").arg(dir.join("server.mjs"))
}

impl TypeScriptServer {
    async fn start(dir: &Path, mode: ProtocolMode) -> TypeScriptServer {
        match TypeScriptServer::try_start(dir, mode.clone()).await {
            Ok(server) => server,
            Err((e, stderr)) => {
                panic!("connect to the TypeScript server in {mode:?}: {e}\n{stderr}")
            }
        }
    }

    /// Connects, or returns the error with the server's stderr.
    async fn try_start(
        dir: &Path,
        mode: ProtocolMode,
    ) -> Result<TypeScriptServer, (Error, String)> {
        let child = server_command(dir)
            .spawn()
            .await
            .expect("start the TypeScript server");
        let stderr = child.stderr();
        let wire = Wire::new();
        let link = tap(child.into_link(), wire.observer(Side::Client));
        let options = ClientOptions::new("oxmcp-interop", "1.0.0").protocol(mode);
        match Client::connect(link, options).await {
            Ok(client) => Ok(TypeScriptServer {
                client,
                wire,
                stderr,
            }),
            Err(e) => Err((e, stderr.tail(4096))),
        }
    }

    /// Methods of the requests and notifications our client sent, in order.
    fn methods_sent(&self) -> Vec<String> {
        self.wire
            .sent_by(Side::Client)
            .iter()
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect()
    }

    /// Runs the calls every mode shares, checks every frame so far against the official
    /// schemas, then sends the malformed requests.
    async fn exercise(&self) {
        exercise(&self.client).await;
        self.wire.assert_valid();
        malformed_requests(&self.client).await;
    }

    /// Closes the connection and checks the server did not crash.
    async fn finish(self) {
        self.client.close().await;
        let stderr = self.stderr.tail(1 << 16);
        assert!(
            !stderr.contains("Error"),
            "the TypeScript server reported an error:\n{stderr}"
        );
    }
}

/// A zod `z.number().int()` as the SDK renders it: bounded to JavaScript's safe integers.
fn safe_integer() -> Value {
    json!({"type": "integer", "minimum": -9007199254740991_i64, "maximum": 9007199254740991_i64})
}

/// The same calls, with the same answers, whatever the revision.
async fn exercise(client: &Client) {
    // tools/list, with the schemas the SDK generated from zod (draft-07, `$schema` included).
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["greet", "add", "fail"]);
    let greet = &tools[0];
    assert_eq!(greet.description.as_deref(), Some("Greet someone by name."));
    assert_eq!(
        Value::Object(greet.input_schema.clone()),
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        })
    );
    assert_eq!(greet.output_schema, None);
    // `execution` (2025-11-25 tasks) is not modelled by oxmcp and must survive as an unknown
    // member.
    assert_eq!(
        greet.extra.get("execution"),
        Some(&json!({"taskSupport": "forbidden"}))
    );
    let add = &tools[1];
    assert_eq!(
        Value::Object(add.input_schema.clone()),
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"a": safe_integer(), "b": safe_integer()},
            "required": ["a", "b"]
        })
    );
    assert_eq!(
        add.output_schema.clone().map(Value::Object),
        Some(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"sum": safe_integer()},
            "required": ["sum"],
            "additionalProperties": false
        }))
    );

    // A plain text result.
    let result = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .expect("call greet");
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.text_content(), "Hello, Ada!");
    assert_eq!(result.structured_content, None);

    // Structured output with the tool's own text rendering.
    let result = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("call add");
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"sum": 5})));
    assert_eq!(result.text_content(), r#"{"sum":5}"#);

    // A handler that throws: isError with the exception's message.
    let result = client
        .call_tool("fail", json!({"reason": "kaput"}))
        .await
        .expect("call fail");
    assert!(result.is_error(), "{result:?}");
    assert_eq!(result.text_content(), "tool failed: kaput");
    assert_eq!(result.structured_content, None);

    // McpServer reports an unknown tool as a tool result whose text is the -32602 error it
    // caught, not as a JSON-RPC error.
    let result = client
        .call_tool("nope", json!({}))
        .await
        .expect("call unknown tool");
    assert!(result.is_error(), "{result:?}");
    assert_eq!(
        result.text_content(),
        "MCP error -32602: Tool nope not found"
    );

    // Arguments zod rejects: tool results with isError, naming the field.
    let result = client
        .call_tool("add", json!({"a": "x", "b": 1}))
        .await
        .expect("call add");
    assert!(result.is_error(), "{result:?}");
    assert_eq!(
        result.text_content(),
        "MCP error -32602: Input validation error: Invalid arguments for tool add: \
         Invalid input: expected number, received string at a"
    );
    let result = client
        .call_tool("add", json!({"a": 1}))
        .await
        .expect("call add");
    assert!(result.is_error(), "{result:?}");
    assert_eq!(
        result.text_content(),
        "MCP error -32602: Input validation error: Invalid arguments for tool add: \
         Invalid input: expected number, received undefined at b"
    );
}

/// Requests the schema forbids, sent on purpose (so after the wire was validated): they must
/// come back as typed JSON-RPC errors.
async fn malformed_requests(client: &Client) {
    // A tools/call without a name. The SDK answers -32603 (its zod parse of the request
    // throws inside the handler), where -32602 would be the fitting code.
    let err = client
        .request(
            "tools/call",
            Some(json!({"arguments": {}})),
            RequestOptions::default(),
        )
        .await
        .expect_err("tools/call without a name");
    let Error::Rpc(e) = err else {
        panic!("expected an RPC error, got {err:?}")
    };
    assert_eq!(e.code, codes::INTERNAL_ERROR, "{e:?}");
    assert!(
        e.message.contains(r#""path": ["#) && e.message.contains(r#""name""#),
        "{e:?}"
    );

    // An unknown method.
    let err = client
        .request("no/such/method", None, RequestOptions::default())
        .await
        .expect_err("unknown method");
    let Error::Rpc(e) = err else {
        panic!("expected an RPC error, got {err:?}")
    };
    assert_eq!(
        (e.code, e.message.as_str()),
        (codes::METHOD_NOT_FOUND, "Method not found")
    );
}

#[tokio::test]
async fn auto_mode_falls_back_to_the_2025_11_25_handshake_with_the_typescript_server() {
    let Some(dir) = node_dir() else { return };
    let server = TypeScriptServer::start(&dir, ProtocolMode::Auto).await;
    let client = &server.client;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    let details = client.server();
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        ("typescript-interop", SERVER_VERSION)
    );
    assert_eq!(
        details.instructions.as_deref(),
        Some("Test server for oxmcp interop.")
    );
    assert!(details.capabilities.tools.is_some());
    assert!(
        details.supported_versions.is_empty(),
        "a handshake lists no versions"
    );
    server.exercise().await;

    // The probe, refused with -32601 (the SDK has no server/discover), then the handshake.
    // (Checked after the calls: the tap records a frame when it is written, so the
    // `initialized` notification may still be queued right after connect returns.)
    assert_eq!(
        server.methods_sent()[..3],
        ["server/discover", "initialize", "notifications/initialized"]
    );
    let replies = server.wire.sent_by(Side::Server);
    let probe_id = &server.wire.sent_by(Side::Client)[0]["id"];
    let refusal = replies
        .iter()
        .find(|m| &m["id"] == probe_id)
        .expect("an answer to the probe");
    assert_eq!(
        refusal["error"]["code"],
        codes::METHOD_NOT_FOUND,
        "{refusal}"
    );
    let init = &server.wire.sent_by(Side::Client)[1];
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    server.finish().await;
}

#[tokio::test]
async fn forced_stateless_mode_fails_against_the_typescript_server() {
    let Some(dir) = node_dir() else { return };
    // With no fallback allowed, the server's refusal of server/discover is the answer.
    let mode = ProtocolMode::Stateless(ProtocolVersion::V2026_07_28);
    let Err((err, stderr)) = TypeScriptServer::try_start(&dir, mode).await else {
        panic!("a stateless-only client connected to a handshake-only server");
    };
    let Error::Rpc(e) = err else {
        panic!("expected an RPC error, got {err:?}\n{stderr}")
    };
    assert_eq!(
        (e.code, e.message.as_str()),
        (codes::METHOD_NOT_FOUND, "Method not found")
    );
}

/// A forced handshake at `version`: granted as asked, no probe sent.
async fn handshake(version: ProtocolVersion) {
    let Some(dir) = node_dir() else { return };
    let server = TypeScriptServer::start(&dir, ProtocolMode::Handshake(version)).await;
    let client = &server.client;
    assert_eq!(client.protocol_version(), version);
    let details = client.server();
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        ("typescript-interop", SERVER_VERSION)
    );
    server.exercise().await;
    // After the calls: the tap records frames as they are written.
    assert_eq!(
        server.methods_sent()[..2],
        ["initialize", "notifications/initialized"]
    );
    assert!(!server.methods_sent().iter().any(|m| m == "server/discover"));
    server.finish().await;
}

#[tokio::test]
async fn handshake_2025_11_25_with_the_typescript_server() {
    handshake(ProtocolVersion::V2025_11_25).await;
}

#[tokio::test]
async fn handshake_2024_11_05_with_the_typescript_server() {
    // The oldest revision: the SDK still sends outputSchema, structuredContent and
    // `execution`, which 2024-11-05 does not define; oxmcp's client takes them as they come.
    handshake(ProtocolVersion::V2024_11_05).await;
}

/// Runs `node client.mjs SERVER...`.
async fn run_node_client(dir: &Path, server: &[&Path]) -> std::process::Output {
    let mut command = tokio::process::Command::new("node");
    command
        .arg(dir.join("client.mjs"))
        .args(server)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    // A guard against a hang, not a timed assertion: the script takes about a second.
    tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("client.mjs finished within 60 s")
        .expect("run node client.mjs (is node on PATH?)")
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
async fn typescript_client_drives_weather_server_over_2025_11_25() {
    let Some(dir) = node_dir() else { return };
    let weather = common::example_bin("weather_server");
    let output = run_node_client(&dir, &[&weather]).await;
    assert!(
        output.status.success(),
        "client.mjs failed against weather_server\n{}",
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

/// The script's checks are real: pointed at a server that is not the weather server (the
/// SDK's own), it must fail, and say why.
#[tokio::test]
async fn typescript_client_script_rejects_a_server_that_is_not_the_weather_server() {
    let Some(dir) = node_dir() else { return };
    let node = Path::new("node");
    let server_mjs = dir.join("server.mjs");
    let output = run_node_client(&dir, &[node, &server_mjs]).await;
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("MISMATCH: serverInfo.name"),
        "{}",
        describe(&output)
    );
    assert!(
        stderr.contains("'typescript-interop'"),
        "{}",
        describe(&output)
    );
}
