//! The tasks methods a client calls, in both eras: `tasks/get`, `tasks/cancel`, and
//! `tasks/update` (2026-07-28) or the blocking `tasks/result` and `tasks/list` (2025-11-25).
//!
//! Any replica answers any of them: everything is read from and written to the task store.

use std::{sync::Arc, time::Duration};

use serde_json::{Value, json, value::RawValue};

use super::{
    ResultStream, TaskEra, answer_field,
    call::{declares_extension, missing_extension},
    find, now_ms, scope_of, signal, store_error,
    view::{Answered, Outcome},
};
use crate::{
    jsonrpc::{ErrorObject, codes},
    protocol::{
        PaginatedRequestParams, ProtocolVersion, TaskIdParams, TaskStatus, UpdateTaskParams,
        tasks::{
            RELATED_TASK_META, TASKS_CANCEL, TASKS_GET, TASKS_LIST, TASKS_RESULT, TASKS_UPDATE,
        },
    },
    server::{
        Inner,
        input::MAX_ANSWERS,
        lifecycle::{parse_params, parse_required, respond},
    },
    session::{HandlerResult, RequestContext},
    task_store::SetOnce,
};

/// Serves one tasks method.
pub(crate) async fn serve(
    server: &Arc<Inner>,
    session_id: u64,
    ctx: &RequestContext,
    stateless: Option<ProtocolVersion>,
    method: &str,
    params: Option<&RawValue>,
) -> HandlerResult {
    let era = match stateless {
        Some(_) if declares_extension(ctx) => TaskEra::Extension,
        Some(_) => return Err(missing_extension(&format!("`{method}`"))),
        None if ctx
            .session()
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V2025_11_25) =>
        {
            TaskEra::Experimental
        }
        None => {
            return Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("Method not found: `{method}` needs protocol version 2025-11-25 or later"),
            ));
        }
    };
    let scope = scope_of(server, ctx, stateless.is_some(), session_id);
    match method {
        TASKS_GET => {
            let p: TaskIdParams = parse_required(method, params)?;
            let view = find(server, &p.task_id, &scope, era).await?;
            match era {
                TaskEra::Extension => respond(server, stateless, &view.extension(true)),
                TaskEra::Experimental => respond(server, None, &view.experimental()),
            }
        }
        TASKS_UPDATE => update(server, &scope, stateless, parse_required(method, params)?).await,
        TASKS_CANCEL => {
            let p: TaskIdParams = parse_required(method, params)?;
            cancel(server, &scope, era, stateless, &p.task_id).await
        }
        TASKS_RESULT => {
            let p: TaskIdParams = parse_required(method, params)?;
            result(server, &scope, ctx, &p.task_id).await
        }
        TASKS_LIST => list(server, &scope, parse_params(method, params)?).await,
        _ => Err(ErrorObject::method_not_found(method)),
    }
}

/// `tasks/update`: stores the answers to the task's open questions (each key once; unknown
/// and already answered keys are ignored, as SEP-2663 says) and wakes its replica. The
/// acknowledgement says nothing of the task: the next `tasks/get` does.
async fn update(
    server: &Inner,
    scope: &str,
    stateless: Option<ProtocolVersion>,
    p: UpdateTaskParams,
) -> HandlerResult {
    if p.input_responses.len() > MAX_ANSWERS {
        return Err(ErrorObject::invalid_params(
            "Invalid params: too many inputResponses",
        ));
    }
    let view = find(server, &p.task_id, scope, TaskEra::Extension).await?;
    if view.outcome.is_none() {
        let store = server.tasks.store();
        let mut delivered = false;
        for (key, response) in p.input_responses {
            if !view.pending.contains_key(&key) {
                continue;
            }
            if !response.is_object() {
                return Err(ErrorObject::invalid_params(format!(
                    "Invalid params: inputResponses[{key:?}] must be an object"
                )));
            }
            let answer = Answered {
                at: now_ms(),
                response,
            };
            let written = store
                .set_once(
                    &p.task_id,
                    &answer_field(&key),
                    serde_json::to_string(&answer).unwrap_or_default(),
                )
                .await
                .map_err(store_error)?;
            delivered |= written == SetOnce::Written;
        }
        if delivered {
            signal(server, &p.task_id);
        }
    }
    respond(server, stateless, &json!({}))
}

