//! `notifications/progress`.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use super::JsonObject;
use crate::jsonrpc::RequestId;

/// A progress token: an integer or string chosen by the requester, like a request id.
pub type ProgressToken = RequestId;

/// Params of `notifications/progress`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with each notification.
    pub progress: f64,
    /// Total, if known.
    pub total: Option<f64>,
    /// A human-readable message (2025-03-26+).
    pub message: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}
