//! What a tool handler's context holds while its call may run as a task: the switch that
//! turns the call into a task (at once, or when the handler calls
//! [`Context::start_task`](crate::server::Context::start_task)), and the questions the
//! handler asks from then on.
//!
//! A question of a running task goes to the client the way the task's era says:
//!
//! - **2026-07-28:** it is stored as one of the task's `inputRequests`; the client sees it in
//!   `tasks/get` and answers with `tasks/update`, on any replica; the runner hands the answer
//!   to the waiting handler. Questions asked side by side are pending side by side.
//! - **2025-11-25:** it is an ordinary request to the client on the task's session, tagged
//!   with the `related-task` `_meta` key and sent on the stream of a pending `tasks/result`
//!   when there is one (the GET stream otherwise); the task reads `input_required` meanwhile.

use std::{
    collections::HashMap,
    sync::{Arc, OnceLock, Weak},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use super::{TaskEra, ask_field, now_ms, signal, view::Asked};
use crate::{
    Error, Result,
    protocol::{InputRequest, tasks::RELATED_TASK_META},
    server::Inner,
    session::{Detached, RequestOptions, Session},
    sync::Mutex,
    transport::{Route, http::is_stranded},
};

/// A status message longer than this is cut (it is stored and sent on every `tasks/get`).
const MAX_STATUS_CHARS: usize = 1000;

/// The task side of one tool call's context.
pub(crate) struct TaskLink {
    server: Weak<Inner>,
    pub(crate) era: TaskEra,
    /// The call becomes a task only when the handler asks for it.
    deferred: bool,
    /// The task's id and granted TTL, once it exists.
    task: OnceLock<(String, u64)>,
    start_requested: Notify,
    started: Notify,
    /// The task's own cancellation: fired by `tasks/cancel` (or an expiry), never by the
    /// request's connection going away.
    pub(crate) cancel: CancellationToken,
    detached: Arc<Detached>,
    /// The session the call arrived on (2025-11-25 questions go through it).
    session: Session,
    questions: Mutex<Questions>,
}

impl std::fmt::Debug for TaskLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskLink")
            .field("era", &self.era)
            .field("task", &self.task.get())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Questions {
    counters: HashMap<&'static str, usize>,
    /// 2026-07-28 questions waiting for `tasks/update`, by key.
    waiting: HashMap<String, oneshot::Sender<Value>>,
}

impl TaskLink {
    pub(super) fn new(
        server: &Arc<Inner>,
        era: TaskEra,
        deferred: bool,
        cancel: CancellationToken,
        detached: Arc<Detached>,
        session: Session,
    ) -> Arc<Self> {
        Arc::new(TaskLink {
            server: Arc::downgrade(server),
            era,
            deferred,
            task: OnceLock::new(),
            start_requested: Notify::new(),
            started: Notify::new(),
            cancel,
            detached,
            session,
            questions: Mutex::new(Questions::default()),
        })
    }

    /// The task's id, once the call is a task.
    pub(crate) fn id(&self) -> Option<&str> {
        self.task.get().map(|(id, _)| id.as_str())
    }

    /// The session the call arrived on.
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// The handler asks to go on as a task; returns its id once it exists.
    pub(crate) async fn start(&self) -> Result<String> {
        if let Some(id) = self.id() {
            return Ok(id.to_owned());
        }
        if !self.deferred {
            return Err(Error::InvalidArgument(
                "this call is not a task and cannot become one".into(),
            ));
        }
        let started = self.started.notified();
        let mut started = std::pin::pin!(started);
        started.as_mut().enable();
        self.start_requested.notify_one();
        tokio::select! {
            _ = started => {}
            _ = self.cancel.cancelled() => return Err(Error::Cancelled),
        }
        self.id()
            .map(str::to_owned)
            .ok_or_else(|| Error::Protocol("the task could not be created".into()))
    }

    /// Completes when the handler called `start_task` (deferred calls only).
    pub(crate) async fn start_requested(&self) {
        self.start_requested.notified().await
    }

    /// The task exists: what the handler sends from now on is the task's, and a waiting
    /// `start_task` returns.
    pub(crate) fn mark_started(&self, id: String, ttl_ms: u64) {
        let tag = id.clone();
        if self.task.set((id, ttl_ms)).is_err() {
            return;
        }
        match self.era {
            // The request's connection closes with its answer; the task reports through
            // `tasks/get` only (SEP-2663: no progress or log notifications for tasks).
            TaskEra::Extension => self.detached.silence(),
            TaskEra::Experimental => {
                let mut meta = crate::protocol::JsonObject::new();
                meta.insert(RELATED_TASK_META.into(), json!({ "taskId": tag }));
                self.detached.tag(meta);
            }
        }
        self.started.notify_waiters();
    }

    /// Writes the task's status message (`state`).
    pub(crate) async fn report_status(&self, message: &str) -> Result<()> {
        let (Some(id), Some(server)) = (self.id(), self.server.upgrade()) else {
            return Ok(());
        };
        let state = super::view::State {
            at: now_ms(),
            message: Some(message.chars().take(MAX_STATUS_CHARS).collect()),
        };
        server
            .tasks
            .store()
            .set(
                id,
                vec![(
                    crate::task_store::field::STATE.to_owned(),
                    serde_json::to_string(&state).unwrap_or_default(),
                )],
            )
            .await
            .map_err(|e| Error::closed(e.to_string()))?;
        signal(&server, id);
        Ok(())
    }

    /// Whether 2026-07-28 questions wait for answers.
    pub(crate) fn has_waiters(&self) -> bool {
        !self.questions.lock().waiting.is_empty()
    }

    /// The waiter of a question, when it still waits.
    pub(crate) fn take_waiter(&self, key: &str) -> Option<oneshot::Sender<Value>> {
        self.questions.lock().waiting.remove(key)
    }

    /// Asks the client a question on behalf of the running task (see the module doc) and
    /// waits for the answer as long as the task lives.
    pub(crate) async fn ask(
        &self,
        kind: &'static str,
        key: Option<&str>,
        method: &str,
        mut params: Value,
        supported: bool,
    ) -> Result<Value> {
        let Some((id, ttl_ms)) = self.task.get().cloned() else {
            return Err(Error::InvalidArgument("the call is not a task yet".into()));
        };
        if !supported {
            return Err(Error::InvalidArgument(format!(
                "the client did not declare the `{kind}` capability"
            )));
        }
        let key = {
            let mut q = self.questions.lock();
            let n = q.counters.entry(kind).or_default();
            let auto = format!("{kind}-{n}");
            *n += 1;
            key.map_or(auto, str::to_owned)
        };
        let server = self
            .server
            .upgrade()
            .ok_or_else(|| Error::closed("the server stopped"))?;
        let store = server.tasks.store();
        let waiter = match self.era {
            TaskEra::Extension => {
                let (tx, rx) = oneshot::channel();
                self.questions.lock().waiting.insert(key.clone(), tx);
                Some(rx)
            }
            TaskEra::Experimental => None,
        };
        let asked = Asked {
            at: now_ms(),
            request: InputRequest {
                method: method.to_owned(),
                params: Some(params.clone()),
            },
        };
        let written = store
            .set(
                &id,
                vec![(
                    ask_field(&key),
                    serde_json::to_string(&asked).unwrap_or_default(),
                )],
            )
            .await
            .map_err(|e| Error::closed(e.to_string()))?;
        if !written {
            self.questions.lock().waiting.remove(&key);
            return Err(Error::closed("the task expired"));
        }
        signal(&server, &id);
        if let Some(rx) = waiter {
            // The runner hands over the answer when `tasks/update` brings it.
            drop(server);
            return tokio::select! {
                answer = rx => answer.map_err(|_| Error::Cancelled),
                _ = self.cancel.cancelled() => Err(Error::Cancelled),
            };
        }
        if let Value::Object(map) = &mut params
            && let Value::Object(meta) = map.entry("_meta").or_insert_with(|| json!({}))
        {
            meta.insert(RELATED_TASK_META.into(), json!({ "taskId": id }));
        }
        // A person may take a while to answer: the question may wait as long as the task.
        let patience = Duration::from_millis(ttl_ms);
        let mut changes = server.tasks.watch(&id);
        drop(server);
        let answer = loop {
            let Some(server) = self.server.upgrade() else {
                break Err(Error::closed("the server stopped"));
            };
            let pending_result = server.tasks.result_stream(&id, &self.session);
            drop(server);
            let options = RequestOptions {
                timeout: Some(patience),
                max_total_timeout: Some(patience),
                cancel: Some(self.cancel.clone()),
                route: pending_result
                    .clone()
                    .map_or(Route::Unrelated, Route::Related),
                ..Default::default()
            };
            match self
                .session
                .request(method, Some(params.clone()), options)
                .await
            {
                // No stream reaches the client now (an HTTP client without a GET stream):
                // the task waits, `input_required`, for the client's `tasks/result` (which it
                // should send on seeing that status) and asks on that request's stream.
                Err(Error::Rpc(e)) if pending_result.is_none() && is_stranded(&e) => {
                    tokio::select! {
                        changed = changes.changed() => {
                            if changed.is_err() {
                                break Err(Error::closed("the task ended"));
                            }
                        }
                        _ = self.cancel.cancelled() => break Err(Error::Cancelled),
                    }
                }
                other => break other,
            }
        };
        if let Some(server) = self.server.upgrade() {
            let _ = server
                .tasks
                .store()
                .remove(&id, vec![ask_field(&key)])
                .await;
            signal(&server, &id);
        }
        answer
    }
}
