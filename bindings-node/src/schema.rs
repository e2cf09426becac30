//! Tool-schema translation for JavaScript (`oxmcp`'s `translate`): MCP tools into each LLM
//! provider's function-calling format, and the provider's tool calls and tool results back.
//!
//! Every rule (strict mode, the nulls stripped again, names, what each provider rejects) is in
//! `oxmcp::schema`; this file converts values. The tools cross once as JSON text; the
//! [`NativeTranslation`] stays native so the way back (routing a call, stripping the strict-mode
//! nulls against the source schema) needs no second crossing of the schemas.

use napi_derive::napi;
use oxmcp::{
    protocol::CallToolResult,
    schema::{
        Namespace, PromptFormat, Provider, ToolCall, ToolOutcome, TranslateOptions, Translation,
        prompt::rewrite_history, prompt_text, result_messages as core_result_messages,
        tool_calls as core_tool_calls, translate_value,
    },
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{
    error::{invalid, to_js},
    json,
};

/// `{strict, namespace}` from JavaScript.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub(crate) struct JsTranslateOptions {
    pub(crate) strict: Option<bool>,
    pub(crate) namespace: Option<String>,
}

impl JsTranslateOptions {
    pub(crate) fn into_core(self) -> napi::Result<TranslateOptions> {
        let mut out = TranslateOptions::default();
        if let Some(strict) = self.strict {
            out.strict = strict;
        }
        if let Some(ns) = self.namespace {
            out.namespace = ns.parse::<Namespace>().map_err(|e| to_js(e.into()))?;
        }
        Ok(out)
    }
}

/// Parses a provider name (`openai`, `responses`, `anthropic`, `gemini`, `gemini-openapi`,
/// `langchain`, `prompt`, `prompt:FORMAT`).
pub(crate) fn provider(name: &str) -> napi::Result<Provider> {
    Provider::parse(name).ok_or_else(|| {
        let mut known: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
        known.extend(PromptFormat::ALL.map(|f| Provider::Prompt(f).as_str()));
        invalid(format!(
            "unknown provider `{name}` (one of: {})",
            known.join(", ")
        ))
    })
}

/// A tool call as JavaScript sees it: `{id, name, arguments}` or `{id, name, error}` when the
/// model's arguments were unusable.
pub(crate) fn call_to_json(call: &ToolCall) -> Value {
    let mut out = json!({ "id": call.id, "name": call.name });
    match &call.arguments {
        Ok(args) => out["arguments"] = Value::Object(args.clone()),
        Err(why) => out["error"] = Value::String(why.clone()),
    }
    out
}

/// The inverse of [`call_to_json`]; `arguments` may also be the raw JSON string OpenAI sends.
fn call_from_json(value: &Value) -> napi::Result<ToolCall> {
    let Some(name) = value.get("name").and_then(Value::as_str) else {
        return Err(invalid("a tool call needs a string `name`"));
    };
    let id = match value.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(invalid(format!(
                "a tool call's `id` must be a string, not `{other}`"
            )));
        }
    };
    let arguments = match value.get("error") {
        Some(Value::String(why)) => Err(why.clone()),
        _ => ToolCall::parse_arguments(value.get("arguments")),
    };
    Ok(ToolCall {
        id,
        name: name.to_owned(),
        arguments,
    })
}

/// `[{call, result}]` into the core's outcomes.
fn outcomes(text: &str) -> napi::Result<Vec<ToolOutcome>> {
    let items: Vec<Map<String, Value>> = json::parse("tool outcomes ([{call, result}])", text)?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let call = call_from_json(item.get("call").unwrap_or(&Value::Null)).map_err(|_| {
                invalid(format!(
                    "outcome {i}: `call` must be {{id?, name, arguments?}}"
                ))
            })?;
            let result: CallToolResult =
                serde_json::from_value(item.get("result").cloned().unwrap_or(Value::Null))
                    .map_err(|e| {
                        invalid(format!(
                            "outcome {i}: `result` is not a CallToolResult: {e}"
                        ))
                    })?;
            Ok(ToolOutcome { call, result })
        })
        .collect()
}

