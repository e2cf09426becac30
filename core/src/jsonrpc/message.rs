//! Owned JSON-RPC messages, with params and results kept as raw JSON.

use serde_json::value::RawValue;

use super::{ErrorObject, RequestId, encode};

/// A request: expects exactly one response with the same id.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id, exactly as sent.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// Params, unparsed (always an object or array when present).
    pub params: Option<Box<RawValue>>,
}

/// A notification: one-way, never answered.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// Params, unparsed.
    pub params: Option<Box<RawValue>>,
}

/// A successful response.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request answered.
    pub id: RequestId,
    /// The result, unparsed.
    pub result: Box<RawValue>,
}

/// An error response. The id is absent when the request's id could not be read.
#[derive(Debug, Clone)]
pub struct ErrorResponse {
    /// The id of the request answered, if it could be read.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

/// Any single JSON-RPC message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A successful response.
    Response(Response),
    /// An error response.
    Error(ErrorResponse),
}

impl Message {
    /// The method name of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// Serializes the message as JSON: a compact envelope, with params and results copied as
    /// they are (they may hold insignificant whitespace, line breaks included; newline-framed
    /// transports write frames through [`push_line`](super::push_line)).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Message::Request(r) => encode::encode_request(&r.id, &r.method, r.params.as_deref()),
            Message::Notification(n) => encode::encode_notification(&n.method, n.params.as_deref()),
            Message::Response(r) => encode::encode_response(&r.id, &r.result),
            Message::Error(e) => encode::encode_error(e.id.as_ref(), &e.error),
        }
    }
}
