//! The one mapper from `oxmcp::Error` to a JavaScript error.
//!
//! A napi error carries only a fixed status and a message, so the message is a JSON object
//! (`{"kind", "message", "code"?, "data"?}`) behind a marker; the JavaScript layer
//! (`lib/errors.js`) turns it into the `McpError` subclass for the kind. Keeping the encoding in
//! one place means every native entry point reports errors the same way.

use napi::Status;
use oxmcp::{Error, ErrorKind};
use serde_json::{Value, json};

/// Prefix marking an encoded error message (what `lib/errors.js` looks for).
pub(crate) const MARKER: &str = "\u{0}oxmcp:";

/// Encodes a core error for JavaScript.
pub(crate) fn to_js(e: Error) -> napi::Error {
    let mut payload = json!({ "kind": e.kind().as_str(), "message": e.to_string() });
    match &e {
        Error::Rpc(obj) => {
            payload["code"] = json!(obj.code);
            // The peer's text, sanitized like every core message (`oxmcp::sanitize`).
            payload["message"] = json!(oxmcp::sanitize::line(&obj.message));
            if let Some(data) = &obj.data {
                payload["data"] = data.clone();
            }
        }
        // The tool, so a caller can retry it as a task without parsing the message.
        Error::TaskRequired { tool } => payload["data"] = json!({ "tool": tool }),
        _ => {}
    }
    encoded(payload)
}

/// An `invalid_argument` error: the caller passed something the API does not accept.
pub(crate) fn invalid(message: impl Into<String>) -> napi::Error {
    to_js(Error::InvalidArgument(message.into()))
}

/// A `cancelled` error (the caller's `AbortSignal` fired).
pub(crate) fn cancelled() -> napi::Error {
    to_js(Error::Cancelled)
}

fn encoded(payload: Value) -> napi::Error {
    napi::Error::new(Status::GenericFailure, format!("{MARKER}{payload}"))
}

/// The kind names, for the JavaScript layer's table (checked there at load time).
#[napi_derive::napi]
pub fn error_kinds() -> Vec<String> {
    [
        ErrorKind::Rpc,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::ConnectionClosed,
        ErrorKind::Spawn,
        ErrorKind::Io,
        ErrorKind::Protocol,
        ErrorKind::UnsupportedProtocolVersion,
        ErrorKind::InvalidSchema,
        ErrorKind::InvalidArgument,
        ErrorKind::Config,
        ErrorKind::Auth,
        ErrorKind::TaskRequired,
        ErrorKind::HandshakeIncomplete,
    ]
    .iter()
    .map(|k| k.as_str().to_owned())
    .collect()
}
