//! Gemini: `functionDeclarations[] = {name, description, parametersJsonSchema}` (the path
//! that takes JSON Schema, recommended for MCP) or the legacy `parameters` (an OpenAPI 3.0
//! subset); calls in `functionCall` parts with `args` as an object; results as
//! `functionResponse` parts with `response: {output}` or `response: {error}`.
//!
//! Gemini is where MCP schemas break most often (PydanticAI #1250/#1494/#1675, LibreChat
//! #14160): `$schema` is refused even on the JSON-Schema path, a `$ref` may only have `$`
//! siblings, and the legacy path refuses `$ref`, type lists, `additionalProperties`, `const`
//! unions and non-string enums. [`json_schema`] and [`openapi`] rewrite what can be rewritten
//! losslessly (`const` → `enum`, `["T","null"]` → `nullable`, refs inlined with a cycle guard)
//! and move the rest into descriptions with a [`Note`].

use serde_json::{Map, Value, json};

use super::{
    normalize::{MAX_SCHEMA_BYTES, resolve},
    notes::{Note, move_to_description},
    results::result_text,
    translate::{CallFields, ToolCall, ToolOutcome, joined_text},
    walk,
};
use crate::{Error, protocol::ContentBlock};

/// Keywords the JSON-Schema path documents.
const JSON_KEPT: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

/// Keywords of google-genai's `Schema` model that the legacy path keeps.
const OPENAPI_KEPT: &[&str] = &[
    "type",
    "nullable",
    "description",
    "enum",
    "format",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "anyOf",
];

/// A declaration on the JSON-Schema path.
pub fn tool_json(name: &str, description: &str, schema: Value, output: Option<Value>) -> Value {
    let mut decl = json!({
        "name": name,
        "description": description,
        "parametersJsonSchema": schema,
    });
    if let Some(output) = output {
        decl["responseJsonSchema"] = output;
    }
    decl
}

/// A declaration on the legacy path (no `parameters` for a tool without any: Gemini refuses
/// an `OBJECT` with no properties).
pub fn tool_openapi(name: &str, description: &str, schema: Value) -> Value {
    let mut decl = json!({"name": name, "description": description});
    let empty = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if !empty {
        decl["parameters"] = schema;
    }
    decl
}

/// Rewrites a normalised schema for `parametersJsonSchema`.
pub fn json_schema(source: &Value) -> (Value, Vec<Note>) {
    let mut notes = Vec::new();
    let mut out = source.clone();
    json_node(&mut out, "", &mut notes);
    (out, notes)
}

fn json_node(schema: &mut Value, path: &str, notes: &mut Vec<Note>) {
    let Value::Object(m) = schema else { return };
    if let Some(c) = m.remove("const") {
        m.insert("enum".into(), json!([c]));
    }
    if m.keys().any(|k| !k.starts_with('$'))
        && let Some(r) = m.remove("$ref")
    {
        m.insert("anyOf".into(), json!([{ "$ref": r }]));
    }
    if m.get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| e.iter().any(|v| !v.is_string() && !v.is_number()))
    {
        move_to_description(m, &["enum".into()], path, notes);
    }
    let unsupported: Vec<String> = m
        .keys()
        .filter(|k| !JSON_KEPT.contains(&k.as_str()))
        .cloned()
        .collect();
    move_to_description(m, &unsupported, path, notes);
    let mut children = Vec::new();
    walk::for_each_child(m, |p, v| children.push((p, v.clone())));
    for (p, mut child) in children {
        json_node(&mut child, &format!("{path}{p}"), notes);
        set_pointer(m, &p, child);
    }
}

/// Rewrites a normalised schema for the legacy `parameters` path.
pub fn openapi(source: &Value) -> Result<(Value, Vec<Note>), Error> {
    let mut notes = Vec::new();
    let mut budget = MAX_SCHEMA_BYTES;
    let mut stack = Vec::new();
    let mut inlined = inline(source, source, "", &mut stack, &mut budget, &mut notes)?;
    if let Value::Object(m) = &mut inlined {
        m.remove("$defs");
    }
    openapi_node(&mut inlined, "", &mut notes);
    Ok((inlined, notes))
}

