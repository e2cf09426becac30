//! The agent loop: model turn → tool calls → `tools/call` → tool results → next turn.
//!
//! The model is a callback taking the conversation and the tools *in the chosen provider's
//! format* and returning the assistant turn in that format (a message, or the whole API
//! response), so a real OpenAI, Anthropic or Gemini client drops in with a few lines and a
//! binding passes plain JSON both ways. The tool calls of one turn run concurrently; a tool
//! call the model got wrong (an unknown name, arguments that are not JSON) or that failed
//! (a server error, a crash) becomes an error result the model sees, never an exception that
//! ends the run. The loop stops at the first turn without tool calls, or at the step limit.

use std::{future::Future, pin::Pin};

use serde::Serialize;
use serde_json::Value;

use super::Host;
use crate::{
    Result,
    protocol::CallToolResult,
    schema::{
        Provider, ToolOutcome, TranslateOptions, assistant_messages, assistant_text,
        result_messages, tool_calls,
    },
};

/// What the model is asked each step.
#[derive(Clone, Debug)]
pub struct ModelRequest {
    /// The provider whose format `messages` and `tools` are in.
    pub provider: Provider,
    /// The conversation so far.
    pub messages: Vec<Value>,
    /// The request's `tools` value, ready to send.
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
}

impl AgentOptions {
    /// Defaults for a provider: strict tools, namespaced names, 16 steps.
    pub fn new(provider: Provider) -> Self {
        AgentOptions {
            provider,
            translate: TranslateOptions::default(),
            max_steps: 16,
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
        let mut messages = messages;
        let mut calls = Vec::new();
        let mut final_text = String::new();
        for step in 1..=options.max_steps.max(1) {
            // Cached per server: re-listed only after `list_changed`.
            let translation = self.translate(provider, &options.translate).await;
            let turn = model
                .turn(ModelRequest {
                    provider,
                    messages: messages.clone(),
                    tools: translation.request_tools(),
                    step,
                })
                .await?;
            messages.extend(assistant_messages(provider, &turn));
            final_text = assistant_text(provider, &turn);
            let asked = tool_calls(provider, &turn);
            if asked.is_empty() {
                return Ok(Transcript {
                    messages,
                    final_text,
                    steps: step,
                    stop: StopReason::Final,
                    calls,
                });
            }
            let runs = asked.iter().map(|call| {
                let translation = &translation;
                async move {
                    match translation.route(call) {
                        Err(text) => (None, Value::Null, CallToolResult::error(text)),
                        Ok((target, args)) => {
                            let sent = Value::Object(args);
                            let result = match self
                                .call_tool(&target.server, &target.tool, sent.clone())
                                .await
                            {
                                Ok(r) => r,
                                Err(e) => CallToolResult::error(format!(
                                    "Error: calling `{}` on server `{}` failed: {e}",
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
        }
        Ok(Transcript {
            messages,
            final_text,
            steps: options.max_steps.max(1),
            stop: StopReason::StepLimit,
            calls,
        })
    }
}
