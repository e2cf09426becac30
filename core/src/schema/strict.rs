//! OpenAI strict mode (Structured Outputs for function calling).
//!
//! Strict mode guarantees that the model's arguments match the schema, but only for a subset
//! of JSON Schema: every object closed (`additionalProperties: false`), every property
//! `required`, no root `anyOf`, a short list of keywords and string formats, at most 10 levels
//! of nesting, 5,000 properties and 1,000 enum values. [`to_strict`] converts a normalised
//! schema losslessly where that is possible:
//!
//! - optional properties become required *and nullable*; [`super::strip_nulls`] removes the
//!   nulls the model then sends, so the server's own defaults still apply (converters that
//!   make defaulted fields mandatory without `null` change what the tool receives);
//! - `$ref`/`$defs` (recursion included) are kept; a `$ref` with siblings is wrapped in a
//!   one-branch `anyOf`, so no sibling constraint is merged away (openai-agents #4353);
//! - value constraints strict mode rejects (`minLength`, `format: uri`, `default`, …) move
//!   into the description with a [`Note`];
//! - what cannot be expressed at all (open maps, `allOf`, untyped values, the limits) makes
//!   the conversion fail with a reason, and the caller sends that tool with `strict: false`.

use serde_json::{Map, Value, json};

use super::{
    normalize::accepts_null,
    notes::{Note, move_to_description},
    walk,
};

/// Formats strict mode accepts.
const FORMATS: &[&str] = &[
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

/// Keywords strict mode keeps as they are.
const KEPT: &[&str] = &[
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

/// Keywords that change a schema's shape, which no note can stand in for.
const SHAPE: &[&str] = &[
    "allOf",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentSchemas",
    "prefixItems",
    "additionalItems",
    "$dynamicRef",
    "$recursiveRef",
];

/// Annotations that constrain nothing and that strict mode does not need.
const DROPPED: &[&str] = &["title", "$comment", "$anchor", "$dynamicAnchor"];

/// OpenAI's documented limits.
const MAX_NESTING: usize = 10;
const MAX_PROPERTIES: usize = 5000;
const MAX_ENUM_VALUES: usize = 1000;
const MAX_STRING_BUDGET: usize = 120_000;

/// A schema converted for strict mode, with the keywords moved into descriptions.
#[derive(Clone, Debug)]
pub struct StrictSchema {
    /// The strict schema.
    pub schema: Value,
    /// What was moved into descriptions.
    pub notes: Vec<Note>,
}

/// Converts a normalised schema for OpenAI strict mode; `Err` says why it cannot be.
pub fn to_strict(normalized: &Value) -> Result<StrictSchema, String> {
    let mut conv = Converter {
        root: normalized,
        notes: Vec::new(),
        properties: 0,
        chars: 0,
    };
    if normalized.get("anyOf").is_some() || normalized.get("oneOf").is_some() {
        return Err(
            "the root is a union (`anyOf`/`oneOf`); strict mode needs a root object".into(),
        );
    }
    let schema = conv.node(normalized, "", 0)?;
    if conv.properties > MAX_PROPERTIES {
        return Err(format!(
            "{} properties, more than strict mode's {MAX_PROPERTIES}",
            conv.properties
        ));
    }
    if conv.chars > MAX_STRING_BUDGET {
        return Err(format!(
            "{} characters of names, enum values and constants, more than strict mode's \
             {MAX_STRING_BUDGET}",
            conv.chars
        ));
    }
    Ok(StrictSchema {
        schema,
        notes: conv.notes,
    })
}

struct Converter<'a> {
    root: &'a Value,
    notes: Vec<Note>,
    properties: usize,
    chars: usize,
}

impl Converter<'_> {
    fn node(&mut self, schema: &Value, path: &str, nesting: usize) -> Result<Value, String> {
        let at = if path.is_empty() { "/" } else { path };
        let Value::Object(src) = schema else {
            return Err(format!(
                "`{at}` is the boolean schema `{schema}`; strict mode needs a typed schema"
            ));
        };
        if nesting > MAX_NESTING {
            return Err(format!(
                "`{at}` nests objects deeper than strict mode's {MAX_NESTING} levels"
            ));
        }
        let mut m = src.clone();
        for key in DROPPED {
            m.remove(*key);
        }
        if let Some(key) = SHAPE.iter().find(|k| m.contains_key(**k)) {
            return Err(format!(
                "`{at}` uses `{key}`, which strict mode cannot express"
            ));
        }
        // A `$ref` with siblings: keep both by wrapping the reference.
        if m.len() > 1
            && let Some(r) = m.remove("$ref")
        {
            m.insert("anyOf".into(), json!([{ "$ref": r }]));
        }
        if let Some(branches) = m.remove("oneOf") {
            let anyof = m.entry("anyOf").or_insert_with(|| json!([]));
            if let (Value::Array(into), Value::Array(from)) = (anyof, branches) {
                into.extend(from);
            }
            self.note(
                path,
                "oneOf",
                json!("exactly one of the alternatives must match"),
                &mut m,
            );
        }
        if let Some(Value::String(f)) = m.get("format")
            && !FORMATS.contains(&f.as_str())
        {
            move_to_description(&mut m, &["format".into()], path, &mut self.notes);
        }
        let unsupported: Vec<String> = m
            .keys()
            .filter(|k| !KEPT.contains(&k.as_str()))
            .cloned()
            .collect();
        move_to_description(&mut m, &unsupported, path, &mut self.notes);

        let typed = m.contains_key("type")
            || m.contains_key("anyOf")
            || m.contains_key("$ref")
            || m.contains_key("enum")
            || m.contains_key("const");
        if !typed {
            return Err(format!(
                "`{at}` accepts any value; strict mode needs every value typed"
            ));
        }
        if let Some(Value::Array(e)) = m.get("enum") {
            if e.len() > MAX_ENUM_VALUES {
                return Err(format!(
                    "`{at}` has {} enum values, more than strict mode's {MAX_ENUM_VALUES}",
                    e.len()
                ));
            }
            self.chars += e.iter().map(|v| v.to_string().len()).sum::<usize>();
        }
        if let Some(c) = m.get("const") {
            self.chars += c.to_string().len();
        }

        if let Some(Value::Object(defs)) = m.remove("$defs") {
            let mut out = Map::new();
            for (name, def) in &defs {
                let p = format!("{path}/$defs/{}", walk::escape(name));
                out.insert(name.clone(), self.node(def, &p, nesting)?);
            }
            m.insert("$defs".into(), Value::Object(out));
        }
        if let Some(Value::Array(branches)) = m.remove("anyOf") {
            let mut out = Vec::with_capacity(branches.len());
            for (i, b) in branches.iter().enumerate() {
                out.push(self.node(b, &format!("{path}/anyOf/{i}"), nesting)?);
            }
            m.insert("anyOf".into(), Value::Array(out));
        }
        if let Some(items) = m.remove("items") {
            if items.is_array() {
                return Err(format!("`{at}` is a tuple; strict mode cannot express it"));
            }
            let out = self.node(&items, &format!("{path}/items"), nesting + 1)?;
            m.insert("items".into(), out);
        } else if is_type(&m, "array") {
            return Err(format!("`{at}` is an array without `items`"));
        }
        if is_type(&m, "object") || m.contains_key("properties") {
            self.object(&mut m, path, at, nesting)?;
        }
        Ok(Value::Object(m))
    }

    fn object(
        &mut self,
        m: &mut Map<String, Value>,
        path: &str,
        at: &str,
        nesting: usize,
    ) -> Result<(), String> {
        match m.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(format!(
                    "`{at}` is an open map (`additionalProperties`); strict mode closes every object"
                ));
            }
        }
        let required: Vec<String> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        let props = match m.remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        let mut out = Map::new();
        for (name, prop) in &props {
            self.properties += 1;
            self.chars += name.len();
            let p = format!("{path}/properties/{}", walk::escape(name));
            let mut converted = self.node(prop, &p, nesting + 1)?;
            if !required.contains(name) && !accepts_null(self.root, prop, 0) {
                converted = nullable(converted);
            }
            out.insert(name.clone(), converted);
        }
        let all: Vec<Value> = out.keys().map(|k| Value::String(k.clone())).collect();
        m.insert("properties".into(), Value::Object(out));
        m.insert("required".into(), Value::Array(all));
        m.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }

    fn note(&mut self, path: &str, keyword: &str, value: Value, m: &mut Map<String, Value>) {
        m.insert(keyword.into(), value);
        move_to_description(m, &[keyword.into()], path, &mut self.notes);
    }
}

