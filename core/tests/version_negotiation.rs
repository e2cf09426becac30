//! Version negotiation: every revision end to end, an unsupported one on each side, the
//! stateless probe and its fallback to `initialize`.

mod common;

use std::time::Duration;

use common::*;
use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ProtocolMode},
    transport::{Inbound, OutFrame, Outbound, Route, Transport, memory},
};
use serde_json::{Value, json};

#[tokio::test]
async fn each_handshake_revision_negotiates_and_calls_a_tool() {
    for version in ProtocolVersion::handshake_versions() {
        let (_probe, _server, pair) =
            test_pair(client_options().protocol(ProtocolMode::Handshake(version))).await;
        assert_eq!(pair.client.protocol_version(), version);
        assert_eq!(pair.server_session.protocol_version(), Some(version));
        assert_eq!(pair.client.server().info.name, "test-server");
        assert_eq!(
            pair.client.server().instructions.as_deref(),
            Some("test instructions")
        );
        assert_echo(&pair.client, version.as_str()).await;
        pair.client.ping().await.unwrap();
        pair.finish().await;
    }
}

#[tokio::test]
async fn the_stateless_revision_is_found_by_the_probe() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    assert_eq!(pair.client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(pair.client.server().info.name, "test-server");
    // No handshake happened: the server session holds no state.
    assert_eq!(pair.server_session.protocol_version(), None);
    assert_echo(&pair.client, "modern").await;
    // Every request carried the stateless _meta.
    let sent = pair.wire.sent_by(Side::Client);
    assert!(sent.iter().filter(|m| m.get("id").is_some()).all(|m| {
        m.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            == Some(&json!("2026-07-28"))
    }));
    assert!(!sent.iter().any(|m| m["method"] == "initialize"));
    pair.finish().await;
}

#[tokio::test]
async fn stateless_mode_without_fallback() {
    let (_probe, _server, pair) =
        test_pair(client_options().protocol(ProtocolMode::Stateless(ProtocolVersion::V2026_07_28)))
            .await;
    assert!(pair.client.protocol_version().is_stateless());
    pair.client.ping().await.unwrap();
    pair.finish().await;
}

#[tokio::test]
async fn auto_falls_back_to_initialize_on_a_handshake_only_server() {
    let server = test_server_speaking("legacy", [ProtocolVersion::V2025_06_18]);
    let pair = pair(&server, client_options()).await;
    assert_eq!(pair.client.protocol_version(), ProtocolVersion::V2025_06_18);
    let sent = pair.wire.sent_by(Side::Client);
    assert_eq!(sent[0]["method"], "server/discover");
    assert!(sent.iter().any(|m| m["method"] == "initialize"));
    pair.finish().await;
}

#[tokio::test]
async fn unknown_requested_version_is_answered_with_the_newest_supported() {
    let (_probe, _server, mut peer, _session) = test_peer();
    let r = peer.initialize("1999-01-01").await;
    assert_eq!(r["protocolVersion"], "2025-11-25");
    let r = peer.request(json!(1), "tools/list", Value::Null).await;
    assert!(r["result"]["tools"].is_array());
    peer.wire.assert_valid();
}

#[tokio::test]
async fn client_refuses_a_version_it_does_not_accept() {
    let server = test_server_speaking("old", [ProtocolVersion::V2024_11_05]);
    let mut options =
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25));
    options.accepted_versions = vec![ProtocolVersion::V2025_11_25];
    let (error, wire) = try_pair(&server, options)
        .await
        .err()
        .expect("connect fails");
    match error {
        Error::UnsupportedProtocolVersion {
            requested,
            supported,
        } => {
            assert_eq!(requested, "2024-11-05");
            assert_eq!(supported, vec!["2025-11-25".to_owned()]);
        }
        other => panic!("expected UnsupportedProtocolVersion, got {other:?}"),
    }
    wire.assert_valid();
}

