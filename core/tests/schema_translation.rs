//! Golden vectors for tool-schema translation (tests/fixtures/schema-translation/), the OpenAI
//! strict-mode checker, the no-constraint-lost checker, result mapping vectors, the way back
//! (tool calls → `tools/call`) and hostile schemas.
//!
//! `OXMCP_BLESS=1 cargo test --test schema_translation` rewrites the expected files; the
//! checkers below run on whatever is produced, blessed or not, so a blessed regression that
//! breaks a provider's rules still fails.

use std::{
    collections::BTreeMap,
    net::TcpListener,
    path::{Path, PathBuf},
};

use oxmcp::{
    ErrorKind,
    protocol::{CallToolResult, Tool},
    schema::{
        NameMap, NameRules, Namespace, Provider, ServerTools, ToolCall, ToolOutcome,
        TranslateOptions, Translation, normalize, result_messages, tool_calls, translate,
        translate_tool,
    },
};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/schema-translation")
}

fn inputs() -> Vec<(String, Vec<Tool>)> {
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures().join("input"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for p in paths {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let tools: Vec<Tool> = serde_json::from_value(v["tools"].clone()).unwrap();
        out.push((p.file_stem().unwrap().to_string_lossy().into_owned(), tools));
    }
    assert!(out.len() >= 5, "fixtures missing: {out:?}");
    out
}

fn run(provider: Provider, server: &str, tools: &[Tool]) -> Translation {
    translate(
        provider,
        &[ServerTools { server, tools }],
        &TranslateOptions::default(),
    )
}

fn bless() -> bool {
    std::env::var("OXMCP_BLESS").is_ok_and(|v| v == "1")
}

fn golden(path: &Path, actual: &Value) {
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = serde_json::to_string_pretty(actual).unwrap();
        text.push('\n');
        std::fs::write(path, text).unwrap();
        return;
    }
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{}: {e} (OXMCP_BLESS=1 writes it)", path.display())),
    )
    .unwrap();
    assert_eq!(
        &expected,
        actual,
        "{} differs (OXMCP_BLESS=1 rewrites it after review)",
        path.display()
    );
}

#[test]
fn golden_tool_vectors() {
    let mut count = 0;
    for (stem, tools) in inputs() {
        for provider in Provider::ALL {
            let t = run(provider, &stem, &tools);
            let actual = json!({"tools": t.request_tools(), "reports": t.reports});
            let path = fixtures()
                .join("expected")
                .join(format!("{stem}.{}.json", provider.as_str()));
            golden(&path, &actual);
            count += 1;
        }
    }
    assert_eq!(count, inputs().len() * Provider::ALL.len());
}

#[test]
fn every_real_server_tool_translates_for_every_provider() {
    for (stem, tools) in inputs() {
        for provider in Provider::ALL {
            let t = run(provider, &stem, &tools);
            assert_eq!(
                t.tools.len(),
                tools.len(),
                "{stem} {provider}: {:?}",
                t.reports
            );
            for r in &t.reports {
                assert!(r.error.is_none(), "{stem} {provider}: {r:?}");
            }
        }
    }
}

// --- OpenAI strict-mode rules ---------------------------------------------------------------

