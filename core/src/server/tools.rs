//! Tools registered at runtime: handlers, argument validation and the registry.

use std::{future::Future, sync::Arc};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::{
    Error,
    jsonrpc::ErrorObject,
    protocol::{
        CallToolResult, TaskSupport, Tool,
        param_headers::{self, ParamHeader},
    },
    schema::SchemaValidator,
    server::Context,
};

/// Why a tool call did not produce a result.
#[derive(Debug, Clone)]
pub enum ToolError {
    /// The tool failed: reported to the model as a result with `isError: true`.
    Failed(String),
    /// A protocol-level error (rarely right for a tool; an unknown tool is one).
    Protocol(ErrorObject),
}

impl ToolError {
    /// A tool failure with a message for the model.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::Failed(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::Failed(message.to_owned())
    }
}

impl From<Error> for ToolError {
    fn from(e: Error) -> Self {
        ToolError::Failed(e.to_string())
    }
}

/// What a tool handler returns.
pub type ToolResult = Result<CallToolResult, ToolError>;

/// A tool implementation. Arguments arrive as a JSON object already validated against the
/// tool's `inputSchema`.
///
/// Implemented for async closures `Fn(Value, Context) -> impl Future<Output = ToolResult>`;
/// bindings implement it around host callables.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool. The future is dropped if the caller cancels.
    fn call(&self, arguments: Value, ctx: Context) -> BoxFuture<'static, ToolResult>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    fn call(&self, arguments: Value, ctx: Context) -> BoxFuture<'static, ToolResult> {
        Box::pin(self(arguments, ctx))
    }
}

/// When a call of a task-capable tool becomes a task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskStart {
    /// Before the handler runs: the client gets the task's id at once (the default).
    #[default]
    Immediately,
    /// When the handler calls [`Context::start_task`]: until then the call is an ordinary
    /// request (its questions are asked within it, multi round-trip in 2026-07-28), and a
    /// handler that finishes without starting answers as a plain call.
    Deferred,
}

/// How a tool is served, beside its definition.
#[derive(Clone, Debug, Default)]
pub struct ToolOptions {
    /// Whether calls may, must or must not run as tasks (`execution.taskSupport`).
    pub task_support: TaskSupport,
    /// When a call becomes a task.
    pub task_start: TaskStart,
}

impl ToolOptions {
    /// Calls may run as tasks when the client asks (`optional`) or must (`required`).
    pub fn tasks(support: TaskSupport) -> Self {
        ToolOptions {
            task_support: support,
            ..Default::default()
        }
    }

    /// The call becomes a task when the handler says so ([`TaskStart::Deferred`]).
    pub fn deferred(mut self) -> Self {
        self.task_start = TaskStart::Deferred;
        self
    }

    /// What a definition declares: its `execution.taskSupport` (a tool registered with a
    /// plain `add_tool` is served as its listing says).
    pub fn from_tool(tool: &Tool) -> Self {
        ToolOptions::tasks(TaskSupport::of_tool(tool))
    }
}

/// A registered tool: its definition, compiled schemas and handler.
#[derive(Clone)]
pub(crate) struct RegisteredTool {
    pub(crate) tool: Tool,
    pub(crate) options: ToolOptions,
    pub(crate) input: Arc<SchemaValidator>,
    pub(crate) output: Option<Arc<SchemaValidator>>,
    pub(crate) handler: Arc<dyn ToolHandler>,
    /// Arguments the client mirrors into `Mcp-Param-*` headers on Streamable HTTP.
    pub(crate) param_headers: Vec<ParamHeader>,
}

