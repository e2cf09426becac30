//! Handshake and tools against each SDK's tools server over stdio (`server.py`,
//! `server.mjs`: `greet`, `add`, `fail`), driven by oxmcp's client in every protocol mode.
//!
//! Auto mode must land where the SDK lets it: on the stateless 2026-07-28 revision through
//! `server/discover` (no `initialize` at all) where the SDK speaks it, else on the 2025-11-25
//! handshake after the probe is refused. Forced handshakes must be granted as asked; a forced
//! stateless mode must work, or fail with the server's error. In every mode the same calls
//! give the answers the peer table names (tools/list with the generated schemas, a text
//! result, a structured result, a failing tool, an unknown tool, bad arguments, a malformed
//! request and an unknown method), and every frame both sides sent is validated against the
//! official schema of the revision in use.

use std::time::Duration;

use oxmcp::{
    ProtocolVersion,
    client::{ClientOptions, ProtocolMode},
    jsonrpc::codes,
    session::RequestOptions,
};
use serde_json::json;

use crate::common::Side;
use crate::sdk::{RpcError, Sdk, skip};
use crate::stdio::StdioServer;
use crate::tools::{assert_rpc, exercise_tools, malformed_requests};

/// What the tools servers say in `instructions`.
const INSTRUCTIONS: &str = "Test server for oxmcp interop.";

fn options(mode: ProtocolMode) -> ClientOptions {
    ClientOptions::new("oxmcp-interop", "1.0.0").protocol(mode)
}

/// The tools server, connected in `mode`; `None` when the peer is not installed.
async fn start(sdk: &'static Sdk, mode: ProtocolMode) -> Option<StdioServer> {
    let launcher = sdk.launcher()?;
    Some(StdioServer::start(sdk, &launcher, "server", options(mode)).await)
}

/// The server's name and version, and the instructions.
fn assert_identity(server: &StdioServer) {
    let details = server.client.server();
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        (server.sdk.names.tools, server.sdk.version)
    );
    assert_eq!(details.instructions.as_deref(), Some(INSTRUCTIONS));
    assert!(details.capabilities.tools.is_some());
}

/// The tools, the wire check, then the malformed requests.
async fn exercise(server: &StdioServer) {
    exercise_tools(&server.client, server.sdk, &["greet", "add", "fail"]).await;
    server.wire.assert_valid();
    malformed_requests(&server.client, server.sdk).await;
}

