//! `Client::call_tool_json`: arguments spliced into the request as the caller's JSON text and
//! the server's result handed back as its own text, in both eras. Bad input: arguments that
//! are not JSON or not an object (refused before anything is sent), and a server whose result
//! is not a `CallToolResult` (a protocol error; the session stays usable).

mod common;

use std::time::Duration;

use common::*;
use oxmcp::{
    ErrorKind, ProtocolVersion,
    client::{Client, ProtocolMode},
    session::RequestOptions,
    transport::memory,
};
use serde_json::{Value, json};

fn tools_calls(wire: &Wire) -> Vec<Value> {
    wire.sent_with_method(Side::Client, "tools/call")
}

#[tokio::test]
async fn arguments_go_out_as_given_and_the_result_comes_back_as_sent() {
    for mode in all_modes() {
        let server = test_server(&Probe::default());
        let pair = pair(&server, client_options().protocol(mode.clone())).await;
        let args = r#"{"text":"h\u00e9llo \"quoted\" \n line"}"#;
        let raw = pair
            .client
            .call_tool_json("echo", Some(args), RequestOptions::default())
            .await
            .unwrap();
        let result: Value = serde_json::from_str(raw.get()).unwrap();
        assert_eq!(
            result["content"][0]["text"], "héllo \"quoted\" \n line",
            "{mode:?}"
        );
        // The same call through the typed path gives the same result.
        let typed = pair.call("echo", serde_json::from_str(args).unwrap()).await;
        assert_eq!(serde_json::to_value(&typed).unwrap(), result, "{mode:?}");

        let sent = tools_calls(&pair.wire);
        let first = &sent[0];
        assert_eq!(first["params"]["name"], "echo");
        assert_eq!(
            first["params"]["arguments"],
            serde_json::from_str::<Value>(args).unwrap()
        );
        // A progress token naming the request, as the typed path attaches.
        assert_eq!(first["params"]["_meta"]["progressToken"], first["id"]);
        pair.finish().await;
    }
}

#[tokio::test]
async fn no_arguments_and_null_arguments_send_none() {
    let server = test_server(&Probe::default());
    let pair = pair(
        &server,
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_06_18)),
    )
    .await;
    for arguments in [None, Some("null"), Some(" null ")] {
        // `echo` requires `text`: the server reports that as a tool error, not a crash.
        let raw = pair
            .client
            .call_tool_json("echo", arguments, RequestOptions::default())
            .await
            .unwrap();
        let result: Value = serde_json::from_str(raw.get()).unwrap();
        assert_eq!(result["isError"], true, "{arguments:?}: {result}");
    }
    for sent in tools_calls(&pair.wire) {
        assert!(sent["params"].get("arguments").is_none(), "{sent}");
    }
    pair.finish().await;
}

#[tokio::test]
async fn arguments_that_are_not_one_json_object_are_refused_before_sending() {
    for mode in all_modes() {
        let server = test_server(&Probe::default());
        let pair = pair(&server, client_options().protocol(mode.clone())).await;
        for bad in [
            "",
            "{",
            "not json",
            r#"{"text":"a"} {"text":"b"}"#,
            "[1, 2]",
            r#""text""#,
            "42",
            r#"{"text":"a",}"#,
        ] {
            let err = pair
                .client
                .call_tool_json("echo", Some(bad), RequestOptions::default())
                .await
                .expect_err(bad);
            assert_eq!(
                err.kind(),
                ErrorKind::InvalidArgument,
                "{mode:?} {bad:?}: {err}"
            );
        }
        assert!(tools_calls(&pair.wire).is_empty(), "{mode:?}");
        // The session is untouched.
        pair.client
            .call_tool_json("echo", Some(r#"{"text":"ok"}"#), RequestOptions::default())
            .await
            .unwrap();
        pair.finish().await;
    }
}

/// A hand-driven server on the other end of a memory pair: answers `initialize`, then each
/// `tools/call` with the next of `results`.
async fn scripted_server(peer: &mut RawPeer, results: Vec<Value>) {
    let init = peer.recv().await;
    peer.send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1"}
    }}))
    .await;
    let mut results = results.into_iter();
    while let Some(message) = peer.recv_within(Duration::from_secs(10)).await {
        if message["method"] == "tools/call" {
            let Some(result) = results.next() else { return };
            peer.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                .await;
        }
    }
}

#[tokio::test]
async fn a_result_that_is_not_a_call_tool_result_is_a_protocol_error() {
    let (a, b) = memory::pair();
    let mut peer = RawPeer::over(b);
    let bad = vec![
        json!({"content": "not a list"}),
        json!({"content": [{"type": "text"}]}),
        json!({"content": [], "isError": "yes"}),
        json!(["not", "an", "object"]),
        json!({"content": [{"type": "text", "text": "fine after all"}]}),
    ];
    let server = tokio::spawn(async move { scripted_server(&mut peer, bad).await });
    let client = Client::connect(
        a,
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_06_18)),
    )
    .await
    .unwrap();
    for _ in 0..4 {
        let err = client
            .call_tool_json("anything", Some("{}"), RequestOptions::default())
            .await
            .expect_err("an invalid result is refused");
        assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
        assert!(err.to_string().contains("tools/call"), "{err}");
    }
    // Nothing was lost: the next valid result arrives whole.
    let raw = client
        .call_tool_json("anything", Some("{}"), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(raw.get()).unwrap()["content"][0]["text"],
        "fine after all"
    );
    client.close().await;
    server.await.unwrap();
}
