//! Hostile schemas: self-references, network refs, 10,000-deep and 10 MB schemas and
//! exponential ref expansion are refused with a typed error (and left out of a whole
//! translation, the other tools kept); the JSON entry point caps nesting without recursing.

use std::net::TcpListener;

use oxmcp::{
    ErrorKind,
    protocol::Tool,
    schema::{Provider, TranslateOptions, translate_tool},
};
use serde_json::{Value, json};

use crate::run;

fn tool_with(schema: Value) -> Tool {
    Tool::new("hostile", "hostile schema", schema)
}

fn assert_refused(schema: Value, why: &str) {
    let good = Tool::new(
        "fine",
        "a fine tool",
        json!({"type": "object", "properties": {"a": {"type": "string"}}}),
    );
    let tools = vec![tool_with(schema), good];
    for provider in Provider::ALL {
        let e = translate_tool(provider, &tools[0], "hostile", &TranslateOptions::default())
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidSchema, "{provider}: {e}");
        assert!(e.to_string().contains(why), "{provider}: {e}");
        // Inside a whole translation the hostile tool is left out and reported; the rest stay.
        let t = run(provider, "s", &tools);
        assert_eq!(t.tools.len(), 1, "{provider}");
        assert!(t.reports[0].error.as_deref().unwrap().contains(why));
        assert!(t.reports[1].error.is_none());
    }
}

#[test]
fn self_referencing_schemas_are_refused() {
    assert_refused(json!({"$ref": "#"}), "loops back");
    assert_refused(
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}),
        "loops back",
    );
    assert_refused(
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
        "points at nothing",
    );
}

#[test]
fn network_refs_are_refused_without_a_fetch() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for r in [
        format!("http://127.0.0.1:{port}/schema.json"),
        format!("https://127.0.0.1:{port}/schema.json#/x"),
        "file:///etc/passwd".to_owned(),
        "other.json#/defs/a".to_owned(),
    ] {
        assert_refused(
            json!({"type": "object", "properties": {"a": {"$ref": r}}}),
            "never fetches",
        );
    }
    assert!(
        listener.accept().is_err(),
        "something connected to the $ref URL"
    );
}

#[test]
fn a_10_000_deep_schema_is_refused() {
    // Built as a value (a peer's JSON parser would already stop at 128 levels); run on a big
    // stack because dropping such a value recurses.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let mut s = json!({"type": "string"});
            for _ in 0..10_000 {
                // Not `json!`, which would serialise `s` (deeply) on every round.
                let mut props = serde_json::Map::new();
                props.insert("a".into(), s);
                let mut node = serde_json::Map::new();
                node.insert("type".into(), json!("object"));
                node.insert("properties".into(), Value::Object(props));
                s = Value::Object(node);
            }
            assert_refused(s, "deeper than 64");
        })
        .unwrap()
        .join()
        .unwrap();
    // And as text, the way it arrives: refused by the parser's own depth limit.
    let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(serde_json::from_str::<Value>(&text).is_err());
}

#[test]
fn a_10_mb_schema_is_refused() {
    let big = "x".repeat(10 << 20);
    assert_refused(
        json!({"type": "object", "properties": {"a": {"type": "string", "description": big}}}),
        "larger than",
    );
    let mut props = serde_json::Map::new();
    for i in 0..200_000 {
        props.insert(
            format!("p{i:06}"),
            json!({"type": "string", "description": "some words here"}),
        );
    }
    assert_refused(
        json!({"type": "object", "properties": props}),
        "larger than",
    );
}

#[test]
fn exponential_ref_expansion_is_refused_on_the_inlining_path() {
    // Each definition uses the next twice: inlining would build 2^40 nodes.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        defs.insert(format!("d{i}"), json!({"type": "object", "properties": {
            "l": {"$ref": format!("#/$defs/d{}", i + 1)}, "r": {"$ref": format!("#/$defs/d{}", i + 1)}}}));
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    let e = translate_tool(
        Provider::GeminiOpenApi,
        &tool_with(schema.clone()),
        "x",
        &TranslateOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidSchema);
    assert!(e.to_string().contains("expanded"), "{e}");
    // The providers that keep `$ref` take it as is.
    for p in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
        translate_tool(
            p,
            &tool_with(schema.clone()),
            "x",
            &TranslateOptions::default(),
        )
        .unwrap();
    }
}

