//! The conformance fixture: exactly the tools, resources and prompts the official MCP
//! conformance suite calls (`@modelcontextprotocol/conformance`), with the names, arguments and
//! outputs its scenarios check. Shared by the `conformance_server` example and the Rust tests.

#[path = "tasks.rs"]
mod tasks;

use std::{collections::BTreeMap, time::Duration};

use oxmcp::{
    jsonrpc::ErrorObject,
    protocol::{
        CallToolResult, Completion, ContentBlock, CreateMessageRequestParams, CreateMessageResult,
        ElicitRequestParams, ElicitResult, EmbeddedResource, GetPromptResult, LoggingLevel, Prompt,
        PromptArgument, PromptMessage, ReadResourceResult, Resource, ResourceContents,
        ResourceTemplate, Role, SamplingMessage, Tool,
    },
    server::{Context, ResourceError, Server, ServerBuilder, ToolError, ToolResult},
};
use serde_json::{Value, json};

/// A 1×1 red PNG.
pub const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// A tiny WAV (8 samples of silence, 8 kHz mono).
pub const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

fn no_args() -> Value {
    json!({ "type": "object", "properties": {} })
}

/// Registers a tool that takes no arguments, as most of the suite's do: its handler gets only
/// the request's context.
fn add_no_args<F, Fut>(server: &Server, name: &str, description: &str, run: F) -> oxmcp::Result<()>
where
    F: Fn(Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    server.add_tool(
        Tool::new(name, description, no_args()),
        move |_a: Value, ctx: Context| run(ctx),
    )
}

fn text_resource(uri: &str, mime: &str, text: &str) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime.into()),
            text: Some(text.into()),
            ..Default::default()
        },
        ..Default::default()
    })
}

/// Builds the fixture server.
pub fn build(builder: ServerBuilder) -> oxmcp::Result<Server> {
    let server = builder.build();
    add_tools(&server)?;
    add_interactive_tools(&server)?;
    add_input_required_tools(&server)?;
    tasks::add(&server)?;
    add_resources(&server)?;
    add_prompts(&server)?;
    Ok(server)
}

/// The tools whose answer never changes, in the order the suite lists them.
fn fixed_content() -> [(&'static str, &'static str, Vec<ContentBlock>); 5] {
    [
        (
            "test_simple_text",
            "Returns a simple text response",
            vec![ContentBlock::text(
                "This is a simple text response for testing.",
            )],
        ),
        (
            "test_image_content",
            "Returns an image (a 1x1 red PNG)",
            vec![ContentBlock::image(PNG, "image/png")],
        ),
        (
            "test_audio_content",
            "Returns audio (a short WAV)",
            vec![ContentBlock::audio(WAV, "audio/wav")],
        ),
        (
            "test_embedded_resource",
            "Returns an embedded resource",
            vec![text_resource(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )],
        ),
        (
            "test_multiple_content_types",
            "Returns text, an image and a resource",
            vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(PNG, "image/png"),
                text_resource(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ),
            ],
        ),
    ]
}

