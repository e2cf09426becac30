//! Tools registered at runtime: handlers, argument validation and the registry.

use std::{future::Future, sync::Arc};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::{
    Error,
    jsonrpc::ErrorObject,
    protocol::{CallToolResult, Tool},
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

/// A registered tool: its definition, compiled schemas and handler.
#[derive(Clone)]
pub(crate) struct RegisteredTool {
    pub(crate) tool: Tool,
    pub(crate) input: Arc<SchemaValidator>,
    pub(crate) output: Option<Arc<SchemaValidator>>,
    pub(crate) handler: Arc<dyn ToolHandler>,
}

impl RegisteredTool {
    pub(crate) fn new(tool: Tool, handler: Arc<dyn ToolHandler>) -> Result<Self, Error> {
        validate_name(&tool.name)?;
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
        Ok(RegisteredTool {
            tool,
            input: Arc::new(input),
            output,
            handler,
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
