//! Anthropic Messages: `{name, description, input_schema}` tools, `tool_use` blocks with the
//! input already an object, results as `tool_result` blocks (with `is_error`) in one `user`
//! message.
//!
//! Anthropic takes JSON Schema nearly as is (`$defs`, `anyOf`, `additionalProperties`), so
//! the normalised schema passes through. In results, images of the four types it accepts go
//! as images, text resources and PDFs as documents; audio, resource links, other images and
//! other blobs are described in text (Anthropic's own helper raises on them instead).

use serde_json::{Value, json};

use super::{
    results::block_text,
    translate::{CallFields, ToolCall, ToolOutcome, joined_text},
};
use crate::protocol::ContentBlock;

const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// A tool.
pub fn tool(name: &str, description: &str, input_schema: Value) -> Value {
    json!({
        "name": name,
        "description": description,
        "input_schema": input_schema,
    })
}

/// The assistant message of a turn (a whole `Message` response or a message param).
pub fn message(turn: &Value) -> Value {
    json!({
        "role": "assistant",
        "content": turn.get("content").cloned().unwrap_or_else(|| json!([])),
    })
}

/// Where a `tool_use` block keeps its parts.
const CALL: CallFields = CallFields {
    id: "/id",
    name: "/name",
    arguments: "/input",
};

/// The `tool_use` blocks of a turn.
pub fn calls(turn: &Value) -> Vec<ToolCall> {
    let Some(blocks) = turn.get("content").and_then(Value::as_array) else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|b| CALL.read(b))
        .collect()
}

/// One `user` message with a `tool_result` block per outcome.
pub fn results(outcomes: &[ToolOutcome]) -> Vec<Value> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    let blocks: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let mut content: Vec<Value> = o.result.content.iter().map(block).collect();
            if content.is_empty()
                && let Some(s) = &o.result.structured_content
            {
                content.push(json!({"type": "text", "text": s.to_string()}));
            }
            let mut result = json!({
                "type": "tool_result",
                "tool_use_id": o.call.id.clone().unwrap_or_default(),
                "is_error": o.result.is_error(),
            });
            if !content.is_empty() {
                result["content"] = Value::Array(content);
            }
            result
        })
        .collect();
    vec![json!({"role": "user", "content": blocks})]
}

fn block(b: &ContentBlock) -> Value {
    match b {
        ContentBlock::Image(i) if IMAGE_TYPES.contains(&i.mime_type.as_str()) => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": i.mime_type, "data": i.data},
        }),
        ContentBlock::Resource(r) => {
            let res = &r.resource;
            match (&res.text, &res.blob, res.mime_type.as_deref()) {
                (Some(text), _, _) => json!({
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": text},
                    "title": res.uri,
                }),
                (None, Some(blob), Some("application/pdf")) => json!({
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": blob},
                    "title": res.uri,
                }),
                (None, Some(blob), Some(mime)) if IMAGE_TYPES.contains(&mime) => json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": mime, "data": blob},
                }),
                _ => json!({"type": "text", "text": block_text(b)}),
            }
        }
        other => json!({"type": "text", "text": block_text(other)}),
    }
}

/// The text of a turn.
pub fn text(turn: &Value) -> String {
    joined_text(turn.get("content"), &["text"])
}
