//! Normalising a tool's `inputSchema` before it is translated for any provider.
//!
//! Servers emit schemas in several dialects and with several quirks: draft-07 `definitions`
//! (zod 3, TS SDK v1), `$schema` markers that Gemini rejects, `{}` for a tool without
//! parameters (early rmcp), arrays without `items`, zod 4's safe-integer bounds on every
//! integer, pydantic's root `title`. [`normalize`] turns all of them into one 2020-12 shape so
//! that each provider file only has to know its own rules.
//!
//! Schemas come from peers, so [`check`] runs first and refuses what could hang, crash or
//! reach out: nesting beyond [`MAX_TRANSLATE_DEPTH`], documents beyond [`MAX_SCHEMA_BYTES`],
//! a `$ref` that points outside the document (never fetched, whatever its scheme) and `$ref`
//! chains that loop without ever reaching a schema.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::walk::{self, for_each_child, for_each_child_mut};
use crate::Error;

/// Deepest nesting of a tool schema (in JSON levels) that is translated.
pub const MAX_TRANSLATE_DEPTH: usize = 64;

/// Largest tool schema (approximate JSON bytes) that is translated.
pub const MAX_SCHEMA_BYTES: usize = 1 << 20;

/// The largest integer JSON can carry exactly; zod 4 puts ± this on every `z.int()`.
const SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Refuses schemas that are too deep, too large, or refer outside themselves.
pub fn check(schema: &Value) -> Result<(), Error> {
    let mut budget = MAX_SCHEMA_BYTES;
    measure(schema, 0, &mut budget)?;
    let mut refs = Vec::new();
    collect_refs(schema, &mut refs);
    for r in &refs {
        if !r.starts_with('#') {
            return Err(Error::InvalidSchema(format!(
                "`$ref` to `{r}` refused: only references inside the schema (`#...`) are \
                 followed, and oxmcp never fetches a schema"
            )));
        }
        follow_chain(schema, r)?;
    }
    Ok(())
}

/// Walks the value once, failing as soon as it is too deep or too large.
fn measure(value: &Value, depth: usize, budget: &mut usize) -> Result<(), Error> {
    if depth > MAX_TRANSLATE_DEPTH {
        return Err(Error::InvalidSchema(format!(
            "schema nests deeper than {MAX_TRANSLATE_DEPTH} levels"
        )));
    }
    let cost = match value {
        Value::String(s) => s.len() + 2,
        Value::Object(m) => 2 + m.keys().map(|k| k.len() + 4).sum::<usize>(),
        Value::Array(a) => 2 + a.len(),
        _ => 5,
    };
    *budget = budget.checked_sub(cost).ok_or_else(|| {
        Error::InvalidSchema(format!("schema is larger than {MAX_SCHEMA_BYTES} bytes"))
    })?;
    match value {
        Value::Object(m) => m.values().try_for_each(|v| measure(v, depth + 1, budget)),
        Value::Array(a) => a.iter().try_for_each(|v| measure(v, depth + 1, budget)),
        _ => Ok(()),
    }
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    if let Value::Object(map) = value {
        for key in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(Value::String(r)) = map.get(key) {
                out.push(r.clone());
            }
        }
        for_each_child(map, |_, sub| collect_refs(sub, out));
    }
}

/// Follows a chain of schemas that are nothing but `$ref`s; a loop is refused (it has no
/// meaning and would make any resolver spin).
fn follow_chain(root: &Value, start: &str) -> Result<(), Error> {
    let mut seen = HashSet::new();
    let mut at = start.to_owned();
    loop {
        if !seen.insert(at.clone()) {
            return Err(Error::InvalidSchema(format!(
                "`$ref` `{start}` loops back to `{at}` without reaching a schema"
            )));
        }
        let target = resolve(root, &at)?;
        match target.get("$ref").and_then(Value::as_str) {
            Some(next) if target.as_object().is_some_and(|m| m.len() == 1) => at = next.to_owned(),
            _ => return Ok(()),
        }
    }
}

