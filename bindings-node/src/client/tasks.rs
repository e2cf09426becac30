//! Tasks for JavaScript: `client.callToolAsTask`, `client.task(id)` and the handle they give.
//!
//! The core's `TaskHandle` does everything (the server's form of tasks, polling at the
//! interval it suggests, answering the task's questions with this client's handlers, the
//! result or error of each era); [`NativeTaskHandle`] wraps it, and values cross as JSON text.
//! Its change stream becomes [`NativeTaskUpdates`], pulled one status at a time by the
//! JavaScript layer's async iterator (`lib/tasks.cjs`). The JavaScript layer also turns the
//! caller's `AbortSignal` into `cancel()` once the task exists; before that, [`Cancellation`]
//! drops the creating request (the core then tells the server).

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use napi::{Env, bindgen_prelude::PromiseRaw};
use napi_derive::napi;
use oxmcp::client::{Client, TaskCallOptions, TaskHandle, TaskUpdates};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;

use super::{NativeClient, start_on};
use crate::{
    cancel::Cancellation,
    error::{cancelled, invalid, to_js},
    json,
};

/// `callToolAsTask(name, args, {ttlMs})` and `host.callTool(.., {task: true, ttlMs})`
/// options, as JSON (the signal stays in JavaScript).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct JsTaskCallOptions {
    /// How long the server should keep the task, in ms (it may clamp it).
    ttl_ms: Option<f64>,
}

/// The core's task options from their JSON text.
pub(crate) fn task_call_options(text: Option<String>) -> napi::Result<TaskCallOptions> {
    let options: JsTaskCallOptions = match text {
        Some(t) => json::parse("task options", &t)?,
        None => JsTaskCallOptions::default(),
    };
    let ttl = options.ttl_ms.map(ttl).transpose()?;
    Ok(TaskCallOptions { ttl })
}

/// `ttlMs` as a duration: a positive number of ms that a duration can hold.
fn ttl(ms: f64) -> napi::Result<Duration> {
    let bad = || invalid(format!("ttlMs must be a positive number of ms, not {ms}"));
    if !(ms.is_finite() && ms > 0.0) {
        return Err(bad());
    }
    Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| bad())
}

/// Tool arguments as JSON text (absent: none), as the core's `call_tool_as_task` takes them.
pub(crate) fn arguments(text: Option<String>) -> napi::Result<Value> {
    Ok(json::parse_opt("tool arguments", text)?.unwrap_or(Value::Null))
}

/// Runs `fut` unless `cancel` fires first (then fails with `cancelled`; dropping `fut` drops
/// its request, which the core cancels on the wire).
pub(crate) async fn unless_cancelled<T>(
    cancel: Option<&Cancellation>,
    fut: impl std::future::Future<Output = napi::Result<T>>,
) -> napi::Result<T> {
    match cancel.map(|c| c.token.clone()) {
        None => fut.await,
        Some(token) => tokio::select! {
            out = fut => out,
            () = token.cancelled() => Err(cancelled()),
        },
    }
}

#[napi]
impl NativeClient {
    /// Calls a tool as a task; resolves with its handle once the server created it (or
    /// answered at once). `options`: JSON `{ttlMs?}`; `cancel` abandons the creation.
    #[napi(ts_return_type = "Promise<NativeTaskHandle>")]
    pub fn call_tool_as_task<'env>(
        &self,
        env: &'env Env,
        name: String,
        arguments: Option<String>,
        options: Option<String>,
        cancel: Option<&Cancellation>,
    ) -> napi::Result<PromiseRaw<'env, NativeTaskHandle>> {
        let arguments = self::arguments(arguments)?;
        let options = task_call_options(options)?;
        let (client, cancel) = (self.inner.clone(), cancel.cloned());
        start_on(&self.inner, env, async move {
            let created = unless_cancelled(cancel.as_ref(), async {
                client
                    .call_tool_as_task(&name, arguments, options)
                    .await
                    .map_err(to_js)
            })
            .await?;
            Ok(NativeTaskHandle::new(client, created))
        })
    }

    /// A handle on a task created earlier, by this connection or another.
    #[napi]
    pub fn task(&self, id: String) -> napi::Result<NativeTaskHandle> {
        let handle = self.inner.task(&id).map_err(to_js)?;
        Ok(NativeTaskHandle::new(self.inner.clone(), handle))
    }
}

/// A tool call running as a task.
#[napi]
pub struct NativeTaskHandle {
    inner: TaskHandle,
    /// Where the handle's requests run (a hosted session's loop, or tokio).
    client: Client,
}

impl NativeTaskHandle {
    pub(crate) fn new(client: Client, inner: TaskHandle) -> Self {
        NativeTaskHandle { inner, client }
    }
}

#[napi]
impl NativeTaskHandle {
    /// The task's id (`null` when the server answered at once and there is no task).
    #[napi(getter)]
    pub fn id(&self) -> Option<String> {
        self.inner.id().map(str::to_owned)
    }

    /// `tasks/get`: the task as JSON text.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn status<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        let handle = self.inner.clone();
        start_on(&self.client, env, async move {
            json::text(&handle.status().await.map_err(to_js)?)
        })
    }

    /// Waits for the outcome: the tool's result as JSON text, or the task's error.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn result<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        let handle = self.inner.clone();
        start_on(&self.client, env, async move {
            json::text(&handle.result().await.map_err(to_js)?)
        })
    }

    /// `tasks/cancel` (harmless on a finished task).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn cancel<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let handle = self.inner.clone();
        start_on(&self.client, env, async move {
            handle.cancel().await.map_err(to_js)
        })
    }

    /// The task's status changes, until the final one.
    #[napi]
    pub fn watch(&self) -> NativeTaskUpdates {
        NativeTaskUpdates {
            inner: Arc::new(Mutex::new(Some(self.inner.watch()))),
            closed: Arc::new(AtomicBool::new(false)),
            client: self.client.clone(),
        }
    }
}

/// A task's status changes, pulled one at a time.
#[napi]
pub struct NativeTaskUpdates {
    /// `None` once over or closed: an iterator left early lets go of its polling at once,
    /// not when the collector gets to it.
    inner: Arc<Mutex<Option<TaskUpdates>>>,
    /// Set by `close`, for a `next` in progress when it came.
    closed: Arc<AtomicBool>,
    client: Client,
}

#[napi]
impl NativeTaskUpdates {
    /// The next status as JSON text, once it changed; `null` after the final one.
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn next<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Option<String>>> {
        let (updates, closed) = (self.inner.clone(), self.closed.clone());
        start_on(&self.client, env, async move {
            let mut updates = updates.lock().await;
            let next = match updates.as_mut() {
                Some(stream) if !closed.load(Ordering::Acquire) => stream.next().await,
                _ => None,
            };
            if next.is_none() || closed.load(Ordering::Acquire) {
                *updates = None;
            }
            match next {
                None => Ok(None),
                Some(task) => Ok(Some(json::text(&task.map_err(to_js)?)?)),
            }
        })
    }

    /// Stops following the task (a `next` in progress still settles).
    #[napi]
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        // A `next` in progress holds the lock; it lets go of the stream when it ends.
        if let Ok(mut updates) = self.inner.try_lock() {
            *updates = None;
        }
    }
}