/// `tasks/cancel`: the cancel is the task's outcome unless it already has one. 2026-07-28
/// acknowledges either way (idempotent); 2025-11-25 answers the cancelled task, and refuses a
/// task that had already finished (-32602), keeping its result.
async fn cancel(
    server: &Inner,
    scope: &str,
    era: TaskEra,
    stateless: Option<ProtocolVersion>,
    id: &str,
) -> HandlerResult {
    let view = find(server, id, scope, era).await?;
    let outcome = if view.outcome.is_some() {
        SetOnce::AlreadySet
    } else {
        server
            .tasks
            .store()
            .finish(id, Outcome::cancelled(now_ms()).to_json())
            .await
            .map_err(store_error)?
    };
    if outcome == SetOnce::Written {
        signal(server, id);
    }
    match (era, outcome) {
        (TaskEra::Extension, _) => respond(server, stateless, &json!({})),
        (TaskEra::Experimental, SetOnce::Written) => {
            let view = find(server, id, scope, era).await?;
            respond(server, None, &view.experimental())
        }
        (TaskEra::Experimental, _) => {
            let status = find(server, id, scope, era)
                .await
                .map(|v| v.status().to_string())
                .unwrap_or_else(|_| "gone".into());
            Err(ErrorObject::invalid_params(format!(
                "Invalid params: the task is already {status} and cannot be cancelled"
            )))
        }
    }
}

/// How often a blocking `tasks/result` re-reads the store, beside the change signals.
const RESULT_RECHECK: Duration = Duration::from_secs(1);

/// `tasks/result` (2025-11-25): waits until the task is over, then answers exactly what the
/// call would have: its result (tagged with `related-task`), or its JSON-RPC error.
async fn result(server: &Arc<Inner>, scope: &str, ctx: &RequestContext, id: &str) -> HandlerResult {
    let mut view = find(server, id, scope, TaskEra::Experimental).await?;
    let engine = &server.tasks;
    let mut changes = engine.watch(id);
    // While this waits, the task's questions travel on this request's stream.
    engine.add_result_stream(
        id,
        ResultStream {
            session: ctx.session().clone(),
            request: ctx.id().clone(),
        },
    );
    struct Leave<'a>(&'a Inner, &'a str, &'a crate::jsonrpc::RequestId);
    impl Drop for Leave<'_> {
        fn drop(&mut self) {
            self.0.tasks.remove_result_stream(self.1, self.2);
        }
    }
    let _leave = Leave(server, id, ctx.id());
    while view.outcome.is_none() {
        tokio::select! {
            _ = changes.changed() => {}
            _ = tokio::time::sleep(RESULT_RECHECK) => {}
            _ = ctx.cancelled() => return Err(ErrorObject::internal("Internal error: request cancelled")),
        }
        view = find(server, id, scope, TaskEra::Experimental).await?;
    }
    let Some(outcome) = view.outcome else {
        return Err(ErrorObject::internal(
            "Internal error: a task without an outcome",
        ));
    };
    match outcome.status {
        TaskStatus::Completed => {
            let mut result = outcome.result.unwrap_or_else(|| json!({ "content": [] }));
            if let Value::Object(map) = &mut result
                && let Value::Object(meta) = map.entry("_meta").or_insert_with(|| json!({}))
            {
                meta.insert(RELATED_TASK_META.into(), json!({ "taskId": id }));
            }
            respond(server, None, &result)
        }
        TaskStatus::Failed => Err(outcome
            .error
            .unwrap_or_else(|| ErrorObject::internal("Internal error: the task failed"))),
        _ => Err(ErrorObject::internal(format!(
            "Internal error: the task was cancelled and has no result (task {id})"
        ))),
    }
}

/// `tasks/list` (2025-11-25): this scope's tasks, oldest first, a page at a time.
async fn list(server: &Inner, scope: &str, p: PaginatedRequestParams) -> HandlerResult {
    let offset = match p.cursor.as_deref() {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("tasks-")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| ErrorObject::invalid_params("Invalid params: unknown cursor"))?,
    };
    let page = server.page_size;
    let (ids, more) = server
        .tasks
        .store()
        .list(scope, offset, page)
        .await
        .map_err(store_error)?;
    let mut tasks = Vec::with_capacity(ids.len());
    for id in &ids {
        if let Ok(view) = find(server, id, scope, TaskEra::Experimental).await {
            tasks.push(view.experimental());
        }
    }
    let mut result = json!({ "tasks": tasks });
    if more {
        result["nextCursor"] = json!(format!("tasks-{}", offset + ids.len()));
    }
    respond(server, None, &result)
}