#[test]
fn the_json_entry_point_takes_a_list_or_servers() {
    use oxmcp::schema::translate_value;
    let tools = json!([{"name": "get weather!", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]);
    let t = translate_value(Provider::Anthropic, &tools, &TranslateOptions::default()).unwrap();
    let v = t.to_value();
    let name = v["tools"][0]["name"].as_str().unwrap();
    assert!(
        name.starts_with("get_weather__") || name.starts_with("get_weather_"),
        "{name}"
    );
    assert_eq!(
        v["names"][name],
        json!({"server": "", "tool": "get weather!"})
    );
    let t = translate_value(
        Provider::Gemini,
        &json!({"a": tools, "b": tools}),
        &TranslateOptions::default(),
    )
    .unwrap();
    assert_eq!(
        t.to_value()["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    for bad in [
        json!("tools"),
        json!([{"inputSchema": {}}]),
        json!({"a": 3}),
    ] {
        let e = translate_value(Provider::OpenAi, &bad, &TranslateOptions::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}: {e}");
    }
}

/// `levels` objects `{"type": "array", "items": ...}` around a string schema, built without
/// `json!` (which would serialise the inner value on every round).
fn nested_items(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        let mut node = serde_json::Map::new();
        node.insert("type".into(), json!("array"));
        node.insert("items".into(), schema);
        schema = Value::Object(node);
    }
    schema
}

/// A `tools/list` array of one tool named `name` with `schema`, plus a fine one.
fn tools_with(name: &str, schema: Value) -> Value {
    let mut tool = serde_json::Map::new();
    tool.insert("name".into(), json!(name));
    tool.insert("inputSchema".into(), schema);
    Value::Array(vec![
        Value::Object(tool),
        json!({"name": "fine", "inputSchema": {"type": "object"}}),
    ])
}

/// Takes a value apart level by level: the ordinary drop of a 100,000-deep value recurses once
/// per level and would overflow the test thread's stack by itself.
fn drop_flat(value: Value) {
    let mut stack = vec![value];
    while let Some(mut v) = stack.pop() {
        match &mut v {
            Value::Array(a) => stack.append(a),
            Value::Object(m) => stack.extend(std::mem::take(m).into_iter().map(|(_, c)| c)),
            _ => {}
        }
    }
}

#[test]
fn the_json_entry_point_caps_nesting_at_the_wire_limit() {
    use oxmcp::schema::{MAX_VALUE_DEPTH, translate_value};
    // The array (1), the tool (2), then the schema: 125 wrappers put the string schema at level
    // 128, still accepted as a whole (that tool alone is refused, past the per-schema cap).
    let wrappers = MAX_VALUE_DEPTH - 3;
    let t = translate_value(
        Provider::OpenAi,
        &tools_with("deep", nested_items(wrappers)),
        &TranslateOptions::default(),
    )
    .unwrap();
    assert_eq!(t.tools.len(), 1);
    assert!(
        t.reports[0]
            .error
            .as_deref()
            .unwrap()
            .contains("deeper than 64")
    );
    assert!(t.reports[1].error.is_none());
    // One more level and the value itself is refused, for every provider.
    let tools = tools_with("deep", nested_items(wrappers + 1));
    for provider in Provider::ALL {
        let e = translate_value(provider, &tools, &TranslateOptions::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidSchema, "{provider}: {e}");
        assert!(e.to_string().contains("deeper than 128"), "{provider}: {e}");
    }
}

#[test]
fn a_100_000_deep_value_is_refused_by_the_json_entry_point_without_recursing() {
    use oxmcp::schema::translate_value;
    // A value, as a Rust caller or a binding could hand one over (a parser of text stops at
    // 128 levels), on the test thread's ordinary stack: a recursive clone, deserialisation or
    // drop of it would overflow that stack and abort the test binary.
    let tools = tools_with("deep", nested_items(100_000));
    for provider in Provider::ALL {
        let e = translate_value(provider, &tools, &TranslateOptions::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidSchema, "{provider}: {e}");
        assert!(e.to_string().contains("deeper than 128"), "{provider}: {e}");
    }
    // The same under a server name (the object form).
    let servers = Value::Object([("s".to_owned(), tools)].into_iter().collect());
    let e = translate_value(Provider::OpenAi, &servers, &TranslateOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidSchema, "{e}");
    drop_flat(servers);
}
