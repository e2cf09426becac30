//! Tools: `tools/list`, `tools/call` and their payloads.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

use super::{ContentBlock, JsonObject};

/// Behaviour hints about a tool (2025-03-26+). Hints, never guarantees.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display name.
    pub title: Option<String>,
    /// The tool does not modify its environment.
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A tool definition, as listed by `tools/list`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Unique name.
    pub name: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: Option<String>,
    /// JSON Schema of the arguments object.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent` (2025-06-18+).
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25+).
    pub icons: Option<Vec<Value>>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (`execution`, …).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Tool {
    /// A tool with a name, description and input schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        let input_schema = match input_schema {
            Value::Object(o) => o,
            _ => JsonObject::new(),
        };
        Tool {
            name: name.into(),
            description: Some(description.into()),
            input_schema,
            ..Default::default()
        }
    }

    /// Sets the output schema.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        if let Value::Object(o) = schema {
            self.output_schema = Some(o);
        }
        self
    }

    /// Sets the annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

/// Params of a paginated list request.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Opaque cursor from a previous page.
    pub cursor: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// Result of `tools/list`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// This page of tools.
    pub tools: Vec<Tool>,
    /// Cursor for the next page, if any.
    pub next_cursor: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (`ttlMs`, `cacheScope`, `resultType` in 2026-07-28).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `tools/call`.
///
/// Deserialized by hand (see the impl below): `#[serde(flatten)]` would buffer the whole object
/// into serde's private `Content` tree and decode it a second time, on every call.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CallToolRequestParams {
    /// The tool to call.
    pub name: String,
    /// Arguments; validated against the tool's `inputSchema`.
    pub arguments: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (`task`, `inputResponses`, `requestState`, …).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One pass over the object: the three known members are decoded in place and every other
/// member goes into `extra`, as the derived (flattening) impl would, with the same errors
/// (`missing field`, `duplicate field`) and the last of repeated unknown members kept.
impl<'de> Deserialize<'de> for CallToolRequestParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Params;
        impl<'de> serde::de::Visitor<'de> for Params {
            type Value = CallToolRequestParams;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("struct CallToolRequestParams")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                use serde::de::Error;
                let mut name: Option<String> = None;
                let mut arguments: Option<Option<JsonObject>> = None;
                let mut meta: Option<Option<JsonObject>> = None;
                let mut extra = JsonObject::new();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Name if name.is_some() => {
                            return Err(A::Error::duplicate_field("name"));
                        }
                        Key::Name => name = Some(map.next_value()?),
                        Key::Arguments if arguments.is_some() => {
                            return Err(A::Error::duplicate_field("arguments"));
                        }
                        Key::Arguments => arguments = Some(map.next_value()?),
                        Key::Meta if meta.is_some() => {
                            return Err(A::Error::duplicate_field("_meta"));
                        }
                        Key::Meta => meta = Some(map.next_value()?),
                        Key::Other(key) => {
                            let value: Value = map.next_value()?;
                            extra.insert(key, value);
                        }
                    }
                }
                Ok(CallToolRequestParams {
                    name: name.ok_or_else(|| A::Error::missing_field("name"))?,
                    arguments: arguments.flatten(),
                    meta: meta.flatten(),
                    extra,
                })
            }
        }
        d.deserialize_map(Params)
    }
}

/// A member name of `tools/call` params: the known ones are matched without allocating.
enum Key {
    Name,
    Arguments,
    Meta,
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = Key;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "name" => Key::Name,
                    "arguments" => Key::Arguments,
                    "_meta" => Key::Meta,
                    other => Key::Other(other.to_owned()),
                })
            }

            fn visit_string<E: serde::de::Error>(self, key: String) -> Result<Key, E> {
                Ok(match key.as_str() {
                    "name" | "arguments" | "_meta" => self.visit_str(&key)?,
                    _ => Key::Other(key),
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// Result of `tools/call`. A failing tool reports `is_error: true`, not a protocol error.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content.
    pub content: Vec<ContentBlock>,
    /// Structured content matching the tool's `outputSchema` (2025-06-18+).
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    pub is_error: Option<bool>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CallToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            ..Default::default()
        }
    }

    /// A failed result with one text block explaining why.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            is_error: Some(true),
            ..Default::default()
        }
    }

    /// A successful structured result; the JSON is also given as text for older clients.
    pub fn structured(value: Value) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(value.to_string())],
            structured_content: Some(value),
            ..Default::default()
        }
    }

    /// Whether the tool reported failure.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// All text blocks joined by newlines.
    pub fn text_content(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Result<CallToolRequestParams, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn call_params_are_read_in_one_pass_with_unknown_members_kept() {
        let p = parse(
            r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1},"task":{"ttl":5},"x":1,"x":2}"#,
        )
        .unwrap();
        assert_eq!(p.name, "echo");
        assert_eq!(p.arguments, json!({"text": "hi"}).as_object().cloned());
        assert_eq!(p.meta, json!({"progressToken": 1}).as_object().cloned());
        assert_eq!(Value::Object(p.extra), json!({"task": {"ttl": 5}, "x": 2}));
        // An escaped key is still the key it spells.
        assert_eq!(parse(r#"{"n\u0061me":"e"}"#).unwrap().name, "e");
        assert_eq!(
            parse(r#"{"name":"e","arguments":null}"#).unwrap().arguments,
            None
        );
    }

    #[test]
    fn call_params_errors_name_the_field() {
        let missing = parse(r#"{"arguments":{}}"#).unwrap_err();
        assert!(missing.contains("missing field `name`"), "{missing}");
        let twice = parse(r#"{"name":"a","name":"b"}"#).unwrap_err();
        assert!(twice.contains("duplicate field `name`"), "{twice}");
        let twice = parse(r#"{"name":"a","arguments":{},"arguments":{}}"#).unwrap_err();
        assert!(twice.contains("duplicate field `arguments`"), "{twice}");
        let shape = parse(r#"{"name":"a","arguments":[1]}"#).unwrap_err();
        assert!(shape.contains("invalid type"), "{shape}");
        assert!(parse(r#"["echo"]"#).is_err());
        assert!(parse(r#"{"name":1}"#).is_err());
    }
}
