//! Logging per era (`logging/setLevel` in the handshake era; the per-request `_meta` level in
//! 2026-07-28, without which nothing is sent) and `subscriptions/listen` streams: the
//! acknowledgement first, only the kinds asked for, each tagged with the stream's id, and the
//! stream ended by the client or the server.

mod common;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use common::*;
use oxmcp::{
    ProtocolVersion,
    client::ProtocolMode,
    protocol::{CallToolResult, LoggingLevel, Prompt, SubscriptionFilter, Tool},
    server::Context,
};
use serde_json::{Value, json};

type Seen = Arc<Mutex<Vec<(String, Option<Value>)>>>;

fn recording(options: oxmcp::client::ClientOptions) -> (oxmcp::client::ClientOptions, Seen) {
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    (
        options.on_notification(move |m, p| sink.lock().unwrap().push((m.to_owned(), p))),
        seen,
    )
}

fn logs(seen: &Seen) -> Vec<Value> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|(m, _)| m == "notifications/message")
        .filter_map(|(_, p)| p.clone())
        .collect()
}

#[tokio::test]
async fn handshake_logging_follows_set_level() {
    let server = fixture_server();
    let (options, seen) =
        recording(client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_06_18)));
    let pair = common::pair(&server, options).await;
    pair.call("test_tool_with_logging", json!({})).await;
    let got = logs(&seen);
    assert_eq!(got.len(), 3, "every level is sent until setLevel: {got:?}");
    assert_eq!(
        got[0],
        json!({"level": "info", "logger": "conformance", "data": "Tool execution started"})
    );
    pair.client
        .set_logging_level(LoggingLevel::Warning)
        .await
        .unwrap();
    pair.call("test_tool_with_logging", json!({})).await;
    assert_eq!(logs(&seen).len(), 3, "info is below warning");
    pair.finish().await;
    // A bad level is invalid params.
    let (mut peer, _s) = RawPeer::connect(&server);
    peer.initialize("2025-06-18").await;
    let r = peer
        .request(json!(1), "logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    peer.wire.assert_valid();
}

#[tokio::test]
async fn stateless_logging_is_opt_in_per_request() {
    let server = fixture_server();
    let (options, seen) = recording(client_options());
    let pair = common::pair(&server, options).await;
    pair.call("test_tool_with_logging", json!({})).await;
    assert!(logs(&seen).is_empty(), "no level in _meta: no log messages");
    pair.finish().await;
    let (options, seen) = recording(client_options().log_level(LoggingLevel::Info));
    let pair = common::pair(&server, options).await;
    pair.call("test_tool_with_logging", json!({})).await;
    assert_eq!(logs(&seen).len(), 3);
    assert!(
        pair.client
            .set_logging_level(LoggingLevel::Debug)
            .await
            .is_err(),
        "setLevel does not exist statelessly"
    );
    pair.finish().await;
    let (options, seen) = recording(client_options().log_level(LoggingLevel::Error));
    let pair = common::pair(&server, options).await;
    pair.call("test_tool_with_logging", json!({})).await;
    assert!(logs(&seen).is_empty());
    pair.finish().await;
}

async fn next(sub: &mut oxmcp::client::Subscription) -> oxmcp::client::ServerNotification {
    tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("a notification")
        .expect("stream open")
}

#[tokio::test]
async fn listen_streams_deliver_what_was_asked() {
    let server = fixture_server();
    let (options, seen) = recording(client_options());
    let pair = common::pair(&server, options).await;
    let mut sub = pair
        .client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["test://watched-resource".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(sub.acknowledged().tools_list_changed, Some(true));
    assert_eq!(
        sub.acknowledged().prompts_list_changed,
        None,
        "not asked for, not honoured"
    );
    // Asked-for kinds arrive, tagged with the stream's id; others do not.
    server
        .add_prompt(
            Prompt::new("late", "d", vec![]),
            |_a, _c: Context| async move { Ok(oxmcp::protocol::GetPromptResult::default()) },
        )
        .unwrap();
    server.notify_resource_updated("test://static-text");
    server.notify_resource_updated("test://watched-resource");
    server
        .add_tool(
            Tool::new("late_tool", "d", json!({"type": "object"})),
            |_a: Value, _c: Context| async move { Ok(CallToolResult::text("x")) },
        )
        .unwrap();
    let n = next(&mut sub).await;
    assert_eq!(n.method, "notifications/resources/updated");
    assert_eq!(n.params.as_ref().unwrap()["uri"], "test://watched-resource");
    let id = sub.id().to_value();
    assert_eq!(
        n.params.as_ref().unwrap()["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    let n = next(&mut sub).await;
    assert_eq!(n.method, "notifications/tools/list_changed");
    // Nothing leaked to the general callback (the stateless era has no unsolicited notifications).
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );
    // Dropping the subscription cancels the request on the server.
    let sub_id = sub.id().clone();
    drop(sub);
    for _ in 0..300 {
        if pair.server_session.in_flight() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(pair.server_session.in_flight(), 0);
    let cancels: Vec<Value> = pair
        .wire
        .sent_with_method(Side::Client, "notifications/cancelled");
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0]["params"]["requestId"], sub_id.to_value());
    pair.finish().await;
}

#[tokio::test]
async fn the_server_can_end_listen_streams() {
    let (server, pair) = fixture_pair(client_options()).await;
    let mut sub = pair
        .client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    server.end_subscriptions();
    let end = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("the stream ends");
    assert!(end.is_none());
    let results: Vec<Value> = pair
        .wire
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m["id"] == sub.id().to_value() && m.get("result").is_some())
        .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        sub.id().to_value()
    );
    pair.finish().await;
}

#[tokio::test]
async fn listen_is_refused_outside_the_stateless_era() {
    let (server, pair) = fixture_pair(
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
    )
    .await;
    assert!(
        pair.client
            .listen(SubscriptionFilter::default())
            .await
            .is_err()
    );
    pair.finish().await;
    let (mut peer, _s) = RawPeer::connect(&server);
    peer.initialize("2025-11-25").await;
    let r = peer
        .request(
            json!(0),
            "subscriptions/listen",
            json!({"notifications": {}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32601);
    // A malformed filter is invalid params.
    let r = peer
        .stateless_request(
            json!(1),
            "subscriptions/listen",
            json!({"notifications": 5}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    peer.wire.assert_valid();
}
