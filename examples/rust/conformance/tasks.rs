//! The tasks fixture of the conformance suite (0.2.0-alpha.12, the `tasks-*` scenarios):
//! tools that run as tasks, with the names, arguments and outcomes the scenarios check. The
//! same tools serve 2025-11-25 clients (`params.task`) and 2026-07-28 ones (the extension).

use std::time::Duration;

use oxmcp::{
    jsonrpc::ErrorObject,
    protocol::{CallToolResult, ElicitRequestParams, ElicitResult, TaskSupport, Tool},
    server::{Context, Server, ToolError, ToolOptions},
};
use serde_json::{Value, json};

/// The longest `slow_compute` sleeps, whatever it is asked (a fixture must not be a way to
/// hold a server's task slots forever).
const MAX_SECONDS: f64 = 600.0;

/// Registers the tasks tools.
pub fn add(server: &Server) -> oxmcp::Result<()> {
    server.add_tool(
        Tool::new(
            "greet",
            "Greets someone (never a task)",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        ),
        |args: Value, _c: Context| async move {
            let name = args["name"].as_str().unwrap_or("World");
            Ok(CallToolResult::text(format!("Hello, {name}!")))
        },
    )?;
    server.add_tool_with(
        Tool::new(
            "slow_compute",
            "Sleeps `seconds` (a task when the client asks for one) and says so",
            json!({"type": "object", "properties": {
                "seconds": {"type": "number", "minimum": 0},
                "label": {"type": "string"}
            }, "required": ["seconds"]}),
        ),
        ToolOptions::tasks(TaskSupport::Optional),
        |args: Value, ctx: Context| async move {
            let seconds = args["seconds"]
                .as_f64()
                .unwrap_or(0.0)
                .clamp(0.0, MAX_SECONDS);
            let label = args["label"].as_str().unwrap_or("compute").to_owned();
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
                _ = ctx.cancelled() => return Err(ToolError::failed("cancelled")),
            }
            Ok(CallToolResult::text(format!(
                "{label}: computed after {seconds} s"
            )))
        },
    )?;
    server.add_tool_with(
        Tool::new(
            "failing_job",
            "A task that fails with a tool error after about a second",
            json!({"type": "object", "properties": {}}),
        ),
        ToolOptions::tasks(TaskSupport::Required),
        |_a: Value, _c: Context| async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err(ToolError::failed(
                "the job failed (as this fixture always does)",
            ))
        },
    )?;
    server.add_tool_with(
        Tool::new(
            "protocol_error_job",
            "A task that ends in a protocol error",
            json!({"type": "object", "properties": {}}),
        ),
        ToolOptions::tasks(TaskSupport::Optional),
        |_a: Value, _c: Context| async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Err(ToolError::Protocol(ErrorObject::internal(
                "Internal error: the job broke (as this fixture always does)",
            )))
        },
    )?;
    server.add_tool_with(
        Tool::new(
            "confirm_delete",
            "Asks the user to confirm, then pretends to delete the file",
            json!({"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]}),
        ),
        ToolOptions::tasks(TaskSupport::Optional),
        |args: Value, ctx: Context| async move {
            let filename = args["filename"].as_str().unwrap_or_default().to_owned();
            let answer = ctx
                .elicit(form(&format!("Delete {filename}?"), "confirm", "boolean"))
                .await?;
            let confirmed = accepted(&answer) && answer_field(&answer, "confirm") == Some(json!(true));
            Ok(CallToolResult::text(if confirmed {
                format!("Deleted {filename}")
            } else {
                format!("Kept {filename}")
            }))
        },
    )?;
    server.add_tool_with(
        Tool::new(
            "multi_input",
            "Asks two questions at once, then reports both answers",
            json!({"type": "object", "properties": {}}),
        ),
        ToolOptions::tasks(TaskSupport::Optional),
        |_a: Value, ctx: Context| async move {
            let (name, confirm) = tokio::join!(
                ctx.elicit(form("Your name?", "name", "string")),
                ctx.elicit(form("Go ahead?", "confirm", "boolean")),
            );
            let (name, confirm) = (name?, confirm?);
            Ok(CallToolResult::text(format!(
                "name: {}, confirm: {}",
                answer_field(&name, "name").unwrap_or(Value::Null),
                answer_field(&confirm, "confirm").unwrap_or(Value::Null)
            )))
        },
    )?;
    server.add_tool_with(
        Tool::new(
            "test_tool_with_task",
            "Asks for a name within the request, then finishes as a task",
            json!({"type": "object", "properties": {}}),
        ),
        ToolOptions::tasks(TaskSupport::Required).deferred(),
        |_a: Value, ctx: Context| async move {
            let answer = ctx
                .elicit_keyed("user_name", form("What is your name?", "name", "string"))
                .await?;
            let name = answer_field(&answer, "name")
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "stranger".into());
            ctx.start_task().await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(CallToolResult::text(format!(
                "Hello, {name}! (from the task)"
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

fn accepted(answer: &ElicitResult) -> bool {
    answer.action == oxmcp::protocol::ElicitAction::Accept
}

fn answer_field(answer: &ElicitResult, name: &str) -> Option<Value> {
    answer.content.as_ref()?.get(name).cloned()
}
