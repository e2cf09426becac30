//! Typed requests for tools: listing them (and, over Streamable HTTP in the stateless era,
//! learning their `Mcp-Param-*` header declarations) and calling them.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::{Client, encoded};
use crate::{
    Error, Result,
    protocol::{CallToolResult, ListToolsResult, TaskSupport, Tool, methods, param_headers},
    session::RequestOptions,
};

impl Client {
    /// A plain call of a tool the server listed as task-only fails here, typed (some servers
    /// answer it with an `isError` result instead of an error).
    pub(super) fn refuse_task_only(&self, name: &str) -> Result<()> {
        if self.inner.task_only.lock().contains(name) {
            return Err(Error::TaskRequired {
                tool: name.to_owned(),
            });
        }
        Ok(())
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult> {
        let mut page: ListToolsResult = self
            .list_page::<_, Tool>(methods::TOOLS_LIST, "tools", cursor)
            .await?;
        {
            let mut task_only = self.inner.task_only.lock();
            for tool in &page.tools {
                if TaskSupport::of_tool(tool) == TaskSupport::Required {
                    task_only.insert(tool.name.clone());
                } else {
                    task_only.remove(&tool.name);
                }
            }
        }
        if let (Some(table), true) = (
            &self.inner.param_headers,
            self.protocol_version().is_stateless(),
        ) {
            // A tool whose header declarations break the rules cannot be called correctly
            // over HTTP; it is left out so the rest stay usable (SEP-2243).
            page.tools.retain(
                |tool| match param_headers::declarations(&tool.input_schema) {
                    Ok(declared) => {
                        table.insert(&tool.name, declared);
                        true
                    }
                    Err(why) => {
                        tracing::warn!(tool = %tool.name, "ignoring tool: {why}");
                        false
                    }
                },
            );
        }
        Ok(page)
    }

    /// Every tool, following cursors (refusing a server whose cursors loop).
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>> {
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list_tools(cursor.as_deref()).await?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(Error::Protocol(format!(
                            "tools/list returned cursor `{next}` twice"
                        )));
                    }
                    cursor = Some(next);
                }
            }
        }
    }

    /// Calls a tool with default options (60 s timeout, reset by progress).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call_tool_with(name, arguments, RequestOptions::default())
            .await
    }

    /// Calls a tool. A progress token is always attached, so a server that reports progress
    /// keeps a long call alive.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        mut options: RequestOptions,
    ) -> Result<CallToolResult> {
        if !matches!(arguments, Value::Null | Value::Object(_)) {
            return Err(Error::InvalidArgument(
                "tool arguments must be a JSON object".into(),
            ));
        }
        self.refuse_task_only(name)?;
        if self.inner.stateless_meta.is_none() {
            // The arguments are encoded once into the request and the result decoded once
            // from the response, with no `Value` of the whole params or result in between.
            let arguments = match &arguments {
                Value::Null => None,
                _ => Some(
                    serde_json::value::to_raw_value(&arguments)
                        .map_err(|e| Error::InvalidArgument(format!("tool arguments: {e}")))?,
                ),
            };
            let result = self
                .call_tool_encoded(name, arguments.as_deref(), options)
                .await
                .map_err(|e| super::tasks::task_required(name, e))?;
            return serde_json::from_str(result.get()).map_err(encoded::invalid_result);
        }
        let mut params = json!({ "name": name });
        if arguments.is_object() {
            params["arguments"] = arguments;
        }
        options.request_progress = true;
        self.request_typed(methods::TOOLS_CALL, Some(params), options)
            .await
            .map_err(|e| super::tasks::task_required(name, e))
    }
}
