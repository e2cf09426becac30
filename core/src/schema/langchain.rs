//! LangChain's tool shape: `{name, description, args_schema, response_format, metadata}` for
//! a `StructuredTool` (the JSON Schema passes through as `args_schema`), `tool_calls` of an AI
//! message (`{name, args, id}`), results as `ToolMessage`s (`content`, `artifact`, `status`).
//!
//! Two complaints shape this file: `outputSchema` and `structuredContent` being dropped
//! (langchain-mcp-adapters #308, #417, #283), so the output schema rides in `metadata` and
//! the structured content in `artifact`; and arguments named `config` or `run_manager` being
//! swallowed (langchain #40476), which a JSON-Schema `args_schema` avoids because no Python
//! signature is involved.

use serde_json::{Value, json};

use super::{
    results::{block_text, result_text},
    translate::{CallFields, ToolCall, ToolOutcome, joined_text},
};
use crate::protocol::{ContentBlock, Tool};

/// A tool definition for `StructuredTool(...)`.
pub fn tool(
    name: &str,
    description: &str,
    args_schema: Value,
    source: &Tool,
    output_schema: Option<Value>,
) -> Value {
    let mut metadata = json!({"mcp_name": source.name});
    if let Some(a) = &source.annotations {
        metadata["annotations"] = serde_json::to_value(a).unwrap_or(Value::Null);
    }
    if let Some(o) = output_schema {
        metadata["output_schema"] = o;
    }
    json!({
        "name": name,
        "description": description,
        "args_schema": args_schema,
        "response_format": "content_and_artifact",
        "metadata": metadata,
    })
}

/// Where an entry of `tool_calls` keeps its parts.
const CALL: CallFields = CallFields {
    id: "/id",
    name: "/name",
    arguments: "/args",
};

/// The `tool_calls` of an AI message.
pub fn calls(turn: &Value) -> Vec<ToolCall> {
    let Some(list) = turn.get("tool_calls").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter().map(|c| CALL.read(c)).collect()
}

/// One `ToolMessage` per outcome.
pub fn results(outcomes: &[ToolOutcome]) -> Vec<Value> {
    outcomes
        .iter()
        .map(|o| {
            let plain = o
                .result
                .content
                .iter()
                .all(|b| matches!(b, ContentBlock::Text(_)));
            let content = if plain {
                Value::String(result_text(&o.result))
            } else {
                Value::Array(o.result.content.iter().map(block).collect())
            };
            let mut artifact = json!({});
            if let Some(s) = &o.result.structured_content {
                artifact["structured_content"] = s.clone();
            }
            json!({
                "type": "tool",
                "tool_call_id": o.call.id.clone().unwrap_or_default(),
                "name": o.call.name,
                "content": content,
                "artifact": artifact,
                "status": if o.result.is_error() { "error" } else { "success" },
            })
        })
        .collect()
}

fn block(b: &ContentBlock) -> Value {
    match b {
        ContentBlock::Text(t) => json!({"type": "text", "text": t.text}),
        ContentBlock::Image(i) => {
            json!({"type": "image", "base64": i.data, "mime_type": i.mime_type})
        }
        ContentBlock::Audio(a) => {
            json!({"type": "audio", "base64": a.data, "mime_type": a.mime_type})
        }
        ContentBlock::ResourceLink(l) => {
            let mut v = json!({"type": "file", "url": l.uri});
            if let Some(m) = &l.mime_type {
                v["mime_type"] = json!(m);
            }
            v
        }
        ContentBlock::Resource(r) => match (&r.resource.text, &r.resource.blob) {
            (None, Some(blob)) => json!({
                "type": "file",
                "base64": blob,
                "mime_type": r.resource.mime_type.as_deref().unwrap_or("application/octet-stream"),
            }),
            _ => json!({"type": "text", "text": block_text(b)}),
        },
        other => json!({"type": "text", "text": block_text(other)}),
    }
}

/// The text of an AI message.
pub fn text(turn: &Value) -> String {
    joined_text(turn.get("content"), &["text"])
}
