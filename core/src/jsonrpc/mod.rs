//! The JSON-RPC 2.0 envelope as MCP uses it.
//!
//! Peers send us arbitrary bytes. This layer turns them into [`Message`]s without ever
//! panicking, keeps request ids exactly as sent, and tells the session whether an invalid
//! message deserves an error reply (a request we can answer) or must be dropped (garbage,
//! notifications and responses are never answered, so two peers cannot storm each other).
//! Params and results stay raw JSON until a handler asks for them.

mod decode;
mod encode;
mod error;
mod framing;
mod id;
mod message;

pub use decode::{Decoded, Invalid, ParseError, Shape, decode, exceeds_depth};
pub use encode::{
    encode_error, encode_error_without_id, encode_notification, encode_request, encode_response,
};
pub use error::{ErrorObject, codes};
pub use framing::{FrameEvent, LineReader, LineSplitter, push_line};
pub use id::RequestId;
pub use message::{ErrorResponse, Message, Notification, Request, Response};

/// Size and nesting caps applied to every inbound message before it is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted message in bytes (a stdio line, an HTTP body, an SSE event).
    pub max_message_bytes: usize,
    /// Deepest accepted nesting of arrays and objects.
    pub max_depth: usize,
}

impl Limits {
    /// Server-side defaults: 4 MiB per message, 128 levels of nesting.
    pub const SERVER: Limits = Limits {
        max_message_bytes: 4 << 20,
        max_depth: 128,
    };
    /// Client-side defaults: 16 MiB per message (tool results can be large), 128 levels.
    pub const CLIENT: Limits = Limits {
        max_message_bytes: 16 << 20,
        max_depth: 128,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::SERVER
    }
}
