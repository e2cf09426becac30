//! Tool results, and the earlier calls of a conversation, written as the format's text.
//!
//! A model without function calling reads results as text in the format it called in
//! (`<tool_response>`, `Observation:`, …), in one `user` message per turn, in call order: an
//! OpenAI-compatible endpoint without tool support has no `tool` role to put them in. A
//! conversation that started with function calling (OpenAI-shaped `tool_calls` and `tool`
//! messages) is rewritten the same way, so the model sees one consistent format throughout.
//! Content a text cannot carry (images, audio, blobs) is described in brackets, as for every
//! provider (`schema::results`); a failed call's text starts with `Error:`.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::PromptFormat;
use crate::schema::{ToolOutcome, results::result_text, translate::joined_text};

/// The message carrying these results back (none for no results).
pub fn result_messages(format: PromptFormat, outcomes: &[ToolOutcome]) -> Vec<Value> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    let parts: Vec<String> = outcomes
        .iter()
        .map(|o| {
            let mut text = result_text(&o.result);
            if o.result.is_error() {
                text = format!("Error: {text}");
            }
            result_text_in(format, &o.call.name, &text)
        })
        .collect();
    vec![json!({"role": "user", "content": parts.join("\n")})]
}

/// One result in the format.
fn result_text_in(format: PromptFormat, name: &str, text: &str) -> String {
    let name_json = Value::String(name.to_owned()).to_string();
    let text_json = Value::String(text.to_owned()).to_string();
    match format {
        PromptFormat::Hermes => format!(
            "<tool_response>\n{{\"name\": {name_json}, \"content\": {text_json}}}\n</tool_response>"
        ),
        PromptFormat::Json => format!("{{\"name\": {name_json}, \"output\": {text_json}}}"),
        PromptFormat::React => format!("Observation: {text}"),
        PromptFormat::Xml => format!(
            "<tool_use_result>\n  <name>{name}</name>\n  <result>{text}</result>\n</tool_use_result>"
        ),
    }
}

/// One call in the format, as the model would have written it.
pub(super) fn call_text(format: PromptFormat, name: &str, arguments: &Value) -> String {
    let name_json = Value::String(name.to_owned()).to_string();
    let args = arguments.to_string();
    match format {
        PromptFormat::Hermes => {
            format!("<tool_call>\n{{\"name\": {name_json}, \"arguments\": {args}}}\n</tool_call>")
        }
        PromptFormat::Json => format!("{{\"name\": {name_json}, \"parameters\": {args}}}"),
        PromptFormat::React => format!("Action: {name}\nAction Input: {args}"),
        PromptFormat::Xml => format!(
            "<tool_use>\n  <name>{name}</name>\n  <arguments>{args}</arguments>\n</tool_use>"
        ),
    }
}

/// Rewrites an OpenAI-shaped conversation into the format: an assistant message's
/// `tool_calls` become call text after its content, each run of `tool` messages one `user`
/// message of results. Other messages are kept as they are.
pub fn rewrite_history(format: PromptFormat, messages: &[Value]) -> Vec<Value> {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut results: Vec<String> = Vec::new();
    let flush = |results: &mut Vec<String>, out: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({"role": "user", "content": results.join("\n")}));
            results.clear();
        }
    };
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        if role == "tool" {
            let id = m
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let name = names.get(id).map(String::as_str).unwrap_or(id);
            let text = joined_text(m.get("content"), &["text"]);
            results.push(result_text_in(format, name, &text));
            continue;
        }
        flush(&mut results, &mut out);
        let calls = m.get("tool_calls").and_then(Value::as_array);
        let Some(calls) = calls.filter(|c| role == "assistant" && !c.is_empty()) else {
            out.push(m.clone());
            continue;
        };
        let mut parts = Vec::new();
        let content = joined_text(m.get("content"), &["text"]);
        if !content.trim().is_empty() {
            parts.push(content.trim_end().to_owned());
        }
        for c in calls {
            let name = c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if let Some(id) = c.get("id").and_then(Value::as_str) {
                names.insert(id.to_owned(), name.to_owned());
            }
            let arguments = match c.pointer("/function/arguments") {
                Some(Value::String(s)) => {
                    serde_json::from_str(s).unwrap_or(Value::String(s.clone()))
                }
                Some(v) => v.clone(),
                None => json!({}),
            };
            parts.push(call_text(format, name, &arguments));
        }
        out.push(json!({"role": "assistant", "content": parts.join("\n")}));
    }
    flush(&mut results, &mut out);
    out
}
