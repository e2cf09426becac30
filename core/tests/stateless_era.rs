//! The stateless 2026-07-28 era on the server: every request stands alone with its `_meta`,
//! results carry `resultType` and the server's identity, list results carry cache hints, the
//! removed methods are "method not found", and bad `_meta` gets the revision's error codes.
//! A dual-era server serves both eras on one connection.

mod common;

use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn discover_describes_the_server() {
    let (_probe, _server, mut peer, _s) = test_peer();
    let r = peer
        .stateless_request(json!(1), "server/discover", json!({}))
        .await;
    let result = &r["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], "2026-07-28");
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(result["instructions"], "test instructions");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string());
    peer.wire.assert_valid();
}

#[tokio::test]
async fn requests_work_without_any_handshake() {
    let (_probe, _server, mut peer, session) = test_peer();
    let r = peer
        .stateless_request(json!(1), "tools/list", json!({}))
        .await;
    assert_complete_uncached(&r);
    let r = peer
        .stateless_request(
            json!(2),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "x");
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "1.0.0"
    );
    // Nothing about the connection changed.
    assert_eq!(session.protocol_version(), None);
    peer.wire.assert_valid();
}

#[tokio::test]
async fn removed_methods_are_not_found() {
    let (_probe, _server, mut peer, _s) = test_peer();
    for (i, method) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "no/such",
    ]
    .iter()
    .enumerate()
    {
        let r = peer.stateless_request(json!(i), method, json!({})).await;
        assert_eq!(r["id"], i, "{method}");
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    peer.wire.assert_valid();
}

#[tokio::test]
async fn malformed_meta_gets_invalid_params() {
    let (_probe, _server, mut peer, _s) = test_peer();
    let cases = [
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": []}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {}}}),
        json!({}),
    ];
    for (i, params) in cases.into_iter().enumerate() {
        let r = peer.request(json!(i), "tools/list", params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
    }
    // clientInfo is optional.
    let mut meta = stateless_meta();
    meta.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientInfo");
    let r = peer
        .request(json!(9), "tools/list", json!({"_meta": meta}))
        .await;
    assert!(r["result"]["tools"].is_array(), "{r}");
    peer.wire.assert_valid();
}

#[tokio::test]
async fn a_handshake_version_in_meta_without_initialize_is_unsupported() {
    let (_probe, _server, mut peer, _s) = test_peer();
    let meta = stateless_meta_with("protocolVersion", json!("2025-11-25"));
    let r = peer
        .request(json!(1), "tools/list", json!({"_meta": meta}))
        .await;
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "2025-11-25");
    peer.wire.assert_valid();
}

#[tokio::test]
async fn one_connection_serves_both_eras() {
    let (_probe, _server, mut peer, session) = test_peer();
    peer.initialize("2025-03-26").await;
    let legacy = peer
        .request(
            json!(1),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "old"}}),
        )
        .await;
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    let modern = peer
        .stateless_request(
            json!(2),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "new"}}),
        )
        .await;
    assert_eq!(modern["result"]["resultType"], "complete");
    // The handshake-era ping still works, the stateless one does not exist.
    assert_eq!(
        peer.request(json!(3), "ping", Value::Null).await["result"],
        json!({})
    );
    assert_eq!(
        peer.stateless_request(json!(4), "ping", json!({})).await["error"]["code"],
        -32601
    );
    assert_eq!(
        session.protocol_version(),
        Some(oxmcp::ProtocolVersion::V2025_03_26)
    );
    peer.wire.assert_valid();
}

#[tokio::test]
async fn a_modern_only_server_explains_itself_to_legacy_clients() {
    let server = test_server_speaking("modern-only", [oxmcp::ProtocolVersion::V2026_07_28]);
    let (mut peer, _s) = RawPeer::connect(&server);
    let r = peer
        .request(json!(1), "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}))
        .await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2026-07-28"),
        "{r}"
    );
    assert_eq!(r["error"]["data"]["supported"], json!(["2026-07-28"]));
    peer.wire.assert_valid();
}
