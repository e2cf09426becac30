//! Calling a tool as a task, and following the task: its status, a stream of its changes,
//! its result, cancelling it, and finding it again by id from another connection.
//!
//! The client speaks the server's form: the 2026-07-28 extension (declared in the `_meta`
//! capabilities of each tasks request; the questions a task asks are answered with this
//! client's handlers and sent back with `tasks/update`), or 2025-11-25 experimental tasks
//! (`params.task`, a blocking `tasks/result`, during which the task's questions arrive as
//! ordinary requests). A server that offers neither gets a plain call, and the handle holds
//! its result.

use std::{sync::Arc, time::Duration};

use futures::Stream;
use serde_json::{Value, json};

use super::Client;
use crate::{
    Error, Result,
    jsonrpc::codes,
    protocol::{
        CallToolResult, JsonObject, ListTasksResult, Task, TaskStatus, meta, methods,
        tasks::{EXTENSION, TASKS_CANCEL, TASKS_GET, TASKS_LIST, TASKS_RESULT, TASKS_UPDATE},
    },
    session::RequestOptions,
    sync::Mutex,
};

/// How a tool is called as a task.
#[derive(Clone, Debug, Default)]
pub struct TaskCallOptions {
    /// How long the server should keep the task (2025-11-25; servers clamp it, and 2026-07-28
    /// servers choose for themselves).
    pub ttl: Option<Duration>,
}

/// Which form the server's tasks take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Extension,
    Experimental,
}

/// A tool call running as a task on the server. Cheap to clone.
#[derive(Clone, Debug)]
pub struct TaskHandle {
    client: Client,
    inner: Arc<HandleInner>,
}

#[derive(Debug)]
struct HandleInner {
    kind: Kind,
    /// The last status seen, for the poll interval and the change stream.
    last: Mutex<Option<Task>>,
}

#[derive(Debug)]
enum Kind {
    /// A task on the server.
    Remote { id: String, form: Form },
    /// The server answered at once (it offers no tasks, or chose to finish immediately).
    Done(Box<CallToolResult>),
}

/// A task's status changes, pulled one at a time ([`TaskHandle::updates`] as an object, for
/// callers that cannot hold a stream: the bindings' async iterators).
pub struct TaskUpdates {
    stream: futures::stream::BoxStream<'static, Result<Task>>,
}

impl std::fmt::Debug for TaskUpdates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskUpdates").finish_non_exhaustive()
    }
}

impl TaskUpdates {
    /// The next status, once it changed; `None` after the final one.
    pub async fn next(&mut self) -> Option<Result<Task>> {
        futures::StreamExt::next(&mut self.stream).await
    }
}

/// How long to wait between polls when the server suggests nothing.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// Bounds on a server's suggestion, so a hostile value neither spins nor stalls us.
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(30);

