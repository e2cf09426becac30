//! The handshake: implementation info, capabilities, `initialize` params and result.

use serde::{Deserialize, Serialize};

use super::JsonObject;

/// Name and version of a client or server (`Implementation` in the schema).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// `{ "listChanged": bool }`, used by tools and prompts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListChangedCapability {
    /// Whether `list_changed` notifications are sent.
    #[serde(
        rename = "listChanged",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub list_changed: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The server's `resources` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourcesCapability {
    /// Whether `resources/subscribe` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether `notifications/resources/list_changed` is sent.
    #[serde(
        rename = "listChanged",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub list_changed: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The client's `roots` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RootsCapability {
    /// Whether `notifications/roots/list_changed` is sent.
    #[serde(
        rename = "listChanged",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub list_changed: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What a server offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Present if the server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Present if the server offers argument completion (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Task support (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What a client offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Present if the client can list roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present if the client can sample from an LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<JsonObject>,
    /// Present if the client supports elicitation (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<JsonObject>,
    /// Task support (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `initialize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InitializeRequestParams {
    /// The newest revision the client supports (any string: unknown ones are negotiated down).
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client's identity.
    #[serde(rename = "clientInfo")]
    pub client_info: Implementation,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `initialize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InitializeResult {
    /// The revision the server chose.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// The server's identity.
    #[serde(rename = "serverInfo")]
    pub server_info: Implementation,
    /// Guidance for the model on how to use this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}
