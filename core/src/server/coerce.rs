//! What a host-language tool handler returned, turned into a `CallToolResult`.
//!
//! Python and Node handlers return plain values (a string, a number, a dict, a list of content
//! blocks, a whole result). The rule that maps them onto the wire lives here, once, so both
//! bindings behave identically and a binding only converts its value to JSON first:
//!
//! | returned | result |
//! |---|---|
//! | `null` / `None` / `undefined` | no content |
//! | string | one text block |
//! | number, boolean | one text block with its JSON text |
//! | one content block (`{"type": "text", ...}`, image, audio, resource, resource_link) | that block |
//! | a list whose every element is a content block | those blocks, as given |
//! | an object with `content` (a list of blocks) and only result keys | that result, as given |
//! | any other object | `structuredContent` plus its JSON as one text block |
//! | any other list | its JSON as text; with [`Shape::Wrapped`], `structuredContent: {"result": list}` |
//!
//! [`Shape::Wrapped`] is for tools whose declared output is not an object (`-> int`, `-> list`):
//! their `outputSchema` is `{"result": ...}`, as the official Python SDK derives it, so the
//! value is wrapped to match.

use serde_json::{Map, Value};

use crate::protocol::{CallToolResult, ContentBlock};

/// How the declared output schema expects the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    /// No wrapping: objects become `structuredContent` as they are.
    #[default]
    Plain,
    /// The output schema is `{"type": "object", "properties": {"result": ...}}`: any value that
    /// is not content becomes `structuredContent: {"result": value}`.
    Wrapped,
}

/// The `type` tags of the content blocks every revision (or a later one) defines.
const BLOCK_KINDS: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

/// Keys a `CallToolResult` may carry; an object with `content` and only these is a result.
const RESULT_KEYS: [&str; 4] = ["content", "structuredContent", "isError", "_meta"];

/// Maps a handler's returned value onto a tool result (see the module table).
pub fn tool_result(value: Value, shape: Shape) -> CallToolResult {
    match value {
        Value::Null => match shape {
            Shape::Plain => CallToolResult::default(),
            Shape::Wrapped => wrapped(Value::Null),
        },
        Value::String(s) => match shape {
            Shape::Plain => CallToolResult::text(s),
            Shape::Wrapped => wrapped(Value::String(s)),
        },
        Value::Bool(_) | Value::Number(_) => match shape {
            Shape::Plain => CallToolResult::text(value.to_string()),
            Shape::Wrapped => wrapped(value),
        },
        Value::Object(obj) => {
            if let Some(block) = as_block(&obj) {
                return CallToolResult {
                    content: vec![block],
                    ..Default::default()
                };
            }
            if let Some(result) = as_result(&obj) {
                return result;
            }
            match shape {
                Shape::Plain => CallToolResult::structured(Value::Object(obj)),
                Shape::Wrapped => wrapped(Value::Object(obj)),
            }
        }
        Value::Array(items) => {
            let blocks: Option<Vec<ContentBlock>> = items
                .iter()
                .map(|v| v.as_object().and_then(as_block))
                .collect();
            match (blocks, shape) {
                (Some(blocks), _) if !items.is_empty() => CallToolResult {
                    content: blocks,
                    ..Default::default()
                },
                (_, Shape::Wrapped) => wrapped(Value::Array(items)),
                (_, Shape::Plain) => CallToolResult::text(Value::Array(items).to_string()),
            }
        }
    }
}

/// `structuredContent: {"result": value}`, with the value as text for the model.
fn wrapped(value: Value) -> CallToolResult {
    let text = match &value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut structured = Map::new();
    structured.insert("result".to_owned(), value);
    CallToolResult {
        content: vec![ContentBlock::text(text)],
        structured_content: Some(Value::Object(structured)),
        ..Default::default()
    }
}

/// An object that is a well-formed content block of a known kind.
fn as_block(obj: &Map<String, Value>) -> Option<ContentBlock> {
    let kind = obj.get("type")?.as_str()?;
    if !BLOCK_KINDS.contains(&kind) {
        return None;
    }
    serde_json::from_value::<ContentBlock>(Value::Object(obj.clone())).ok()
}