impl Client {
    /// Calls a tool as a task and returns its handle at once. A server without tasks (or a
    /// revision without them) gets a plain call, whose result the handle holds.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        options: TaskCallOptions,
    ) -> Result<TaskHandle> {
        if !matches!(arguments, Value::Null | Value::Object(_)) {
            return Err(Error::InvalidArgument(
                "tool arguments must be a JSON object".into(),
            ));
        }
        let mut params = json!({ "name": name });
        if arguments.is_object() {
            params["arguments"] = arguments;
        }
        let form = self.task_form();
        let answer = match form {
            Some(Form::Extension) => {
                self.request(
                    methods::TOOLS_CALL,
                    Some(self.with_extension(params)?),
                    RequestOptions::default(),
                )
                .await
            }
            Some(Form::Experimental) => {
                let mut task = JsonObject::new();
                if let Some(ttl) = options.ttl {
                    task.insert("ttl".into(), json!(ttl.as_millis() as u64));
                }
                params["task"] = Value::Object(task);
                self.request(methods::TOOLS_CALL, Some(params), RequestOptions::default())
                    .await
            }
            None => {
                let result = self
                    .call_tool(name, params.get("arguments").cloned().unwrap_or_default())
                    .await?;
                return Ok(self.handle(Kind::Done(Box::new(result))));
            }
        }
        .map_err(|e| task_required(name, e))?;
        let form = form.unwrap_or(Form::Extension);
        let created = match (form, answer.get("resultType").and_then(Value::as_str)) {
            (Form::Extension, Some("task")) => answer,
            (Form::Experimental, _) if answer.get("task").is_some() => answer["task"].clone(),
            // The server finished at once (allowed: the immediate-result shortcut).
            _ => {
                let result = serde_json::from_value(answer)
                    .map_err(|e| Error::Protocol(format!("invalid `tools/call` result: {e}")))?;
                return Ok(self.handle(Kind::Done(Box::new(result))));
            }
        };
        let task: Task = serde_json::from_value(created)
            .map_err(|e| Error::Protocol(format!("invalid CreateTaskResult: {e}")))?;
        let handle = self.handle(Kind::Remote {
            id: task.task_id.clone(),
            form,
        });
        *handle.inner.last.lock() = Some(task);
        Ok(handle)
    }

    /// One page of this client's tasks (`tasks/list`, 2025-11-25; 2026-07-28 removed it, so
    /// there this is an error saying so).
    pub async fn list_tasks(&self, cursor: Option<&str>) -> Result<ListTasksResult> {
        if self.task_form() != Some(Form::Experimental) {
            return Err(Error::InvalidArgument(format!(
                "`tasks/list` is a 2025-11-25 method this server does not offer (protocol \
                 version {})",
                self.protocol_version()
            )));
        }
        let params = cursor.map(|c| json!({ "cursor": c }));
        let value = self
            .request(TASKS_LIST, params, RequestOptions::default())
            .await?;
        serde_json::from_value(value)
            .map_err(|e| Error::Protocol(format!("invalid `tasks/list` result: {e}")))
    }

    /// A handle on a task created earlier, by this connection or another (after a reconnect,
    /// say). The server decides whether this client may see it.
    pub fn task(&self, id: &str) -> Result<TaskHandle> {
        let form = self.task_form().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "this server offers no tasks (protocol version {})",
                self.protocol_version()
            ))
        })?;
        Ok(self.handle(Kind::Remote {
            id: id.to_owned(),
            form,
        }))
    }

    fn handle(&self, kind: Kind) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            inner: Arc::new(HandleInner {
                kind,
                last: Mutex::new(None),
            }),
        }
    }

    /// The form of tasks this server offers, if any.
    fn task_form(&self) -> Option<Form> {
        let caps = &self.server().capabilities;
        if self.protocol_version().is_stateless() {
            let offered = caps
                .extensions
                .as_ref()
                .is_some_and(|e| e.get(EXTENSION).is_some_and(Value::is_object));
            return offered.then_some(Form::Extension);
        }
        let offered = caps
            .tasks
            .as_ref()
            .and_then(|t| t.get("requests"))
            .and_then(|r| r.get("tools"))
            .and_then(|t| t.get("call"))
            .is_some();
        offered.then_some(Form::Experimental)
    }

    /// `params` with this request's client capabilities declaring the tasks extension.
    fn with_extension(&self, mut params: Value) -> Result<Value> {
        let mut capabilities = self
            .inner
            .stateless_meta
            .as_ref()
            .and_then(|m| m.get(meta::CLIENT_CAPABILITIES))
            .cloned()
            .unwrap_or_else(|| json!({}));
        if !capabilities.is_object() {
            capabilities = json!({});
        }
        let extensions = capabilities
            .as_object_mut()
            .map(|c| c.entry("extensions").or_insert_with(|| json!({})));
        if let Some(Value::Object(extensions)) = extensions {
            extensions.insert(EXTENSION.into(), json!({}));
        }
        let Value::Object(map) = &mut params else {
            return Err(Error::InvalidArgument("params must be an object".into()));
        };
        let meta = map.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(meta::CLIENT_CAPABILITIES.into(), capabilities);
        }
        Ok(params)
    }
}

