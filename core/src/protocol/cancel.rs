//! `notifications/cancelled`.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::JsonObject;
use crate::jsonrpc::RequestId;

/// Params of `notifications/cancelled`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request to cancel (optional only for task cancellation in 2025-11-25).
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    pub reason: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}
