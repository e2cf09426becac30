//! Resources: listing, templates, reading, and subscriptions to updates.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::{JsonObject, ResourceContents};

/// A resource the server offers, as listed by `resources/list`; also the body of a
/// `resource_link` content block ([`super::ResourceLink`]).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Size in bytes, if known.
    pub size: Option<u64>,
    /// Annotations (audience, priority, lastModified).
    pub annotations: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (icons, …).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Resource {
    /// A resource with a URI and name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            ..Default::default()
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// A family of resources described by an RFC 6570 URI template.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template, e.g. `weather://{city}/current`.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// What the resources are.
    pub description: Option<String>,
    /// MIME type of every resource it produces.
    pub mime_type: Option<String>,
    /// Annotations.
    pub annotations: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ResourceTemplate {
    /// A template with a URI template and name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            ..Default::default()
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// Result of `resources/list`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// This page.
    pub resources: Vec<Resource>,
    /// Cursor of the next page.
    pub next_cursor: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (`ttlMs`, `cacheScope`, `resultType`).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `resources/templates/list`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// This page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Cursor of the next page.
    pub next_cursor: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params naming one resource: `resources/read`, `resources/subscribe`, `resources/unsubscribe`
/// and `notifications/resources/updated`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceUriParams {
    /// The resource's URI.
    pub uri: String,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (`inputResponses`, `requestState` on a stateless read).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `resources/read`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// One or more contents (a directory-like resource may return several).
    pub contents: Vec<ResourceContents>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ReadResourceResult {
    /// One text content.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ReadResourceResult {
            contents: vec![ResourceContents {
                uri: uri.into(),
                mime_type: mime_type.map(str::to_owned),
                text: Some(text.into()),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// One binary content, already base64-encoded.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        base64: impl Into<String>,
    ) -> Self {
        ReadResourceResult {
            contents: vec![ResourceContents {
                uri: uri.into(),
                mime_type: mime_type.map(str::to_owned),
                blob: Some(base64.into()),
                ..Default::default()
            }],
            ..Default::default()
        }
    }
}
