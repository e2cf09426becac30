//! The background loop of one task on the replica that runs it: it owns the handler's
//! future, renews the task's lease, hands `tasks/update` answers to the questions waiting for
//! them, stops the handler when the task is cancelled or expires, and writes the outcome.
//!
//! It wakes on every change to the task (a signal from this replica or another) and, at the
//! latest, at each lease renewal, when it also re-reads the store: a lost signal delays an
//! answer or a cancel by at most a third of the lease.

use std::sync::{Arc, Weak};

use futures::future::BoxFuture;
use serde_json::Value;

use super::{
    TaskEra, TaskLink, answer_field, ask_field, now_ms, signal, store_error,
    view::{Outcome, TaskView},
};
use crate::{
    jsonrpc::ErrorObject,
    protocol::{CallToolResult, tasks::TASKS_STATUS_NOTIFICATION},
    server::Inner,
    task_store::{SetOnce, field},
    transport::Route,
};

type Handler = BoxFuture<'static, Result<CallToolResult, ErrorObject>>;

/// Runs the task's handler in the background.
pub(crate) fn spawn(server: &Arc<Inner>, link: Arc<TaskLink>, scope: String, handler: Handler) {
    let server = Arc::downgrade(server);
    tokio::spawn(run(server, link, scope, handler));
}

/// Why the loop stopped.
enum End {
    /// The handler finished (or panicked).
    Finished(Box<Result<CallToolResult, ErrorObject>>),
    /// The task has an outcome already: cancelled, or declared dead.
    Settled,
    /// The task is gone from the store (its TTL passed) or the server was dropped.
    Gone,
}

async fn run(server: Weak<Inner>, link: Arc<TaskLink>, scope: String, handler: Handler) {
    let Some(id) = link.id().map(str::to_owned) else {
        return;
    };
    let Some((mut changes, lease)) = server
        .upgrade()
        .map(|s| (s.tasks.watch(&id), s.tasks.options.lease))
    else {
        return;
    };
    let mut renew = tokio::time::interval(lease / 3);
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    renew.tick().await;
    // The handler runs as a task of its own, so one that blocks its thread (a binding's
    // synchronous handler) cannot keep this loop from seeing a cancel.
    let mut handler = tokio::spawn(handler);
    let end = loop {
        tokio::select! {
            biased;
            out = &mut handler => break End::Finished(Box::new(out.unwrap_or_else(|_| {
                Err(ErrorObject::internal("Internal error: the tool's handler panicked"))
            }))),
            changed = changes.changed() => {
                if changed.is_err() {
                    break End::Gone;
                }
                if let Some(end) = look(&server, &link, &id).await {
                    break end;
                }
            }
            _ = renew.tick() => {
                let Some(s) = server.upgrade() else { break End::Gone };
                let until = now_ms() + lease.as_millis() as u64;
                match s.tasks.store().set(&id, vec![(field::LEASE.into(), until.to_string())]).await {
                    Ok(false) => break End::Gone,
                    Ok(true) => {}
                    Err(e) => tracing::warn!(target: "oxmcp::server", task = %id, "renewing a task's lease failed: {e}"),
                }
                drop(s);
                if let Some(end) = look(&server, &link, &id).await {
                    break end;
                }
            }
        }
    };
    drop(changes);
    let Some(server) = server.upgrade() else {
        // The server is gone: nothing can be written; a running handler is stopped.
        if !matches!(end, End::Finished(_)) {
            stop(&link, handler).await;
        }
        return;
    };
    match end {
        End::Finished(outcome) => {
            drop(handler);
            let outcome = match *outcome {
                Ok(result) => Outcome::completed(
                    serde_json::to_value(&result).unwrap_or(Value::Null),
                    now_ms(),
                ),
                Err(error) => Outcome::failed(error, now_ms()),
            };
            match server.tasks.store().finish(&id, outcome.to_json()).await {
                Ok(SetOnce::Written | SetOnce::AlreadySet) => {}
                Ok(SetOnce::Missing) => release(&server, &scope).await,
                Err(e) => {
                    tracing::warn!(target: "oxmcp::server", task = %id, "storing a task's outcome failed: {}", store_error(e).message)
                }
            }
        }
        End::Settled => stop(&link, handler).await,
        End::Gone => {
            stop(&link, handler).await;
            release(&server, &scope).await;
        }
    }
    signal(&server, &id);
    if link.era == TaskEra::Experimental {
        tell_status(&server, &link, &id).await;
    }
}

/// How long a cancelled handler may go on to wind down (it sees its cancellation token fire)
/// before it is dropped.
const WIND_DOWN: std::time::Duration = std::time::Duration::from_secs(1);

/// Stops a handler whose task is over without it: its token fires, it may finish within
/// [`WIND_DOWN`] (its answer is not used), then it is aborted.
async fn stop<T>(link: &TaskLink, mut handler: tokio::task::JoinHandle<T>) {
    link.cancel.cancel();
    let _ = tokio::time::timeout(WIND_DOWN, &mut handler).await;
    handler.abort();
}

/// Reads the task: the end of the loop if it has an outcome or is gone; otherwise hands the
/// answers that arrived to the questions waiting for them.
async fn look(server: &Weak<Inner>, link: &TaskLink, id: &str) -> Option<End> {
    let server = server.upgrade()?;
    let store = server.tasks.store();
    let fields = match store.load(id).await {
        Ok(Some(fields)) => fields,
        Ok(None) => return Some(End::Gone),
        Err(e) => {
            tracing::warn!(target: "oxmcp::server", task = %id, "reading a task failed: {e}");
            return None;
        }
    };
    let view = TaskView::read(id, &fields)?;
    if view.outcome.is_some() {
        return Some(End::Settled);
    }
    if !link.has_waiters() || view.answers.is_empty() {
        return None;
    }
    let mut consumed = Vec::new();
    for (key, answer) in view.answers {
        if let Some(waiter) = link.take_waiter(&key) {
            let _ = waiter.send(answer.response);
        }
        consumed.push(ask_field(&key));
        consumed.push(answer_field(&key));
    }
    if let Err(e) = store.remove(id, consumed).await {
        tracing::warn!(target: "oxmcp::server", task = %id, "clearing answered questions failed: {e}");
    }
    None
}

async fn release(server: &Inner, scope: &str) {
    if let Err(e) = server.tasks.store().release(scope).await {
        tracing::warn!(target: "oxmcp::server", "freeing a task's place failed: {e}");
    }
}

/// 2025-11-25: tells the task's session its final status (`notifications/tasks/status`,
/// which clients may use but must not rely on).
async fn tell_status(server: &Inner, link: &TaskLink, id: &str) {
    let session = link.session();
    if session.is_closed() {
        return;
    }
    let Ok(Some(fields)) = server.tasks.store().load(id).await else {
        return;
    };
    if let Some(view) = TaskView::read(id, &fields) {
        let _ = session
            .notify_routed(
                TASKS_STATUS_NOTIFICATION,
                Some(view.experimental()),
                Route::Unrelated,
            )
            .await;
    }
}