fn add_tools(server: &Server) -> oxmcp::Result<()> {
    for (name, description, content) in fixed_content() {
        let result = CallToolResult {
            content,
            ..Default::default()
        };
        add_no_args(server, name, description, move |_c: Context| {
            let result = result.clone();
            async move { Ok(result) }
        })?;
    }
    add_no_args(
        server,
        "test_tool_with_logging",
        "Sends three log messages while it runs",
        |ctx: Context| async move {
            for (i, message) in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ]
            .into_iter()
            .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.log(LoggingLevel::Info, Some("conformance"), json!(message))
                    .await?;
            }
            Ok(CallToolResult::text(
                "Tool with logging executed successfully",
            ))
        },
    )?;
    add_no_args(
        server,
        "test_error_handling",
        "Always fails",
        |_c: Context| async move {
            Err(ToolError::failed(
                "This tool intentionally returns an error for testing",
            ))
        },
    )?;
    add_no_args(
        server,
        "test_tool_with_progress",
        "Reports progress 0, 50, 100 of 100",
        |ctx: Context| async move {
            for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.report_progress(progress, Some(100.0), None).await?;
            }
            Ok(CallToolResult::text(
                "Tool with progress executed successfully",
            ))
        },
    )?;
    // JSON Schema 2020-12 features a server must pass through untouched (SEP-1613, SEP-2106):
    // `$schema`, `$defs` with an `$anchor`, `$ref`, composition and conditionals.
    let address = json!({
        "$anchor": "addressDef",
        "type": "object",
        "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    });
    server.add_tool(
        Tool::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": { "address": address },
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }),
        ),
        |args: Value, _c: Context| async move { Ok(CallToolResult::text(format!("Received: {args}"))) },
    )?;
    server.add_tool(
        Tool::new(
            "test_custom_header_tool",
            "Tool whose arguments are mirrored into Mcp-Param headers on HTTP (SEP-2243)",
            json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "priority": {"type": "integer", "x-mcp-header": "Priority"},
                    "note": {"type": "string"}
                },
                "required": ["region"]
            }),
        ),
        |args: Value, _c: Context| async move {
            let region = args["region"].as_str().unwrap_or_default().to_owned();
            Ok(CallToolResult::text(format!("Routed to region {region}")))
        },
    )?;
    add_no_args(
        server,
        "test_reconnection",
        "Cuts its HTTP response stream, then answers on the resumed one",
        |ctx: Context| async move {
            // Over Streamable HTTP the client resumes with Last-Event-ID (SEP-1699 polling);
            // other transports have no per-request stream and ignore this.
            ctx.close_stream().await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(CallToolResult::text("Reconnection test completed"))
        },
    )?;
    Ok(())
}

/// Tools that ask the client something: server→client requests in the handshake era,
/// `InputRequiredResult` rounds in 2026-07-28.
fn add_interactive_tools(server: &Server) -> oxmcp::Result<()> {
    server.add_tool(
        Tool::new(
            "test_sampling",
            "Asks the client's model to answer a prompt",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
        ),
        |args: Value, ctx: Context| async move {
            let prompt = args["prompt"].as_str().unwrap_or_default();
            let result = ctx.sample(question(prompt, 100)).await?;
            let text = result.content.get("text").and_then(Value::as_str).map_or_else(|| result.content.to_string(), str::to_owned);
            Ok(CallToolResult::text(format!("LLM response: {text}")))
        },
    )?;
    server.add_tool(
        Tool::new(
            "test_elicitation",
            "Asks the user for a username and email",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        ),
        |args: Value, ctx: Context| async move {
            let message = args["message"].as_str().unwrap_or_default();
            let result = ctx
                .elicit(ElicitRequestParams::form(
                    message,
                    json!({
                        "type": "object",
                        "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"}
                        },
                        "required": ["username", "email"]
                    }),
                ))
                .await?;
            Ok(elicit_report("User response", result))
        },
    )?;
    add_no_args(
        server,
        "test_elicitation_sep1034_defaults",
        "Elicits with a default for every primitive type",
        |ctx: Context| async move {
            let result = ctx
                .elicit(ElicitRequestParams::form(
                    "Please review and update the form fields with defaults",
                    json!({
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "User name", "default": "John Doe"},
                            "age": {"type": "integer", "description": "User age", "default": 30},
                            "score": {"type": "number", "description": "User score", "default": 95.5},
                            "status": {"type": "string", "description": "User status",
                                       "enum": ["active", "inactive", "pending"], "default": "active"},
                            "verified": {"type": "boolean", "description": "Verification status", "default": true}
                        }
                    }),
                ))
                .await?;
            Ok(elicit_report("Elicitation completed", result))
        },
    )?;
    add_no_args(
        server,
        "test_elicitation_sep1330_enums",
        "Elicits with all five enum schema forms",
        |ctx: Context| async move {
            let result = ctx
                .elicit(ElicitRequestParams::form(
                    "Please select options from the enum fields",
                    json!({
                        "type": "object",
                        "properties": {
                            "untitledSingle": {"type": "string", "description": "Untitled single-select",
                                               "enum": ["option1", "option2", "option3"]},
                            "titledSingle": {"type": "string", "description": "Titled single-select", "oneOf": [
                                {"const": "value1", "title": "First Option"},
                                {"const": "value2", "title": "Second Option"},
                                {"const": "value3", "title": "Third Option"}]},
                            "legacyEnum": {"type": "string", "description": "Legacy titled enum",
                                           "enum": ["opt1", "opt2", "opt3"],
                                           "enumNames": ["Option One", "Option Two", "Option Three"]},
                            "untitledMulti": {"type": "array", "description": "Untitled multi-select",
                                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                            "titledMulti": {"type": "array", "description": "Titled multi-select", "items": {"anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"}]}}
                        }
                    }),
                ))
                .await?;
            Ok(elicit_report("Elicitation completed", result))
        },
    )?;
    add_no_args(
        server,
        "test_missing_capability",
        "Needs the client's sampling capability",
        |ctx: Context| async move {
            let result = ctx.sample(question("ping", 10)).await?;
            Ok(CallToolResult::text(format!(
                "sampled with {}",
                result.model
            )))
        },
    )?;
    Ok(())
}

