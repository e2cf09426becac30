//! `oxmcp._native.translate` and `NativeTranslation`: `oxmcp::schema` for Python.
//!
//! The tools cross once as data, the core translates them (with the GIL released: a large or
//! hostile schema is real work), and the result stays native so the way back (reading a
//! model's tool calls, stripping strict-mode nulls against the source schema) runs on the
//! same translation the model saw. Nothing about any provider's format is decided here.

use oxmcp::{
    protocol::CallToolResult,
    schema::{
        Namespace, PromptFormat, Provider, ToolCall, ToolOutcome, TranslateOptions, Translation,
        prompt::rewrite_history, prompt_text, result_messages, tool_calls, translate_value,
    },
};
use pyo3::prelude::*;
use serde_json::{Map, Value, json};

use crate::{convert, errors::to_pyerr};

fn invalid(message: String) -> PyErr {
    to_pyerr(oxmcp::Error::InvalidArgument(message))
}

/// Parses a provider name (`openai`, `responses`, `anthropic`, `gemini`, `gemini-openapi`,
/// `langchain`, `prompt`, `prompt:FORMAT`).
pub fn provider(name: &str) -> PyResult<Provider> {
    Provider::parse(name).ok_or_else(|| {
        let mut all: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
        all.extend(PromptFormat::ALL.map(|f| Provider::Prompt(f).as_str()));
        invalid(format!(
            "unknown provider `{name}` (one of: {})",
            all.join(", ")
        ))
    })
}

/// Parses a namespace mode (`always`, `collision`, `never`).
pub fn namespace(name: &str) -> PyResult<Namespace> {
    name.parse::<Namespace>().map_err(|e| to_pyerr(e.into()))
}

/// Translation options from the Python keywords.
pub fn options(strict: bool, namespace_mode: &str) -> PyResult<TranslateOptions> {
    Ok(TranslateOptions {
        strict,
        namespace: namespace(namespace_mode)?,
    })
}

/// A translation, kept native for the way back.
#[pyclass(module = "oxmcp._native", name = "NativeTranslation", frozen)]
pub struct NativeTranslation {
    inner: Translation,
}

impl NativeTranslation {
    /// Wraps a core translation (the host hands out its own).
    pub fn new(inner: Translation) -> Self {
        NativeTranslation { inner }
    }
}

/// One routed call as JSON: where it goes and with what, or the text the model gets back.
fn routed(translation: &Translation, call: &ToolCall) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), json!(call.id));
    out.insert("name".into(), json!(call.name));
    match translation.route(call) {
        Ok((target, arguments)) => {
            out.insert("server".into(), json!(target.server));
            out.insert("tool".into(), json!(target.tool));
            out.insert("arguments".into(), Value::Object(arguments));
            out.insert("error".into(), Value::Null);
        }
        Err(text) => {
            out.insert("server".into(), Value::Null);
            out.insert("tool".into(), Value::Null);
            out.insert("arguments".into(), Value::Null);
            out.insert("error".into(), Value::String(text));
        }
    }
    Value::Object(out)
}

