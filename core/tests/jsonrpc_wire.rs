//! The JSON-RPC envelope on a live session: ids echoed with their JSON type, invalid requests
//! answered once with the right code, notifications and responses never answered, garbage
//! dropped without a reply, batches accepted only on 2025-03-26 (and older) sessions.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

async fn initialized(version: &str) -> (RawPeer, oxmcp::session::Session, Probe) {
    let (probe, _server, mut peer, session) = test_peer();
    peer.initialize(version).await;
    (peer, session, probe)
}

#[tokio::test]
async fn ids_come_back_exactly_as_sent() {
    let (mut peer, _s, _p) = initialized("2025-11-25").await;
    for id in [
        json!(0),
        json!(-7),
        json!(9_007_199_254_740_993_i64),
        json!("1"),
        json!(""),
        json!("ü🚀"),
        json!("a\"b"),
    ] {
        let r = peer.request(id.clone(), "ping", Value::Null).await;
        assert_eq!(r["id"], id);
        assert_eq!(r["id"].is_string(), id.is_string());
    }
    peer.wire.assert_valid();
}

#[tokio::test]
async fn invalid_requests_get_one_error_each() {
    let (mut peer, _s, _p) = initialized("2025-11-25").await;
    let cases: &[(&str, Value, i64)] = &[
        (r#"{"jsonrpc":"2.0","id":1,"method":5}"#, json!(1), -32600),
        (
            r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#,
            json!(2),
            -32600,
        ),
        (r#"{"id":3,"method":"ping"}"#, json!(3), -32600),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#,
            json!(4),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            Value::Null,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            Value::Null,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method"}"#,
            json!(5),
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":7}}"#,
            json!(6),
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#,
            json!(7),
            -32602,
        ),
        (r#"{"foo":"bar"}"#, Value::Null, -32600),
        (r#"42"#, Value::Null, -32600),
        (r#""a string""#, Value::Null, -32600),
        (
            r#"{"jsonrpc":"2.0","id":8,"id":9,"method":"ping"}"#,
            Value::Null,
            -32600,
        ),
    ];
    for (line, id, code) in cases {
        peer.send_bytes(line.as_bytes()).await;
        let r = peer.response().await;
        assert_eq!(r["id"], *id, "{line}: {r}");
        assert_eq!(r["error"]["code"], *code, "{line}: {r}");
        // Exactly one reply: the next message answers a fresh ping.
        assert_eq!(
            peer.request(json!("after"), "ping", Value::Null).await["id"],
            "after",
            "{line}"
        );
    }
    peer.wire.assert_valid();
}

#[tokio::test]
async fn garbage_notifications_and_stray_responses_get_no_reply() {
    let (mut peer, _s, _p) = initialized("2025-11-25").await;
    for line in [
        "not json",
        r#"{"jsonrpc":"2.0","method":"ping""#,
        r#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#,
        r#"{"jsonrpc":"2.0","method":"x","params":5}"#,
        r#"{"jsonrpc":"2.0","id":77,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":78,"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":79,"result":{},"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
    ] {
        peer.send_bytes(line.as_bytes()).await;
    }
    peer.send_bytes(&[0xff, 0xfe, b'{', 0x80]).await;
    assert!(peer.recv_within(Duration::from_millis(200)).await.is_none());
    assert_eq!(
        peer.request(json!(1), "ping", Value::Null).await["result"],
        json!({})
    );
    peer.wire.assert_valid();
}

#[tokio::test]
async fn a_duplicate_in_flight_id_is_refused_and_the_original_still_answers() {
    let (mut peer, session, _p) = initialized("2025-11-25").await;
    let slow = json!({"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}});
    peer.send(slow.clone()).await;
    peer.send(slow).await;
    let first = peer.response().await;
    assert_eq!(first["id"], "dup");
    assert_eq!(first["error"]["code"], -32600, "{first}");
    assert!(
        first["error"]["message"]
            .as_str()
            .unwrap()
            .contains("in flight")
    );
    let second = peer.response().await;
    assert_eq!(second["result"]["content"][0]["text"], "slept 300");
    assert_eq!(session.in_flight(), 0);
    // Once finished, the id may be reused.
    assert_eq!(
        peer.request(json!("dup"), "ping", Value::Null).await["result"],
        json!({})
    );
    peer.wire.assert_valid();
}

#[tokio::test]
async fn batches_work_on_2025_03_26_sessions() {
    for version in ["2025-03-26", "2024-11-05"] {
        let (mut peer, _s, _p) = initialized(version).await;
        peer.send_bytes(
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
                 {"jsonrpc":"2.0","method":"notifications/whatever"},
                 {"jsonrpc":"2.0","id":"2","method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}},
                 {"jsonrpc":"2.0","id":3,"method":"no/such"},
                 5]"#,
        )
        .await;
        let r = peer.response().await;
        let items = r.as_array().expect("a batch response");
        assert_eq!(items.len(), 4, "{r}");
        let by_id = |id: Value| items.iter().find(|i| i["id"] == id).cloned().unwrap();
        assert_eq!(by_id(json!(1))["result"], json!({}));
        assert_eq!(by_id(json!("2"))["result"]["content"][0]["text"], "b");
        assert_eq!(by_id(json!(3))["error"]["code"], -32601);
        assert_eq!(by_id(Value::Null)["error"]["code"], -32600);
        // A batch of notifications only gets no reply at all.
        peer.send_bytes(br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#)
            .await;
        assert!(peer.recv_within(Duration::from_millis(200)).await.is_none());
        // An empty batch is an invalid request.
        peer.send_bytes(b"[]").await;
        assert_eq!(peer.response().await["error"]["code"], -32600);
        peer.wire.assert_valid();
    }
}

#[tokio::test]
async fn batches_are_refused_from_2025_06_18_on() {
    for version in ["2025-06-18", "2025-11-25"] {
        let (mut peer, _s, _p) = initialized(version).await;
        peer.send_bytes(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#).await;
        let r = peer.response().await;
        assert_eq!(r["id"], Value::Null);
        assert_eq!(r["error"]["code"], -32600);
        assert!(
            r["error"]["message"].as_str().unwrap().contains(version),
            "{r}"
        );
        assert!(
            peer.recv_within(Duration::from_millis(100)).await.is_none(),
            "nothing else is answered"
        );
        peer.wire.assert_valid();
    }
}

#[tokio::test]
async fn nesting_beyond_the_cap_is_dropped() {
    let (mut peer, _s, _p) = initialized("2025-11-25").await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    peer.send_bytes(deep.as_bytes()).await;
    assert!(peer.recv_within(Duration::from_millis(200)).await.is_none());
    let ok_depth = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"a":{}{}}}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    peer.send_bytes(ok_depth.as_bytes()).await;
    assert_eq!(peer.response().await["id"], 2);
    peer.wire.assert_valid();
}
