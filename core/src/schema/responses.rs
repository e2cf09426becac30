//! The OpenAI Responses API: flat `{type: "function", name, description, parameters, strict}`
//! tools, `function_call` output items with JSON-string arguments, results as
//! `function_call_output` items.
//!
//! `strict` is always set: this API applies strict normalisation when it is omitted, unlike
//! Chat Completions. Output may carry images (`input_image`) and files (`input_file`), so
//! those go to the model as themselves; audio is described in text. There is no error flag:
//! a failed tool's text starts with `Error:`.

use serde_json::{Value, json};

use super::{
    results::{block_text, data_url, result_text},
    translate::{CallFields, ToolCall, ToolOutcome, joined_text},
};
use crate::protocol::ContentBlock;

/// A function tool.
pub fn tool(name: &str, description: &str, parameters: Value, strict: bool) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "parameters": parameters,
        "strict": strict,
    })
}

/// The output items of a turn (a response's `output`, or the list itself).
pub fn items(turn: &Value) -> &[Value] {
    match turn.get("output").unwrap_or(turn) {
        Value::Array(items) => items,
        _ => &[],
    }
}

/// Where a `function_call` item keeps its parts.
const CALL: CallFields = CallFields {
    id: "/call_id",
    name: "/name",
    arguments: "/arguments",
};

/// The `function_call` items of a turn.
pub fn calls(turn: &Value) -> Vec<ToolCall> {
    items(turn)
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call"))
        .map(|i| CALL.read(i))
        .collect()
}

/// One `function_call_output` item per outcome.
pub fn results(outcomes: &[ToolOutcome]) -> Vec<Value> {
    outcomes
        .iter()
        .map(|o| {
            let only_text = o.result.content.iter().all(|b| {
                !matches!(b, ContentBlock::Image(_))
                    && !matches!(b, ContentBlock::Resource(r) if r.resource.blob.is_some())
            });
            let output = if only_text {
                let mut text = result_text(&o.result);
                if o.result.is_error() {
                    text = format!("Error: {text}");
                }
                Value::String(text)
            } else {
                let mut parts = Vec::new();
                if o.result.is_error() {
                    parts.push(json!({"type": "input_text", "text": "Error:"}));
                }
                for block in &o.result.content {
                    parts.push(part(block));
                }
                Value::Array(parts)
            };
            json!({
                "type": "function_call_output",
                "call_id": o.call.id.clone().unwrap_or_default(),
                "output": output,
            })
        })
        .collect()
}

fn part(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Image(i) => json!({
            "type": "input_image",
            "image_url": data_url(&i.mime_type, &i.data),
            "detail": "auto",
        }),
        ContentBlock::Resource(r) if r.resource.blob.is_some() => {
            let res = &r.resource;
            let mime = res
                .mime_type
                .as_deref()
                .unwrap_or("application/octet-stream");
            let filename = res.uri.rsplit('/').next().unwrap_or("file").to_owned();
            json!({
                "type": "input_file",
                "file_data": data_url(mime, res.blob.as_deref().unwrap_or_default()),
                "filename": filename,
            })
        }
        other => json!({"type": "input_text", "text": block_text(other)}),
    }
}

/// The text of a turn (its `message` items' `output_text`).
pub fn text(turn: &Value) -> String {
    items(turn)
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
        .map(|i| joined_text(i.get("content"), &["output_text", "text"]))
        .collect::<Vec<_>>()
        .join("")
}
