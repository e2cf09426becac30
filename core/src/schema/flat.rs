//! A fast path for the flat object schemas most tools declare: `{"type": "object",
//! "properties": {"city": {"type": "string"}, ...}, "required": [...]}`.
//!
//! Compiling such a schema with the general validator runs the whole JSON Schema machinery
//! (the meta-schema check, the keyword compilers, the regex engines): about 4.5 M instructions
//! before a server's first answer and a few MiB of code paged in at the first tool
//! registration, for what is a handful of type checks. A schema is recognised here only when
//! every keyword in it is one whose meaning is fixed and the same in every dialect we accept
//! (no `$ref`, no `pattern`, no combinators): then [`FlatObject::is_valid`] decides exactly
//! what the general validator would. Anything else, or any doubt, goes to the general
//! validator. When an instance is invalid, the caller still asks the general validator for the
//! wording of the errors, so users see one set of messages whichever path ran (`validate.rs`).

use serde_json::{Map, Value};

/// The JSON type a property is declared with (`None` in [`Property`]: any value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonType {
    String,
    Integer,
    Number,
    Boolean,
    Null,
    Array,
    Object,
}

impl JsonType {
    fn parse(name: &str) -> Option<JsonType> {
        Some(match name {
            "string" => JsonType::String,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "boolean" => JsonType::Boolean,
            "null" => JsonType::Null,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            _ => return None,
        })
    }

    fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (JsonType::String, Value::String(_))
            | (JsonType::Number, Value::Number(_))
            | (JsonType::Boolean, Value::Bool(_))
            | (JsonType::Null, Value::Null)
            | (JsonType::Array, Value::Array(_))
            | (JsonType::Object, Value::Object(_)) => true,
            // Since draft 6 an integer is a number with no fractional part: `1.0` is one.
            (JsonType::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        }
    }
}

/// A recognised flat object schema.
#[derive(Debug)]
pub(super) struct FlatObject {
    /// Declared properties in schema order, each with its type (`None`: any value).
    properties: Vec<(String, Option<JsonType>)>,
    required: Vec<String>,
    /// `additionalProperties: false`: keys outside `properties` are refused.
    closed: bool,
}

/// More properties than this go to the general validator (its lookup is a map).
const MAX_PROPERTIES: usize = 32;

/// Dialects in which every keyword accepted here means the same (draft 4 is left out: there
/// `1.0` is not an integer).
const SAME_MEANING_DIALECTS: [&str; 4] = [
    "json-schema.org/draft/2020-12/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft-06/schema",
];