/// The schema a local `$ref` (`#`, `#/$defs/X`, `#/definitions/X`, any JSON pointer) names.
pub fn resolve<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, Error> {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Err(Error::InvalidSchema(format!(
            "`$ref` to `{reference}` refused: not a reference inside the schema"
        )));
    };
    if pointer.is_empty() {
        return Ok(root);
    }
    if !pointer.starts_with('/') {
        return Err(Error::InvalidSchema(format!(
            "`$ref` `{reference}`: anchors are not supported, use a JSON pointer"
        )));
    }
    let mut at = root;
    for token in pointer[1..].split('/') {
        let token = walk::unescape(token);
        at = match at {
            Value::Object(m) => m.get(&token),
            Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        }
        .ok_or_else(|| Error::InvalidSchema(format!("`$ref` `{reference}` points at nothing")))?;
    }
    Ok(at)
}

/// Checks and normalises a tool's input schema into one 2020-12 shape (see the module doc).
pub fn normalize(schema: &Value) -> Result<Value, Error> {
    check(schema)?;
    let mut root = match schema {
        Value::Object(m) => m.clone(),
        Value::Bool(true) | Value::Null => Map::new(),
        other => {
            return Err(Error::InvalidSchema(format!(
                "a tool's inputSchema must be an object schema, not `{other}`"
            )));
        }
    };
    match root.get("type") {
        None => {
            root.insert("type".into(), json!("object"));
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(Error::InvalidSchema(format!(
                "a tool's inputSchema must have type `object`, not {other}"
            )));
        }
    }
    if !root.contains_key("properties") {
        root.insert("properties".into(), json!({}));
    }
    // The root title is the generator's class name (`get_weatherArguments`), not a hint.
    root.remove("title");
    // draft-07 `definitions` become `$defs`, and every pointer into them follows.
    if let Some(Value::Object(defs)) = root.remove("definitions") {
        let target = root
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(t) = target {
            for (k, v) in defs {
                t.entry(k).or_insert(v);
            }
        }
    }
    let mut root = Value::Object(root);
    clean(&mut root);
    Ok(root)
}

fn clean(value: &mut Value) {
    let Value::Object(map) = value else { return };
    for key in ["$schema", "$id", "$comment"] {
        map.remove(key);
    }
    if let Some(Value::String(r)) = map.get_mut("$ref")
        && let Some(rest) = r.strip_prefix("#/definitions/")
    {
        *r = format!("#/$defs/{rest}");
    }
    if let Some(Value::Object(defs)) = map.remove("definitions") {
        // Nested definitions (rare) are kept under `$defs` at the same place.
        let target = map
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(t) = target {
            for (k, v) in defs {
                t.entry(k).or_insert(v);
            }
        }
    }
    let is = |map: &Map<String, Value>, t: &str| match map.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|x| x == t),
        _ => false,
    };
    if is(map, "array") && !map.contains_key("items") && !map.contains_key("prefixItems") {
        map.insert("items".into(), json!({}));
    }
    if is(map, "object") && !map.contains_key("properties") {
        map.insert("properties".into(), json!({}));
    }
    if is(map, "integer") {
        for (key, bound) in [("minimum", -SAFE_INTEGER), ("maximum", SAFE_INTEGER)] {
            if map.get(key).and_then(Value::as_f64) == Some(bound) {
                map.remove(key);
            }
        }
    }
    for_each_child_mut(map, clean);
}

/// Whether a schema accepts `null` (used to tell a property that was made nullable for
/// OpenAI strict mode from one that was nullable already).
pub fn accepts_null(root: &Value, schema: &Value, depth: usize) -> bool {
    if depth > MAX_TRANSLATE_DEPTH {
        return false;
    }
    let Value::Object(m) = schema else {
        return schema == &Value::Bool(true);
    };
    if let Some(r) = m.get("$ref").and_then(Value::as_str)
        && let Ok(target) = resolve(root, r)
        && accepts_null(root, target, depth + 1)
    {
        return true;
    }
    match m.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(a)) if a.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    if m.get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| e.contains(&Value::Null))
        || m.get("const") == Some(&Value::Null)
    {
        return true;
    }
    ["anyOf", "oneOf"].iter().any(|k| {
        m.get(*k)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(|b| accepts_null(root, b, depth + 1)))
    })
}
