//! Interop with the official Python MCP SDK (`mcp` 2.3.0, pinned in
//! `tests/interop/python/requirements.txt`) over stdio, in both directions, with real child
//! processes:
//!
//! - oxmcp's client drives an SDK `MCPServer` (`tests/interop/python/server.py`). In auto mode
//!   it must find the stateless 2026-07-28 revision through `server/discover` and never send
//!   `initialize`; forced handshakes at 2025-11-25 and 2024-11-05 must be granted as asked. In
//!   every mode the same calls give the same answers: tools/list, a text result, a structured
//!   result, a failing tool, an unknown tool, bad arguments, a malformed request and an unknown
//!   method. Every frame both sides sent is validated against the official schema of the
//!   revision in use. One test covers a probe that timed out against a slow stateless server.
//! - the SDK's own client (`tests/interop/python/client.py`) drives oxmcp's example
//!   `weather_server` in each of its connect modes (auto, legacy, a pinned 2026-07-28). The
//!   script asserts what it received and exits non-zero on any mismatch.
//!
//! The peers come from `make interop-deps`, which exports `OXMCP_INTEROP_PYTHON` (the venv's
//! python). Without it these tests are skipped, unless `OXMCP_REQUIRE_INTEROP=1`.

mod common;

use std::{path::Path, process::Stdio, time::Duration};

use common::peers::{python_script as script, venv_python};
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

/// What `server.py` reports as its version: the SDK release actually running, which proves
/// the venv holds the pinned one.
const SERVER_VERSION: &str = "mcp-2.3.0";

/// oxmcp's client connected to the Python server, with every frame recorded.
struct PythonServer {
    client: Client,
    wire: Wire,
    stderr: StderrHandle,
}

impl PythonServer {
    async fn start(python: &Path, mode: ProtocolMode) -> PythonServer {
        let command = ChildCommand::new(python)
            .arg(script("server.py"))
            .env("PYTHONDONTWRITEBYTECODE", "1");
        let child = command.spawn().await.expect("start the Python server");
        let stderr = child.stderr();
        let wire = Wire::new();
        let link = tap(child.into_link(), wire.observer(Side::Client));
        let options = ClientOptions::new("oxmcp-interop", "1.0.0").protocol(mode.clone());
        let client = Client::connect(link, options).await.unwrap_or_else(|e| {
            panic!(
                "connect to the Python server in {mode:?}: {e}\n{}",
                stderr.tail(4096)
            )
        });
        PythonServer {
            client,
            wire,
            stderr,
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
        // The SDK logs rejected calls at INFO; anything with a traceback is a crash.
        let stderr = self.stderr.tail(1 << 16);
        assert!(
            !stderr.contains("Traceback"),
            "the Python server crashed:\n{stderr}"
        );
    }
}

/// The same calls, with the same answers, whatever the era.
async fn exercise(client: &Client) {
    // tools/list, with the schemas the SDK generated from type hints (pydantic).
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["greet", "add", "fail"]);
    let greet = &tools[0];
    assert_eq!(greet.description.as_deref(), Some("Greet someone by name."));
    assert_eq!(
        Value::Object(greet.input_schema.clone()),
        json!({
            "type": "object",
            "properties": {"name": {"title": "Name", "type": "string"}},
            "required": ["name"],
            "title": "greetArguments"
        })
    );
    assert_eq!(
        greet.output_schema, None,
        "greet is registered with structured_output=False"
    );
    let add = &tools[1];
    assert_eq!(
        add.output_schema.clone().map(Value::Object),
        Some(json!({
            "description": "The structured result of `add`.",
            "properties": {"sum": {"title": "Sum", "type": "integer"}},
            "required": ["sum"],
            "title": "Sum",
            "type": "object"
        }))
    );
    // A `-> str` tool gets a wrapping output schema from the SDK's auto-detection.
    assert_eq!(
        tools[2]
            .output_schema
            .as_ref()
            .map(|s| s["required"].clone()),
        Some(json!(["result"]))
    );

