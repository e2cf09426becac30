//! MCP tools into each provider's function-calling format, and the provider's tool calls and
//! tool results back.
//!
//! Everything here is plain JSON in, plain JSON out, so a binding exposes it by converting
//! values only. The way there: [`translate`] takes the tools of several servers and returns
//! the provider's tool list with a [`NameMap`], one [`ToolReport`] per tool (strict or not and
//! why, the notes, or why a tool was left out). The way back: [`tool_calls`] reads the calls
//! out of an assistant turn; [`Translation::route`] maps one to (server, tool, arguments),
//! turning invalid JSON arguments and unknown names into text for the model instead of an
//! error; [`result_messages`] turns `CallToolResult`s into the messages the provider expects.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{
    anthropic, gemini, langchain,
    names::{NameMap, NameRules, Namespace, ToolRef},
    normalize::normalize,
    notes::Note,
    nulls::strip_nulls,
    openai,
    prompt::{self, Catalog, Parsed, PromptFormat},
    responses,
    strict::to_strict,
};
use crate::{
    Error,
    protocol::{CallToolResult, Tool},
};

/// An LLM API whose tool format oxmcp speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI Chat Completions (`tools[].function`).
    OpenAi,
    /// The OpenAI Responses API (flat `function` tools, `function_call` items).
    Responses,
    /// Anthropic Messages (`input_schema`, `tool_use` / `tool_result` blocks).
    Anthropic,
    /// Gemini with `parametersJsonSchema` (JSON Schema as is; the recommended path).
    Gemini,
    /// Gemini with the legacy OpenAPI-subset `parameters` (refs inlined, nullable, no unions).
    GeminiOpenApi,
    /// LangChain's tool shape (`args_schema`, `ToolMessage`).
    LangChain,
    /// A model without function calling: the tools as system-prompt text, the calls read out
    /// of the reply text, in one of the [`PromptFormat`]s (see [`super::prompt`]).
    Prompt(PromptFormat),
}

impl Serialize for Provider {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Provider {
    /// Every function-calling provider (the prompt provider's formats are
    /// [`PromptFormat::ALL`]).
    pub const ALL: [Provider; 6] = [
        Provider::OpenAi,
        Provider::Responses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::GeminiOpenApi,
        Provider::LangChain,
    ];

