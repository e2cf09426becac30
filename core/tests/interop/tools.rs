//! The tools every SDK's tools server has (`greet`, `add`, `fail`), called the same way over
//! any transport, and the answers its row of the peer table names; then the requests the
//! schema forbids, sent on purpose.

use oxmcp::{Error, client::Client, session::RequestOptions};
use serde_json::{Value, json};

use crate::sdk::{RpcError, Sdk, assert_text, json as parse};

/// Asserts `err` is the JSON-RPC error `expected`.
pub fn assert_rpc(err: Error, expected: &RpcError) {
    let Error::Rpc(e) = err else {
        panic!("expected an RPC error, got {err:?}")
    };
    assert_eq!(e.code, expected.code, "{e:?}");
    assert_text(&e.message, expected.message);
    if let Some(data) = expected.data {
        assert_eq!(e.data, Some(parse(data)), "{e:?}");
    }
}

/// The same calls, with the same answers, whatever the era and the transport; `names`: the
/// tools the server lists (`greet`, `add` and `fail` among them).
pub async fn exercise_tools(client: &Client, sdk: &Sdk, names: &[&str]) {
    let quirks = &sdk.tools;
    let tools = client.list_all_tools().await.expect("tools/list");
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(listed, names);
    let tool = |name: &str| tools.iter().find(|t| t.name == name).unwrap();
    let (greet, add, fail) = (tool("greet"), tool("add"), tool("fail"));
    assert_eq!(greet.description.as_deref(), Some("Greet someone by name."));
    assert_eq!(
        Value::Object(greet.input_schema.clone()),
        parse(quirks.greet_input_schema)
    );
    assert_eq!(greet.output_schema, None, "greet is a plain text tool");
    for (member, value) in quirks.greet_extra {
        assert_eq!(greet.extra.get(*member), Some(&parse(value)), "{member}");
    }
    if let Some(schema) = quirks.add_input_schema {
        assert_eq!(Value::Object(add.input_schema.clone()), parse(schema));
    }
    assert_eq!(
        add.output_schema.clone().map(Value::Object),
        Some(parse(quirks.add_output_schema))
    );
    if let Some(required) = quirks.fail_output_required {
        assert_eq!(
            fail.output_schema.as_ref().map(|s| s["required"].clone()),
            Some(parse(required))
        );
    }

    // A plain text result.
    let result = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .expect("call greet");
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.text_content(), "Hello, Ada!");
    assert_eq!(result.structured_content, None);

    // Structured output, with a text fallback that is the same JSON.
    let result = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("call add");
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"sum": 5})));
    let text: Value = serde_json::from_str(&result.text_content()).expect("text is JSON");
    assert_eq!(text, json!({"sum": 5}));
    if let Some(exact) = quirks.add_text {
        assert_eq!(result.text_content(), exact);
    }

    // A failing tool: isError, and no structuredContent even where `fail` has an output
    // schema (a client must not demand one on an error result).
    let result = client
        .call_tool("fail", json!({"reason": "kaput"}))
        .await
        .expect("call fail");
    assert!(result.is_error(), "{result:?}");
    assert_eq!(result.text_content(), quirks.fail_text);
    assert_eq!(result.structured_content, None);

    // Both SDKs report an unknown tool as a tool result, not as a JSON-RPC error.
    let result = client
        .call_tool("nope", json!({}))
        .await
        .expect("call unknown tool");
    assert!(result.is_error(), "{result:?}");
    assert_eq!(result.text_content(), quirks.unknown_tool_text);

    // Arguments the SDK's validation rejects: also tool results with isError.
    for (arguments, checks) in [
        (json!({"a": "x", "b": 1}), quirks.wrong_type),
        (json!({"a": 1}), quirks.missing_argument),
    ] {
        let result = client.call_tool("add", arguments).await.expect("call add");
        assert!(result.is_error(), "{result:?}");
        assert_text(&result.text_content(), checks);
    }
}

/// Requests the schema forbids, sent on purpose (so after the wire was validated): they must
/// come back as typed JSON-RPC errors.
pub async fn malformed_requests(client: &Client, sdk: &Sdk) {
    let err = client
        .request(
            "tools/call",
            Some(json!({"arguments": {}})),
            RequestOptions::default(),
        )
        .await
        .expect_err("tools/call without a name");
    assert_rpc(err, &sdk.tools.nameless_call);
    let err = client
        .request("no/such/method", None, RequestOptions::default())
        .await
        .expect_err("unknown method");
    assert_rpc(err, &sdk.tools.unknown_method);
}
