//! Progress: a handler's reports reach the caller's callback in order, tied to the request's
//! token; without a token nothing is sent; stray progress is ignored.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use oxmcp::session::RequestOptions;
use serde_json::{Value, json};

#[tokio::test]
async fn progress_reaches_the_callback_in_order() {
    for mode in [
        None,
        Some(oxmcp::ProtocolVersion::V2025_11_25),
        Some(oxmcp::ProtocolVersion::V2024_11_05),
    ] {
        let probe = Probe::default();
        let server = test_server(&probe);
        let options = match mode {
            Some(v) => client_options().protocol(oxmcp::client::ProtocolMode::Handshake(v)),
            None => client_options(),
        };
        let pair = pair(&server, options).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let options = RequestOptions::default().on_progress(move |p| {
            sink.lock().unwrap().push((p.progress, p.total, p.message));
        });
        let r = pair
            .client
            .call_tool_with("progress", json!({"steps": 4}), options)
            .await
            .unwrap();
        assert_eq!(r.text_content(), "done");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 4, "{seen:?}");
        for (i, (progress, total, message)) in seen.iter().enumerate() {
            assert_eq!(*progress, (i + 1) as f64);
            assert_eq!(*total, Some(4.0));
            assert_eq!(message.as_deref(), Some(format!("step {}", i + 1).as_str()));
        }
        pair.finish().await;
    }
}

#[tokio::test]
async fn no_token_means_no_progress_notifications() {
    let (_probe, _server, mut peer, _session) = test_peer();
    peer.initialize("2025-11-25").await;
    let r = peer
        .request(
            json!(1),
            "tools/call",
            json!({"name":"progress","arguments":{"steps":3}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "done");
    assert!(peer.notifications.is_empty(), "{:?}", peer.notifications);
    // With a token, the notifications carry it.
    let r = peer
        .request(
            json!(2),
            "tools/call",
            json!({"name":"progress","arguments":{"steps":2},"_meta":{"progressToken":"tok"}}),
        )
        .await;
    assert_eq!(r["id"], 2);
    assert_eq!(peer.notifications.len(), 2);
    assert!(
        peer.notifications
            .iter()
            .all(|n| n["params"]["progressToken"] == "tok")
    );
    peer.wire.assert_valid();
}

#[tokio::test]
async fn stray_progress_is_ignored_by_the_client() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    // Progress for a token nobody owns, and a malformed one: both dropped quietly.
    pair.server_session
        .notify(
            "notifications/progress",
            Some(json!({"progressToken": 424242, "progress": 1})),
        )
        .await
        .unwrap();
    pair.server_session
        .notify("notifications/progress", Some(json!({"progress": "x"})))
        .await
        .unwrap();
    assert_echo(&pair.client, "still fine").await;
    let _: Value = json!(null);
    pair.client.close().await;
}
