//! The way back from OpenAI strict mode: nulls the model sent for optional properties are
//! removed before `tools/call`, so the server's own defaults apply.
//!
//! Strict mode made every optional property required and nullable (see [`super::strict`]).
//! A model then sends `"units": null` meaning "not given"; passing that on would override the
//! server's default (or fail its validation). A null is removed only where the *source*
//! schema did not require the property and did not itself accept null, so a tool that
//! really takes `null` still receives it.

use serde_json::{Map, Value};

use super::normalize::{MAX_TRANSLATE_DEPTH, accepts_null, resolve};

/// Removes, in place, the nulls strict mode introduced into `arguments`, guided by the
/// normalised source schema.
pub fn strip_nulls(arguments: &mut Map<String, Value>, source: &Value) {
    strip_object(arguments, source, source, 0);
}

fn strip_object(args: &mut Map<String, Value>, schema: &Value, root: &Value, depth: usize) {
    let Some(schema) = object_branch(schema, root, depth) else {
        return;
    };
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    args.retain(|key, value| {
        let Some(prop) = props.get(key) else {
            return true;
        };
        !(value.is_null() && !required.contains(&key.as_str()) && !accepts_null(root, prop, 0))
    });
    for (key, value) in args.iter_mut() {
        if let Some(prop) = props.get(key) {
            strip_value(value, prop, root, depth + 1);
        }
    }
}

fn strip_value(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > MAX_TRANSLATE_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => strip_object(map, schema, root, depth),
        Value::Array(items) => {
            if let Some(item_schema) =
                object_branch(schema, root, depth).and_then(|s| s.get("items"))
            {
                for item in items {
                    strip_value(item, item_schema, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// The schema that describes an object or array value: through `$ref`s, and through an
/// `anyOf` whose only non-null branch is one schema (pydantic's `Optional[Model]`).
fn object_branch<'a>(schema: &'a Value, root: &'a Value, depth: usize) -> Option<&'a Value> {
    if depth > MAX_TRANSLATE_DEPTH {
        return None;
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return object_branch(resolve(root, r).ok()?, root, depth + 1);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let real: Vec<&Value> = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            return match real.as_slice() {
                [one] => object_branch(one, root, depth + 1),
                _ => None,
            };
        }
    }
    Some(schema)
}
