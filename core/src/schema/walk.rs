//! Where the subschemas of a JSON Schema live.
//!
//! Every pass over a tool schema (normalising, the strict transform, the Gemini rewrites, the
//! hostile-input checks) must tell a keyword from a property that happens to be called
//! `$schema` or `type`. This file is the one list of which keywords hold schemas, so no pass
//! guesses.

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
pub const SINGLE: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords whose value is a map of name → subschema.
pub const MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is an array of subschemas.
pub const LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Calls `f` on every direct subschema of `schema` (objects and booleans alike), with a
/// JSON-pointer suffix naming where it is.
pub fn for_each_child<'a>(schema: &'a Map<String, Value>, mut f: impl FnMut(String, &'a Value)) {
    for (key, value) in schema {
        let key = key.as_str();
        if SINGLE.contains(&key) {
            f(format!("/{key}"), value);
        } else if MAPS.contains(&key) {
            if let Value::Object(map) = value {
                for (name, sub) in map {
                    f(format!("/{key}/{}", escape(name)), sub);
                }
            }
        } else if LISTS.contains(&key) {
            if let Value::Array(items) = value {
                for (i, sub) in items.iter().enumerate() {
                    f(format!("/{key}/{i}"), sub);
                }
            }
        } else if key == "items" {
            match value {
                Value::Array(items) => {
                    for (i, sub) in items.iter().enumerate() {
                        f(format!("/items/{i}"), sub);
                    }
                }
                other => f("/items".into(), other),
            }
        }
    }
}

/// Like [`for_each_child`], mutably.
pub fn for_each_child_mut(schema: &mut Map<String, Value>, mut f: impl FnMut(&mut Value)) {
    for (key, value) in schema.iter_mut() {
        let key = key.as_str();
        if SINGLE.contains(&key) || (key == "items" && !value.is_array()) {
            f(value);
        } else if MAPS.contains(&key) {
            if let Value::Object(map) = value {
                map.values_mut().for_each(&mut f);
            }
        } else if (LISTS.contains(&key) || key == "items")
            && let Value::Array(items) = value
        {
            items.iter_mut().for_each(&mut f);
        }
    }
}

/// Escapes a name for a JSON pointer (RFC 6901).
pub fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Undoes [`escape`] and the percent-encoding a URI fragment may carry.
pub fn unescape(token: &str) -> String {
    percent_decode(token).replace("~1", "/").replace("~0", "~")
}

fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