#[pymethods]
impl NativeTranslation {
    /// The provider's name.
    #[getter]
    fn provider(&self) -> &'static str {
        self.inner.provider.as_str()
    }

    /// `{"tools": <the request's tools value>, "names": {...}, "reports": [...]}`.
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        convert::to_py(py, &self.inner.to_value())
    }

    /// The tool calls of an assistant turn (a message or a whole API response), each routed:
    /// `{id, name, server, tool, arguments, error}` (strict-mode nulls already stripped;
    /// `error` is text for the model when the call cannot be made).
    fn calls(&self, py: Python<'_>, turn: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let turn = convert::from_py(turn, "the assistant turn")?;
        if let Some(parsed) = self.inner.parse_reply(&prompt_text(&turn)) {
            // The prompt provider: calls read out of the text, malformed ones as errors.
            let value = py.detach(|| parsed.to_value(&self.inner));
            return convert::to_py(py, &value["calls"]);
        }
        let out: Vec<Value> = tool_calls(self.inner.provider, &turn)
            .iter()
            .map(|c| routed(&self.inner, c))
            .collect();
        convert::to_py(py, &Value::Array(out))
    }

    /// The prompt provider's system text (`None` for the function-calling providers).
    fn system(&self) -> Option<String> {
        self.inner.system_text()
    }

    /// The prompt provider's whole reading of a reply (a string, a message or a whole Chat
    /// Completions response): `{content, reasoning, answer, calls}`.
    fn reply(&self, py: Python<'_>, turn: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let turn = convert::from_py(turn, "the reply")?;
        let text = prompt_text(&turn);
        let Some(value) = py.detach(|| {
            self.inner
                .parse_reply(&text)
                .map(|p| p.to_value(&self.inner))
        }) else {
            return Err(invalid(format!(
                "reply() reads text replies; the provider `{}` has structured tool calls",
                self.inner.provider
            )));
        };
        convert::to_py(py, &value)
    }

    /// Stop sequences to send with the request (ReAct: `\nObservation:`).
    fn stop(&self) -> Vec<&'static str> {
        self.inner
            .provider
            .prompt_format()
            .map(|f| f.stop().to_vec())
            .unwrap_or_default()
    }
}

/// An OpenAI-shaped conversation rewritten into a prompt format's text (`tool_calls` as call
/// text, `tool` messages as one `user` message of results).
#[pyfunction]
pub fn prompt_history(
    py: Python<'_>,
    format: &str,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let Some(format) = PromptFormat::parse(format) else {
        return Err(invalid(format!(
            "unknown prompt format `{format}` (one of: hermes, json, react, xml)"
        )));
    };
    let Value::Array(messages) = convert::from_py(messages, "the messages")? else {
        return Err(invalid("the messages must be a list".into()));
    };
    convert::to_py(py, &Value::Array(rewrite_history(format, &messages)))
}

/// Translates `tools` (a `tools/list` array, or an object of server name → array) for
/// `provider`. Refused tools are reported, not raised; only input that is not a tool list
/// raises.
#[pyfunction]
#[pyo3(signature = (provider, tools, strict=true, namespace="always"))]
pub fn translate(
    py: Python<'_>,
    provider: &str,
    tools: &Bound<'_, PyAny>,
    strict: bool,
    namespace: &str,
) -> PyResult<NativeTranslation> {
    let provider = self::provider(provider)?;
    let options = options(strict, namespace)?;
    let tools = convert::from_py(tools, "the tools")?;
    let inner = py
        .detach(move || translate_value(provider, &tools, &options))
        .map_err(to_pyerr)?;
    Ok(NativeTranslation { inner })
}

/// The messages that carry tool results back to `provider`'s model. `outcomes` is a list of
/// `{"id", "name", "result"}` (the call's id and provider-facing name, a `CallToolResult`).
#[pyfunction]
pub fn result_messages_for(
    py: Python<'_>,
    provider: &str,
    outcomes: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let provider = self::provider(provider)?;
    let outcomes = convert::from_py(outcomes, "the tool outcomes")?;
    let Value::Array(items) = outcomes else {
        return Err(invalid(
            "the tool outcomes must be a list of {id, name, result}".into(),
        ));
    };
    let mut list = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let Value::Object(mut m) = item else {
            return Err(invalid(format!(
                "tool outcome {i} must be a dict with id, name and result"
            )));
        };
        let id = match m.remove("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                return Err(invalid(format!(
                    "tool outcome {i}: `id` must be a string, not `{other}`"
                )));
            }
        };
        let Some(Value::String(name)) = m.remove("name") else {
            return Err(invalid(format!(
                "tool outcome {i}: `name` must be the tool's provider-facing name"
            )));
        };
        let result: CallToolResult = serde_json::from_value(m.remove("result").unwrap_or_default())
            .map_err(|e| invalid(format!("tool outcome {i}: not a CallToolResult: {e}")))?;
        list.push(ToolOutcome {
            call: ToolCall {
                id,
                name,
                arguments: Ok(Map::new()),
            },
            result,
        });
    }
    convert::to_py(py, &Value::Array(result_messages(provider, &list)))
}
