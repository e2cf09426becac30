//! OpenAI Chat Completions: `tools[] = {type: "function", function: {name, description,
//! parameters, strict}}`, calls in `message.tool_calls[]` with arguments as a JSON *string*,
//! results as `{role: "tool", tool_call_id, content}` messages.
//!
//! A tool message may carry text only (a list of blocks gets a 400, langchain-mcp-adapters
//! #409), so a result's images are described in the tool message and attached, as `data:`
//! URLs, to one `user` message after all the turn's tool messages (tool messages must follow
//! their assistant message directly). Audio and files are described in text. OpenAI has no
//! error flag: a failed tool's text starts with `Error:`.

use serde_json::{Value, json};

use super::{
    results::{data_url, result_text},
    translate::{CallFields, ToolCall, ToolOutcome, joined_text},
};
use crate::protocol::ContentBlock;

/// A function tool.
pub fn tool(name: &str, description: &str, parameters: Value, strict: bool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": parameters,
            "strict": strict,
        }
    })
}

/// The assistant message of a turn (`choices[0].message` of a whole response, or the turn).
pub fn message(turn: &Value) -> &Value {
    turn.pointer("/choices/0/message").unwrap_or(turn)
}

/// Where an entry of `tool_calls` keeps its parts.
const CALL: CallFields = CallFields {
    id: "/id",
    name: "/function/name",
    arguments: "/function/arguments",
};

/// The tool calls of a turn.
pub fn calls(turn: &Value) -> Vec<ToolCall> {
    let Some(list) = message(turn).get("tool_calls").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter(|c| {
            c.get("type")
                .and_then(Value::as_str)
                .is_none_or(|t| t == "function")
        })
        .map(|c| CALL.read(c))
        .collect()
}

/// Tool messages, then one user message with the images, if any.
pub fn results(outcomes: &[ToolOutcome]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut images = Vec::new();
    for o in outcomes {
        let mut text = result_text(&o.result);
        if o.result.is_error() {
            text = format!("Error: {text}");
        }
        out.push(json!({
            "role": "tool",
            "tool_call_id": o.call.id.clone().unwrap_or_default(),
            "content": text,
        }));
        for block in &o.result.content {
            if let ContentBlock::Image(i) = block {
                images.push((
                    o.call.id.clone().unwrap_or_default(),
                    data_url(&i.mime_type, &i.data),
                ));
            }
        }
    }
    if !images.is_empty() {
        let mut parts = Vec::new();
        for (id, url) in images {
            parts.push(
                json!({"type": "text", "text": format!("Image returned by tool call {id}:")}),
            );
            parts.push(json!({"type": "image_url", "image_url": {"url": url}}));
        }
        out.push(json!({"role": "user", "content": parts}));
    }
    out
}

/// The text of a turn.
pub fn text(turn: &Value) -> String {
    joined_text(message(turn).get("content"), &["text"])
}
