//! The agent loop: model turn → tool calls → `tools/call` → tool results → next turn.
//!
//! The model is a callback taking the conversation and the tools *in the chosen provider's
//! format* and returning the assistant turn in that format (a message, or the whole API
//! response), so a real OpenAI, Anthropic or Gemini client drops in with a few lines and a
//! binding passes plain JSON both ways. The tool calls of one turn run concurrently; a tool
//! call the model got wrong (an unknown name, arguments that are not JSON) or that failed
//! (a server error, a crash) becomes an error result the model sees, never an exception that
//! ends the run. The loop stops at the first turn without tool calls, or at the step limit.
//!
//! With the prompt provider (a model without function calling) the tools go into the system
//! message as text, the conversation given is rewritten into the format's text, the calls are
//! read out of the reply text and judged (an unknown tool, bad JSON, arguments failing the
//! schema: an error result with a message for the model), and the results go back as a
//! `user` message in the format. A model that keeps getting the format wrong is stopped after
//! [`MAX_FORMAT_ERRORS`] replies in a row with a malformed call ([`StopReason::FormatErrors`],
//! the reason in [`Transcript::reason`]).

use std::{future::Future, pin::Pin};

use serde::Serialize;
use serde_json::Value;

use super::Host;
use crate::{
    Result,
    protocol::CallToolResult,
    schema::{
        PromptCall, Provider, ToolCall, ToolOutcome, TranslateOptions, Translation,
        assistant_messages, assistant_text, prompt::rewrite_history, prompt_text, result_messages,
        tool_calls,
    },
};

/// Replies in a row with a malformed call after which a prompt-provider run stops.
pub const MAX_FORMAT_ERRORS: usize = 3;

/// What the model is asked each step.
#[derive(Clone, Debug)]
pub struct ModelRequest {
    /// The provider whose format `messages` and `tools` are in.
    pub provider: Provider,
    /// The conversation so far (prompt provider: with the tools' text in the system
    /// message, ready to send).
    pub messages: Vec<Value>,
    /// The request's `tools` value, ready to send (prompt provider: the system text, a
    /// string, already in `messages`).
    pub tools: Value,
    /// Which step this is (1-based).
    pub step: usize,
}

/// A boxed model turn.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = Result<Value>> + Send + 'a>>;

/// The model: any async function from a [`ModelRequest`] to an assistant turn.
pub trait Model: Send + Sync {
    /// One assistant turn.
    fn turn(&self, request: ModelRequest) -> ModelFuture<'_>;
}

impl<F, Fut> Model for F
where
    F: Fn(ModelRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Value>> + Send + 'static,
{
    fn turn(&self, request: ModelRequest) -> ModelFuture<'_> {
        Box::pin(self(request))
    }
}

/// How to run the loop.
#[derive(Clone, Debug)]
pub struct AgentOptions {
    /// The provider format.
    pub provider: Provider,
    /// How tools are translated.
    pub translate: TranslateOptions,
    /// Most model turns.
    pub max_steps: usize,
    /// Asked before each tool call (see [`super::approval`]); `None`: every call runs.
    pub approve: Option<super::ApprovalHook>,
}

impl AgentOptions {
    /// Defaults for a provider: strict tools, namespaced names, 16 steps.
    pub fn new(provider: Provider) -> Self {
        AgentOptions {
            provider,
            translate: TranslateOptions::default(),
            max_steps: 16,
            approve: None,
        }
    }
}

/// Why the loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without calling a tool.
    Final,
    /// The step limit was reached with the model still calling tools.
    StepLimit,
    /// Prompt provider: [`MAX_FORMAT_ERRORS`] replies in a row had a malformed call.
    FormatErrors,
}

/// One tool call the loop made.
#[derive(Clone, Debug, Serialize)]
pub struct CallRecord {
    /// The step it belonged to.
    pub step: usize,
    /// The provider-facing name the model used.
    pub name: String,
    /// The server it went to (none when the name was unknown).
    pub server: Option<String>,
    /// The MCP tool name.
    pub tool: Option<String>,
    /// The arguments sent (after nulls were stripped), or the raw problem.
    pub arguments: Value,
    /// Whether the result was an error.
    pub is_error: bool,
    /// The result's text.
    pub text: String,
}

