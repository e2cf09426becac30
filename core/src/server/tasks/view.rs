//! Reading a stored task (its fields, see `task_store`) and writing it out in either era's
//! shape: the status is derived here, once, from `final`, the pending questions and nothing
//! else.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    jsonrpc::ErrorObject,
    protocol::{InputRequest, TaskStatus, tasks::format_timestamp},
    task_store::{TaskFields, field},
};

/// Which wire form a task was created under; a task is only ever served in its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum TaskEra {
    /// 2025-11-25 experimental tasks (SEP-1686).
    #[serde(rename = "2025-11-25")]
    Experimental,
    /// The 2026-07-28 extension (SEP-2663).
    #[serde(rename = "2026-07-28")]
    Extension,
}

/// The immutable facts of a task (`meta`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Meta {
    pub(crate) era: TaskEra,
    /// Milliseconds since the epoch.
    pub(crate) created: u64,
    pub(crate) ttl_ms: u64,
    pub(crate) poll_ms: u64,
    pub(crate) tool: String,
}

/// What the runner last said (`state`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

/// A question waiting for the client (`ask:<key>`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Asked {
    pub(crate) at: u64,
    pub(crate) request: InputRequest,
}

/// An answer delivered by `tasks/update` (`answer:<key>`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Answered {
    pub(crate) at: u64,
    pub(crate) response: Value,
}

/// How a task ended (`final`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) status: TaskStatus,
    pub(crate) at: u64,
    /// The tool's result (completed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<Value>,
    /// The JSON-RPC error (failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<ErrorObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

impl Outcome {
    pub(crate) fn completed(result: Value, at: u64) -> Self {
        Outcome {
            status: TaskStatus::Completed,
            at,
            result: Some(result),
            error: None,
            message: None,
        }
    }

    pub(crate) fn failed(error: ErrorObject, at: u64) -> Self {
        Outcome {
            status: TaskStatus::Failed,
            message: Some(error.message.clone()),
            at,
            result: None,
            error: Some(error),
        }
    }

    pub(crate) fn cancelled(at: u64) -> Self {
        Outcome {
            status: TaskStatus::Cancelled,
            at,
            result: None,
            error: None,
            message: Some("The task was cancelled.".into()),
        }
    }

    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A task read from the store.
#[derive(Clone, Debug)]
pub(crate) struct TaskView {
    pub(crate) id: String,
    pub(crate) scope: String,
    pub(crate) meta: Meta,
    pub(crate) state: State,
    /// Milliseconds since the epoch after which the runner is presumed gone.
    pub(crate) lease: Option<u64>,
    pub(crate) outcome: Option<Outcome>,
    /// Questions without an answer yet.
    pub(crate) pending: BTreeMap<String, Asked>,
    /// Answers the runner has not taken yet, by key.
    pub(crate) answers: BTreeMap<String, Answered>,
}

impl TaskView {
    /// Reads the fields; `None` when they are not a task this server wrote.
    pub(crate) fn read(id: &str, fields: &TaskFields) -> Option<TaskView> {
        let meta: Meta = serde_json::from_str(fields.get(field::META)?).ok()?;
        let state: State = fields
            .get(field::STATE)
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        let outcome = fields
            .get(field::FINAL)
            .and_then(|s| serde_json::from_str(s).ok());
        let mut asked = BTreeMap::new();
        let mut answers = BTreeMap::new();
        for (name, value) in fields {
            if let Some(key) = name.strip_prefix(field::ASK) {
                if let Ok(a) = serde_json::from_str::<Asked>(value) {
                    asked.insert(key.to_owned(), a);
                }
            } else if let Some(key) = name.strip_prefix(field::ANSWER)
                && let Ok(a) = serde_json::from_str::<Answered>(value)
            {
                answers.insert(key.to_owned(), a);
            }
        }
        let pending = asked
            .into_iter()
            .filter(|(k, _)| !answers.contains_key(k))
            .collect();
        Some(TaskView {
            id: id.to_owned(),
            scope: fields.get(field::SCOPE).cloned().unwrap_or_default(),
            meta,
            state,
            lease: fields.get(field::LEASE).and_then(|l| l.parse().ok()),
            outcome,
            pending,
            answers,
        })
    }

    /// The status the client sees, by the era's rules (2025-11-25 counts a tool error as
    /// `failed`; 2026-07-28 as `completed` with `isError`).
    pub(crate) fn status(&self) -> TaskStatus {
        match &self.outcome {
            Some(o) => {
                let tool_error = o
                    .result
                    .as_ref()
                    .and_then(|r| r.get("isError"))
                    .and_then(Value::as_bool)
                    == Some(true);
                if o.status == TaskStatus::Completed
                    && tool_error
                    && self.meta.era == TaskEra::Experimental
                {
                    TaskStatus::Failed
                } else {
                    o.status
                }
            }
            None if !self.pending.is_empty() => TaskStatus::InputRequired,
            None => TaskStatus::Working,
        }
    }

    /// When anything about the task last changed.
    pub(crate) fn last_updated(&self) -> u64 {
        let mut at = self.meta.created.max(self.state.at);
        at = self.pending.values().fold(at, |m, a| m.max(a.at));
        at = self.answers.values().fold(at, |m, a| m.max(a.at));
        if let Some(o) = &self.outcome {
            at = at.max(o.at);
        }
        at
    }