    /// The provider's stable name (`openai`, `responses`, `anthropic`, `gemini`,
    /// `gemini-openapi`, `langchain`, `prompt:hermes`, `prompt:json`, `prompt:react`,
    /// `prompt:xml`).
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Responses => "responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::GeminiOpenApi => "gemini-openapi",
            Provider::LangChain => "langchain",
            Provider::Prompt(PromptFormat::Hermes) => "prompt:hermes",
            Provider::Prompt(PromptFormat::Json) => "prompt:json",
            Provider::Prompt(PromptFormat::React) => "prompt:react",
            Provider::Prompt(PromptFormat::Xml) => "prompt:xml",
        }
    }

    /// Parses [`Provider::as_str`]; `prompt` alone is `prompt:hermes`.
    pub fn parse(name: &str) -> Option<Provider> {
        if name == "prompt" {
            return Some(Provider::Prompt(PromptFormat::Hermes));
        }
        if let Some(format) = name.strip_prefix("prompt:") {
            return PromptFormat::parse(format).map(Provider::Prompt);
        }
        Provider::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The format, for the prompt provider.
    pub fn prompt_format(self) -> Option<PromptFormat> {
        match self {
            Provider::Prompt(f) => Some(f),
            _ => None,
        }
    }

    /// The naming rules of the provider.
    pub fn name_rules(self) -> NameRules {
        match self {
            Provider::Gemini | Provider::GeminiOpenApi => NameRules::Gemini,
            _ => NameRules::Strict,
        }
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How to translate.
#[derive(Clone, Debug)]
pub struct TranslateOptions {
    /// OpenAI strict mode (Chat Completions and Responses; `strict` is always set explicitly,
    /// since the Responses API defaults to strict when it is omitted).
    pub strict: bool,
    /// Which names get the `server__` prefix.
    pub namespace: Namespace,
}

impl Default for TranslateOptions {
    fn default() -> Self {
        TranslateOptions {
            strict: true,
            namespace: Namespace::Always,
        }
    }
}

/// The tools of one server.
#[derive(Clone, Copy, Debug)]
pub struct ServerTools<'a> {
    /// The server's name in the config.
    pub server: &'a str,
    /// Its `tools/list`.
    pub tools: &'a [Tool],
}

/// What happened to one tool.
#[derive(Clone, Debug, Serialize)]
pub struct ToolReport {
    /// The provider-facing name.
    pub name: String,
    /// The server.
    pub server: String,
    /// The tool's MCP name.
    pub tool: String,
    /// Whether OpenAI strict mode applies (`None` for providers without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Why strict mode was asked for but not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    /// Keywords moved into descriptions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// Why the tool was left out (a schema refused as hostile or invalid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One tool in one provider's format.
#[derive(Clone, Debug)]
pub struct TranslatedTool {
    /// The tool definition.
    pub value: Value,
    /// Whether strict mode applies.
    pub strict: Option<bool>,
    /// Why strict mode could not apply.
    pub fallback_reason: Option<String>,
    /// Keywords moved into descriptions.
    pub notes: Vec<Note>,
    /// The normalised source schema (what the way back strips nulls against).
    pub source: Value,
}

/// Translates one tool under a given provider-facing name.
pub fn translate_tool(
    provider: Provider,
    tool: &Tool,
    name: &str,
    options: &TranslateOptions,
) -> Result<TranslatedTool, Error> {
    let source = normalize(&Value::Object(tool.input_schema.clone()))?;
    let description = tool
        .description
        .clone()
        .or_else(|| tool.title.clone())
        .unwrap_or_default();
    let mut out = TranslatedTool {
        value: Value::Null,
        strict: None,
        fallback_reason: None,
        notes: Vec::new(),
        source: source.clone(),
    };
    let output_schema = match &tool.output_schema {
        Some(s) => Some(normalize(&Value::Object(s.clone()))?),
        None => None,
    };
    match provider {
        Provider::OpenAi | Provider::Responses => {
            let (schema, strict) = if options.strict {
                match to_strict(&source) {
                    Ok(s) => {
                        out.notes = s.notes;
                        (s.schema, true)
                    }
                    Err(reason) => {
                        out.fallback_reason = Some(reason);
                        (source.clone(), false)
                    }
                }
            } else {
                (source.clone(), false)
            };
            out.strict = Some(strict);
            out.value = if provider == Provider::OpenAi {
                openai::tool(name, &description, schema, strict)
            } else {
                responses::tool(name, &description, schema, strict)
            };
        }
        Provider::Anthropic => out.value = anthropic::tool(name, &description, source.clone()),
        Provider::Gemini => {
            let (schema, notes) = gemini::json_schema(&source);
            let output = output_schema.as_ref().map(|s| gemini::json_schema(s).0);
            out.notes = notes;
            out.value = gemini::tool_json(name, &description, schema, output);
        }
        Provider::GeminiOpenApi => {
            let (schema, notes) = gemini::openapi(&source)?;
            out.notes = notes;
            out.value = gemini::tool_openapi(name, &description, schema);
        }
        Provider::LangChain => {
            out.value = langchain::tool(name, &description, source.clone(), tool, output_schema)
        }
        // The schema as is: the model reads it, nothing has to accept it.
        Provider::Prompt(_) => out.value = openai_shape(name, &description, source.clone()),
    }
    Ok(out)
}

/// The prompt provider's tool value: the function shape the Hermes template writes, without
/// OpenAI's `strict`.
fn openai_shape(name: &str, description: &str, parameters: Value) -> Value {
    json!({
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    })
}

#[derive(Clone, Debug)]
struct Entry {
    source: Value,
    strict: bool,
}

/// The tools of several servers in one provider's format, and the way back.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The provider.
    pub provider: Provider,
    /// Tool definitions, in server then tool order (refused tools left out).
    pub tools: Vec<Value>,
    /// Provider names ↔ (server, tool).
    pub names: NameMap,
    /// One report per tool, refused ones included.
    pub reports: Vec<ToolReport>,
    entries: BTreeMap<String, Entry>,
}

/// Translates the tools of `servers` (see the module doc).
pub fn translate(
    provider: Provider,
    servers: &[ServerTools<'_>],
    options: &TranslateOptions,
) -> Translation {
    let pairs: Vec<(String, String)> = servers
        .iter()
        .flat_map(|s| {
            s.tools
                .iter()
                .map(|t| (s.server.to_owned(), t.name.clone()))
        })
        .collect();
    let names = NameMap::assign(&pairs, provider.name_rules(), options.namespace);
    let mut tools = Vec::new();
    let mut reports = Vec::new();
    let mut entries = BTreeMap::new();
    for s in servers {
        for tool in s.tools {
            let Some(name) = names.name_of(s.server, &tool.name) else {
                continue;
            };
            let mut report = ToolReport {
                name: name.to_owned(),
                server: s.server.to_owned(),
                tool: tool.name.clone(),
                strict: None,
                fallback_reason: None,
                notes: Vec::new(),
                error: None,
            };
            if entries.contains_key(name) {
                continue; // a server listing the same tool twice
            }
            match translate_tool(provider, tool, name, options) {
                Ok(t) => {
                    report.strict = t.strict;
                    report.fallback_reason = t.fallback_reason;
                    report.notes = t.notes;
                    tools.push(t.value);
                    entries.insert(
                        name.to_owned(),
                        Entry {
                            source: t.source,
                            strict: t.strict == Some(true),
                        },
                    );
                }
                Err(e) => report.error = Some(e.to_string()),
            }
            reports.push(report);
        }
    }
    Translation {
        provider,
        tools,
        names,
        reports,
        entries,
    }
}

/// The JSON entry point the bindings wrap: `tools` is a `tools/list` array (one server, names
/// kept as they are, only sanitised) or an object of server name → array (names namespaced as
/// `options` says). A value nested deeper than [`MAX_VALUE_DEPTH`](super::MAX_VALUE_DEPTH) is
/// refused (`InvalidSchema`) before anything recursive touches it.
pub fn translate_value(
    provider: Provider,
    tools: &Value,
    options: &TranslateOptions,
) -> Result<Translation, Error> {
    super::check_depth(tools, "the tools")?;
    let parse = |v: &Value, at: &str| -> Result<Vec<Tool>, Error> {
        serde_json::from_value(v.clone())
            .map_err(|e| Error::InvalidArgument(format!("{at}: not a list of MCP tools: {e}")))
    };
    match tools {
        Value::Array(_) => {
            let list = parse(tools, "tools")?;
            let options = TranslateOptions {
                namespace: super::names::Namespace::Never,
                ..options.clone()
            };
            Ok(translate(
                provider,
                &[ServerTools {
                    server: "",
                    tools: &list,
                }],
                &options,
            ))
        }
        Value::Object(servers) => {
            let lists = servers
                .iter()
                .map(|(name, v)| Ok((name.clone(), parse(v, &format!("tools of `{name}`"))?)))
                .collect::<Result<Vec<_>, Error>>()?;
            let refs: Vec<ServerTools<'_>> = lists
                .iter()
                .map(|(server, tools)| ServerTools { server, tools })
                .collect();
            Ok(translate(provider, &refs, options))
        }
        other => Err(Error::InvalidArgument(format!(
            "expected a list of tools or an object of server → tools, not `{other}`"
        ))),
    }
}

impl Translation {
    /// The whole translation as JSON: `{"tools": <request tools>, "names": {name: {server,
    /// tool}}, "reports": [...]}`.
    pub fn to_value(&self) -> Value {
        json!({
            "tools": self.request_tools(),
            "names": self.names,
            "reports": self.reports,
        })
    }

    /// The value to put in the API request's `tools` field (Gemini wraps the declarations in
    /// one `functionDeclarations` tool).
    pub fn request_tools(&self) -> Value {
        match self.provider {
            Provider::Gemini | Provider::GeminiOpenApi => {
                json!([{ "functionDeclarations": self.tools }])
            }
            // No `tools` field: the text for the system prompt.
            Provider::Prompt(format) => Value::String(prompt::render(format, &self.tools)),
            _ => Value::Array(self.tools.clone()),
        }
    }

    /// The prompt provider's system-prompt text (`None` for the function-calling providers).
    pub fn system_text(&self) -> Option<String> {
        let format = self.provider.prompt_format()?;
        Some(prompt::render(format, &self.tools))
    }

    /// The prompt provider's reading of a reply: content, reasoning, and every call judged
    /// against these tools (`None` for the function-calling providers, whose calls come in
    /// structured fields: [`tool_calls`]).
    pub fn parse_reply(&self, text: &str) -> Option<Parsed> {
        let format = self.provider.prompt_format()?;
        Some(prompt::parse(format, text, self))
    }

    /// Maps a model's tool call to the server, tool and `tools/call` arguments. `Err` is text
    /// to send back to the model as an error result (an unknown tool, arguments that are not
    /// a JSON object), never a reason to stop. It carries no "Error:" prefix: each provider's
    /// result formatter marks error results its own way (a prefix, `is_error`, an `error` key).
    pub fn route(&self, call: &ToolCall) -> Result<(ToolRef, Map<String, Value>), String> {
        let Some(target) = self.names.resolve(&call.name) else {
            return Err(format!(
                "there is no tool named `{}`. Available tools: {}.",
                call.name,
                self.names.names().collect::<Vec<_>>().join(", ")
            ));
        };
        let Some(entry) = self.entries.get(&call.name) else {
            return Err(format!(
                "the tool `{}` is unavailable (its schema was refused).",
                call.name
            ));
        };
        let mut args = call.arguments.clone().map_err(|why| {
            format!(
                "the arguments for `{}` were not usable: {why}. Send a JSON object.",
                call.name
            )
        })?;
        if entry.strict {
            strip_nulls(&mut args, &entry.source);
        }
        Ok((target.clone(), args))
    }
}

impl Catalog for Translation {
    fn tool_names(&self) -> Vec<&str> {
        self.reports
            .iter()
            .filter(|r| r.error.is_none())
            .map(|r| r.name.as_str())
            .collect()
    }

    fn input_schema(&self, name: &str) -> Option<&Value> {
        self.entries.get(name).map(|e| &e.source)
    }
}

/// Any name, any arguments: the syntactic reading [`tool_calls`] gives for the prompt
/// provider, where no translation is at hand.
struct AnyTool;

static ANY_SCHEMA: Value = Value::Bool(true);

impl Catalog for AnyTool {
    fn tool_names(&self) -> Vec<&str> {
        Vec::new()
    }

    fn input_schema(&self, _: &str) -> Option<&Value> {
        Some(&ANY_SCHEMA)
    }
}

/// A tool call read from an assistant turn.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCall {
    /// The provider's call id (`tool_call_id`, `call_id`, `tool_use_id`, Gemini's optional id).
    pub id: Option<String>,
    /// The provider-facing tool name.
    pub name: String,
    /// The arguments as a JSON object, or why they could not be read.
    pub arguments: Result<Map<String, Value>, String>,
}

impl ToolCall {
    /// Reads arguments that arrive as a JSON string (OpenAI) or as a value (the others).
    pub fn parse_arguments(raw: Option<&Value>) -> Result<Map<String, Value>, String> {
        match raw {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(Map::new()),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(m)) => Ok(m),
                Ok(other) => Err(format!("expected a JSON object, got `{other}`")),
                Err(e) => Err(format!("invalid JSON ({e})")),
            },
            Some(other) => Err(format!("expected a JSON object, got `{other}`")),
        }
    }
}

