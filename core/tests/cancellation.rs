//! Cancellation both ways: a dropped or cancelled outgoing request sends
//! `notifications/cancelled` and the peer's handler sees its token fire; a peer's cancel stops
//! our handler and no response is sent for it; bogus cancels are ignored.

mod common;

use std::time::Duration;

use common::*;
use oxmcp::{Error, session::RequestOptions};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    let (probe, _server, pair) = test_pair(client_options()).await;
    let call = pair.client.call_tool("wait_for_cancel", json!({}));
    // Let the call reach the handler, then drop the future.
    let dropped = tokio::time::timeout(Duration::from_millis(300), call).await;
    assert!(dropped.is_err(), "the call must still be pending");
    probe.wait_for("token fired").await;
    probe.wait_for("dropped").await;
    let cancels: Vec<Value> = pair
        .wire
        .sent_with_method(Side::Client, "notifications/cancelled");
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert!(cancels[0]["params"]["requestId"].is_i64());
    // The server sent no response for the cancelled request.
    let id = cancels[0]["params"]["requestId"].clone();
    assert!(
        !pair
            .wire
            .sent_by(Side::Server)
            .iter()
            .any(|m| m["id"] == id)
    );
    assert_eq!(pair.server_session.in_flight(), 0);
    pair.finish().await;
}

#[tokio::test]
async fn a_cancellation_token_cancels_a_call() {
    let (probe, _server, pair) = test_pair(client_options()).await;
    let token = CancellationToken::new();
    let client = pair.client.clone();
    let call = tokio::spawn({
        let token = token.clone();
        async move {
            client
                .call_tool_with(
                    "wait_for_cancel",
                    json!({}),
                    RequestOptions::default().cancel_with(token),
                )
                .await
        }
    });
    probe.wait_for("started").await;
    token.cancel();
    let result = call.await.unwrap();
    assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
    probe.wait_for("token fired").await;
    assert_eq!(pair.client.session().pending(), 0);
    // The session stays usable.
    assert_echo(&pair.client, "after").await;
    pair.finish().await;
}

#[tokio::test]
async fn a_peer_cancel_fires_the_handler_token_and_suppresses_the_response() {
    let (probe, _server, mut peer, session) = test_peer();
    peer.initialize("2025-11-25").await;
    peer.send(json!({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"wait_for_cancel","arguments":{}}}))
        .await;
    probe.wait_for("started").await;
    assert_eq!(session.in_flight(), 1);
    peer.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}))
        .await;
    probe.wait_for("token fired").await;
    probe.wait_for("dropped").await;
    // No response for "slow": the next thing the server says answers the ping.
    let r = peer.request(json!(9), "ping", Value::Null).await;
    assert_eq!(r, json!({"jsonrpc":"2.0","id":9,"result":{}}));
    assert_eq!(session.in_flight(), 0);
    peer.wire.assert_valid();
}

#[tokio::test]
async fn bogus_cancels_are_ignored() {
    let (_probe, _server, mut peer, _session) = test_peer();
    peer.initialize("2025-11-25").await;
    for params in [
        json!({"requestId": 12345}),
        json!({"requestId": "never-sent", "reason": 7}),
        json!({"reason": "no id"}),
        json!("not an object"),
        json!({"requestId": null}),
    ] {
        peer.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":params}))
            .await;
    }
    // Nothing is answered, and the session works.
    let r = peer
        .request(
            json!(1),
            "tools/call",
            json!({"name":"echo","arguments":{"text":"ok"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "ok");
    peer.wire.assert_valid();
}

#[tokio::test]
async fn initialize_cannot_be_cancelled() {
    let (_probe, _server, mut peer, _session) = test_peer();
    peer.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}))
        .await;
    peer.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}))
        .await;
    let r = peer.response().await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    peer.wire.assert_valid();
}

#[tokio::test]
async fn closing_the_client_fails_pending_calls_and_cancels_server_handlers() {
    let (probe, _server, pair) = test_pair(client_options()).await;
    let client = pair.client.clone();
    let call = tokio::spawn(async move { client.call_tool("wait_for_cancel", json!({})).await });
    probe.wait_for("started").await;
    pair.client.close().await;
    let result = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(result, Err(Error::ConnectionClosed { .. })),
        "{result:?}"
    );
    tokio::time::timeout(Duration::from_secs(5), pair.server_session.closed())
        .await
        .unwrap();
    probe.wait_for("dropped").await;
    // A call on a closed client fails at once.
    let again = pair.client.call_tool("echo", json!({"text": "x"})).await;
    assert!(
        matches!(again, Err(Error::ConnectionClosed { .. })),
        "{again:?}"
    );
    pair.wire.assert_valid();
}

/// A handler that watches its own token ends with a result the moment the cancel lands. The
/// cancel can land while the request's task is being polled (here: a handler that yields all
/// the time, so its task is nearly always running), between the check for the cancel and the
/// poll of the handler; the result must still not reach the peer that cancelled. (Found as a
/// rare `isError: cancelled` reply to a cancelled call of a Python `async def` tool.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_ends_on_its_cancel_is_never_answered() {
    let server = oxmcp::server::Server::builder("busy", "1").build();
    server
        .add_tool(
            oxmcp::protocol::Tool::new("busy", "spins until cancelled", json!({"type": "object"})),
            |_args: Value, ctx: oxmcp::server::Context| async move {
                let token = ctx.cancellation().clone();
                loop {
                    if token.is_cancelled() {
                        return Ok(oxmcp::protocol::CallToolResult::error("cancelled"));
                    }
                    tokio::task::yield_now().await;
                }
            },
        )
        .unwrap();
    let (mut peer, _session) = RawPeer::connect(&server);
    peer.initialize("2025-11-25").await;
    let rounds = 300;
    for i in 1..=rounds {
        let call = json!({"name": "busy", "arguments": {}});
        peer.send(json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}))
            .await;
        let cancel = json!({"requestId": i});
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}))
            .await;
        let probe = format!("probe-{i}");
        peer.send(json!({"jsonrpc": "2.0", "id": probe, "method": "ping"}))
            .await;
        // Only the probe's answer; a late answer to a cancelled call would show up as
        // something else before a later probe.
        let reply = peer.response().await;
        assert_eq!(reply["id"], json!(probe), "round {i}: {reply}");
    }
    // Whatever is still on its way has had time to arrive.
    assert!(peer.recv_within(Duration::from_millis(300)).await.is_none());
}
