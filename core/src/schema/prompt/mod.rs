//! The `prompt` provider: tools for models without function calling.
//!
//! A local or small model (Ollama, llama.cpp, vLLM, an OpenAI-compatible endpoint without
//! tool support) gets its tools as text in the system prompt and answers with calls written
//! into its reply. This module writes that text and reads the calls back, in one of four
//! formats the models are trained on ([`PromptFormat`]).
//!
//! Reading free text is where the parsers people use go wrong (see
//! `shared/research/prompt-tools.md`): a reply with one malformed call degraded to plain
//! text, unknown tools skipped silently, backtracking regexes that hang on pathological
//! replies. So here a call is only looked for inside the format's own wrapper, each call is
//! judged on its own, and every call the model attempted comes back either as a routed call or
//! as a [`FormatError`] whose message is written for the model (fixed wording, naming the tool
//! and the problem), never dropped and never guessed at. The scanner is hand-written and linear
//! in the length of the reply, and the same scanner drives the whole-text parser and the
//! streaming one, so a stream split anywhere gives the same calls.
//!
//! | file | does |
//! |---|---|
//! | `render` | the system-prompt text for a set of tools |
//! | `scan` | finds calls, content and reasoning in a reply (linear, resumable) |
//! | `judge` | turns one found call into a routed call or an error for the model |
//! | `parse` | the whole reply at once |
//! | `stream` | the reply as it arrives |
//! | `results` | tool results, and earlier calls of a conversation, written back as text |

mod judge;
mod parse;
mod render;
mod results;
mod scan;
mod stream;

use serde::Serialize;

pub use parse::{Parsed, call_value, parse};
pub use render::render;
pub use results::{result_messages, rewrite_history};
pub use stream::{StreamEvent, StreamParser};

use super::translate::ToolCall;

/// How calls are written in the text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptFormat {
    /// Hermes / Qwen: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, results in
    /// `<tool_response>`. The default: most open models are trained on it.
    #[default]
    Hermes,
    /// Llama 3.1 JSON: a bare `{"name": …, "parameters": {…}}` object in the reply.
    Json,
    /// ReAct: `Action:` / `Action Input:` lines, results as `Observation:`.
    React,
    /// `<tool_use><name>…</name><arguments>{…}</arguments></tool_use>` (Cherry Studio's).
    Xml,
}

impl PromptFormat {
    /// Every format.
    pub const ALL: [PromptFormat; 4] = [
        PromptFormat::Hermes,
        PromptFormat::Json,
        PromptFormat::React,
        PromptFormat::Xml,
    ];

    /// The format's name (`hermes`, `json`, `react`, `xml`).
    pub fn as_str(self) -> &'static str {
        match self {
            PromptFormat::Hermes => "hermes",
            PromptFormat::Json => "json",
            PromptFormat::React => "react",
            PromptFormat::Xml => "xml",
        }
    }

    /// Parses [`PromptFormat::as_str`].
    pub fn parse(name: &str) -> Option<PromptFormat> {
        PromptFormat::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// Stop sequences to send with the request: a ReAct model otherwise writes the
    /// `Observation:` itself (langchain#20704). Empty for the other formats.
    pub fn stop(self) -> &'static [&'static str] {
        match self {
            PromptFormat::React => &["\nObservation:"],
            _ => &[],
        }
    }

    /// How one call is written, as the error messages restate it.
    pub(crate) fn example(self) -> &'static str {
        match self {
            PromptFormat::Hermes => {
                r#"<tool_call>{"name": "<tool name>", "arguments": {<arguments>}}</tool_call>"#
            }
            PromptFormat::Json => r#"{"name": "<tool name>", "parameters": {<arguments>}}"#,
            PromptFormat::React => "Action: <tool name>\nAction Input: {<arguments as JSON>}",
            PromptFormat::Xml => {
                "<tool_use><name><tool name></name><arguments>{<arguments>}</arguments></tool_use>"
            }
        }
    }
}

impl std::fmt::Display for PromptFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of mistake a call had.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatErrorKind {
    /// The call's JSON does not parse (or stops before its end).
    InvalidJson,
    /// The call is not shaped as the format says (no name, both `arguments` and
    /// `parameters`, text after the call object, a missing `Action Input:`, …).
    Malformed,
    /// No tool has that name.
    UnknownTool,
    /// The arguments are not an object, or fail the tool's schema.
    InvalidArguments,
}

/// A call the model attempted and got wrong. `message` is meant to be sent back to the model
/// as that call's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FormatError {
    /// Which call of the reply (1-based, counting good and bad calls).
    pub index: usize,
    /// The tool the call named, when it named one.
    pub tool: Option<String>,
    /// The kind of mistake.
    pub kind: FormatErrorKind,
    /// The text for the model.
    pub message: String,
}

/// One call found in a reply: routed-to-be (a name the translation knows, arguments that
/// pass its schema) or an error for the model.
#[derive(Clone, Debug, PartialEq)]
pub enum PromptCall {
    /// A call to make (`id` is `call_<index>`: the text formats carry no ids).
    Call(ToolCall),
    /// A call the model got wrong.
    Error(FormatError),
}

impl PromptCall {
    /// The call as a [`ToolCall`]: an error keeps its message as the arguments' `Err`, so it
    /// can travel through code that only knows tool calls.
    pub fn to_tool_call(&self) -> ToolCall {
        match self {
            PromptCall::Call(c) => c.clone(),
            PromptCall::Error(e) => ToolCall {
                id: Some(format!("call_{}", e.index)),
                name: e.tool.clone().unwrap_or_default(),
                arguments: Err(e.message.clone()),
            },
        }
    }
}

/// What the parser needs to know of the tools: their names, in the order the model saw them,
/// and their (normalised) input schemas.
pub trait Catalog {
    /// Every tool name, in the order rendered.
    fn tool_names(&self) -> Vec<&str>;
    /// The input schema of a tool, `None` when there is no such tool.
    fn input_schema(&self, name: &str) -> Option<&serde_json::Value>;
}