/// Auto mode: the stateless revision where the SDK answers the probe, with every request in
/// the stateless envelope; else the probe's refusal (-32601) and the 2025-11-25 handshake.
pub async fn auto_mode(sdk: &'static Sdk) {
    let Some(server) = start(sdk, ProtocolMode::Auto).await else {
        return;
    };
    let client = &server.client;
    assert_eq!(client.protocol_version(), sdk.auto_version);
    assert_identity(&server);
    let supported: &[&str] = if sdk.stateless() {
        &["2026-07-28"]
    } else {
        &[]
    };
    assert_eq!(client.server().supported_versions, supported);
    exercise(&server).await;

    // (Checked after the calls: the tap records a frame when it is written, so the
    // `initialized` notification may still be queued right after connect returns.)
    let methods = server.methods_sent();
    if sdk.stateless() {
        // The era was settled by the probe: no handshake at all, and every request carried
        // the stateless envelope.
        assert_eq!(methods[0], "server/discover");
        assert!(
            !methods
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
    } else {
        // The probe, refused with -32601 (the SDK has no server/discover), then the
        // handshake.
        assert_eq!(
            methods[..3],
            ["server/discover", "initialize", "notifications/initialized"]
        );
        let sent = server.wire.sent_by(Side::Client);
        let probe_id = &sent[0]["id"];
        let refusal = server
            .wire
            .sent_by(Side::Server)
            .into_iter()
            .find(|m| &m["id"] == probe_id)
            .expect("an answer to the probe");
        assert_eq!(
            refusal["error"]["code"],
            codes::METHOD_NOT_FOUND,
            "{refusal}"
        );
        assert_eq!(sent[1]["params"]["protocolVersion"], "2025-11-25");
    }
    server.finish().await;
}

/// Once the probe locked the connection to 2026-07-28, a late `initialize` is refused with
/// the revision's own error naming what the server speaks, and so is a request without the
/// stateless envelope.
pub async fn stateless_refuses_a_late_handshake(sdk: &'static Sdk) {
    if let Some(why) = sdk.no_stateless {
        return skip(why);
    }
    let Some(server) = start(sdk, ProtocolMode::Auto).await else {
        return;
    };
    assert_eq!(
        server.client.protocol_version(),
        ProtocolVersion::V2026_07_28
    );
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
    assert_rpc(
        err,
        &RpcError {
            code: codes::UNSUPPORTED_PROTOCOL_VERSION,
            message: &[],
            data: Some(r#"{"supported": ["2026-07-28"], "requested": "2025-11-25"}"#),
        },
    );
    let err = server
        .client
        .session()
        .request("tools/list", Some(json!({})), RequestOptions::default())
        .await
        .expect_err("tools/list without _meta");
    assert_rpc(
        err,
        &RpcError {
            code: codes::INVALID_PARAMS,
            message: &[],
            data: None,
        },
    );
    server.client.close().await;
}

/// A forced stateless mode: the probe is sent and everything works where the SDK speaks the
/// revision; elsewhere, with no fallback allowed, the server's refusal is the answer.
pub async fn forced_stateless_mode(sdk: &'static Sdk) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let mode = ProtocolMode::Stateless(ProtocolVersion::V2026_07_28);
    let connected = StdioServer::try_start(sdk, &launcher, "server", options(mode)).await;
    match (sdk.stateless_refusal, connected) {
        (None, Ok(server)) => {
            assert_eq!(
                server.client.protocol_version(),
                ProtocolVersion::V2026_07_28
            );
            exercise(&server).await;
            assert_eq!(server.methods_sent()[0], "server/discover");
            server.finish().await;
        }
        (Some(refusal), Err((err, _stderr))) => assert_rpc(err, &refusal),
        (None, Err((e, stderr))) => panic!("connect in a forced stateless mode: {e}\n{stderr}"),
        (Some(_), Ok(_)) => panic!("a stateless-only client connected to a handshake-only server"),
    }
}

/// When the `server/discover` probe times out against a slow-starting stateless server, the
/// client sends `notifications/cancelled` and falls back to `initialize`. The server answers
/// the probe anyway, which locks the connection to 2026-07-28, and so it refuses the
/// handshake with -32022 (`data: {"supported": ["2026-07-28"], ...}`); the client must then
/// probe again at a listed version rather than fail. A server that starts slowly is common:
/// `uvx` or `npx` installing it on first run, for instance. Here a 1 ms probe timeout stands
/// in for the slow start: the server needs far longer than that just to import the SDK.
pub async fn auto_mode_recovers_from_a_timed_out_probe(sdk: &'static Sdk) {
    if let Some(why) = sdk.no_stateless {
        return skip(why);
    }
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let mut options = ClientOptions::new("oxmcp-interop", "1.0.0");
    options.probe_timeout = Duration::from_millis(1);
    let server = StdioServer::start(sdk, &launcher, "server", options).await;
    assert_eq!(
        server.client.protocol_version(),
        ProtocolVersion::V2026_07_28
    );
    server.client.close().await;
}

/// A forced handshake at `version`: granted as asked, no probe sent, the same answers. At
/// 2024-11-05 the SDKs still send outputSchema, structuredContent (and the TypeScript SDK
/// `execution`), which that revision does not define; oxmcp's client takes them as they come.
pub async fn handshake(sdk: &'static Sdk, version: ProtocolVersion) {
    let Some(server) = start(sdk, ProtocolMode::Handshake(version)).await else {
        return;
    };
    let client = &server.client;
    assert_eq!(client.protocol_version(), version);
    assert_identity(&server);
    assert!(
        client.server().supported_versions.is_empty(),
        "a handshake lists no versions"
    );
    exercise(&server).await;
    // After the calls: the tap records frames as they are written.
    assert_eq!(
        server.methods_sent()[..2],
        ["initialize", "notifications/initialized"]
    );
    assert!(!server.methods_sent().iter().any(|m| m == "server/discover"));

    if let Some(code) = sdk.discover_refusal_after_handshake {
        let err = client
            .session()
            .request(
                "server/discover",
                Some(json!({"_meta": crate::common::stateless_meta()})),
                RequestOptions::default(),
            )
            .await
            .expect_err("server/discover in the handshake era");
        assert_rpc(
            err,
            &RpcError {
                code,
                message: &[],
                data: None,
            },
        );
    }
    server.finish().await;
}