fn inline(
    node: &Value,
    root: &Value,
    path: &str,
    stack: &mut Vec<String>,
    budget: &mut usize,
    notes: &mut Vec<Note>,
) -> Result<Value, Error> {
    *budget = budget.checked_sub(64).ok_or_else(|| {
        Error::InvalidSchema(format!(
            "schema is larger than {MAX_SCHEMA_BYTES} bytes once its `$ref`s are expanded"
        ))
    })?;
    let Value::Object(m) = node else {
        return Ok(node.clone());
    };
    if let Some(r) = m.get("$ref").and_then(Value::as_str) {
        if stack.iter().any(|s| s == r) {
            // A recursive shape cannot be inlined; one level of it is described instead.
            let target = resolve(root, r)?;
            let mut stub = Map::new();
            stub.insert(
                "type".into(),
                target
                    .get("type")
                    .cloned()
                    .unwrap_or_else(|| json!("object")),
            );
            stub.insert("$ref".into(), json!(r));
            move_to_description(&mut stub, &["$ref".into()], path, notes);
            return Ok(Value::Object(stub));
        }
        let target = resolve(root, r)?;
        let mut merged = target.as_object().cloned().unwrap_or_default();
        for (k, v) in m {
            if k != "$ref" {
                merged.insert(k.clone(), v.clone());
            }
        }
        stack.push(r.to_owned());
        let out = inline(&Value::Object(merged), root, path, stack, budget, notes);
        stack.pop();
        return out;
    }
    let mut out = m.clone();
    out.remove("$defs");
    let mut children = Vec::new();
    walk::for_each_child(&out, |p, v| children.push((p, v.clone())));
    for (p, child) in children {
        let done = inline(&child, root, &format!("{path}{p}"), stack, budget, notes)?;
        set_pointer(&mut out, &p, done);
    }
    Ok(Value::Object(out))
}

