//! `server/discover` (2026-07-28): the stateless replacement for the handshake's answer.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::{JsonObject, ServerCapabilities};

/// Who may cache a cacheable result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Only within the same authorization context.
    #[default]
    Private,
    /// Anyone, across authorization contexts.
    Public,
}

/// Result of `server/discover`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every revision the server accepts.
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    pub instructions: Option<String>,
    /// How long the client may cache this answer.
    #[serde(default)]
    pub ttl_ms: u64,
    /// Who may cache it.
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// `_meta` (carries `io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (including `resultType`).
    #[serde(flatten)]
    pub extra: JsonObject,
}