/// What a run produced.
#[derive(Clone, Debug, Serialize)]
pub struct Transcript {
    /// The whole conversation, in the provider's format.
    pub messages: Vec<Value>,
    /// The last assistant text.
    pub final_text: String,
    /// How many model turns were taken.
    pub steps: usize,
    /// Why it stopped.
    pub stop: StopReason,
    /// Every tool call, in order.
    pub calls: Vec<CallRecord>,
    /// Why the run stopped, in words, when it did not end with an answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The conversation with the tools' text added to the system message (appended after a blank
/// line, as Qwen-Agent and minja do, or as a new first message).
fn with_system(messages: &[Value], system: &str) -> Vec<Value> {
    let mut out = messages.to_vec();
    match out.first_mut() {
        Some(first) if first.get("role").and_then(Value::as_str) == Some("system") => {
            let text = prompt_text(first);
            first["content"] = Value::String(if text.is_empty() {
                system.to_owned()
            } else {
                format!("{text}\n\n{system}")
            });
        }
        _ => out.insert(0, serde_json::json!({"role": "system", "content": system})),
    }
    out
}

/// A turn's calls: the provider's structured ones, or (prompt provider) those read out of the
/// reply text, with the malformed ones kept as their error text.
fn calls_of(
    provider: Provider,
    translation: &Translation,
    turn: &Value,
) -> (Vec<Result<ToolCall, ToolCall>>, String, bool) {
    if provider.prompt_format().is_none() {
        let calls = tool_calls(provider, turn).into_iter().map(Ok).collect();
        return (calls, assistant_text(provider, turn), false);
    }
    let Some(parsed) = translation.parse_reply(&prompt_text(turn)) else {
        return (Vec::new(), String::new(), false);
    };
    let calls = parsed
        .calls
        .iter()
        .map(|c| match c {
            PromptCall::Call(call) => Ok(call.clone()),
            PromptCall::Error(_) => Err(c.to_tool_call()),
        })
        .collect();
    (calls, parsed.text(), parsed.has_errors())
}

impl Host {
    /// Runs the agent loop (see the module doc). Fails only when the model callback fails.
    pub async fn run_agent(
        &self,
        model: &dyn Model,
        messages: Vec<Value>,
        options: &AgentOptions,
    ) -> Result<Transcript> {
        let provider = options.provider;
        let mut messages = match provider.prompt_format() {
            Some(format) => rewrite_history(format, &messages),
            None => messages,
        };
        let mut calls = Vec::new();
        let mut final_text = String::new();
        let mut format_errors = 0;
        for step in 1..=options.max_steps.max(1) {
            // Cached per server: re-listed only after `list_changed`.
            let translation = self.translate(provider, &options.translate).await;
            let tools = translation.request_tools();
            let sent = match &tools {
                Value::String(system) if provider.prompt_format().is_some() => {
                    with_system(&messages, system)
                }
                _ => messages.clone(),
            };
            let turn = model
                .turn(ModelRequest {
                    provider,
                    messages: sent,
                    tools,
                    step,
                })
                .await?;
            messages.extend(assistant_messages(provider, &turn));
            let (asked, text, malformed) = calls_of(provider, &translation, &turn);
            final_text = text;
            if asked.is_empty() {
                return Ok(Transcript {
                    messages,
                    final_text,
                    steps: step,
                    stop: StopReason::Final,
                    calls,
                    reason: None,
                });
            }
            format_errors = if malformed { format_errors + 1 } else { 0 };
            let runs = asked.iter().map(|call| {
                let translation = &translation;
                async move {
                    let call = match call {
                        Ok(call) => call,
                        // Already judged: the message is for the model as it is.
                        Err(bad) => {
                            let text = bad.arguments.clone().err().unwrap_or_default();
                            return (None, Value::Null, CallToolResult::error(text));
                        }
                    };
                    match translation.route(call) {
                        Err(text) => (None, Value::Null, CallToolResult::error(text)),
                        Ok((target, args)) => {
                            let mut sent = Value::Object(args);
                            if let Some(hook) = &options.approve {
                                match self
                                    .gate(hook, &target.server, &target.tool, sent.clone())
                                    .await
                                {
                                    Ok(approved) => sent = approved,
                                    // Declined: the model is told; the server never hears of it.
                                    Err(result) => return (Some(target), sent, result),
                                }
                            }
                            let result = match self
                                .call_tool(&target.server, &target.tool, sent.clone())
                                .await
                            {
                                Ok(r) => r,
                                Err(e) => CallToolResult::error(format!(
                                    "calling `{}` on server `{}` failed: {e}",
                                    target.tool, target.server
                                )),
                            };
                            (Some(target), sent, result)
                        }
                    }
                }
            });
            let done = futures::future::join_all(runs).await;
            let mut outcomes = Vec::with_capacity(done.len());
            for (call, (target, sent, result)) in asked.into_iter().zip(done) {
                let call = call.unwrap_or_else(|bad| bad);
                calls.push(CallRecord {
                    step,
                    name: call.name.clone(),
                    server: target.as_ref().map(|t| t.server.clone()),
                    tool: target.as_ref().map(|t| t.tool.clone()),
                    arguments: match (&call.arguments, sent) {
                        (Err(why), _) => Value::String(why.clone()),
                        (Ok(_), Value::Null) => Value::Null,
                        (Ok(_), sent) => sent,
                    },
                    is_error: result.is_error(),
                    text: result.text_content(),
                });
                outcomes.push(ToolOutcome { call, result });
            }
            messages.extend(result_messages(provider, &outcomes));
            if format_errors >= MAX_FORMAT_ERRORS {
                return Ok(Transcript {
                    messages,
                    final_text,
                    steps: step,
                    stop: StopReason::FormatErrors,
                    calls,
                    reason: Some(format!(
                        "stopped: the model wrote a malformed tool call in {format_errors} \
                         replies in a row (format `{}`); the last error: {}",
                        provider.prompt_format().map_or("", |f| f.as_str()),
                        last_error(&outcomes)
                    )),
                });
            }
        }
        Ok(Transcript {
            messages,
            final_text,
            steps: options.max_steps.max(1),
            stop: StopReason::StepLimit,
            calls,
            reason: Some(format!(
                "stopped: the model was still calling tools after {} steps",
                options.max_steps.max(1)
            )),
        })
    }
}

/// The text of the last error result of a turn.
fn last_error(outcomes: &[ToolOutcome]) -> String {
    outcomes
        .iter()
        .rev()
        .find(|o| o.result.is_error())
        .map(|o| o.result.text_content())
        .unwrap_or_default()
}
