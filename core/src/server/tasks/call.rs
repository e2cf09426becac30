//! A `tools/call` that may become a task: whether it is one ([`plan`]) and starting it
//! ([`call_as_task`]).
//!
//! Whether a call is a task depends on the tool's [`TaskSupport`], the era and the client:
//!
//! | era | the client opted in by | forbidden | optional | required |
//! |---|---|---|---|---|
//! | 2026-07-28 | the tasks extension in the request's `_meta` capabilities | plain call | task | task |
//! | 2026-07-28 | (not opted in) | plain call | plain call | -32021 with `requiredCapabilities` |
//! | 2025-11-25 | `params.task` | -32601 | task | task |
//! | 2025-11-25 | (no `params.task`) | plain call | plain call | -32601 |
//! | older | (nothing exists) | plain call | plain call | -32601 |
//!
//! In 2026-07-28 a legacy `params.task` is ignored, as SEP-2663 requires.
//!
//! A task starts either before its handler runs ([`TaskStart::Immediately`], the default) or
//! when the handler calls `Context::start_task` ([`TaskStart::Deferred`]); until then the
//! call is an ordinary request, whose questions are multi round-trip rounds in 2026-07-28,
//! and which may even finish as a plain call.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{
    TaskEra, TaskLink, now_ms, runner, scope_of, store_error,
    view::{Meta, State, TaskView},
};
use crate::{
    jsonrpc::{ErrorObject, codes},
    protocol::{CallToolResult, JsonObject, ProtocolVersion, TaskSupport, meta, tasks::EXTENSION},
    server::{
        Context, Inner, TaskStart,
        context::Scope,
        features,
        input::{self, InputRound},
        lifecycle::respond,
        tools::RegisteredTool,
    },
    session::{Detached, HandlerResult, RequestContext},
    task_store::{NewTask, field},
};

/// A call that is a task: its era and the TTL granted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskPlan {
    era: TaskEra,
    ttl_ms: u64,
}

/// Whether the request declares the tasks extension in its `_meta` client capabilities.
pub(crate) fn declares_extension(ctx: &RequestContext) -> bool {
    ctx.meta()
        .and_then(|m| m.get(meta::CLIENT_CAPABILITIES))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// The error for a client that must declare the tasks extension first.
pub(crate) fn missing_extension(what: &str) -> ErrorObject {
    ErrorObject::new(
        codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {what} needs the `{EXTENSION}` extension"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } }))
}

/// How a call of `tool` runs: `None` a plain call, `Some` a task, `Err` refused (see the
/// module doc).
pub(crate) fn plan(
    server: &Inner,
    tool: &RegisteredTool,
    stateless: Option<ProtocolVersion>,
    ctx: &RequestContext,
    extra: &JsonObject,
) -> Result<Option<TaskPlan>, ErrorObject> {
    let support = tool.options.task_support;
    let name = &tool.tool.name;
    if support == TaskSupport::Forbidden && (stateless.is_some() || !extra.contains_key("task")) {
        // The hot path: a plain tool called plainly.
        return Ok(None);
    }
    if stateless.is_some() {
        return match (support, declares_extension(ctx)) {
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(None),
            (_, true) => Ok(Some(TaskPlan {
                era: TaskEra::Extension,
                ttl_ms: server.tasks.grant_ttl(None),
            })),
            (TaskSupport::Required, false) => Err(missing_extension(&format!("tool `{name}`"))),
        };
    }
    let must_be_task = || {
        ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!(
                "Tool `{name}` can only be called as a task (taskSupport: required): add \
                 `params.task` (protocol version 2025-11-25 or later)"
            ),
        )
        .with_data(json!({ "tool": name, "taskSupport": "required" }))
    };
    let speaks_tasks = ctx
        .session()
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V2025_11_25);
    let asked = extra.get("task").filter(|_| speaks_tasks);
    match (support, asked) {
        (TaskSupport::Required, None) => Err(must_be_task()),
        (_, None) => Ok(None),
        (TaskSupport::Forbidden, Some(_)) => Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!(
                "Tool `{name}` does not run as a task (taskSupport: forbidden): call it without `params.task`"
            ),
        )),
        (_, Some(Value::Object(task))) => Ok(Some(TaskPlan {
            era: TaskEra::Experimental,
            // A TTL that is not a whole number of milliseconds is not trusted either.
            ttl_ms: server
                .tasks
                .grant_ttl(task.get("ttl").and_then(Value::as_u64)),
        })),
        (_, Some(_)) => Err(ErrorObject::invalid_params(
            "Invalid params for `tools/call`: `task` must be an object",
        )),
    }
}

/// Everything [`call_as_task`] needs from the dispatcher.
pub(crate) struct TaskCall<'a> {
    pub(crate) server: &'a Arc<Inner>,
    pub(crate) session_id: u64,
    pub(crate) ctx: &'a RequestContext,
    /// The context a plain call would get (era, capabilities, log level).
    pub(crate) base: &'a Context,
    pub(crate) method: &'a str,
    pub(crate) plan: TaskPlan,
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) arguments: Option<JsonObject>,
    /// The stateless round: its digest and answers.
    pub(crate) round: Option<(String, Arc<InputRound>)>,
}

