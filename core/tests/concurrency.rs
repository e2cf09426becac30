//! Concurrency: 1,000 calls in flight on one session each resolve exactly once with their own
//! answer, in both directions of the engine; a slow handler never holds up fast ones.

mod common;

use std::{collections::HashSet, time::Duration};

use common::{concurrent::*, *};
use futures::future::join_all;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_resolve_exactly_once() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    echo_concurrently(&pair.client, 1000).await;
    // Exactly one response per request on the wire, no id answered twice.
    let responses: Vec<Value> = pair
        .wire
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m.get("result").is_some())
        .collect();
    let ids: HashSet<String> = responses.iter().map(|m| m["id"].to_string()).collect();
    assert_eq!(ids.len(), responses.len(), "an id was answered twice");
    assert_eq!(responses.len(), 1000 + 1, "1000 calls + the discover probe");
    assert_eq!(pair.client.session().pending(), 0);
    assert_eq!(pair.server_session.in_flight(), 0);
    pair.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_raw_requests_with_mixed_id_types() {
    let (_probe, _server, mut peer, _session) = test_peer();
    peer.initialize("2025-11-25").await;
    // 500 integer ids and 500 string ids with the same digits: all distinct requests.
    for i in 0..500 {
        for id in [json!(i), json!(i.to_string())] {
            peer.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                "params":{"name":"echo","arguments":{"text": id.to_string()}}}))
                .await;
        }
    }
    let mut seen = HashSet::new();
    for _ in 0..1000 {
        let r = peer.response().await;
        let id = r["id"].clone();
        assert_eq!(
            r["result"]["content"][0]["text"],
            id.to_string(),
            "answer routed to the wrong id"
        );
        assert!(seen.insert(id.to_string()), "{id} answered twice");
    }
    assert!(peer.recv_within(Duration::from_millis(100)).await.is_none());
    peer.wire.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_handler_does_not_delay_fast_ones() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    // While a slow call runs, 200 fast calls complete; the slow one is still pending after.
    let slow = fast_calls_pass_a_slow_one(&pair.client, 200).await;
    assert_eq!(pair.server_session.in_flight(), 1);
    slow.abort();
    pair.finish().await;
}

#[tokio::test]
async fn server_to_client_requests_run_concurrently_too() {
    // The engine is symmetric: the server side can have many requests in flight to the client.
    let probe = Probe::default();
    let server = test_server(&probe);
    let pair = pair(
        &server,
        client_options().protocol(oxmcp::client::ProtocolMode::Handshake(
            oxmcp::ProtocolVersion::V2025_11_25,
        )),
    )
    .await;
    let pings = join_all((0..300).map(|_| {
        let s = pair.server_session.clone();
        async move { s.request("ping", None, Default::default()).await }
    }))
    .await;
    assert!(
        pings
            .iter()
            .all(|p| p.as_ref().is_ok_and(|v| v == &json!({})))
    );
    pair.finish().await;
}
