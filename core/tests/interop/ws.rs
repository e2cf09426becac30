//! WebSocket, both directions, against each SDK's 1.x WebSocket transport (no MCP revision
//! defines one; both SDKs dropped theirs in 2.x, so these peers are the 1.x releases of
//! `Sdk::ws_release`): oxmcp's client drives the SDK's server (`ws_server.py`: the Python SDK
//! serves WebSocket, the TypeScript SDK does not), and the SDK's client (`ws_client.*`)
//! drives oxmcp's conformance server run with `--ws`. Every frame oxmcp's client sees is
//! validated against the official schema of the revision in use.

use std::{process::Stdio, time::Duration};

use oxmcp::{
    ProtocolVersion,
    client::{Client, ClientOptions},
    protocol::ElicitResult,
    session::RequestOptions,
    transport::{
        Transport,
        tap::tap,
        ws::{WsClientOptions, WsClientTransport},
    },
};
use serde_json::json;
use tokio::process::Command;

use crate::{
    common::{Side, Wire},
    http::Peer,
    sdk::{Sdk, skip},
    sdk_clients::{assert_passed, describe, run},
};

/// The conformance fixture server over WebSocket alone, on a free port.
async fn conformance_server() -> Peer {
    let mut command = Command::new(crate::common::example_bin("conformance_server"));
    command
        .args(["--ws", "--port", "0"])
        .env("RUST_LOG", "warn");
    Peer::start(command).await
}

/// oxmcp's client against the SDK's WebSocket server: the handshake, tools (text and
/// structured), progress, a question the server asks, cancellation, a bad call, and a clean
/// close the server survives.
pub async fn oxmcp_drives_sdk_server(sdk: &'static Sdk) {
    if let Some(why) = sdk.gap("ws_server") {
        return skip(why);
    }
    let Some(launcher) = sdk.ws_launcher() else {
        return;
    };
    let mut command = launcher.command("ws_server", Vec::<&str>::new());
    command.stdin(Stdio::null());
    let peer = Peer::start(command).await;
    let output = || format!("--- server ---\n{}", peer.output());
    assert!(
        peer.output()
            .contains(&format!("sdk mcp-{}", sdk.ws_release)),
        "not the pinned release\n{}",
        output()
    );
    let transport = WsClientTransport::connect(&peer.url, WsClientOptions::default())
        .await
        .unwrap_or_else(|e| panic!("upgrade: {e}\n{}", output()));
    let wire = Wire::new();
    let options = ClientOptions::new("oxmcp-ws", "1.0.0")
        .elicitation(|_params, _cancel| async { Ok(ElicitResult::accept(json!({"name": "Ada"}))) });
    let client = Client::connect(
        tap(transport.into_link(), wire.observer(Side::Client)),
        options,
    )
    .await
    .unwrap_or_else(|e| panic!("connect: {e}\n{}", output()));
    // The SDK has no server/discover: auto mode falls back to its newest handshake.
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server().info.name, "python-ws");
    let mut tools: Vec<_> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    tools.sort();
    assert_eq!(tools, ["add", "ask_name", "greet", "steps", "wait"]);
    let call = |name: &'static str, args: serde_json::Value| {
        let client = client.clone();
        async move {
            client
                .call_tool(name, args)
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        }
    };
    assert_eq!(
        call("greet", json!({"name": "ada"})).await.text_content(),
        "Hello, ada!"
    );
    let sum = call("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.structured_content, Some(json!({"sum": 5})));
    // Progress, every step before the answer.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let steps = client
        .call_tool_with(
            "steps",
            json!({"count": 3}),
            RequestOptions::default().on_progress(move |p| s.lock().unwrap().push(p.progress)),
        )
        .await
        .unwrap();
    assert_eq!(steps.text_content(), "3 steps done");
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0]);
    // The server asks (elicitation/create over the socket), the client answers.
    assert_eq!(
        call("ask_name", json!({})).await.text_content(),
        "Hello, Ada!"
    );
    // Cancelling a call reaches the SDK's handler.
    let (token, waiting) = crate::common::cancellable_call(&client, "wait", json!({}));
    tokio::time::sleep(Duration::from_millis(300)).await;
    token.cancel();
    assert!(matches!(
        waiting.await.unwrap(),
        Err(oxmcp::Error::Cancelled)
    ));
    wait_for(&peer, "cancelled: wait").await;
    // Bad input: the SDK reports a bad call as a tool error, the socket unharmed.
    let bad = call("add", json!({"a": "two"})).await;
    assert_eq!(bad.is_error, Some(true), "{bad:?}");
    assert_eq!(
        call("greet", json!({"name": "again"})).await.text_content(),
        "Hello, again!"
    );
    client.close().await;
    wire.assert_valid();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !peer.output().contains(sdk.crash_marker),
        "the server crashed\n{}",
        output()
    );
    peer.stop().await;
}

/// Waits (real time, up to 10 s) until the peer printed `line`.
async fn wait_for(peer: &Peer, line: &str) {
    for _ in 0..1000 {
        if peer.output().contains(line) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("`{line}` never printed:\n{}", peer.output());
}

/// The SDK's WebSocket client against `conformance_server --ws`: text, progress, sampling,
/// elicitation, a tool error.
pub async fn sdk_client_drives_oxmcp(sdk: &'static Sdk) {
    let Some(launcher) = sdk.ws_launcher() else {
        return;
    };
    let server = conformance_server().await;
    let output = run(launcher.command("ws_client", [server.url.as_str()])).await;
    assert_passed(
        &output,
        &["ok: connected on 2025-11-25\n".to_owned()],
        &format!("ws_client\n--- server ---\n{}", server.output()),
    );
    server.stop().await;
}

/// The client script's checks are real: told to expect another server's name, it fails and
/// says which field differed.
pub async fn sdk_client_rejects_another_server(sdk: &'static Sdk) {
    let Some(launcher) = sdk.ws_launcher() else {
        return;
    };
    let server = conformance_server().await;
    let output = run(launcher.command("ws_client", [server.url.as_str(), "another-server"])).await;
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("MISMATCH: serverInfo.name") && stderr.contains("oxmcp-conformance"),
        "{}",
        describe(&output)
    );
    server.stop().await;
}
