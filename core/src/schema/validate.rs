//! Compiling and applying a JSON Schema with the safety caps described in the module above.

use std::{fmt, sync::OnceLock};

use jsonschema::{Draft, PatternOptions, Validator};
use serde_json::Value;

use super::flat::FlatObject;
use crate::Error;

/// Deepest schema nesting accepted (DESIGN §6).
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// At most this many validation errors are reported for one instance.
const MAX_REPORTED_ERRORS: usize = 8;

/// A compiled schema.
pub struct SchemaValidator {
    how: How,
}

/// Which validator decides.
enum How {
    /// A flat object schema, checked by [`FlatObject`]; the general validator is compiled
    /// only when an instance fails, for the wording of its errors.
    Flat {
        flat: FlatObject,
        schema: Value,
        draft: Draft,
        general: OnceLock<Result<Validator, String>>,
    },
    /// Everything else.
    General(Validator),
}

impl fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaValidator").finish_non_exhaustive()
    }
}

impl SchemaValidator {
    /// Compiles `schema`. The dialect is taken from `$schema` (draft-07 and 2020-12 are
    /// supported, and the drafts in between); without one it is JSON Schema 2020-12, as MCP
    /// specifies. A `$ref` to anything outside the schema document fails compilation.
    pub fn compile(schema: &Value) -> Result<Self, Error> {
        if depth(schema, 0) > MAX_SCHEMA_DEPTH {
            return Err(Error::InvalidSchema(format!(
                "schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
            )));
        }
        let draft = match schema.get("$schema").and_then(Value::as_str) {
            None => Draft::Draft202012,
            Some(uri) => dialect(uri).ok_or_else(|| {
                Error::InvalidSchema(format!("unsupported JSON Schema dialect `{uri}`"))
            })?,
        };
        if let Some(flat) = FlatObject::recognise(schema) {
            return Ok(SchemaValidator {
                how: How::Flat {
                    flat,
                    schema: schema.clone(),
                    draft,
                    general: OnceLock::new(),
                },
            });
        }
        let validator = general(schema, draft).map_err(Error::InvalidSchema)?;
        Ok(SchemaValidator {
            how: How::General(validator),
        })
    }

    /// Checks `instance`; on failure, returns one line per problem (at most a few), each
    /// naming where in the instance it is.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<String>> {
        if self.is_valid(instance) {
            return Ok(());
        }
        let validator = match &self.how {
            How::General(validator) => validator,
            How::Flat {
                schema,
                draft,
                general: compiled,
                ..
            } => match compiled.get_or_init(|| general(schema, *draft)) {
                Ok(validator) => validator,
                // Not expected (a recognised schema is a valid one); still an answer.
                Err(e) => return Err(vec![format!("the schema could not be compiled: {e}")]),
            },
        };
        let problems: Vec<String> = validator
            .iter_errors(instance)
            .take(MAX_REPORTED_ERRORS)
            .map(|e| {
                let path = e.instance_path().to_string();
                if path.is_empty() {
                    e.to_string()
                } else {
                    format!("{path}: {e}")
                }
            })
            .collect();
        Err(problems)
    }

    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        match &self.how {
            How::Flat { flat, .. } => flat.is_valid(instance),
            How::General(validator) => validator.is_valid(instance),
        }
    }
}

/// The general validator for `schema` in `draft` (patterns on the linear-time engine).
fn general(schema: &Value, draft: Draft) -> Result<Validator, String> {
    jsonschema::options()
        .with_pattern_options(PatternOptions::regex())
        .with_draft(draft)
        .build(schema)
        .map_err(|e| e.to_string())
}

fn dialect(uri: &str) -> Option<Draft> {
    let uri = uri.trim_end_matches('#');
    let uri = uri
        .strip_prefix("https://")
        .or_else(|| uri.strip_prefix("http://"))?;
    match uri {
        "json-schema.org/draft/2020-12/schema" => Some(Draft::Draft202012),
        "json-schema.org/draft/2019-09/schema" => Some(Draft::Draft201909),
        "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
        "json-schema.org/draft-06/schema" => Some(Draft::Draft6),
        "json-schema.org/draft-04/schema" => Some(Draft::Draft4),
        _ => None,
    }
}

/// Nesting depth of a JSON value, stopping as soon as it exceeds the cap.
fn depth(value: &Value, at: usize) -> usize {
    if at > MAX_SCHEMA_DEPTH {
        return at;
    }
    match value {
        Value::Object(map) => map
            .values()
            .map(|v| depth(v, at + 1))
            .max()
            .unwrap_or(at + 1),
        Value::Array(items) => items
            .iter()
            .map(|v| depth(v, at + 1))
            .max()
            .unwrap_or(at + 1),
        _ => at,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reports_where_the_instance_is_wrong() {
        let v = SchemaValidator::compile(&json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        }))
        .unwrap();
        assert!(v.validate(&json!({"city": "Oslo"})).is_ok());
        let errs = v.validate(&json!({"city": 3})).unwrap_err();
        assert!(errs[0].contains("/city"), "{errs:?}");
        assert!(v.validate(&json!({})).is_err());
    }

    #[test]
    fn flat_schemas_report_the_general_validators_words() {
        let schema = json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
            "additionalProperties": false
        });
        let fast = SchemaValidator::compile(&schema).unwrap();
        assert!(matches!(fast.how, How::Flat { .. }));
        let slow = SchemaValidator {
            how: How::General(general(&schema, Draft::Draft202012).unwrap()),
        };
        for instance in [
            json!({"city": 3}),
            json!({}),
            json!({"city": "Oslo", "days": 1.5, "x": 1}),
            json!([]),
        ] {
            let errs = fast.validate(&instance).unwrap_err();
            assert_eq!(errs, slow.validate(&instance).unwrap_err(), "{instance}");
            assert!(!errs.is_empty());
        }
        assert!(fast.validate(&json!({"city": "Oslo", "days": 2})).is_ok());
    }

    #[test]
    fn draft7_and_defs_are_understood() {
        let v = SchemaValidator::compile(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"n": {"type": "integer"}},
            "type": "object",
            "properties": {"a": {"$ref": "#/definitions/n"}}
        }))
        .unwrap();
        assert!(v.is_valid(&json!({"a": 1})));
        assert!(!v.is_valid(&json!({"a": "x"})));
    }

    #[test]
    fn network_refs_fail_closed() {
        for r in [
            "https://example.com/s.json",
            "http://127.0.0.1:9/x",
            "file:///etc/passwd",
        ] {
            let e = SchemaValidator::compile(&json!({"$ref": r})).unwrap_err();
            assert!(matches!(e, Error::InvalidSchema(_)), "{r}: {e}");
        }
    }

    #[test]
    fn deep_schemas_and_unknown_dialects_are_refused() {
        let mut s = json!({"type": "string"});
        for _ in 0..100 {
            s = json!({"items": s});
        }
        assert!(SchemaValidator::compile(&s).is_err());
        assert!(SchemaValidator::compile(&json!({"$schema": "urn:nonsense"})).is_err());
    }
}