impl RegisteredTool {
    pub(crate) fn new(
        mut tool: Tool,
        options: ToolOptions,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<Self, Error> {
        validate_name(&tool.name)?;
        // The listing says what the options say (2025-11-25 `execution.taskSupport`).
        match options.task_support {
            TaskSupport::Forbidden => {
                if let Some(serde_json::Value::Object(execution)) = tool.extra.get_mut("execution")
                {
                    execution.remove("taskSupport");
                    if execution.is_empty() {
                        tool.extra.remove("execution");
                    }
                }
            }
            support => {
                let execution = tool
                    .extra
                    .entry("execution")
                    .or_insert_with(|| serde_json::json!({}));
                if !execution.is_object() {
                    *execution = serde_json::json!({});
                }
                execution["taskSupport"] = serde_json::json!(support.as_str());
            }
        }
        let input =
            SchemaValidator::compile(&Value::Object(tool.input_schema.clone())).map_err(|e| {
                Error::InvalidSchema(format!("inputSchema of tool `{}`: {e}", tool.name))
            })?;
        let output = match &tool.output_schema {
            Some(schema) => Some(Arc::new(
                SchemaValidator::compile(&Value::Object(schema.clone())).map_err(|e| {
                    Error::InvalidSchema(format!("outputSchema of tool `{}`: {e}", tool.name))
                })?,
            )),
            None => None,
        };
        // A declaration clients must refuse is refused here, so no client ever drops the tool.
        let param_headers = param_headers::declarations(&tool.input_schema).map_err(|why| {
            Error::InvalidSchema(format!("inputSchema of tool `{}`: {why}", tool.name))
        })?;
        Ok(RegisteredTool {
            tool,
            options,
            input: Arc::new(input),
            output,
            handler,
            param_headers,
        })
    }
}

/// Tool names: 1–128 characters from `[A-Za-z0-9_.-]` (2025-11-25 guidance), checked at
/// registration so no client ever sees a name it cannot use.
fn validate_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "tool name `{name}` must be 1-128 characters of A-Z, a-z, 0-9, `_`, `-` or `.`"
        )))
    }
}

/// Checks a handler's result against the tool's output schema, and fills in the text
/// rendering of structured content that older clients need.
pub(crate) fn finish_result(tool: &RegisteredTool, mut result: CallToolResult) -> CallToolResult {
    if result.is_error() {
        return result;
    }
    if let Some(output) = &tool.output {
        match &result.structured_content {
            None => {
                return CallToolResult::error(format!(
                    "tool `{}` declares an outputSchema but returned no structuredContent",
                    tool.tool.name
                ));
            }
            Some(value) => {
                if let Err(problems) = output.validate(value) {
                    return CallToolResult::error(format!(
                        "tool `{}` returned structuredContent that does not match its outputSchema: {}",
                        tool.tool.name,
                        problems.join("; ")
                    ));
                }
            }
        }
    }
    if result.content.is_empty()
        && let Some(value) = &result.structured_content
    {
        result
            .content
            .push(crate::protocol::ContentBlock::text(value.to_string()));
    }
    result
}

/// On a 2026-07-28 HTTP request, each `Mcp-Param-*` header the tool declares must agree with
/// the argument in the body: present exactly when the argument is, and equal to it. A
/// disagreement means an intermediary may have routed on a value the tool never sees.
pub(crate) fn check_param_headers(
    tool: &RegisteredTool,
    headers: &http::HeaderMap,
    arguments: &Value,
) -> Result<(), ErrorObject> {
    let mismatch = |message: String| {
        ErrorObject::new(
            crate::jsonrpc::codes::HEADER_MISMATCH,
            format!("Header mismatch: {message}"),
        )
    };
    for declared in &tool.param_headers {
        let name = declared.header_name();
        let mut values = headers.get_all(name.as_str()).iter();
        let (header, extra) = (values.next(), values.next());
        if extra.is_some() {
            return Err(mismatch(format!("more than one `{name}` header")));
        }
        let body = declared.value_in(arguments);
        match (header, body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "`{name}` is required when the body carries `{}`",
                    declared.path.join(".")
                )));
            }
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "`{name}` was sent but the body carries no `{}`",
                    declared.path.join(".")
                )));
            }
            (Some(raw), Some(value)) => {
                let text = param_headers::decode(raw.as_bytes())
                    .map_err(|why| mismatch(format!("`{name}` {why}")))?;
                if !param_headers::matches(&text, value) {
                    return Err(mismatch(format!(
                        "`{name}` does not match the body's `{}`",
                        declared.path.join(".")
                    )));
                }
            }
        }
    }
    Ok(())
}
