//! Tasks: a `tools/call` that the server runs in the background while the client polls it,
//! answers its questions, cancels it or collects its result later.
//!
//! Two wire forms exist and share nothing but field names:
//!
//! - **2025-11-25, experimental** (SEP-1686): the client opts in with `params.task = {ttl}`,
//!   the server answers a nested `CreateTaskResult {task: Task}`, the result is fetched with a
//!   blocking `tasks/result`, and `ttl`/`pollInterval` name the durations. Questions the task
//!   asks are ordinary server→client requests tagged with the `related-task` `_meta` key.
//! - **2026-07-28, the `io.modelcontextprotocol/tasks` extension** (SEP-2663): the client
//!   declares the extension in each request's `_meta` client capabilities, the server decides
//!   and answers a flat `CreateTaskResult` with `resultType: "task"`, `tasks/get` inlines the
//!   result, error or pending `inputRequests`, `tasks/update` carries the answers, and the
//!   durations are `ttlMs`/`pollIntervalMs`.
//!
//! These are the payloads both roles read and write; the server's engine is
//! `server::tasks`, the client's handle `client::tasks`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

use super::{InputRequest, JsonObject};

/// The extension identifier of 2026-07-28 tasks, in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The `_meta` key that ties a message to a task (2025-11-25).
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// `tasks/get`.
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/result` (2025-11-25 only; removed in 2026-07-28).
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list` (2025-11-25 only; removed in 2026-07-28).
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel`.
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `tasks/update` (2026-07-28).
pub const TASKS_UPDATE: &str = "tasks/update";
/// `notifications/tasks/status` (2025-11-25).
pub const TASKS_STATUS_NOTIFICATION: &str = "notifications/tasks/status";

/// Whether a tool may, must or must not run as a task (`execution.taskSupport`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task when the client asks for one, a plain call otherwise.
    Optional,
    /// Only as a task: a plain call is refused.
    Required,
}

impl TaskSupport {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Reads `execution.taskSupport` off a listed tool (`forbidden` when absent or unknown).
    pub fn of_tool(tool: &super::Tool) -> TaskSupport {
        tool.extra
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .unwrap_or_default()
    }
}

/// Where a task is in its life. `completed`, `failed` and `cancelled` are final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client to answer a question.
    InputRequired,
    /// Finished with a result (2026-07-28: tool errors included).
    Completed,
    /// Finished without one (2025-11-25: a tool error too).
    Failed,
    /// Cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task is over.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task as either era describes it. Reading accepts both spellings of the durations
/// (`ttl`/`ttlMs`, `pollInterval`/`pollIntervalMs`); writing is done by the server per era.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's id.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// A human-readable word on the status.
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When its status last changed (ISO 8601).
    pub last_updated_at: Option<String>,
    /// How long it is kept from creation, in ms (`null`: no limit). 2025-11-25 `ttl`.
    #[serde(alias = "ttlMs", default)]
    pub ttl: Option<u64>,
    /// Suggested time between polls, in ms. 2025-11-25 `pollInterval`.
    #[serde(alias = "pollIntervalMs")]
    pub poll_interval: Option<u64>,
    /// 2026-07-28 `tasks/get`: the questions waiting for answers, by key.
    pub input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
    /// 2026-07-28 `tasks/get` of a completed task: the tool's result.
    pub result: Option<Value>,
    /// 2026-07-28 `tasks/get` of a failed task: the JSON-RPC error.
    pub error: Option<crate::jsonrpc::ErrorObject>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (`resultType`, …).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What the client asks of a task it creates (2025-11-25 `params.task`).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskMetadata {
    /// Requested retention from creation, in ms (the server may clamp it).
    pub ttl: Option<u64>,
}

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// Params of `tasks/update` (2026-07-28).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers, under the keys of the task's `inputRequests`.
    pub input_responses: JsonObject,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// Result of `tasks/list` (2025-11-25).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// This page of tasks.
    pub tasks: Vec<Task>,
    /// Cursor of the next page.
    pub next_cursor: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// An instant as ISO 8601 / RFC 3339 UTC with milliseconds (`2026-12-07T20:08:08.123Z`), from
/// milliseconds since the Unix epoch.
pub fn format_timestamp(ms_since_epoch: u64) -> String {
    let secs = ms_since_epoch / 1000;
    let millis = ms_since_epoch % 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{millis:03}Z")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_timestamp(951_782_400_000),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(
            format_timestamp(1_796_674_088_123),
            "2026-12-07T20:08:08.123Z"
        );
        assert_eq!(
            format_timestamp(4_102_444_799_999),
            "2099-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn a_task_reads_either_era() {
        let old: Task = serde_json::from_value(json!({
            "taskId": "t", "status": "input_required", "createdAt": "x",
            "lastUpdatedAt": "y", "ttl": null, "pollInterval": 500
        }))
        .unwrap();
        assert_eq!(old.status, TaskStatus::InputRequired);
        assert_eq!((old.ttl, old.poll_interval), (None, Some(500)));
        let new: Task = serde_json::from_value(json!({
            "resultType": "task", "taskId": "t", "status": "working", "createdAt": "x",
            "lastUpdatedAt": "y", "ttlMs": 60000, "pollIntervalMs": 250
        }))
        .unwrap();
        assert_eq!((new.ttl, new.poll_interval), (Some(60000), Some(250)));
        assert_eq!(new.extra["resultType"], "task");
        assert!(
            serde_json::from_value::<Task>(json!({"taskId": "t", "status": "paused"})).is_err()
        );
    }
}
