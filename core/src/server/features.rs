//! The feature methods: tools, resources, prompts, completion, logging.

use std::{collections::BTreeMap, sync::Arc};

use serde_json::{Value, json};

use super::{
    Context, Inner, ResourceError, ToolError, ToolResult,
    lifecycle::cacheable,
    pagination,
    session_data::SessionData,
    tools::{RegisteredTool, finish_result},
};
use crate::{
    jsonrpc::{ErrorObject, codes},
    protocol::{
        CallToolResult, CompleteRequestParams, CompleteResult, Completion, CompletionReference,
        GetPromptRequestParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ListToolsResult, ProtocolVersion, ReadResourceResult,
        SetLevelRequestParams, methods,
    },
};

pub(crate) fn list_tools(
    server: &Inner,
    cursor: Option<&str>,
    stateless: Option<ProtocolVersion>,
) -> Result<ListToolsResult, ErrorObject> {
    let tools = server.tools.read();
    let (range, next_cursor) = pagination::page(
        methods::TOOLS_LIST,
        cursor,
        tools.order.len(),
        server.page_size,
    )?;
    let page = tools.order[range]
        .iter()
        .filter_map(|n| tools.by_name.get(n))
        .map(|t| t.tool.clone())
        .collect();
    let mut result = ListToolsResult {
        tools: page,
        next_cursor,
        ..Default::default()
    };
    cacheable(server, stateless, &mut result.extra);
    Ok(result)
}

/// The registered tool a call names.
pub(crate) fn find_tool(server: &Inner, name: &str) -> Result<Arc<RegisteredTool>, ErrorObject> {
    server
        .tools
        .read()
        .by_name
        .get(name)
        .cloned()
        .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown tool: {name}")))
}

/// The checks before a handler runs: the `Mcp-Param-*` headers of a stateless HTTP request,
/// then the arguments against the tool's `inputSchema`. `Ok(Err(result))` is the answer to
/// arguments that do not validate: a tool error, so the model can correct itself (2025-11-25).
pub(crate) fn check_arguments(
    tool: &RegisteredTool,
    arguments: Option<crate::protocol::JsonObject>,
    stateless: bool,
    headers: Option<&http::HeaderMap>,
) -> Result<Result<Value, CallToolResult>, ErrorObject> {
    let arguments = Value::Object(arguments.unwrap_or_default());
    if let (true, Some(headers)) = (stateless, headers) {
        super::tools::check_param_headers(tool, headers, &arguments)?;
    }
    if let Err(problems) = tool.input.validate(&arguments) {
        return Ok(Err(CallToolResult::error(format!(
            "Invalid arguments for tool `{}`: {}",
            tool.tool.name,
            problems.join("; ")
        ))));
    }
    Ok(Ok(arguments))
}

/// What a handler returned, as the call's answer: its result checked and rendered for the
/// client's revision, a tool failure as an `isError` result, a protocol error as is.
pub(crate) fn finish_call(
    tool: &RegisteredTool,
    outcome: ToolResult,
    version: Option<ProtocolVersion>,
) -> Result<CallToolResult, ErrorObject> {
    match outcome {
        Ok(result) => {
            let mut result = finish_result(tool, result);
            if let Some(version) = version {
                super::compat::downgrade_content(&mut result.content, version);
            }
            Ok(result)
        }
        Err(ToolError::Failed(message)) => Ok(CallToolResult::error(message)),
        Err(ToolError::Protocol(error)) => Err(error),
    }
}

/// A plain (not a task) tool call.
pub(crate) async fn call_tool(
    tool: Arc<RegisteredTool>,
    arguments: Option<crate::protocol::JsonObject>,
    ctx: Context,
) -> Result<CallToolResult, ErrorObject> {
    let arguments = match check_arguments(
        &tool,
        arguments,
        ctx.scope.stateless.is_some(),
        ctx.http_headers(),
    )? {
        Ok(arguments) => arguments,
        Err(invalid) => return Ok(invalid),
    };
    let version = ctx.protocol_version();
    let outcome = tool.handler.call(arguments, ctx).await;
    finish_call(&tool, outcome, version)
}

pub(crate) fn list_resources(
    server: &Inner,
    cursor: Option<&str>,
    stateless: Option<ProtocolVersion>,
) -> Result<ListResourcesResult, ErrorObject> {
    let resources = server.resources.read();
    let (range, next_cursor) = pagination::page(
        methods::RESOURCES_LIST,
        cursor,
        resources.order.len(),
        server.page_size,
    )?;
    let page = resources.order[range]
        .iter()
        .filter_map(|u| resources.by_uri.get(u))
        .map(|(r, _)| r.clone())
        .collect();
    let mut result = ListResourcesResult {
        resources: page,
        next_cursor,
        ..Default::default()
    };
    cacheable(server, stateless, &mut result.extra);
    Ok(result)
}

