//! What each SDK's feature server sends on its own: resource updates (after
//! `resources/subscribe` in the handshake era, on a `subscriptions/listen` stream in
//! 2026-07-28) and log messages (filtered by `logging/setLevel` in the handshake era, by the
//! level each request carries in 2026-07-28).

use std::time::Duration;

use oxmcp::{
    Error, ProtocolVersion,
    jsonrpc::codes,
    protocol::{LoggingLevel, SubscriptionFilter},
    session::RequestOptions,
};
use serde_json::{Value, json};

use crate::common::Side;
use crate::features::{client_options, finish, rpc, start};
use crate::sdk::Sdk;

/// Handshake era: `resources/subscribe`, then an update the server sends (the `touch` tool
/// triggers it), delivered to `on_notification`; after `resources/unsubscribe` nothing.
pub async fn resource_subscriptions(sdk: &'static Sdk, version: ProtocolVersion) {
    let Some(server) = start(sdk, version, client_options()).await else {
        return;
    };
    let client = &server.client;
    let resources = client.server().capabilities.resources.clone().unwrap();
    assert_eq!(
        (resources.subscribe, resources.list_changed),
        (Some(true), sdk.features.resources_list_changed)
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

    // One request each, and both answers were the empty result.
    let requests: Vec<Value> = ["resources/subscribe", "resources/unsubscribe"]
        .iter()
        .flat_map(|method| server.sent(method))
        .collect();
    assert_eq!(requests.len(), 2);
    let answers: Vec<Value> = server
        .wire
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| requests.iter().any(|r| r["id"] == m["id"]))
        .map(|m| m["result"].clone())
        .collect();
    assert_eq!(answers, [json!({}), json!({})]);
    server.wire.assert_valid();
    finish(server).await;
}

/// 2026-07-28 has no `resources/subscribe`: updates come on a `subscriptions/listen` stream,
/// and the handshake-era method, sent anyway, is not routed.
pub async fn resource_updates_on_a_listen_stream(sdk: &'static Sdk) {
    let Some(server) = start(sdk, ProtocolVersion::V2026_07_28, client_options()).await else {
        return;
    };
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
    finish(server).await;
}

/// `Client::subscribe_resource` and `unsubscribe_resource` refuse the stateless era locally,
/// as `set_logging_level` does (and `listen` the handshake era), rather than put a method
/// 2026-07-28 does not define on the wire.
pub async fn resources_subscribe_is_refused_locally_over_2026_07_28(sdk: &'static Sdk) {
    let Some(server) = start(sdk, ProtocolVersion::V2026_07_28, client_options()).await else {
        return;
    };
    for err in [
        server.client.subscribe_resource("test://watched").await,
        server.client.unsubscribe_resource("test://watched").await,
    ]
    .map(Result::unwrap_err)
    {
        assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    }
    server.wire.assert_valid();
    finish(server).await;
}

/// The log lines `log_messages` sends at `levels`, as `notifications/message` params.
fn log_lines(sdk: &Sdk, levels: &[&str]) -> Vec<Value> {
    levels
        .iter()
        .map(|l| json!({"level": l, "logger": sdk.names.features, "data": format!("{l} message")}))
        .collect()
}

/// What `log_messages` answers when the client set `level` with `logging/setLevel`.
fn logged(sdk: &Sdk, level: &str) -> String {
    if sdk.features.log_reply_names_level {
        format!("logged (setLevel: {level})")
    } else {
        "logged".to_owned()
    }
}

/// `ClientOptions::log_level` at `version`. Handshake era: `logging/setLevel` right after the
/// handshake, and again when the level changes; the server logs at that level and above
/// during a tool call. 2026-07-28: no `logging/setLevel`; the level rides each request's
/// `_meta` and the server sends only what the request opted in to.
pub async fn logging(sdk: &'static Sdk, version: ProtocolVersion) {
    let options = client_options().log_level(LoggingLevel::Warning);
    let Some(server) = start(sdk, version, options).await else {
        return;
    };
    if server.stateless() {
        return logging_per_request(server).await;
    }
    assert!(server.client.server().capabilities.logging.is_some());
    let (_, text) = server.call("log_messages", json!({})).await;
    assert_eq!(text, logged(sdk, "warning"));
    assert_eq!(
        server.inbox.take("notifications/message"),
        log_lines(sdk, &["warning", "error"])
    );
    let set = server.sent("logging/setLevel");
    assert_eq!(set.len(), 1);
    assert_eq!(set[0]["params"], json!({"level": "warning"}));

    // Raised, then lowered at runtime.
    for (level, name, levels) in [
        (LoggingLevel::Error, "error", &["error"][..]),
        (
            LoggingLevel::Debug,
            "debug",
            &["debug", "info", "warning", "error"],
        ),
    ] {
        server
            .client
            .set_logging_level(level)
            .await
            .expect("logging/setLevel");
        let (_, text) = server.call("log_messages", json!({})).await;
        assert_eq!(text, logged(sdk, name));
        assert_eq!(
            server.inbox.take("notifications/message"),
            log_lines(sdk, levels)
        );
    }
    server.wire.assert_valid();
    finish(server).await;
}

/// The 2026-07-28 half of [`logging`].
async fn logging_per_request(server: crate::stdio::StdioServer) {
    let sdk = server.sdk;
    let (_, text) = server.call("log_messages", json!({})).await;
    assert_eq!(text, logged(sdk, "none"));
    assert_eq!(
        server.inbox.take("notifications/message"),
        log_lines(sdk, &["warning", "error"])
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
    finish(server).await;

    // A client that asked for no level gets no log messages at all.
    let Some(server) = start(sdk, ProtocolVersion::V2026_07_28, client_options()).await else {
        return;
    };
    let (_, text) = server.call("log_messages", json!({})).await;
    assert_eq!(text, logged(sdk, "none"));
    assert!(server.inbox.take("notifications/message").is_empty());
    server.wire.assert_valid();
    finish(server).await;
}