/// A plain call of a tool that must run as a task is refused by the server; say so in a
/// way callers can match.
pub(super) fn task_required(tool: &str, e: Error) -> Error {
    let Error::Rpc(rpc) = &e else { return e };
    let data = rpc.data.as_ref();
    let needs_extension = rpc.code == codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        && data
            .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
            .and_then(|x| x.get(EXTENSION))
            .is_some();
    let needs_task = rpc.code == codes::METHOD_NOT_FOUND
        && (data
            .and_then(|d| d.get("taskSupport"))
            .and_then(Value::as_str)
            == Some("required")
            || rpc.message.to_ascii_lowercase().contains("task"));
    if needs_extension || needs_task {
        Error::TaskRequired {
            tool: tool.to_owned(),
        }
    } else {
        e
    }
}

impl TaskHandle {
    /// The task's id (`None` when the server answered at once and there is no task).
    pub fn id(&self) -> Option<&str> {
        match &self.inner.kind {
            Kind::Remote { id, .. } => Some(id),
            Kind::Done(_) => None,
        }
    }

    /// The task's current status (`tasks/get`). A handle that holds an immediate answer
    /// reports `completed` (or `failed` for a tool error) without asking the server.
    pub async fn status(&self) -> Result<Task> {
        let (id, form) = match &self.inner.kind {
            Kind::Done(result) => return Ok(done_task(result)),
            Kind::Remote { id, form } => (id, *form),
        };
        let params = json!({ "taskId": id });
        let params = match form {
            Form::Extension => self.client.with_extension(params)?,
            Form::Experimental => params,
        };
        let value = self
            .client
            .request(TASKS_GET, Some(params), RequestOptions::default())
            .await?;
        let task: Task = serde_json::from_value(value)
            .map_err(|e| Error::Protocol(format!("invalid `tasks/get` result: {e}")))?;
        if task.task_id != *id {
            return Err(Error::Protocol(format!(
                "`tasks/get` for `{id}` answered about `{}`",
                task.task_id
            )));
        }
        *self.inner.last.lock() = Some(task.clone());
        Ok(task)
    }

    /// Waits until the task is over and returns its result: the tool's result (a tool error
    /// included, as an `isError` result), or the task's JSON-RPC error, or
    /// [`Error::Cancelled`]. While it waits, the task's questions are answered with this
    /// client's handlers.
    pub async fn result(&self) -> Result<CallToolResult> {
        let (id, form) = match &self.inner.kind {
            Kind::Done(result) => return Ok((**result).clone()),
            Kind::Remote { id, form } => (id.clone(), *form),
        };
        if form == Form::Experimental {
            return self.experimental_result(&id).await;
        }
        loop {
            let task = self.status().await?;
            match task.status {
                TaskStatus::Completed => {
                    let result = task.result.unwrap_or_else(|| json!({ "content": [] }));
                    return serde_json::from_value(result)
                        .map_err(|e| Error::Protocol(format!("invalid task result: {e}")));
                }
                TaskStatus::Failed => {
                    return Err(task.error.map(Error::Rpc).unwrap_or_else(|| {
                        Error::Protocol(format!(
                            "task `{id}` failed: {}",
                            task.status_message.unwrap_or_default()
                        ))
                    }));
                }
                TaskStatus::Cancelled => return Err(Error::Cancelled),
                TaskStatus::InputRequired => self.answer(&id, &task).await?,
                TaskStatus::Working => tokio::time::sleep(poll_of(&task)).await,
            }
        }
    }

    /// 2025-11-25: `tasks/result` blocks until the task is over; its questions arrive
    /// meanwhile as requests the client's handlers answer.
    async fn experimental_result(&self, id: &str) -> Result<CallToolResult> {
        let patience = self
            .inner
            .last
            .lock()
            .as_ref()
            .and_then(|t| t.ttl)
            .map_or(Duration::from_secs(24 * 60 * 60), Duration::from_millis);
        let options = RequestOptions {
            timeout: Some(patience),
            max_total_timeout: Some(patience),
            ..Default::default()
        };
        match self
            .client
            .request(TASKS_RESULT, Some(json!({ "taskId": id })), options)
            .await
        {
            Ok(value) => serde_json::from_value(value)
                .map_err(|e| Error::Protocol(format!("invalid `tasks/result` result: {e}"))),
            Err(e) => match self.status().await {
                Ok(task) if task.status == TaskStatus::Cancelled => Err(Error::Cancelled),
                _ => Err(e),
            },
        }
    }