/// Tools in one provider's format plus the way back.
#[napi]
pub struct NativeTranslation {
    pub(crate) inner: Translation,
}

#[napi]
impl NativeTranslation {
    /// `{tools, names, reports}` as JSON text.
    #[napi]
    pub fn to_json(&self) -> napi::Result<String> {
        json::text(&self.inner.to_value())
    }

    /// The tool calls in an assistant turn (a message or a whole API response).
    #[napi]
    pub fn tool_calls(&self, turn: String) -> napi::Result<String> {
        tool_calls(self.inner.provider.as_str().to_owned(), turn)
    }

    /// One call → `{server, tool, arguments}` (strict-mode nulls stripped) or `{error}`, the
    /// text to send back to the model as an error result.
    #[napi]
    pub fn route(&self, call: String) -> napi::Result<String> {
        let call = call_from_json(&json::parse::<Value>("tool call", &call)?)?;
        let out = match self.inner.route(&call) {
            Ok((target, arguments)) => json!({
                "server": target.server,
                "tool": target.tool,
                "arguments": arguments,
            }),
            Err(text) => json!({ "error": text }),
        };
        json::text(&out)
    }

    /// `[{call, result}]` → the provider's tool-result messages.
    #[napi]
    pub fn result_messages(&self, outcomes: String) -> napi::Result<String> {
        result_messages(self.inner.provider.as_str().to_owned(), outcomes)
    }

    /// The prompt provider's system text (`null` for the function-calling providers).
    #[napi]
    pub fn system(&self) -> Option<String> {
        self.inner.system_text()
    }

    /// Stop sequences for the request (ReAct: `\nObservation:`).
    #[napi]
    pub fn stop(&self) -> Vec<String> {
        self.inner
            .provider
            .prompt_format()
            .map(|f| f.stop().iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    }

    /// The prompt provider's reading of a reply (a string, a message or a whole Chat
    /// Completions response, as JSON text): `{content, reasoning, answer, calls}`.
    #[napi]
    pub fn reply(&self, turn: String) -> napi::Result<String> {
        let turn: Value = json::parse("the reply", &turn)?;
        match self.inner.parse_reply(&prompt_text(&turn)) {
            Some(parsed) => json::text(&parsed.to_value(&self.inner)),
            None => Err(invalid(format!(
                "reply() reads text replies; the provider `{}` has structured tool calls",
                self.inner.provider
            ))),
        }
    }
}

/// An OpenAI-shaped conversation rewritten into a prompt format's text.
#[napi]
pub fn prompt_history(format: String, messages: String) -> napi::Result<String> {
    let Some(format) = PromptFormat::parse(&format) else {
        return Err(invalid(format!(
            "unknown prompt format `{format}` (one of: hermes, json, react, xml)"
        )));
    };
    let messages: Vec<Value> = json::parse("the messages", &messages)?;
    json::text(&rewrite_history(format, &messages))
}

/// Translates `tools` (a `tools/list` array, or an object of server name → array).
#[napi]
pub fn translate(
    provider_name: String,
    tools: String,
    options: String,
) -> napi::Result<NativeTranslation> {
    let provider = provider(&provider_name)?;
    let tools: Value = json::parse("tools", &tools)?;
    let options = json::parse::<JsTranslateOptions>("translate options", &options)?.into_core()?;
    let inner = translate_value(provider, &tools, &options).map_err(to_js)?;
    Ok(NativeTranslation { inner })
}

/// The tool calls in an assistant turn of `provider`.
#[napi]
pub fn tool_calls(provider_name: String, turn: String) -> napi::Result<String> {
    let provider = provider(&provider_name)?;
    let turn: Value = json::parse("assistant turn", &turn)?;
    let calls: Vec<Value> = core_tool_calls(provider, &turn)
        .iter()
        .map(call_to_json)
        .collect();
    json::text(&calls)
}

/// `[{call, result}]` → `provider`'s tool-result messages.
#[napi]
pub fn result_messages(provider_name: String, outcomes_json: String) -> napi::Result<String> {
    let provider = provider(&provider_name)?;
    let outcomes = outcomes(&outcomes_json)?;
    json::text(&core_result_messages(provider, &outcomes))
}