/// Where a provider's call object keeps a call's id, name and arguments, as JSON pointers
/// (`/function/name` for OpenAI's nesting). Each provider file names its own layout, and one
/// reader serves them all, so a missing id or name is handled alike everywhere.
pub(super) struct CallFields {
    /// The call id.
    pub id: &'static str,
    /// The tool name.
    pub name: &'static str,
    /// The arguments, a JSON string or a value.
    pub arguments: &'static str,
}

impl CallFields {
    /// The call in `call`. A missing name reads as empty: routing then reports it unknown.
    pub(super) fn read(&self, call: &Value) -> ToolCall {
        let text = |pointer| call.pointer(pointer).and_then(Value::as_str);
        ToolCall {
            id: text(self.id).map(String::from),
            name: text(self.name).unwrap_or_default().to_owned(),
            arguments: ToolCall::parse_arguments(call.pointer(self.arguments)),
        }
    }
}

/// A tool call and what came of it.
#[derive(Clone, Debug)]
pub struct ToolOutcome {
    /// The call.
    pub call: ToolCall,
    /// Its result (errors already turned into `isError` results).
    pub result: CallToolResult,
}

/// The tool calls in an assistant turn (a message or a whole API response).
pub fn tool_calls(provider: Provider, turn: &Value) -> Vec<ToolCall> {
    match provider {
        Provider::OpenAi => openai::calls(turn),
        Provider::Responses => responses::calls(turn),
        Provider::Anthropic => anthropic::calls(turn),
        Provider::Gemini | Provider::GeminiOpenApi => gemini::calls(turn),
        Provider::LangChain => langchain::calls(turn),
        // Syntax only: [`Translation::parse_reply`] also checks names and schemas.
        Provider::Prompt(format) => prompt::parse(format, &prompt_text(turn), &AnyTool)
            .calls
            .iter()
            .map(prompt::PromptCall::to_tool_call)
            .collect(),
    }
}