/// Runs a call that is a task: answers `CreateTaskResult` once the task exists and leaves
/// the handler running in the background.
pub(crate) async fn call_as_task(call: TaskCall<'_>) -> HandlerResult {
    let TaskCall {
        server,
        session_id,
        ctx,
        base,
        method,
        plan,
        tool,
        arguments,
        round,
    } = call;
    let stateless = base.scope.stateless;
    let arguments =
        match features::check_arguments(&tool, arguments, stateless.is_some(), ctx.http_headers())?
        {
            Ok(arguments) => arguments,
            // Arguments that cannot run are answered at once, as a plain call would be.
            Err(invalid) => return respond(server, stateless, &invalid),
        };
    let cancel = CancellationToken::new();
    // Until the task exists, the handler belongs to this request: if the request ends
    // first (cancelled, or answered as a plain call), so does the handler.
    let until_started = cancel.clone().drop_guard();
    let detached = Detached::new();
    let deferred = tool.options.task_start == TaskStart::Deferred;
    let link = TaskLink::new(
        server,
        plan.era,
        deferred,
        cancel.clone(),
        detached.clone(),
        ctx.session().clone(),
    );
    // The stateless round, for the questions a deferred task asks before it starts.
    let mrtr = round.filter(|_| deferred && stateless.is_some());
    let context = Context::new(
        ctx.detachable(cancel, detached),
        Scope {
            stateless,
            client_capabilities: base.scope.client_capabilities.clone(),
            log_level: base.scope.log_level,
            input: mrtr.as_ref().map(|(_, r)| r.clone()),
            task: Some(link.clone()),
        },
    );
    let version = context.protocol_version();
    let handler_tool = tool.clone();
    let mut future: BoxFuture<'static, Result<CallToolResult, ErrorObject>> =
        Box::pin(async move {
            let outcome = handler_tool.handler.call(arguments, context).await;
            features::finish_call(&handler_tool, outcome, version)
        });
    let scope = scope_of(server, ctx, stateless.is_some(), session_id);
    if deferred {
        let finished = tokio::select! {
            result = &mut future => Some(result),
            _ = link.start_requested() => None,
            _ = round_ended(mrtr.as_ref().map(|(_, r)| r.as_ref())) => {
                // The handler asked the client something before starting its task: this
                // round ends with the questions, as a plain call's would.
                let (Some((digest, round)), Some(version)) = (mrtr.as_ref(), stateless) else {
                    return Err(ErrorObject::internal("Internal error: a round without a round"));
                };
                let settled = input::settle(round, future.as_mut()).await;
                return input::conclude(server, method, digest, round, version, settled);
            }
        };
        if let Some(result) = finished {
            // The handler finished before it asked for a task: a plain call after all.
            return respond(server, stateless, &result?);
        }
    }
    let view = create(server, &link, plan, &scope, &tool.tool.name).await?;
    until_started.disarm();
    runner::spawn(server, link, scope, future);
    match plan.era {
        TaskEra::Extension => {
            let mut created = view.extension(false);
            created["resultType"] = json!("task");
            respond(server, stateless, &created)
        }
        TaskEra::Experimental => respond(server, None, &json!({ "task": view.experimental() })),
    }
}

/// Completes when a stateless round ends (the handler asked a question); never without one.
async fn round_ended(round: Option<&InputRound>) {
    match round {
        Some(round) => round.ended.notified().await,
        None => std::future::pending().await,
    }
}

/// Creates the task in the store (so `tasks/get` finds it before the client hears of it) and
/// tells the handler's context.
async fn create(
    server: &Arc<Inner>,
    link: &TaskLink,
    plan: TaskPlan,
    scope: &str,
    tool: &str,
) -> Result<TaskView, ErrorObject> {
    let engine = &server.tasks;
    let id = crate::random::id128();
    let now = now_ms();
    let meta = Meta {
        era: plan.era,
        created: now,
        ttl_ms: plan.ttl_ms,
        poll_ms: engine.options.poll_interval.as_millis().max(1) as u64,
        tool: tool.to_owned(),
    };
    let state = State {
        at: now,
        message: None,
    };
    let lease = now + engine.options.lease.as_millis() as u64;
    let fields = vec![
        (
            field::META.to_owned(),
            serde_json::to_string(&meta).unwrap_or_default(),
        ),
        (
            field::STATE.to_owned(),
            serde_json::to_string(&state).unwrap_or_default(),
        ),
        (field::LEASE.to_owned(), lease.to_string()),
    ];
    engine
        .store()
        .create(NewTask {
            id: id.clone(),
            scope: scope.to_owned(),
            fields,
            ttl: std::time::Duration::from_millis(plan.ttl_ms),
            limit: engine.limit_of(scope),
            keep: engine.keep_of(scope),
        })
        .await
        .map_err(store_error)?;
    link.mark_started(id.clone(), plan.ttl_ms);
    Ok(TaskView {
        id,
        scope: scope.to_owned(),
        meta,
        state,
        lease: Some(lease),
        outcome: None,
        pending: Default::default(),
        answers: Default::default(),
    })
}