    // A plain text result.
    let result = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .expect("call greet");
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.text_content(), "Hello, Ada!");
    assert_eq!(result.structured_content, None);

    // Structured output, with the SDK's pretty-printed JSON as the text fallback.
    let result = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("call add");
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"sum": 5})));
    let text: Value = serde_json::from_str(&result.text_content()).expect("text is JSON");
    assert_eq!(text, json!({"sum": 5}));

    // A tool that raises ToolError: isError, and no structuredContent even though `fail` has an
    // output schema (a client must not demand one on an error result).
    let result = client
        .call_tool("fail", json!({"reason": "kaput"}))
        .await
        .expect("call fail");
    assert!(result.is_error(), "{result:?}");
    assert_eq!(
        result.text_content(),
        "Error executing tool fail: tool failed: kaput"
    );
    assert_eq!(result.structured_content, None);

    // MCPServer reports an unknown tool as a tool result, not as a JSON-RPC error.
    let result = client
        .call_tool("nope", json!({}))
        .await
        .expect("call unknown tool");
    assert!(result.is_error(), "{result:?}");
    assert_eq!(result.text_content(), "Unknown tool: nope");

    // Arguments the SDK's pydantic validation rejects: also tool results with isError.
    let result = client
        .call_tool("add", json!({"a": "x", "b": 1}))
        .await
        .expect("call add");
    assert!(result.is_error(), "{result:?}");
    let text = result.text_content();
    assert!(
        text.starts_with("Error executing tool add: 1 validation error for addArguments\na\n"),
        "{text}"
    );
    assert!(text.contains("Input should be a valid integer"), "{text}");
    let result = client
        .call_tool("add", json!({"a": 1}))
        .await
        .expect("call add");
    assert!(result.is_error(), "{result:?}");
    let text = result.text_content();
    assert!(
        text.contains("validation error for addArguments\nb\n  Field required"),
        "{text}"
    );
}

/// Requests the schema forbids, sent on purpose (so after the wire was validated): they must
/// come back as typed JSON-RPC errors.
async fn malformed_requests(client: &Client) {
    // A tools/call without a name is a malformed request: a typed JSON-RPC error.
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
    assert_eq!(
        (e.code, e.message.as_str()),
        (codes::INVALID_PARAMS, "Invalid request parameters")
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
    assert_eq!(e.data, Some(json!("no/such/method")));
}

#[tokio::test]
async fn auto_mode_reaches_the_python_server_over_2026_07_28() {
    let Some(python) = venv_python() else { return };
    let server = PythonServer::start(&python, ProtocolMode::Auto).await;
    let client = &server.client;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let details = client.server();
    assert_eq!(details.supported_versions, ["2026-07-28"]);
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        ("python-interop", SERVER_VERSION)
    );
    assert_eq!(
        details.instructions.as_deref(),
        Some("Test server for oxmcp interop.")
    );
    assert!(details.capabilities.tools.is_some());
    server.exercise().await;

    // The era was settled by the probe: no handshake at all, and every request carried the
    // stateless envelope.
    assert_eq!(server.methods_sent()[0], "server/discover");
    assert!(
        !server
            .methods_sent()
            .iter()
            .any(|m| m.starts_with("initialize") || m.starts_with("notifications/"))
    );
    for request in server.wire.sent_by(Side::Client) {
        let version = &request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
        assert_eq!(
            version, "2026-07-28",
            "request without the stateless _meta: {request}"
        );
    }
    server.finish().await;
}

#[tokio::test]
async fn the_python_server_refuses_a_handshake_once_stateless() {
    let Some(python) = venv_python() else { return };
    let server = PythonServer::start(&python, ProtocolMode::Auto).await;
    assert_eq!(
        server.client.protocol_version(),
        ProtocolVersion::V2026_07_28
    );
    // The connection is locked to 2026-07-28 by the probe: a late `initialize` is refused with
    // the revision's own error, naming what the server speaks.
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "late", "version": "0"}
    });
    let err = server
        .client
        .session()
        .request("initialize", Some(params), RequestOptions::default())
        .await
        .expect_err("initialize after discover");
    let Error::Rpc(e) = err else {
        panic!("expected an RPC error, got {err:?}")
    };
    assert_eq!(e.code, codes::UNSUPPORTED_PROTOCOL_VERSION, "{e:?}");
    assert_eq!(
        e.data,
        Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
    );
    // A request without the stateless envelope is refused too.
    let err = server
        .client
        .session()
        .request("tools/list", Some(json!({})), RequestOptions::default())
        .await
        .expect_err("tools/list without _meta");
    let Error::Rpc(e) = err else {
        panic!("expected an RPC error, got {err:?}")
    };
    assert_eq!(e.code, codes::INVALID_PARAMS, "{e:?}");
    server.client.close().await;
}

#[tokio::test]
async fn forced_stateless_mode_with_the_python_server() {
    let Some(python) = venv_python() else { return };
    let server = PythonServer::start(
        &python,
        ProtocolMode::Stateless(ProtocolVersion::V2026_07_28),
    )
    .await;
    assert_eq!(
        server.client.protocol_version(),
        ProtocolVersion::V2026_07_28
    );
    server.exercise().await;
    assert_eq!(server.methods_sent()[0], "server/discover");
    server.finish().await;
}

