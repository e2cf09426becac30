//! What servers ask of clients: sampling, elicitation and roots.
//!
//! In the handshake era these are server→client requests; in 2026-07-28 they travel inside an
//! `InputRequiredResult` (see [`super::InputRequiredResult`]). The payloads are the same.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

use super::{JsonObject, Role};

/// One message of a sampling conversation. `content` is a content block, or (2025-11-25+) an
/// array of them, including `tool_use` / `tool_result` blocks; it is kept as JSON.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// A content block or an array of them.
    pub content: Value,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// Params of `sampling/createMessage`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model selection hints and priorities.
    pub model_preferences: Option<Value>,
    /// A system prompt.
    pub system_prompt: Option<String>,
    /// `none` / `thisServer` / `allServers` (the last two deprecated).
    pub include_context: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Token budget.
    pub max_tokens: u64,
    /// Stop sequences.
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    pub metadata: Option<Value>,
    /// Tools the model may call (2025-11-25+).
    pub tools: Option<Vec<Value>>,
    /// How the model chooses tools (2025-11-25+).
    pub tool_choice: Option<Value>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `sampling/createMessage`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks (the assistant).
    pub role: Role,
    /// A content block or an array of them.
    pub content: Value,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped (`endTurn`, `maxTokens`, `toolUse`, …).
    pub stop_reason: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `elicitation/create`: a form (a flat JSON Schema of primitives, with defaults and
/// enums per SEP-1034/SEP-1330) or a URL to open (2025-11-25+).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestParams {
    /// `form` (the default when absent) or `url`.
    pub mode: Option<String>,
    /// What to tell the user.
    pub message: String,
    /// Form mode: the schema of the answer.
    pub requested_schema: Option<JsonObject>,
    /// URL mode: where to send the user.
    pub url: Option<String>,
    /// URL mode (2025-11-25 only): correlates `notifications/elicitation/complete`.
    pub elicitation_id: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitRequestParams {
    /// A form asking for values matching `schema`.
    pub fn form(message: impl Into<String>, schema: Value) -> Self {
        ElicitRequestParams {
            message: message.into(),
            requested_schema: match schema {
                Value::Object(o) => Some(o),
                _ => None,
            },
            ..Default::default()
        }
    }

    /// A URL the user should open.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestParams {
            mode: Some("url".into()),
            message: message.into(),
            url: Some(url.into()),
            ..Default::default()
        }
    }

    /// Whether this is a URL-mode request.
    pub fn is_url(&self) -> bool {
        self.mode.as_deref() == Some("url")
    }
}

/// How the user answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// Result of `elicitation/create`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The values, when accepted in form mode.
    pub content: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

impl ElicitResult {
    /// An accepted answer.
    pub fn accept(content: Value) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: match content {
                Value::Object(o) => Some(o),
                _ => None,
            },
            meta: None,
        }
    }

    /// A refusal.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
        }
    }

    /// A dismissal.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
            meta: None,
        }
    }
}

/// A root the client exposes (a directory, usually).
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    pub name: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// Result of `roots/list`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}