fn openapi_node(schema: &mut Value, path: &str, notes: &mut Vec<Note>) {
    let Value::Object(m) = schema else { return };
    m.remove("title");
    if let Some(branches) = m.remove("oneOf") {
        m.insert("anyOf".into(), branches);
        m.insert(
            "oneOf".into(),
            json!("exactly one of the alternatives must match"),
        );
        move_to_description(m, &["oneOf".into()], path, notes);
    }
    // `["T", "null"]` → `T` + nullable; several types → a union.
    if let Some(Value::Array(types)) = m.get("type").cloned() {
        let real: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if real.len() < types.len() {
            m.insert("nullable".into(), json!(true));
        }
        match real.as_slice() {
            [one] => {
                m.insert("type".into(), (*one).clone());
            }
            _ => {
                m.remove("type");
                let branches: Vec<Value> = real.iter().map(|t| json!({"type": t})).collect();
                m.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    if let Some(Value::Array(branches)) = m.get("anyOf").cloned() {
        let (nulls, real): (Vec<Value>, Vec<Value>) = branches
            .into_iter()
            .partition(|b| b.get("type").and_then(Value::as_str) == Some("null"));
        if !nulls.is_empty() {
            m.insert("nullable".into(), json!(true));
        }
        let consts: Option<Vec<Value>> = real
            .iter()
            .map(|b| b.get("const").filter(|c| c.is_string()).cloned())
            .collect();
        match (consts, real.as_slice()) {
            (Some(values), _) if !values.is_empty() => {
                m.remove("anyOf");
                m.insert("type".into(), json!("string"));
                m.insert("enum".into(), Value::Array(values));
            }
            (_, [one]) => {
                m.remove("anyOf");
                if let Value::Object(inner) = one {
                    for (k, v) in inner {
                        m.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            _ => {
                m.insert("anyOf".into(), Value::Array(real));
            }
        }
    }
    if let Some(c) = m.get("const").cloned()
        && c.is_string()
    {
        m.remove("const");
        m.insert("enum".into(), json!([c]));
    }
    if let Some(Value::Array(values)) = m.get_mut("enum")
        && values.contains(&Value::Null)
    {
        values.retain(|v| !v.is_null());
        m.insert("nullable".into(), json!(true));
    }
    if m.get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| e.iter().any(|v| !v.is_string()))
    {
        move_to_description(m, &["enum".into()], path, notes);
    }
    if let Some(Value::String(f)) = m.get("format")
        && f != "enum"
        && f != "date-time"
    {
        move_to_description(m, &["format".into()], path, notes);
    }
    if m.get("additionalProperties") == Some(&Value::Bool(true)) {
        m.remove("additionalProperties"); // the default; constrains nothing
    }
    let unsupported: Vec<String> = m
        .keys()
        .filter(|k| !OPENAPI_KEPT.contains(&k.as_str()))
        .cloned()
        .collect();
    move_to_description(m, &unsupported, path, notes);
    if let Some(Value::String(t)) = m.get_mut("type") {
        *t = t.to_ascii_uppercase();
    }
    let mut children = Vec::new();
    walk::for_each_child(m, |p, v| children.push((p, v.clone())));
    for (p, mut child) in children {
        openapi_node(&mut child, &format!("{path}{p}"), notes);
        set_pointer(m, &p, child);
    }
}

/// Replaces the value at a relative JSON pointer (as produced by [`walk::for_each_child`]).
fn set_pointer(m: &mut Map<String, Value>, pointer: &str, value: Value) {
    let mut tokens = pointer
        .trim_start_matches('/')
        .split('/')
        .map(walk::unescape);
    let Some(first) = tokens.next() else { return };
    let rest: Vec<String> = tokens.collect();
    let Some(mut at) = m.get_mut(&first) else {
        return;
    };
    for t in &rest {
        at = match at {
            Value::Object(o) => match o.get_mut(t) {
                Some(v) => v,
                None => return,
            },
            Value::Array(a) => match t.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(v) => v,
                None => return,
            },
            _ => return,
        };
    }
    *at = value;
}

/// The model's content of a turn (`candidates[0].content` of a response, or the turn).
pub fn content(turn: &Value) -> &Value {
    turn.pointer("/candidates/0/content").unwrap_or(turn)
}

/// Where a `functionCall` keeps its parts.
const CALL: CallFields = CallFields {
    id: "/id",
    name: "/name",
    arguments: "/args",
};

/// The `functionCall` parts of a turn.
pub fn calls(turn: &Value) -> Vec<ToolCall> {
    let Some(parts) = content(turn).get("parts").and_then(Value::as_array) else {
        return Vec::new();
    };
    parts
        .iter()
        .filter_map(|p| p.get("functionCall"))
        .map(|c| CALL.read(c))
        .collect()
}

/// One `user` content with a `functionResponse` part per outcome.
pub fn results(outcomes: &[ToolOutcome]) -> Vec<Value> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    let parts: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let payload = match &o.result.structured_content {
                Some(s) if !o.result.is_error() => s.clone(),
                _ => Value::String(result_text(&o.result)),
            };
            let key = if o.result.is_error() { "error" } else { "output" };
            let mut response = json!({
                "name": o.call.name,
                "response": { key: payload },
            });
            if let Some(id) = &o.call.id {
                response["id"] = json!(id);
            }
            let inline: Vec<Value> = o
                .result
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Image(i) | ContentBlock::Audio(i) => Some(json!({
                        "inlineData": {"mimeType": i.mime_type, "data": i.data}
                    })),
                    ContentBlock::Resource(r) => r.resource.blob.as_ref().map(|blob| {
                        json!({"inlineData": {
                            "mimeType": r.resource.mime_type.as_deref().unwrap_or("application/octet-stream"),
                            "data": blob,
                        }})
                    }),
                    _ => None,
                })
                .collect();
            if !inline.is_empty() {
                response["parts"] = Value::Array(inline);
            }
            json!({ "functionResponse": response })
        })
        .collect();
    vec![json!({"role": "user", "parts": parts})]
}

/// The text of a turn.
pub fn text(turn: &Value) -> String {
    joined_text(content(turn).get("parts"), &[])
}
