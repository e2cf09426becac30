//! JSON-RPC error objects and the error codes MCP assigns.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Error codes used on the wire.
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Resource not found, in 2025-11-25 and earlier (2026-07-28 uses `INVALID_PARAMS`).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// URL elicitation required (2025-11-25 only).
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// HTTP headers do not match the body (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability the request did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The requested protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// The `error` member of a JSON-RPC error response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// Integer error code, see [`codes`].
    pub code: i64,
    /// Short human-readable description.
    pub message: String,
    /// Optional structured detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches structured data.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32600 Invalid Request`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_REQUEST, message)
    }

    /// `-32601 Method not found`, naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602 Invalid params`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }

    /// `-32603 Internal error`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(codes::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}
