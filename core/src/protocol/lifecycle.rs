//! The handshake: implementation info, capabilities, `initialize` params and result.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::JsonObject;

/// Name and version of a client or server (`Implementation` in the schema).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// Members this version of oxmcp does not model (description, icons, websiteUrl, …).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Implementation {
    /// An implementation with a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            ..Default::default()
        }
    }
}

/// `{ "listChanged": bool }`, used by tools, prompts and (as [`RootsCapability`]) roots.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// Whether `list_changed` notifications are sent.
    pub list_changed: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The server's `resources` capability.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether `resources/subscribe` is supported.
    pub subscribe: Option<bool>,
    /// Whether `notifications/resources/list_changed` is sent.
    pub list_changed: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's `roots` capability: whether `notifications/roots/list_changed` is sent.
pub type RootsCapability = ListChangedCapability;

/// What a server offers.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    pub experimental: Option<JsonObject>,
    /// Present if the server sends log messages.
    pub logging: Option<JsonObject>,
    /// Present if the server offers argument completion (2025-03-26+).
    pub completions: Option<JsonObject>,
    /// Present if the server offers prompts.
    pub prompts: Option<ListChangedCapability>,
    /// Present if the server offers resources.
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    pub tools: Option<ListChangedCapability>,
    /// Task support (2025-11-25).
    pub tasks: Option<JsonObject>,
    /// Extensions (2026-07-28).
    pub extensions: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What a client offers.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    pub experimental: Option<JsonObject>,
    /// Present if the client can list roots.
    pub roots: Option<RootsCapability>,
    /// Present if the client can sample from an LLM.
    pub sampling: Option<JsonObject>,
    /// Present if the client supports elicitation (2025-06-18+).
    pub elicitation: Option<JsonObject>,
    /// Task support (2025-11-25).
    pub tasks: Option<JsonObject>,
    /// Extensions (2026-07-28).
    pub extensions: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `initialize`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The newest revision the client supports (any string: unknown ones are negotiated down).
    pub protocol_version: String,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client's identity.
    pub client_info: Implementation,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `initialize`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server chose.
    pub protocol_version: String,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// The server's identity.
    pub server_info: Implementation,
    /// Guidance for the model on how to use this server.
    pub instructions: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}