/// The text of a prompt-provider turn: a string, a message, or a whole Chat Completions
/// response (`choices[0].message`).
pub fn prompt_text(turn: &Value) -> String {
    match turn {
        Value::String(s) => s.clone(),
        other => joined_text(openai::message(other).get("content"), &["text"]),
    }
}

/// The messages (or items) that carry these results back to the model, in order.
pub fn result_messages(provider: Provider, outcomes: &[ToolOutcome]) -> Vec<Value> {
    match provider {
        Provider::OpenAi => openai::results(outcomes),
        Provider::Responses => responses::results(outcomes),
        Provider::Anthropic => anthropic::results(outcomes),
        Provider::Gemini | Provider::GeminiOpenApi => gemini::results(outcomes),
        Provider::LangChain => langchain::results(outcomes),
        Provider::Prompt(format) => prompt::result_messages(format, outcomes),
    }
}

/// What of an assistant turn goes into the conversation (the message itself, taken out of a
/// whole API response when that is what the model callback returned).
pub fn assistant_messages(provider: Provider, turn: &Value) -> Vec<Value> {
    match provider {
        Provider::OpenAi => vec![openai::message(turn).clone()],
        Provider::Responses => responses::items(turn).to_vec(),
        Provider::Anthropic => vec![anthropic::message(turn)],
        Provider::Gemini | Provider::GeminiOpenApi => vec![gemini::content(turn).clone()],
        Provider::LangChain => vec![turn.clone()],
        Provider::Prompt(_) => vec![json!({"role": "assistant", "content": prompt_text(turn)})],
    }
}

/// The text of an assistant turn.
pub fn assistant_text(provider: Provider, turn: &Value) -> String {
    match provider {
        Provider::OpenAi => openai::text(turn),
        Provider::Responses => responses::text(turn),
        Provider::Anthropic => anthropic::text(turn),
        Provider::Gemini | Provider::GeminiOpenApi => gemini::text(turn),
        Provider::LangChain => langchain::text(turn),
        Provider::Prompt(_) => prompt_text(turn),
    }
}

/// Joins the `text` of the blocks of a list whose `type` is one of `kinds` (several providers
/// share this shape).
pub(super) fn joined_text(blocks: Option<&Value>, kinds: &[&str]) -> String {
    match blocks {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter(|b| {
                b.get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|t| kinds.contains(&t))
            })
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