    /// Answers the task's pending questions with this client's handlers (`tasks/update`).
    async fn answer(&self, id: &str, task: &Task) -> Result<()> {
        let Some(requests) = task.input_requests.clone().filter(|r| !r.is_empty()) else {
            tokio::time::sleep(poll_of(task)).await;
            return Ok(());
        };
        let answers = self
            .client
            .answer_inputs(methods::TOOLS_CALL, requests, None)
            .await?;
        let params = self
            .client
            .with_extension(json!({ "taskId": id, "inputResponses": answers }))?;
        self.client
            .request(TASKS_UPDATE, Some(params), RequestOptions::default())
            .await?;
        Ok(())
    }

    /// Asks the server to cancel the task. Cancelling a task that already finished changes
    /// nothing (its result is kept) and is not an error.
    pub async fn cancel(&self) -> Result<()> {
        let (id, form) = match &self.inner.kind {
            Kind::Done(_) => return Ok(()),
            Kind::Remote { id, form } => (id, *form),
        };
        let params = json!({ "taskId": id });
        let params = match form {
            Form::Extension => self.client.with_extension(params)?,
            Form::Experimental => params,
        };
        match self
            .client
            .request(TASKS_CANCEL, Some(params), RequestOptions::default())
            .await
        {
            Ok(_) => Ok(()),
            // 2025-11-25 refuses to cancel a finished task (-32602); that is the outcome the
            // caller wanted to rule out anyway.
            Err(Error::Rpc(e)) if e.code == codes::INVALID_PARAMS => match self.status().await {
                Ok(task) if task.status.is_terminal() => Ok(()),
                _ => Err(Error::Rpc(e)),
            },
            Err(e) => Err(e),
        }
    }

    /// [`TaskHandle::updates`], pulled with [`TaskUpdates::next`].
    pub fn watch(&self) -> TaskUpdates {
        TaskUpdates {
            stream: Box::pin(self.updates()),
        }
    }

    /// The task's status each time it changes, until it is over (the last item is the final
    /// status). Polls at the interval the server suggests; a 2026-07-28 task's questions are
    /// answered with this client's handlers as they come.
    pub fn updates(&self) -> impl Stream<Item = Result<Task>> + Send + 'static {
        let handle = self.clone();
        futures::stream::unfold(
            (handle, None::<(TaskStatus, Option<String>)>, false),
            |(handle, seen, over)| async move {
                if over {
                    return None;
                }
                loop {
                    let task = match handle.status().await {
                        Ok(task) => task,
                        Err(e) => return Some((Err(e), (handle, seen, true))),
                    };
                    let now = (task.status, task.status_message.clone());
                    let changed = seen.as_ref() != Some(&now);
                    let terminal = task.status.is_terminal();
                    if !changed && !terminal {
                        if let (
                            TaskStatus::InputRequired,
                            Kind::Remote {
                                id,
                                form: Form::Extension,
                            },
                        ) = (task.status, &handle.inner.kind)
                            && let Err(e) = handle.answer(id, &task).await
                        {
                            return Some((Err(e), (handle, Some(now), true)));
                        }
                        tokio::time::sleep(poll_of(&task)).await;
                        continue;
                    }
                    return Some((Ok(task), (handle, Some(now), terminal)));
                }
            },
        )
    }
}

/// How long to wait before polling again, as the task suggests (bounded).
fn poll_of(task: &Task) -> Duration {
    task.poll_interval
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

/// The status of an answer that came at once.
fn done_task(result: &CallToolResult) -> Task {
    let now = crate::protocol::tasks::format_timestamp(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
    );
    Task {
        task_id: String::new(),
        status: if result.is_error() {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        },
        status_message: None,
        created_at: now.clone(),
        last_updated_at: Some(now),
        ttl: None,
        poll_interval: None,
        input_requests: None,
        result: serde_json::to_value(result).ok(),
        error: None,
        meta: None,
        extra: JsonObject::new(),
    }
}