fn form(message: &str, field: &str, kind: &str) -> ElicitRequestParams {
    ElicitRequestParams::form(
        message,
        json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]}),
    )
}

fn question(text: &str, max_tokens: u64) -> CreateMessageRequestParams {
    CreateMessageRequestParams {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: json!({"type": "text", "text": text}),
            meta: None,
        }],
        max_tokens,
        ..Default::default()
    }
}

/// The text of a sampled answer (empty when it is not a text block).
fn sampled_text(answer: &CreateMessageResult) -> &str {
    answer
        .content
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn field(result: &ElicitResult, name: &str) -> String {
    result
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .map_or_else(String::new, |v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
}

/// The multi round-trip (2026-07-28) scenarios, with the input keys the suite expects. Written
/// like any handler: over a handshake-era connection the same code sends ordinary requests.
fn add_input_required_tools(server: &Server) -> oxmcp::Result<()> {
    add_no_args(
        server,
        "test_input_required_result_elicitation",
        "Asks for a name",
        |ctx: Context| async move {
            let answer = ctx
                .elicit_keyed("user_name", form("What is your name?", "name", "string"))
                .await?;
            Ok(CallToolResult::text(format!(
                "Hello, {}!",
                field(&answer, "name")
            )))
        },
    )?;
    add_no_args(
        server,
        "test_input_required_result_sampling",
        "Asks the model a question",
        |ctx: Context| async move {
            let answer = ctx
                .sample_keyed(
                    "capital_question",
                    question("What is the capital of France?", 100),
                )
                .await?;
            Ok(CallToolResult::text(format!(
                "Model said: {}",
                sampled_text(&answer)
            )))
        },
    )?;
    add_no_args(
        server,
        "test_input_required_result_list_roots",
        "Asks for the client's roots",
        |ctx: Context| async move {
            let roots = ctx.list_roots_keyed("client_roots").await?;
            let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
            Ok(CallToolResult::text(format!("Roots: {}", uris.join(", "))))
        },
    )?;
    for name in [
        "test_input_required_result_request_state",
        "test_input_required_result_tampered_state",
    ] {
        add_no_args(
            server,
            name,
            "Asks for a confirmation; its state is signed",
            |ctx: Context| async move {
                let answer = ctx
                    .elicit_keyed("confirm", form("Please confirm", "ok", "boolean"))
                    .await?;
                // Reaching here on a stateless retry means the echoed requestState verified.
                Ok(CallToolResult::text(format!(
                    "state-ok: confirmed={}",
                    field(&answer, "ok")
                )))
            },
        )?;
    }
    add_no_args(
        server,
        "test_input_required_result_multiple_inputs",
        "Asks three things at once",
        |ctx: Context| async move {
            let (name, greeting, roots) = tokio::join!(
                ctx.elicit_keyed("user_name", form("What is your name?", "name", "string")),
                ctx.sample_keyed("greeting", question("Generate a greeting", 50)),
                ctx.list_roots_keyed("client_roots"),
            );
            let (name, greeting, roots) = (name?, greeting?, roots?);
            Ok(CallToolResult::text(format!(
                "{} / {} / {} roots",
                field(&name, "name"),
                sampled_text(&greeting),
                roots.roots.len()
            )))
        },
    )?;
    add_no_args(
        server,
        "test_input_required_result_multi_round",
        "Asks two things, one after the other",
        |ctx: Context| async move {
            let name = ctx
                .elicit_keyed(
                    "step1",
                    form("Step 1: What is your name?", "name", "string"),
                )
                .await?;
            let color = ctx
                .elicit_keyed(
                    "step2",
                    form("Step 2: What is your favorite color?", "color", "string"),
                )
                .await?;
            Ok(CallToolResult::text(format!(
                "{} likes {}",
                field(&name, "name"),
                field(&color, "color")
            )))
        },
    )?;
    add_no_args(
        server,
        "test_input_required_result_capabilities",
        "Asks only what the client can answer",
        |ctx: Context| async move {
            let mut got = Vec::new();
            if ctx.client_supports("sampling") {
                let a = ctx
                    .sample_keyed("sampling_question", question("Say hi", 20))
                    .await?;
                got.push(format!("sampling={}", sampled_text(&a)));
            }
            if ctx.client_supports("elicitation") {
                let a = ctx
                    .elicit_keyed("elicitation_question", form("Your name?", "name", "string"))
                    .await?;
                got.push(format!("elicitation={}", field(&a, "name")));
            }
            if ctx.client_supports("roots") {
                let a = ctx.list_roots_keyed("roots_question").await?;
                got.push(format!("roots={}", a.roots.len()));
            }
            Ok(CallToolResult::text(if got.is_empty() {
                "nothing to ask".into()
            } else {
                got.join(", ")
            }))
        },
    )?;
    add_no_args(
        server,
        "test_streaming_elicitation",
        "Elicits; its answer stream carries no independent request",
        |ctx: Context| async move {
            let answer = ctx
                .elicit(form("Anything to add?", "note", "string"))
                .await?;
            Ok(CallToolResult::text(format!(
                "noted: {}",
                field(&answer, "note")
            )))
        },
    )?;
    add_no_args(
        server,
        "test_logging_tool",
        "Logs at every level (sent only when the request asks)",
        |ctx: Context| async move {
            for level in [
                LoggingLevel::Debug,
                LoggingLevel::Info,
                LoggingLevel::Warning,
                LoggingLevel::Error,
            ] {
                ctx.log(
                    level,
                    Some("conformance"),
                    json!(format!("{} message", level.as_str())),
                )
                .await?;
            }
            Ok(CallToolResult::text("logged"))
        },
    )?;
    Ok(())
}

/// What the user did and sent, after `prefix`.
fn elicit_report(prefix: &str, result: ElicitResult) -> CallToolResult {
    let action = serde_json::to_value(result.action).unwrap_or_default();
    CallToolResult::text(format!(
        "{prefix}: action={}, content={}",
        action.as_str().unwrap_or_default(),
        Value::Object(result.content.unwrap_or_default())
    ))
}

fn add_resources(server: &Server) -> oxmcp::Result<()> {
    server.add_resource(
        Resource::new("test://static-text", "static-text")
            .with_description("A static text resource")
            .with_mime_type("text/plain"),
        |uri: String, _v, _c: Context| async move {
            Ok(ReadResourceResult::text(
                uri,
                Some("text/plain"),
                "This is the content of the static text resource.",
            ))
        },
    );
    server.add_resource(
        Resource::new("test://static-binary", "static-binary")
            .with_description("A static binary resource (a PNG)")
            .with_mime_type("image/png"),
        |uri: String, _v, _c: Context| async move {
            Ok(ReadResourceResult::blob(uri, Some("image/png"), PNG))
        },
    );
    server.add_resource(
        Resource::new("test://watched-resource", "watched-resource")
            .with_description("A resource clients can subscribe to")
            .with_mime_type("text/plain"),
        |uri: String, _v, _c: Context| async move {
            Ok(ReadResourceResult::text(
                uri,
                Some("text/plain"),
                "Watched resource content.",
            ))
        },
    );
    server.add_resource_template(
        ResourceTemplate {
            description: Some("A templated resource".into()),
            ..ResourceTemplate::new("test://template/{id}/data", "template")
                .with_mime_type("application/json")
        },
        |uri: String, vars: oxmcp::protocol::JsonObject, _c: Context| async move {
            let id = vars
                .get("id")
                .and_then(Value::as_str)
                .ok_or(ResourceError::NotFound)?;
            let body =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Ok(ReadResourceResult::text(
                uri,
                Some("application/json"),
                body.to_string(),
            ))
        },
    )?;
    server.add_template_completion(
        "test://template/{id}/data",
        "id",
        |value: String, _ctx, _c: Context| async move {
            let ids = ["1", "2", "3", "42", "123"];
            Ok(Completion::from_values(
                ids.iter()
                    .filter(|i| i.starts_with(&value))
                    .map(|s| (*s).to_owned())
                    .collect(),
            ))
        },
    )?;
    Ok(())
}

fn add_prompts(server: &Server) -> oxmcp::Result<()> {
    server.add_prompt(
        Prompt::new("test_simple_prompt", "A prompt without arguments", vec![]),
        |_a: BTreeMap<String, String>, _c: Context| async move {
            Ok(GetPromptResult {
                messages: vec![PromptMessage::user(ContentBlock::text(
                    "This is a simple prompt for testing.",
                ))],
                ..Default::default()
            })
        },
    )?;
    server.add_prompt(
        Prompt::new(
            "test_prompt_with_arguments",
            "A prompt with two required arguments",
            vec![
                PromptArgument::new("arg1", "First test argument", true),
                PromptArgument::new("arg2", "Second test argument", true),
            ],
        ),
        |args: BTreeMap<String, String>, _c: Context| async move {
            let (a, b) = (
                args.get("arg1").cloned().unwrap_or_default(),
                args.get("arg2").cloned().unwrap_or_default(),
            );
            Ok(GetPromptResult {
                messages: vec![PromptMessage::user(ContentBlock::text(format!(
                    "Prompt with arguments: arg1='{a}', arg2='{b}'"
                )))],
                ..Default::default()
            })
        },
    )?;
    server.add_prompt_completion(
        "test_prompt_with_arguments",
        "arg1",
        |value: String, _ctx: BTreeMap<String, String>, _c: Context| async move {
            let words = ["paris", "park", "party", "hello", "help"];
            Ok::<_, ErrorObject>(Completion::from_values(
                words
                    .iter()
                    .filter(|w| w.starts_with(&value))
                    .map(|s| (*s).to_owned())
                    .collect(),
            ))
        },
    )?;
    server.add_prompt(
        Prompt::new(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource",
            vec![PromptArgument::new(
                "resourceUri",
                "URI of the resource to embed",
                true,
            )],
        ),
        |args: BTreeMap<String, String>, _c: Context| async move {
            let uri = args.get("resourceUri").cloned().unwrap_or_default();
            Ok(GetPromptResult {
                messages: vec![
                    PromptMessage::user(text_resource(
                        &uri,
                        "text/plain",
                        "Embedded resource content for testing.",
                    )),
                    PromptMessage::user(ContentBlock::text(
                        "Please process the embedded resource above.",
                    )),
                ],
                ..Default::default()
            })
        },
    )?;
    server.add_prompt(
        Prompt::new("test_prompt_with_image", "A prompt with an image", vec![]),
        |_a: BTreeMap<String, String>, _c: Context| async move {
            Ok(GetPromptResult {
                messages: vec![
                    PromptMessage::user(ContentBlock::image(PNG, "image/png")),
                    PromptMessage::user(ContentBlock::text("Please analyze the image above.")),
                ],
                ..Default::default()
            })
        },
    )?;
    server.add_prompt(
        Prompt::new(
            "test_input_required_result_prompt",
            "A prompt that asks for context first",
            vec![],
        ),
        |_a: BTreeMap<String, String>, ctx: Context| async move {
            let answer = ctx
                .elicit_keyed(
                    "user_context",
                    form("What context should the prompt use?", "context", "string"),
                )
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))?;
            Ok(GetPromptResult {
                messages: vec![PromptMessage::user(ContentBlock::text(format!(
                    "Use this context: {}",
                    field(&answer, "context")
                )))],
                ..Default::default()
            })
        },
    )?;
    Ok(())
}