#[tokio::test]
async fn stateless_request_with_an_unknown_version_gets_32022() {
    let (_probe, _server, mut peer, _session) = test_peer();
    let meta = stateless_meta_with("protocolVersion", json!("2099-01-01"));
    let r = peer
        .request(json!(1), "tools/list", json!({"_meta": meta}))
        .await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    let supported: Vec<String> =
        serde_json::from_value(r["error"]["data"]["supported"].clone()).unwrap();
    assert_eq!(
        supported,
        vec![
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ]
    );
    peer.wire.assert_valid();
}

#[tokio::test]
async fn stateless_client_gets_a_typed_error_from_a_server_without_the_revision() {
    let server = test_server_speaking("legacy", [ProtocolVersion::V2025_11_25]);
    let error = try_pair(
        &server,
        client_options().protocol(ProtocolMode::Stateless(ProtocolVersion::V2026_07_28)),
    )
    .await
    .err()
    .expect("connect fails")
    .0;
    assert!(
        matches!(error, Error::UnsupportedProtocolVersion { .. }),
        "{error:?}"
    );
}

/// A legacy peer written by hand: answers `server/discover` with "method not found" (or not at
/// all), and otherwise speaks 2025-03-26.
async fn legacy_peer(link: oxmcp::transport::Link, silent_on_discover: bool) {
    let oxmcp::transport::Link {
        mut inbound,
        outbound,
    } = link;
    while let Some(Inbound::Frame(bytes)) = inbound.recv().await {
        let msg: Value = serde_json::from_slice(&bytes).unwrap();
        let Some(id) = msg.get("id").cloned() else {
            continue;
        };
        let reply = match msg["method"].as_str() {
            Some("server/discover") if silent_on_discover => continue,
            Some("server/discover") => {
                json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"Method not found"}})
            }
            Some("initialize") => json!({"jsonrpc":"2.0","id":id,"result":{
                "protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"0.1"}}}),
            Some("tools/list") => json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}),
            _ => {
                json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"Method not found"}})
            }
        };
        let frame = OutFrame {
            bytes: reply.to_string().into_bytes(),
            route: Route::Unrelated,
        };
        if outbound.send(Outbound::Frame(frame)).await.is_err() {
            break;
        }
    }
}

#[tokio::test]
async fn probe_falls_back_when_discover_is_an_unknown_method() {
    let (a, b) = memory::pair();
    tokio::spawn(legacy_peer(b.into_link(), false));
    let client = Client::connect(a, client_options()).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_03_26);
    assert_eq!(client.server().info.name, "legacy");
    assert!(client.list_all_tools().await.unwrap().is_empty());
    client.close().await;
}

#[tokio::test(start_paused = true)]
async fn probe_falls_back_when_a_legacy_server_stays_silent() {
    let (a, b) = memory::pair();
    tokio::spawn(legacy_peer(b.into_link(), true));
    let mut options = client_options();
    options.probe_timeout = Duration::from_secs(3);
    let started = tokio::time::Instant::now();
    let client = Client::connect(a, options).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_03_26);
    assert!(started.elapsed() >= Duration::from_secs(3));
    client.close().await;
}

#[tokio::test]
async fn initialize_twice_is_an_invalid_request() {
    let (_probe, _server, mut peer, _session) = test_peer();
    peer.initialize("2025-11-25").await;
    let r = peer
        .request(
            json!(2),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32600);
    peer.wire.assert_valid();
}

#[tokio::test]
async fn malformed_initialize_params_name_the_field() {
    let (_probe, _server, mut peer, _session) = test_peer();
    let r = peer
        .request(
            json!(1),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientInfo"),
        "{r}"
    );
    // The session is still usable.
    let r = peer.initialize("2025-11-25").await;
    assert_eq!(r["protocolVersion"], "2025-11-25");
    peer.wire.assert_valid();
}

#[tokio::test]
async fn requests_before_initialize_are_refused_with_a_hint() {
    let (_probe, _server, mut peer, _session) = test_peer();
    let r = peer.request(json!("a"), "tools/list", Value::Null).await;
    assert_eq!(r["id"], "a");
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
    peer.wire.assert_valid();
}