const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Every rule of OpenAI strict mode, checked on one schema node (recursively).
fn check_strict(node: &Value, path: &str, nesting: usize, problems: &mut Vec<String>) {
    let Some(m) = node.as_object() else {
        problems.push(format!("{path}: boolean schema"));
        return;
    };
    if nesting > 10 {
        problems.push(format!("{path}: nested deeper than 10"));
    }
    for k in m.keys() {
        if !STRICT_KEYWORDS.contains(&k.as_str()) {
            problems.push(format!("{path}: unsupported keyword `{k}`"));
        }
    }
    if m.contains_key("$ref") && m.len() > 1 {
        problems.push(format!("{path}: `$ref` with siblings"));
    }
    if !(m.contains_key("type")
        || m.contains_key("anyOf")
        || m.contains_key("$ref")
        || m.contains_key("enum")
        || m.contains_key("const"))
    {
        problems.push(format!("{path}: untyped"));
    }
    if let Some(f) = m.get("format").and_then(Value::as_str)
        && !STRICT_FORMATS.contains(&f)
    {
        problems.push(format!("{path}: format `{f}`"));
    }
    let is_object = match m.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(a)) => a.iter().any(|t| t == "object"),
        _ => m.contains_key("properties"),
    };
    if is_object {
        if m.get("additionalProperties") != Some(&json!(false)) {
            problems.push(format!("{path}: object not closed"));
        }
        let props = m.get("properties").and_then(Value::as_object);
        let Some(props) = props else {
            problems.push(format!("{path}: object without properties"));
            return;
        };
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for k in props.keys() {
            if !required.contains(&k.as_str()) {
                problems.push(format!("{path}: `{k}` not required"));
            }
        }
        for (k, v) in props {
            check_strict(v, &format!("{path}/properties/{k}"), nesting + 1, problems);
        }
    }
    if let Some(items) = m.get("items") {
        check_strict(items, &format!("{path}/items"), nesting + 1, problems);
    }
    for (key, nested) in [("anyOf", true), ("$defs", false)] {
        match m.get(key) {
            Some(Value::Array(a)) if nested => {
                for (i, b) in a.iter().enumerate() {
                    check_strict(b, &format!("{path}/{key}/{i}"), nesting, problems);
                }
            }
            Some(Value::Object(defs)) => {
                for (k, d) in defs {
                    check_strict(d, &format!("{path}/{key}/{k}"), nesting, problems);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn strict_schemas_obey_openai_rules() {
    let mut strict_tools = 0;
    let mut fallbacks = Vec::new();
    for (stem, tools) in inputs() {
        for provider in [Provider::OpenAi, Provider::Responses] {
            let t = run(provider, &stem, &tools);
            for (tool, report) in t.tools.iter().zip(&t.reports) {
                let (params, strict) = match provider {
                    Provider::OpenAi => {
                        (&tool["function"]["parameters"], &tool["function"]["strict"])
                    }
                    _ => (&tool["parameters"], &tool["strict"]),
                };
                assert!(
                    strict.is_boolean(),
                    "strict must always be explicit: {tool}"
                );
                if strict == &json!(true) {
                    strict_tools += 1;
                    assert!(params.get("anyOf").is_none(), "root union: {tool}");
                    assert_eq!(params["type"], "object");
                    let mut problems = Vec::new();
                    check_strict(params, "", 0, &mut problems);
                    assert!(
                        problems.is_empty(),
                        "{stem}/{}: {problems:?}\n{params:#}",
                        report.tool
                    );
                } else {
                    let why = report.fallback_reason.clone().expect("a fallback says why");
                    assert!(!why.is_empty());
                    fallbacks.push(format!("{}: {why}", report.tool));
                }
            }
        }
    }
    assert!(strict_tools > 60, "only {strict_tools} strict tools");
    // The open map and the untyped array cannot be strict; each says why.
    assert!(
        fallbacks
            .iter()
            .any(|f| f.starts_with("set_metadata") && f.contains("open map")),
        "{fallbacks:?}"
    );
    assert!(
        fallbacks
            .iter()
            .any(|f| f.starts_with("configure") && f.contains("any value")),
        "{fallbacks:?}"
    );
}

// --- No constraint lost without a note ------------------------------------------------------

const CONSTRAINTS: &[&str] = &[
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "enum",
    "const",
    "default",
    "minProperties",
    "maxProperties",
    "not",
    "dependentRequired",
    "contains",
];

fn collect_constraints(v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, val) in m {
                if CONSTRAINTS.contains(&k.as_str()) {
                    out.push((k.clone(), val.clone()));
                }
                if k == "additionalProperties" && val != &json!(true) {
                    out.push((k.clone(), val.clone()));
                }
                // Keys of these maps are names, not keywords; their values are schemas.
                if [
                    "properties",
                    "$defs",
                    "patternProperties",
                    "dependentSchemas",
                ]
                .contains(&k.as_str())
                    && let Value::Object(named) = val
                {
                    named.values().for_each(|s| collect_constraints(s, out));
                } else if !["enum", "const", "default", "examples", "required"]
                    .contains(&k.as_str())
                {
                    collect_constraints(val, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_constraints(x, out)),
        _ => {}
    }
}

/// Whether the constraint survives somewhere in the output, as itself or in an equivalent
/// form (a const as a one-value enum, an enum that also accepts null, an uppercase type).
fn survives(output: &Value, key: &str, value: &Value) -> bool {
    let mut found = false;
    let mut visit = |k: &str, v: &Value| {
        if k == key && v == value {
            found = true;
        }
        if key == "enum"
            && k == "enum"
            && let (Some(src), Some(out)) = (value.as_array(), v.as_array())
            && src.iter().all(|x| out.contains(x))
            && out.iter().all(|x| src.contains(x) || x.is_null())
        {
            found = true;
        }
        if key == "const" && k == "enum" && v.as_array().is_some_and(|e| e.contains(value)) {
            found = true;
        }
    };
    fn walk(v: &Value, f: &mut dyn FnMut(&str, &Value)) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    f(k, x);
                    walk(x, f);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
            _ => {}
        }
    }
    walk(output, &mut visit);
    found
}

#[test]
fn no_constraint_is_lost_without_a_note() {
    let mut checked = 0;
    for (stem, tools) in inputs() {
        for provider in Provider::ALL {
            for tool in &tools {
                let t = translate_tool(provider, tool, "x", &TranslateOptions::default()).unwrap();
                let mut wanted = Vec::new();
                collect_constraints(&t.source, &mut wanted);
                let output = &t.value;
                for (key, value) in wanted {
                    checked += 1;
                    let noted = t.notes.iter().any(|n| n.keyword == key && n.value == value);
                    let in_text = t.notes.iter().any(|n| {
                        n.keyword == key && output.to_string().contains(&json_escape(&n.text()))
                    });
                    assert!(
                        survives(output, &key, &value) || (noted && in_text),
                        "{stem}/{} for {provider}: `{key}: {value}` was lost\nnotes: {:?}\n{output:#}",
                        tool.name,
                        t.notes
                    );
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} constraints checked");
}

/// How a note's text appears inside the serialised output (as part of a JSON string).
fn json_escape(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap();
    quoted[1..quoted.len() - 1].to_owned()
}

#[test]
fn normalisation_handles_every_source_quirk() {
    let zod3 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "title": "Args",
        "properties": {"l": {"$ref": "#/definitions/x"}, "n": {"type": "integer", "minimum": -9007199254740991i64, "maximum": 9007199254740991i64}, "a": {"type": "array"}},
        "definitions": {"x": {"type": "string", "$comment": "c"}}
    });
    let n = normalize(&zod3).unwrap();
    assert_eq!(
        n,
        json!({
            "type": "object",
            "properties": {"l": {"$ref": "#/$defs/x"}, "n": {"type": "integer"}, "a": {"type": "array", "items": {}}},
            "$defs": {"x": {"type": "string"}}
        })
    );
    assert_eq!(
        normalize(&json!({})).unwrap(),
        json!({"type": "object", "properties": {}})
    );
    // A property called `$schema` is data, not a keyword.
    let p = normalize(&json!({"type": "object", "properties": {"$schema": {"type": "string"}}}))
        .unwrap();
    assert!(p["properties"].get("$schema").is_some());
    for bad in [json!({"type": "string"}), json!([1]), json!("x")] {
        assert_eq!(
            normalize(&bad).unwrap_err().kind(),
            ErrorKind::InvalidSchema,
            "{bad}"
        );
    }
}

// --- Results --------------------------------------------------------------------------------

#[test]
fn golden_result_vectors() {
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("results/input.json")).unwrap(),
    )
    .unwrap();
    let results: BTreeMap<String, CallToolResult> =
        serde_json::from_value(input["results"].clone()).unwrap();
    assert_eq!(results.len(), 8);
    for provider in Provider::ALL {
        let mut all = serde_json::Map::new();
        for (name, result) in &results {
            let outcome = ToolOutcome {
                call: ToolCall {
                    id: Some(format!("call_{name}")),
                    name: format!("srv__{name}"),
                    arguments: Ok(Default::default()),
                },
                result: result.clone(),
            };
            all.insert(
                name.clone(),
                Value::Array(result_messages(provider, &[outcome])),
            );
        }
        let actual = Value::Object(all);
        // What every provider's mapping must do, blessed or not.
        let text = actual.to_string();
        assert!(text.contains("Beijing"), "{provider}");
        assert!(text.contains("Unknown city: Atlantis"), "{provider}");
        assert!(
            text.contains("file:///tmp/report.pdf"),
            "{provider}: resource links degrade to text"
        );
        assert!(text.contains("Remember the milk."), "{provider}");
        assert!(
            text.contains("sum"),
            "{provider}: structured-only results reach the model"
        );
        golden(
            &fixtures().join(format!("results/expected.{}.json", provider.as_str())),
            &actual,
        );
    }
}

#[test]
fn openai_tool_messages_are_text_and_images_follow_as_user_content() {
    let image: CallToolResult = serde_json::from_value(json!({"content": [
        {"type": "text", "text": "see"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}))
    .unwrap();
    let call = |id: &str| ToolCall {
        id: Some(id.into()),
        name: "s__t".into(),
        arguments: Ok(Default::default()),
    };
    let msgs = result_messages(
        Provider::OpenAi,
        &[
            ToolOutcome {
                call: call("a"),
                result: image.clone(),
            },
            ToolOutcome {
                call: call("b"),
                result: CallToolResult::error("bad"),
            },
        ],
    );
    assert_eq!(msgs.len(), 3, "{msgs:#?}");
    assert_eq!(msgs[0]["role"], "tool");
    assert!(msgs[0]["content"].is_string());
    assert_eq!(msgs[1]["content"], "Error: bad");
    assert_eq!(msgs[2]["role"], "user");
    assert_eq!(
        msgs[2]["content"][1]["image_url"]["url"],
        "data:image/png;base64,AAAA"
    );
    let anthropic = result_messages(
        Provider::Anthropic,
        &[ToolOutcome {
            call: call("b"),
            result: CallToolResult::error("bad"),
        }],
    );
    assert_eq!(anthropic[0]["content"][0]["is_error"], true);
    let gemini = result_messages(
        Provider::Gemini,
        &[ToolOutcome {
            call: call("b"),
            result: CallToolResult::error("bad"),
        }],
    );
    assert_eq!(
        gemini[0]["parts"][0]["functionResponse"]["response"]["error"],
        "bad"
    );
}

// --- The way back ---------------------------------------------------------------------------

fn book_trip() -> Vec<Tool> {
    let (_, tools) = inputs().into_iter().find(|(s, _)| s == "pydantic").unwrap();
    tools
}

#[test]
fn tool_calls_are_read_from_every_provider_shape() {
    let args = json!({"city": "Beijing"});
    let cases = [
        (
            Provider::OpenAi,
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w__get_weather", "arguments": args.to_string()}}]}}]}),
        ),
        (
            Provider::Responses,
            json!({"output": [{"type": "reasoning"}, {"type": "function_call", "call_id": "c1", "name": "w__get_weather", "arguments": args.to_string()}]}),
        ),
        (
            Provider::Anthropic,
            json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "checking"}, {"type": "tool_use", "id": "c1", "name": "w__get_weather", "input": args}]}),
        ),
        (
            Provider::Gemini,
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "w__get_weather", "args": args}}]}}]}),
        ),
        (
            Provider::LangChain,
            json!({"type": "ai", "content": "", "tool_calls": [{"id": "c1", "name": "w__get_weather", "args": args}]}),
        ),
    ];
    for (provider, turn) in cases {
        let calls = tool_calls(provider, &turn);
        assert_eq!(calls.len(), 1, "{provider}");
        assert_eq!(calls[0].id.as_deref(), Some("c1"));
        assert_eq!(calls[0].name, "w__get_weather");
        assert_eq!(calls[0].arguments.as_ref().unwrap()["city"], "Beijing");
    }
}

