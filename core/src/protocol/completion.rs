//! `completion/complete`: argument suggestions for prompts and resource templates.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::JsonObject;

/// What is being completed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// An argument of a prompt.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
    },
    /// A variable of a resource template.
    #[serde(rename = "ref/resource")]
    ResourceTemplate {
        /// The template (as listed).
        uri: String,
    },
}

/// The argument being typed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Values of the other arguments, already chosen (2025-06-18+).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Argument name → value.
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Params of `completion/complete`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument being typed.
    pub argument: CompletionArgument,
    /// Already-chosen arguments.
    pub context: Option<CompletionContext>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// The suggestions.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// How many exist in all, if known.
    pub total: Option<u64>,
    /// Whether more exist than were returned.
    pub has_more: Option<bool>,
}

impl Completion {
    /// Suggestions, truncated to the spec's 100 with `total`/`hasMore` set accordingly.
    pub fn from_values(values: Vec<String>) -> Self {
        let total = values.len();
        let mut values = values;
        values.truncate(100);
        Completion {
            has_more: Some(total > values.len()),
            total: Some(total as u64),
            values,
        }
    }
}

/// Result of `completion/complete`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}