fn is_type(m: &Map<String, Value>, t: &str) -> bool {
    match m.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|x| x == t),
        _ => false,
    }
}

/// Lets a schema also accept `null`, in the form strict mode understands.
pub fn nullable(schema: Value) -> Value {
    let Value::Object(mut m) = schema else {
        return schema;
    };
    let add_null_to_values = |m: &mut Map<String, Value>| {
        if let Some(c) = m.remove("const") {
            m.insert("enum".into(), json!([c, null]));
        } else if let Some(Value::Array(e)) = m.get_mut("enum")
            && !e.contains(&Value::Null)
        {
            e.push(Value::Null);
        }
    };
    let has_ref = m.contains_key("$ref");
    match m.get_mut("type") {
        Some(Value::String(t)) if !has_ref => {
            let t = std::mem::take(t);
            m.insert("type".into(), json!([t, "null"]));
            add_null_to_values(&mut m);
            return Value::Object(m);
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(json!("null"));
            }
            add_null_to_values(&mut m);
            return Value::Object(m);
        }
        _ => {}
    }
    if !m.contains_key("type")
        && let Some(Value::Array(branches)) = m.get_mut("anyOf")
    {
        branches.push(json!({"type": "null"}));
        return Value::Object(m);
    }
    let description = m.remove("description");
    let mut wrapped = Map::new();
    wrapped.insert("anyOf".into(), json!([Value::Object(m), {"type": "null"}]));
    if let Some(d) = description {
        wrapped.insert("description".into(), d);
    }
    Value::Object(wrapped)
}