/// When the `server/discover` probe times out against a slow-starting stateless server, the
/// client sends `notifications/cancelled` and falls back to `initialize`. The server answers
/// the probe anyway, which locks the connection to 2026-07-28, and so it refuses the
/// handshake with -32022 (`data: {"supported": ["2026-07-28"], ...}`); the client must then
/// probe again at a listed version rather than fail. A server that starts slowly is common:
/// `uvx` or `npx` installing it on first run, for instance. Here a 1 ms probe timeout stands
/// in for the slow start: the server needs far longer than that just to import the SDK.
#[tokio::test]
async fn auto_mode_recovers_when_the_probe_times_out_on_a_slow_stateless_server() {
    let Some(python) = venv_python() else { return };
    let child = ChildCommand::new(&python)
        .arg(script("server.py"))
        .spawn()
        .await
        .expect("start");
    let stderr = child.stderr();
    let mut options = ClientOptions::new("oxmcp-interop", "1.0.0");
    options.probe_timeout = Duration::from_millis(1);
    let client = Client::connect(child, options).await.unwrap_or_else(|e| {
        panic!(
            "connect after a timed-out probe: {e}\n{}",
            stderr.tail(4096)
        )
    });
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    client.close().await;
}

/// A forced handshake at `version`: granted as asked, no probe sent.
async fn handshake(version: ProtocolVersion) {
    let Some(python) = venv_python() else { return };
    let server = PythonServer::start(&python, ProtocolMode::Handshake(version)).await;
    let client = &server.client;
    assert_eq!(client.protocol_version(), version);
    let details = client.server();
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        ("python-interop", SERVER_VERSION)
    );
    assert_eq!(
        details.instructions.as_deref(),
        Some("Test server for oxmcp interop.")
    );
    assert!(
        details.supported_versions.is_empty(),
        "a handshake lists no versions"
    );
    server.exercise().await;
    assert_eq!(
        server.methods_sent()[..2],
        ["initialize", "notifications/initialized"]
    );
    assert!(!server.methods_sent().iter().any(|m| m == "server/discover"));

    // In the handshake era the stateless probe is refused (-32600, not the revision's own
    // codes), which is what tells a probing client to fall back.
    let err = client
        .session()
        .request(
            "server/discover",
            Some(json!({"_meta": common::stateless_meta()})),
            RequestOptions::default(),
        )
        .await
        .expect_err("server/discover in the handshake era");
    let Error::Rpc(e) = err else {
        panic!("expected an RPC error, got {err:?}")
    };
    assert_eq!(e.code, codes::INVALID_REQUEST, "{e:?}");
    server.finish().await;
}

#[tokio::test]
async fn handshake_2025_11_25_with_the_python_server() {
    handshake(ProtocolVersion::V2025_11_25).await;
}

#[tokio::test]
async fn handshake_2024_11_05_with_the_python_server() {
    // The oldest revision: the SDK still sends outputSchema and structuredContent, which
    // 2024-11-05 does not define; oxmcp's client takes them as they come.
    handshake(ProtocolVersion::V2024_11_05).await;
}

/// Runs `client.py MODE <weather_server>`; panics with its output unless it passed.
async fn run_python_client(python: &Path, mode: &str, server: &[&Path]) -> std::process::Output {
    let mut command = tokio::process::Command::new(python);
    command
        .arg(script("client.py"))
        .arg(mode)
        .args(server)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    // A guard against a hang, not a timed assertion: the script takes about a second.
    tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("client.py finished within 60 s")
        .expect("run client.py")
}

fn describe(output: &std::process::Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

async fn python_client_drives_weather_server(mode: &str) {
    let Some(python) = venv_python() else { return };
    let weather = common::example_bin("weather_server");
    let output = run_python_client(&python, mode, &[&weather]).await;
    assert!(
        output.status.success(),
        "client.py {mode} failed against weather_server\n{}",
        describe(&output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.ends_with("all checks passed\n"),
        "{}",
        describe(&output)
    );
}

#[tokio::test]
async fn python_client_auto_mode_drives_weather_server_over_2026_07_28() {
    python_client_drives_weather_server("auto").await;
}

#[tokio::test]
async fn python_client_legacy_mode_drives_weather_server_over_2025_11_25() {
    python_client_drives_weather_server("legacy").await;
}

#[tokio::test]
async fn python_client_pinned_2026_07_28_drives_weather_server_without_a_probe() {
    python_client_drives_weather_server("2026-07-28").await;
}

/// The script's checks are real: pointed at a server that is not the weather server (the
/// SDK's own), it must fail, and say why.
#[tokio::test]
async fn python_client_script_rejects_a_server_that_is_not_the_weather_server() {
    let Some(python) = venv_python() else { return };
    let server_py = script("server.py");
    let output = run_python_client(&python, "auto", &[&python, &server_py]).await;
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "MISMATCH: discover _meta serverInfo.name: expected 'weather', got 'python-interop'"
        ),
        "{}",
        describe(&output)
    );
}
