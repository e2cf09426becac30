//! The 2026-07-28 additions: multi round-trip requests and `subscriptions/listen`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

use super::JsonObject;

/// A server→client request embedded in an [`InputRequiredResult`].
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// `sampling/createMessage`, `elicitation/create` or `roots/list`.
    pub method: String,
    /// Its params.
    pub params: Option<Value>,
}

/// `resultType: "input_required"`: the server needs answers before it can finish; the client
/// retries the request with `inputResponses` (and `requestState`, echoed verbatim).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Key → request; the client answers each under the same key.
    pub input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
    /// Opaque server state to echo back.
    pub request_state: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// What a `subscriptions/listen` stream carries; every kind is opt-in.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    pub resource_subscriptions: Option<Vec<String>>,
    /// Unknown members (extension filters).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionFilter {
    /// Whether nothing is asked for.
    pub fn is_empty(&self) -> bool {
        self.tools_list_changed != Some(true)
            && self.prompts_list_changed != Some(true)
            && self.resources_list_changed != Some(true)
            && self
                .resource_subscriptions
                .as_ref()
                .is_none_or(Vec::is_empty)
    }
}

/// Params of `subscriptions/listen`.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// What to deliver.
    pub notifications: SubscriptionFilter,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}