impl FlatObject {
    /// The flat reading of `schema`, if it is one.
    pub(super) fn recognise(schema: &Value) -> Option<FlatObject> {
        let map = schema.as_object()?;
        let mut flat = FlatObject {
            properties: Vec::new(),
            required: Vec::new(),
            closed: false,
        };
        let mut typed_object = false;
        for (key, value) in map {
            match key.as_str() {
                "type" => typed_object = value.as_str() == Some("object"),
                "properties" => {
                    let declared = value.as_object()?;
                    // Looked up by a scan per key: only for the few properties tools have.
                    if declared.len() > MAX_PROPERTIES {
                        return None;
                    }
                    flat.properties = properties(declared)?;
                }
                "required" => flat.required = required(value)?,
                "additionalProperties" => flat.closed = !value.as_bool()?,
                "title" | "description" => {
                    value.as_str()?;
                }
                "$schema" => {
                    let uri = value.as_str()?.trim_end_matches('#');
                    let uri = uri
                        .strip_prefix("https://")
                        .or_else(|| uri.strip_prefix("http://"))?;
                    if !SAME_MEANING_DIALECTS.contains(&uri) {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        typed_object.then_some(flat)
    }

    /// Whether `instance` satisfies the schema (exactly as the general validator decides).
    pub(super) fn is_valid(&self, instance: &Value) -> bool {
        let Value::Object(object) = instance else {
            return false;
        };
        // One pass over the arguments, comparing names instead of looking each required one
        // up in the map (which would hash it). Keys are unique and `required` is distinct, so
        // counting the required keys met is exact.
        let mut required_met = 0;
        for (key, value) in object {
            match self.properties.iter().find(|(name, _)| name == key) {
                Some((_, Some(kind))) if !kind.admits(value) => return false,
                Some(_) => {}
                None if self.closed => return false,
                None => {}
            }
            required_met += usize::from(self.required.iter().any(|name| name == key));
        }
        required_met == self.required.len()
    }
}

fn properties(map: &Map<String, Value>) -> Option<Vec<(String, Option<JsonType>)>> {
    map.iter()
        .map(|(name, schema)| Some((name.clone(), property(schema.as_object()?)?)))
        .collect()
}

/// One property's type, if its schema holds only a type and annotations (the `items: {}` and
/// `additionalProperties: true` that say "anything" are accepted with arrays and objects).
fn property(schema: &Map<String, Value>) -> Option<Option<JsonType>> {
    let kind = match schema.get("type") {
        None => None,
        Some(name) => Some(JsonType::parse(name.as_str()?)?),
    };
    for (key, value) in schema {
        let plain = match key.as_str() {
            "type" | "default" => true,
            "title" | "description" => value.is_string(),
            "items" => {
                kind == Some(JsonType::Array) && value.as_object().is_some_and(Map::is_empty)
            }
            "additionalProperties" => kind == Some(JsonType::Object) && value == &Value::Bool(true),
            _ => false,
        };
        if !plain {
            return None;
        }
    }
    Some(kind)
}

/// `required`: distinct strings (the meta-schema refuses repeats; leave those to it).
fn required(value: &Value) -> Option<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for name in value.as_array()? {
        let name = name.as_str()?;
        if names.iter().any(|n| n == name) {
            return None;
        }
        names.push(name.to_owned());
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn general(schema: &Value) -> jsonschema::Validator {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(schema)
            .unwrap()
    }

    /// The fast path decides every instance exactly as the general validator does.
    #[test]
    fn decides_as_the_general_validator() {
        let schemas = [
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            json!({"type": "object", "properties": {}}),
            json!({"type": "object"}),
            json!({"type": "object", "title": "T", "description": "d", "properties": {
                "n": {"type": "integer", "default": 3, "title": "N"},
                "x": {"type": "number"},
                "b": {"type": "boolean", "default": false},
                "z": {"type": "null"},
                "l": {"type": "array", "items": {}},
                "d": {"type": "object", "additionalProperties": true},
                "any": {"description": "anything"}
            }, "required": ["n", "any"]}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                   "properties": {"result": {"type": "integer"}}, "required": ["result"]}),
        ];
        let instances = [
            json!({}),
            json!({"text": "hi"}),
            json!({"text": 3}),
            json!({"text": null}),
            json!({"text": "hi", "extra": 1}),
            json!({"n": 1, "any": null}),
            json!({"n": 1.0, "any": []}),
            json!({"n": 1.5, "any": 0}),
            json!({"n": 1e20, "any": 0}),
            json!({"n": -0.0, "any": 0}),
            json!({"n": 18446744073709551615u64, "any": 0}),
            json!({"n": "1", "any": 0}),
            json!({"n": 1, "x": 2, "b": true, "z": null, "l": [1], "d": {"k": 1}, "any": {}}),
            json!({"n": 1, "any": 1, "x": "2"}),
            json!({"n": 1, "any": 1, "b": 0}),
            json!({"n": 1, "any": 1, "z": false}),
            json!({"n": 1, "any": 1, "l": {}}),
            json!({"n": 1, "any": 1, "d": []}),
            json!({"a": "x"}),
            json!({"a": "x", "b": 1}),
            json!({"result": 7}),
            json!({"result": 7.0}),
            json!({"result": "7"}),
            json!([]),
            json!("text"),
            json!(null),
            json!(1),
        ];
        for schema in &schemas {
            let flat =
                FlatObject::recognise(schema).unwrap_or_else(|| panic!("not flat: {schema}"));
            let general = general(schema);
            for instance in &instances {
                assert_eq!(
                    flat.is_valid(instance),
                    general.is_valid(instance),
                    "schema {schema}, instance {instance}"
                );
            }
        }
    }

    /// Anything with a keyword whose meaning is not fixed here goes to the general validator.
    #[test]
    fn leaves_everything_else_alone() {
        for schema in [
            json!({"properties": {"a": {"type": "string"}}}), // no `"type": "object"`
            json!({"type": ["object", "null"]}),
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}}),
            json!({"type": "object", "properties": {"a": {"enum": ["x"]}}}),
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}),
            json!({"type": "object", "properties": {"a": {"type": "object", "additionalProperties": false}}}),
            json!({"type": "object", "properties": {"a": {"type": "strung"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "title": 3}}}),
            json!({"type": "object", "properties": {"a": true}}),
            json!({"type": "object", "required": ["a", "a"]}),
            json!({"type": "object", "required": "a"}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "patternProperties": {"^x": {}}}),
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}),
            json!({"$schema": "urn:nonsense", "type": "object"}),
            json!({"type": "object", "$id": "https://example.com/s"}),
            json!("object"),
        ] {
            assert!(FlatObject::recognise(&schema).is_none(), "{schema}");
        }
        let many: Map<String, Value> = (0..=MAX_PROPERTIES)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        assert!(FlatObject::recognise(&json!({"type": "object", "properties": many})).is_none());
    }
}
