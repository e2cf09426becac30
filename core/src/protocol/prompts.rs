//! Prompts: templated messages the user can pick.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::{ContentBlock, JsonObject};

/// Who a message is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One argument a prompt takes.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// What it means.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl PromptArgument {
    /// An argument, required or not.
    pub fn new(name: impl Into<String>, description: impl Into<String>, required: bool) -> Self {
        PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: Some(required),
            ..Default::default()
        }
    }
}

/// A prompt, as listed by `prompts/list`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Unique name.
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// What it does.
    pub description: Option<String>,
    /// Its arguments.
    pub arguments: Option<Vec<PromptArgument>>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members (icons, …).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Prompt {
    /// A prompt with a name, description and arguments.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        arguments: Vec<PromptArgument>,
    ) -> Self {
        Prompt {
            name: name.into(),
            description: Some(description.into()),
            arguments: (!arguments.is_empty()).then_some(arguments),
            ..Default::default()
        }
    }
}

/// Result of `prompts/list`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// This page.
    pub prompts: Vec<Prompt>,
    /// Cursor of the next page.
    pub next_cursor: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `prompts/get`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptRequestParams {
    /// The prompt.
    pub name: String,
    /// Argument values (strings, per the schema).
    pub arguments: Option<BTreeMap<String, String>>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A user message.
    pub fn user(content: ContentBlock) -> Self {
        PromptMessage {
            role: Role::User,
            content,
        }
    }

    /// An assistant message.
    pub fn assistant(content: ContentBlock) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content,
        }
    }
}

/// Result of `prompts/get`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// A description of the rendered prompt.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}