/// An object shaped like a whole `CallToolResult` (a `content` list of blocks, result keys only).
fn as_result(obj: &Map<String, Value>) -> Option<CallToolResult> {
    let content = obj.get("content")?.as_array()?;
    if !obj.keys().all(|k| RESULT_KEYS.contains(&k.as_str())) {
        return None;
    }
    if !content
        .iter()
        .all(|v| v.as_object().and_then(as_block).is_some())
    {
        return None;
    }
    if obj.get("isError").is_some_and(|v| !v.is_boolean()) {
        return None;
    }
    if obj.get("structuredContent").is_some_and(|v| !v.is_object()) {
        return None;
    }
    serde_json::from_value(Value::Object(obj.clone())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire(value: Value, shape: Shape) -> Value {
        serde_json::to_value(tool_result(value, shape)).unwrap()
    }

    #[test]
    fn scalars_become_one_text_block() {
        assert_eq!(
            wire(json!("sunny"), Shape::Plain),
            json!({"content": [{"type": "text", "text": "sunny"}]})
        );
        assert_eq!(
            wire(json!(42), Shape::Plain),
            json!({"content": [{"type": "text", "text": "42"}]})
        );
        assert_eq!(
            wire(json!(true), Shape::Plain),
            json!({"content": [{"type": "text", "text": "true"}]})
        );
        assert_eq!(wire(Value::Null, Shape::Plain), json!({"content": []}));
    }

    #[test]
    fn objects_become_structured_content_with_their_json_as_text() {
        assert_eq!(
            wire(json!({"temp": 21, "city": "Beijing"}), Shape::Plain),
            json!({
                "content": [{"type": "text", "text": "{\"temp\":21,\"city\":\"Beijing\"}"}],
                "structuredContent": {"temp": 21, "city": "Beijing"}
            })
        );
    }

    #[test]
    fn blocks_and_whole_results_pass_through() {
        let image = json!({"type": "image", "data": "AAAA", "mimeType": "image/png"});
        assert_eq!(
            wire(image.clone(), Shape::Plain),
            json!({"content": [image.clone()]})
        );
        let blocks = json!([{"type": "text", "text": "a"}, image]);
        assert_eq!(
            wire(blocks.clone(), Shape::Plain),
            json!({"content": blocks})
        );
        let result = json!({"content": [{"type": "text", "text": "no"}], "isError": true});
        assert_eq!(wire(result.clone(), Shape::Plain), result);
    }

    #[test]
    fn look_alikes_are_data_not_content() {
        // A `type` that is no content kind, or a malformed block, is the tool's own data.
        let odd = json!({"type": "weather", "text": "x"});
        assert_eq!(wire(odd.clone(), Shape::Plain)["structuredContent"], odd);
        let bad_image = json!({"type": "image", "data": 1});
        assert_eq!(
            wire(bad_image.clone(), Shape::Plain)["structuredContent"],
            bad_image
        );
        // `content` beside keys a result does not have is data too.
        let data = json!({"content": [], "author": "me"});
        assert_eq!(wire(data.clone(), Shape::Plain)["structuredContent"], data);
        let wrong_flag = json!({"content": [], "isError": "yes"});
        assert_eq!(
            wire(wrong_flag.clone(), Shape::Plain)["structuredContent"],
            wrong_flag
        );
        // A list mixing blocks and data is data; an empty list is data.
        let mixed = json!([{"type": "text", "text": "a"}, 3]);
        assert_eq!(
            wire(mixed.clone(), Shape::Plain),
            json!({"content": [{"type": "text", "text": mixed.to_string()}]})
        );
        assert_eq!(
            wire(json!([]), Shape::Plain),
            json!({"content": [{"type": "text", "text": "[]"}]})
        );
    }

    #[test]
    fn wrapped_shapes_put_the_value_under_result() {
        assert_eq!(
            wire(json!(7), Shape::Wrapped),
            json!({"content": [{"type": "text", "text": "7"}], "structuredContent": {"result": 7}})
        );
        assert_eq!(
            wire(json!("hi"), Shape::Wrapped),
            json!({"content": [{"type": "text", "text": "hi"}], "structuredContent": {"result": "hi"}})
        );
        assert_eq!(
            wire(json!([1, 2]), Shape::Wrapped)["structuredContent"],
            json!({"result": [1, 2]})
        );
        // Content is still content when wrapped.
        let block = json!({"type": "text", "text": "a"});
        assert_eq!(
            wire(block.clone(), Shape::Wrapped),
            json!({"content": [block]})
        );
    }
}
