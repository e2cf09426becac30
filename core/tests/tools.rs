//! Tools end to end: listing with pagination, calls, argument validation as tool results,
//! output schemas and structured content, `list_changed` on runtime registration, and the
//! failures that must stay failures of one call (a handler error, a panic).

mod common;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use common::*;
use oxmcp::{
    Error, ProtocolVersion,
    client::ProtocolMode,
    jsonrpc::codes,
    protocol::{CallToolResult, Tool},
    server::Server,
};
use serde_json::{Value, json};

fn modes() -> Vec<ProtocolMode> {
    let mut m: Vec<ProtocolMode> = ProtocolVersion::handshake_versions()
        .map(ProtocolMode::Handshake)
        .collect();
    m.push(ProtocolMode::Auto);
    m
}

#[tokio::test]
async fn listing_pages_through_every_tool_in_order() {
    for mode in modes() {
        let probe = Probe::default();
        let server = test_server_with(Server::builder("paged", "1").page_size(3), &probe);
        let pair = pair(&server, client_options().protocol(mode)).await;
        let first = pair.client.list_tools(None).await.unwrap();
        assert_eq!(first.tools.len(), 3);
        assert!(first.next_cursor.is_some());
        let all = pair.client.list_all_tools().await.unwrap();
        let names: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
        let expected: Vec<String> = server.tools().into_iter().map(|t| t.name).collect();
        assert_eq!(names, expected);
        assert!(all.len() > 6, "more than two pages");
        pair.finish().await;
    }
}

#[tokio::test]
async fn a_bad_cursor_is_invalid_params() {
    let probe = Probe::default();
    let server = test_server_with(Server::builder("paged", "1").page_size(2), &probe);
    let pair = pair(&server, client_options()).await;
    for cursor in [
        "nonsense",
        "",
        "dG9vbHMvbGlzdDo5OTk5",
        "cHJvbXB0cy9saXN0OjI",
    ] {
        let e = pair.client.list_tools(Some(cursor)).await.unwrap_err();
        assert_eq!(e.code(), Some(codes::INVALID_PARAMS), "{cursor}: {e}");
    }
    pair.finish().await;
}

#[tokio::test]
async fn calls_return_text_structured_and_image_content() {
    for mode in modes() {
        let (_probe, _server, pair) = test_pair(client_options().protocol(mode.clone())).await;
        let r = pair.call("echo", json!({"text": "hi"})).await;
        assert!(!r.is_error());
        assert_eq!(r.text_content(), "hi");
        let r = pair.call("add", json!({"a": 2, "b": 3.5})).await;
        assert_eq!(r.structured_content, Some(json!({"sum": 5.5})));
        // Structured output also arrives as text for clients that cannot read it.
        assert_eq!(
            serde_json::from_str::<Value>(&r.text_content()).unwrap(),
            json!({"sum": 5.5})
        );
        let r = pair.call("image", json!({})).await;
        assert_eq!(r.content[0].kind(), "image");
        pair.finish().await;
    }
}

#[tokio::test]
async fn invalid_arguments_are_a_tool_result_the_model_can_read() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    for (args, needle) in [
        (json!({}), "text"),
        (json!({"text": 5}), "/text"),
        (json!({"text": ["a"]}), "/text"),
    ] {
        let r = pair.call("echo", args.clone()).await;
        assert!(r.is_error(), "{args}");
        let text = r.text_content();
        assert!(
            text.contains("Invalid arguments for tool `echo`") && text.contains(needle),
            "{text}"
        );
    }
    let e = pair
        .client
        .call_tool("echo", json!("a string"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)));
    pair.finish().await;
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    let e = pair
        .client
        .call_tool("no_such_tool", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(codes::INVALID_PARAMS));
    assert!(e.to_string().contains("no_such_tool"));
    pair.finish().await;
}

#[tokio::test]
async fn tool_failures_and_bad_output_are_error_results() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    let r = pair.call("fail", json!({})).await;
    assert!(r.is_error());
    assert_eq!(r.text_content(), "boom: the tool failed");
    let r = pair.call("bad_output", json!({})).await;
    assert!(r.is_error());
    assert!(
        r.text_content().contains("does not match its outputSchema"),
        "{}",
        r.text_content()
    );
    pair.finish().await;
}

#[tokio::test]
async fn a_panicking_handler_fails_only_its_call() {
    let (_probe, _server, pair) = test_pair(client_options()).await;
    let e = pair.client.call_tool("panic", json!({})).await.unwrap_err();
    assert_eq!(e.code(), Some(codes::INTERNAL_ERROR));
    assert_echo(&pair.client, "alive").await;
    pair.finish().await;
}

#[tokio::test]
async fn runtime_registration_notifies_initialized_clients() {
    let probe = Probe::default();
    let server = test_server(&probe);
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    let options = client_options()
        .protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_06_18))
        .on_notification(move |method, _| sink.lock().unwrap().push(method.to_owned()));
    let pair = pair(&server, options).await;
    // A round trip, so the server has read `initialized`: changes made while the handshake
    // is open are told once, together, after it (see `handshake_order`); these two are told
    // one by one.
    pair.client.ping().await.unwrap();
    server
        .add_tool(
            Tool::new("late", "Added at runtime", json!({"type": "object"})),
            |_a: Value, _c| async move { Ok(CallToolResult::text("late")) },
        )
        .unwrap();
    assert!(server.remove_tool("late"));
    assert!(
        !server.remove_tool("late"),
        "removing twice reports nothing removed"
    );
    for _ in 0..100 {
        if seen.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        *seen.lock().unwrap(),
        vec!["notifications/tools/list_changed"; 2]
    );
    pair.finish().await;
}

#[tokio::test]
async fn invalid_registrations_are_refused() {
    let server = Server::builder("s", "1").build();
    let handler = |_a: Value, _c| async move { Ok(CallToolResult::text("x")) };
    for name in ["", "has space", "ünïcode", &"x".repeat(129)] {
        let e = server
            .add_tool(Tool::new(name, "d", json!({"type": "object"})), handler)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{name}: {e}");
    }
    let e = server
        .add_tool(
            Tool::new(
                "bad_schema",
                "d",
                json!({"type": "object", "properties": {"a": {"type": 5}}}),
            ),
            handler,
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidSchema(_)), "{e}");
    let e = server
        .add_tool(
            Tool::new(
                "net_ref",
                "d",
                json!({"$ref": "https://example.com/schema.json"}),
            ),
            handler,
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidSchema(_)), "{e}");
    assert!(server.tools().is_empty());
}

#[tokio::test]
async fn json_schema_2020_12_keywords_are_kept_and_enforced() {
    let server = Server::builder("s", "1").build();
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}}, "required": ["street"]}},
        "properties": {"home": {"$ref": "#/$defs/address"}},
        "additionalProperties": false
    });
    server
        .add_tool(
            Tool::new("json_schema_2020_12_tool", "d", schema.clone()),
            |_a: Value, _c| async move { Ok(CallToolResult::text("ok")) },
        )
        .unwrap();
    let pair = pair(&server, client_options()).await;
    let listed = pair.client.list_all_tools().await.unwrap();
    assert_eq!(Value::Object(listed[0].input_schema.clone()), schema);
    let ok = pair
        .call(
            "json_schema_2020_12_tool",
            json!({"home": {"street": "Main"}}),
        )
        .await;
    assert!(!ok.is_error());
    let bad = pair
        .call("json_schema_2020_12_tool", json!({"home": {}, "extra": 1}))
        .await;
    assert!(bad.is_error(), "{}", bad.text_content());
    pair.finish().await;
}
