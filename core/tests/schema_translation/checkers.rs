//! The checkers that run on every translation, blessed or not: OpenAI's strict-mode rules
//! (keywords, formats, nesting, required and closed objects), and no constraint of the source
//! schema lost without a note saying so.

use oxmcp::schema::{Provider, TranslateOptions, translate_tool};
use serde_json::{Value, json};

use crate::{inputs, run};

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