    fn status_message(&self) -> Option<String> {
        match &self.outcome {
            Some(o) => o.message.clone(),
            None if !self.pending.is_empty() => {
                Some("The task is waiting for the client's input.".into())
            }
            None => self.state.message.clone(),
        }
    }

    /// The 2025-11-25 `Task`.
    pub(crate) fn experimental(&self) -> Value {
        let mut task = json!({
            "taskId": self.id,
            "status": self.status(),
            "createdAt": format_timestamp(self.meta.created),
            "lastUpdatedAt": format_timestamp(self.last_updated()),
            "ttl": self.meta.ttl_ms,
            "pollInterval": self.meta.poll_ms,
        });
        if let Some(message) = self.status_message() {
            task["statusMessage"] = json!(message);
        }
        task
    }

    /// The 2026-07-28 task fields: a `CreateTaskResult` (`detailed == false`) or the
    /// `DetailedTask` of `tasks/get`, with the pending questions, the result or the error.
    pub(crate) fn extension(&self, detailed: bool) -> Value {
        let mut task = json!({
            "taskId": self.id,
            "status": self.status(),
            "createdAt": format_timestamp(self.meta.created),
            "lastUpdatedAt": format_timestamp(self.last_updated()),
            "ttlMs": self.meta.ttl_ms,
            "pollIntervalMs": self.meta.poll_ms,
        });
        if let Some(message) = self.status_message() {
            task["statusMessage"] = json!(message);
        }
        if !detailed {
            return task;
        }
        if self.outcome.is_none() && !self.pending.is_empty() {
            let requests: BTreeMap<&String, &InputRequest> =
                self.pending.iter().map(|(k, a)| (k, &a.request)).collect();
            task["inputRequests"] = json!(requests);
        }
        if let Some(o) = &self.outcome {
            match o.status {
                TaskStatus::Completed => {
                    if let Some(result) = &o.result {
                        let mut result = result.clone();
                        if let Value::Object(map) = &mut result {
                            map.entry("resultType").or_insert_with(|| json!("complete"));
                        }
                        task["result"] = result;
                    }
                }
                TaskStatus::Failed => {
                    if let Some(error) = &o.error {
                        task["error"] = json!(error);
                    }
                }
                _ => {}
            }
        }
        task
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(era: TaskEra) -> TaskFields {
        let meta = Meta {
            era,
            created: 1_000,
            ttl_ms: 60_000,
            poll_ms: 500,
            tool: "t".into(),
        };
        TaskFields::from([
            (field::META.into(), serde_json::to_string(&meta).unwrap()),
            (field::SCOPE.into(), "anonymous".into()),
        ])
    }

    fn ask(key: &str, at: u64) -> (String, String) {
        let asked = Asked {
            at,
            request: InputRequest {
                method: "elicitation/create".into(),
                params: Some(json!({"message": key})),
            },
        };
        (
            format!("{}{key}", field::ASK),
            serde_json::to_string(&asked).unwrap(),
        )
    }

    #[test]
    fn the_status_is_derived_from_the_outcome_and_the_open_questions() {
        let mut f = fields(TaskEra::Extension);
        let view = TaskView::read("id", &f).unwrap();
        assert_eq!(view.status(), TaskStatus::Working);
        assert!(view.extension(true).get("inputRequests").is_none());
        f.extend([ask("a", 2_000), ask("b", 2_100)]);
        f.insert(
            format!("{}a", field::ANSWER),
            serde_json::to_string(&Answered {
                at: 3_000,
                response: json!({"action": "accept"}),
            })
            .unwrap(),
        );
        let view = TaskView::read("id", &f).unwrap();
        assert_eq!(view.status(), TaskStatus::InputRequired);
        let detailed = view.extension(true);
        assert_eq!(
            detailed["inputRequests"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["b"]
        );
        assert_eq!(view.last_updated(), 3_000);
        assert!(detailed.get("ttl").is_none() && detailed["ttlMs"] == 60_000);
        f.insert(
            field::FINAL.into(),
            Outcome::completed(json!({"content": [], "isError": true}), 4_000).to_json(),
        );
        let done = TaskView::read("id", &f).unwrap();
        assert_eq!(done.status(), TaskStatus::Completed);
        let detailed = done.extension(true);
        assert_eq!(detailed["result"]["isError"], true);
        assert_eq!(detailed["result"]["resultType"], "complete");
        assert!(detailed.get("inputRequests").is_none());
    }

    #[test]
    fn the_experimental_era_counts_a_tool_error_as_failed() {
        let mut f = fields(TaskEra::Experimental);
        f.insert(
            field::FINAL.into(),
            Outcome::completed(json!({"content": [], "isError": true}), 4_000).to_json(),
        );
        let view = TaskView::read("id", &f).unwrap();
        assert_eq!(view.status(), TaskStatus::Failed);
        let task = view.experimental();
        assert_eq!(task["ttl"], 60_000);
        assert!(task.get("ttlMs").is_none() && task.get("result").is_none());
    }

    #[test]
    fn fields_that_are_not_a_task_are_refused() {
        assert!(TaskView::read("id", &TaskFields::new()).is_none());
        let f = TaskFields::from([(field::META.into(), "{not json".to_string())]);
        assert!(TaskView::read("id", &f).is_none());
    }
}
