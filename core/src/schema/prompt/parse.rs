//! A whole reply at once: its content, its reasoning and its calls, each judged.

use serde_json::{Map, Value, json};

use super::{
    Catalog, PromptCall, PromptFormat, judge::judge, scan::Piece, scan::RawCall, scan::scan,
};
use crate::schema::Translation;

/// What a reply said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    /// The text outside calls and reasoning, exactly as written (the stream's content deltas
    /// add up to it).
    pub content: String,
    /// The text inside `<think>…</think>`, joined (never searched for calls).
    pub reasoning: String,
    /// ReAct: the text after `Final Answer:`, trimmed.
    pub answer: Option<String>,
    /// Every call the model attempted, in order.
    pub calls: Vec<PromptCall>,
}

impl Parsed {
    /// The text to show as the model's answer: ReAct's final answer, else the content,
    /// trimmed.
    pub fn text(&self) -> String {
        match &self.answer {
            Some(a) => a.clone(),
            None => self.content.trim().to_owned(),
        }
    }

    /// The reply as JSON, the calls routed by `translation` (the shape the bindings and the
    /// golden vectors use): `{"content", "reasoning", "answer", "calls": [...]}`, a call
    /// `{"id", "name", "tool", "arguments"}` plus `"server"` when names are namespaced, an error
    /// `{"index", "error": <message for the model>, "kind", "tool"}`.
    pub fn to_value(&self, translation: &Translation) -> Value {
        let calls: Vec<Value> = self
            .calls
            .iter()
            .map(|c| call_value(c, translation))
            .collect();
        json!({
            "content": self.content,
            "reasoning": self.reasoning,
            "answer": self.answer,
            "calls": calls,
        })
    }

    /// Whether any call was malformed.
    pub fn has_errors(&self) -> bool {
        self.calls.iter().any(|c| matches!(c, PromptCall::Error(_)))
    }
}

/// Parses a whole reply in `format` against the tools of `catalog`. Never fails: a malformed
/// call is a [`PromptCall::Error`], the rest of the reply is still read.
pub fn parse(format: PromptFormat, text: &str, catalog: &dyn Catalog) -> Parsed {
    let found = scan(format, text, 0, true);
    let mut out = Parsed::default();
    let mut raw = Vec::new();
    let mut answer_at = None;
    for piece in found.pieces {
        match piece {
            Piece::Content(r) => out.content.push_str(&text[r]),
            Piece::Reasoning(r) => out.reasoning.push_str(&text[r]),
            Piece::Call(call) => raw.push(call),
            Piece::Answer => answer_at = Some(out.content.len()),
        }
    }
    if let Some(at) = answer_at {
        out.answer = Some(out.content[at..].trim().to_owned());
    }
    out.calls = judge_all(format, raw, 0, answer_at.is_some(), catalog);
    out
}

/// Judges calls numbered from `first + 1`. With `answered` (ReAct: the reply also gave a
/// final answer) none is made: the model must choose.
pub(super) fn judge_all(
    format: PromptFormat,
    raw: Vec<RawCall>,
    first: usize,
    answered: bool,
    catalog: &dyn Catalog,
) -> Vec<PromptCall> {
    raw.into_iter()
        .enumerate()
        .map(|(i, call)| {
            let index = first + i + 1;
            match judge(format, index, call, catalog) {
                PromptCall::Call(c) if answered => PromptCall::Error(super::FormatError {
                    index,
                    tool: Some(c.name.clone()),
                    kind: super::FormatErrorKind::Malformed,
                    message: format!(
                        "Tool call {index} ({}) comes with a Final Answer; nothing was run. \
                         Either call a tool (and wait for its Observation) or give the \
                         Final Answer.",
                        c.name
                    ),
                }),
                other => other,
            }
        })
        .collect()
}

/// One call as JSON (see [`Parsed::to_value`]).
pub fn call_value(call: &PromptCall, translation: &Translation) -> Value {
    match call {
        PromptCall::Error(e) => json!({
            "index": e.index,
            "error": e.message,
            "kind": e.kind,
            "tool": e.tool,
        }),
        PromptCall::Call(c) => {
            let mut out = Map::new();
            out.insert("id".into(), json!(c.id));
            out.insert("name".into(), json!(c.name));
            match translation.route(c) {
                Ok((target, arguments)) => {
                    if !target.server.is_empty() {
                        out.insert("server".into(), json!(target.server));
                    }
                    out.insert("tool".into(), json!(target.tool));
                    out.insert("arguments".into(), Value::Object(arguments));
                }
                // Judged against this translation, so not expected; still an answer.
                Err(message) => {
                    out.insert("error".into(), Value::String(message));
                }
            }
            Value::Object(out)
        }
    }
}