#[test]
fn bad_arguments_and_unknown_names_become_text_for_the_model() {
    let tools = book_trip();
    let t = run(Provider::OpenAi, "trips", &tools);
    for raw in ["{not json", "[1,2]", "\"str\"", "{\"a\": 1"] {
        let turn = json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "trips__book_trip", "arguments": raw}}]});
        let call = &tool_calls(Provider::OpenAi, &turn)[0];
        let err = t.route(call).unwrap_err();
        assert!(
            !err.starts_with("Error") && err.contains("trips__book_trip"),
            "{raw}: {err}"
        );
        // The provider's formatter marks the error once: "Error: Error: …" reads as noise
        // to a model.
        let sent = result_messages(
            Provider::OpenAi,
            &[ToolOutcome {
                call: call.clone(),
                result: CallToolResult::error(err.clone()),
            }],
        );
        assert_eq!(sent[0]["content"], format!("Error: {err}"), "{raw}");
    }
    let call = ToolCall {
        id: None,
        name: "trips__nope".into(),
        arguments: Ok(Default::default()),
    };
    let err = t.route(&call).unwrap_err();
    assert!(
        err.contains("no tool named `trips__nope`") && err.contains("trips__book_trip"),
        "{err}"
    );
}

#[test]
fn strict_nulls_are_stripped_so_server_defaults_apply() {
    let tools = book_trip();
    let t = run(Provider::OpenAi, "trips", &tools);
    assert_eq!(t.reports[0].strict, Some(true), "{:?}", t.reports[0]);
    // What a strict model sends: every property, optional ones null.
    let args = json!({
        "traveller": "Ada", "when": "2026-12-01T10:00:00Z",
        "home": {"street": "1 Main St", "city": "Oslo", "zip": null},
        "color": null, "nights": null, "tags": null, "site": null, "mode": null, "config": null,
        "itinerary": {"label": "root", "children": [{"label": "leaf", "children": null}]}
    });
    let call = ToolCall {
        id: Some("c".into()),
        name: "trips__book_trip".into(),
        arguments: Ok(args.as_object().unwrap().clone()),
    };
    let (target, sent) = t.route(&call).unwrap();
    assert_eq!(
        (target.server.as_str(), target.tool.as_str()),
        ("trips", "book_trip")
    );
    assert_eq!(
        Value::Object(sent),
        json!({
            "traveller": "Ada", "when": "2026-12-01T10:00:00Z",
            // `zip` accepted null in the source (Optional[str]): it stays.
            "home": {"street": "1 Main St", "city": "Oslo", "zip": null},
            "site": null,
            "itinerary": {"label": "root", "children": [{"label": "leaf"}]}
        })
    );
    // Without strict mode nothing is touched.
    let loose = translate(
        Provider::OpenAi,
        &[ServerTools {
            server: "trips",
            tools: &tools,
        }],
        &TranslateOptions {
            strict: false,
            ..Default::default()
        },
    );
    let (_, sent) = loose.route(&call).unwrap();
    assert_eq!(sent["nights"], Value::Null);
}

