//! Logging: levels, `logging/setLevel` and `notifications/message`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

use super::JsonObject;

/// Syslog severities (RFC 5424), least severe first so they order naturally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

/// Params of `logging/setLevel`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetLevelRequestParams {
    /// The minimum level to send.
    pub level: LoggingLevel,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}

/// Params of `notifications/message`.
#[skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Which logger.
    pub logger: Option<String>,
    /// Anything JSON.
    pub data: Value,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
}
