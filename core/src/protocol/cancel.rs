//! `notifications/cancelled`.

use serde::{Deserialize, Serialize};

use super::JsonObject;
use crate::jsonrpc::RequestId;

/// Params of `notifications/cancelled`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CancelledNotificationParams {
    /// The request to cancel (optional only for task cancellation in 2025-11-25).
    #[serde(rename = "requestId", default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