pub(crate) fn list_templates(
    server: &Inner,
    cursor: Option<&str>,
    stateless: Option<ProtocolVersion>,
) -> Result<ListResourceTemplatesResult, ErrorObject> {
    let resources = server.resources.read();
    let (range, next_cursor) = pagination::page(
        methods::RESOURCES_TEMPLATES_LIST,
        cursor,
        resources.templates.len(),
        server.page_size,
    )?;
    let page = resources.templates[range]
        .iter()
        .map(|t| t.template.clone())
        .collect();
    let mut result = ListResourceTemplatesResult {
        resource_templates: page,
        next_cursor,
        ..Default::default()
    };
    cacheable(server, stateless, &mut result.extra);
    Ok(result)
}

pub(crate) async fn read_resource(
    server: &Inner,
    uri: &str,
    stateless: Option<ProtocolVersion>,
    ctx: Context,
) -> Result<ReadResourceResult, ErrorObject> {
    let not_found = || {
        // 2026-07-28 moved "not found" to invalid params; earlier revisions use -32002.
        let code = if stateless.is_some() {
            codes::INVALID_PARAMS
        } else {
            codes::RESOURCE_NOT_FOUND
        };
        ErrorObject::new(code, format!("Resource not found: {uri}"))
            .with_data(json!({ "uri": uri }))
    };
    let resolved = server.resources.read().resolve(uri);
    let Some((handler, variables)) = resolved else {
        return Err(not_found());
    };
    let mut result = match handler.read(uri.to_owned(), variables, ctx).await {
        Ok(result) => result,
        Err(ResourceError::NotFound) => return Err(not_found()),
        Err(ResourceError::Failed(message)) => {
            return Err(ErrorObject::internal(format!(
                "Reading {uri} failed: {message}"
            )));
        }
        Err(ResourceError::Protocol(error)) => return Err(error),
    };
    for contents in &mut result.contents {
        if contents.text.is_none() && contents.blob.is_none() {
            return Err(ErrorObject::internal(format!(
                "Reading {uri} produced contents with neither text nor blob"
            )));
        }
    }
    cacheable(server, stateless, &mut result.extra);
    Ok(result)
}

pub(crate) fn list_prompts(
    server: &Inner,
    cursor: Option<&str>,
    stateless: Option<ProtocolVersion>,
) -> Result<ListPromptsResult, ErrorObject> {
    let prompts = server.prompts.read();
    let (range, next_cursor) = pagination::page(
        methods::PROMPTS_LIST,
        cursor,
        prompts.order.len(),
        server.page_size,
    )?;
    let page = prompts.order[range]
        .iter()
        .filter_map(|n| prompts.by_name.get(n))
        .map(|p| p.prompt.clone())
        .collect();
    let mut result = ListPromptsResult {
        prompts: page,
        next_cursor,
        ..Default::default()
    };
    cacheable(server, stateless, &mut result.extra);
    Ok(result)
}

pub(crate) async fn get_prompt(
    server: &Inner,
    params: &GetPromptRequestParams,
    ctx: Context,
) -> Result<GetPromptResult, ErrorObject> {
    let (prompt, handler) = {
        let prompts = server.prompts.read();
        let registered = prompts.by_name.get(&params.name).ok_or_else(|| {
            ErrorObject::invalid_params(format!("Unknown prompt: {}", params.name))
        })?;
        (registered.prompt.clone(), registered.handler.clone())
    };
    let arguments = params.arguments.clone().unwrap_or_default();
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .flatten()
        .filter(|a| a.required == Some(true) && !arguments.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "Missing required argument(s) for prompt `{}`: {}",
            prompt.name,
            missing.join(", ")
        )));
    }
    let version = ctx.protocol_version();
    let mut result = handler.get(arguments, ctx).await?;
    if let Some(version) = version {
        for message in &mut result.messages {
            super::compat::downgrade_content(std::slice::from_mut(&mut message.content), version);
        }
    }
    Ok(result)
}

pub(crate) async fn complete(
    server: &Inner,
    params: CompleteRequestParams,
    ctx: Context,
) -> Result<CompleteResult, ErrorObject> {
    let handler = match &params.reference {
        CompletionReference::Prompt { name } => {
            let prompts = server.prompts.read();
            let prompt = prompts
                .by_name
                .get(name)
                .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown prompt: {name}")))?;
            prompt.completions.get(&params.argument.name).cloned()
        }
        CompletionReference::ResourceTemplate { uri } => {
            let resources = server.resources.read();
            let template = resources
                .templates
                .iter()
                .find(|t| t.template.uri_template == *uri)
                .ok_or_else(|| {
                    ErrorObject::invalid_params(format!("Unknown resource template: {uri}"))
                })?;
            template.completions.get(&params.argument.name).cloned()
        }
    };
    let completion = match handler {
        None => Completion {
            values: Vec::new(),
            total: Some(0),
            has_more: Some(false),
        },
        Some(handler) => {
            let context: BTreeMap<String, String> =
                params.context.and_then(|c| c.arguments).unwrap_or_default();
            let mut c = handler
                .complete(params.argument.value, context, ctx)
                .await?;
            if c.values.len() > 100 {
                c = Completion::from_values(c.values);
            }
            c
        }
    };
    Ok(CompleteResult {
        completion,
        meta: None,
    })
}

pub(crate) fn set_level(data: &SessionData, params: SetLevelRequestParams) {
    *data.log_level.lock() = Some(params.level);
}