#[test]
fn names_are_sanitised_namespaced_and_reversible() {
    let long = "x".repeat(100);
    let entries: Vec<(String, String)> = [
        ("weather", "get_weather"),
        ("weather-py", "get_weather"),
        ("fs", "read.file"),
        ("fs", "read_file"),
        ("一", "工具"),
        ("s", long.as_str()),
        ("s", &format!("{long}y")),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    for rules in [NameRules::Strict, NameRules::Gemini] {
        for ns in [Namespace::Always, Namespace::OnCollision, Namespace::Never] {
            let map = NameMap::assign(&entries, rules, ns);
            let names: Vec<&str> = entries
                .iter()
                .map(|(s, t)| map.name_of(s, t).unwrap())
                .collect();
            let unique: std::collections::HashSet<&&str> = names.iter().collect();
            assert_eq!(unique.len(), entries.len(), "{rules:?} {ns:?}: {names:?}");
            for (name, (s, t)) in names.iter().zip(&entries) {
                assert!(name.len() <= 64 && !name.is_empty(), "{name}");
                let ok = name.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || c == '_'
                        || c == '-'
                        || (rules == NameRules::Gemini && (c == '.' || c == ':'))
                });
                assert!(ok, "{name}");
                if rules == NameRules::Gemini {
                    assert!(
                        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'),
                        "{name}"
                    );
                }
                let back = map.resolve(name).unwrap();
                assert_eq!((&back.server, &back.tool), (s, t));
            }
        }
    }
    let map = NameMap::assign(&entries, NameRules::Strict, Namespace::OnCollision);
    assert_eq!(map.name_of("fs", "read_file"), Some("read_file"));
    assert_eq!(
        map.name_of("weather", "get_weather"),
        Some("weather__get_weather")
    );
}

// --- Hostile schemas ------------------------------------------------------------------------

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
