//! Classifying inbound bytes by their keys before any typed decoding.
//!
//! Trying untagged-enum variants one after another is slow and produces errors that name
//! nothing useful. Instead the envelope is read once with every member left raw, the shape
//! (request, notification, response, error) is decided from which keys are present, and only
//! then are the members checked, so an error can say which method and which field was wrong.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    ErrorObject, ErrorResponse, Limits, Message, Notification, Request, RequestId, Response,
};

/// Bytes that are not JSON at all (or nest deeper than allowed). Never answered on stdio.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not valid JSON (including invalid UTF-8).
    #[error("not valid JSON: {0}")]
    Syntax(String),
    /// Nested deeper than the configured cap.
    #[error("JSON nested deeper than {limit} levels")]
    TooDeep {
        /// The cap that was exceeded.
        limit: usize,
    },
    /// Larger than the configured cap.
    #[error("message of {len} bytes exceeds the {limit}-byte cap")]
    TooLarge {
        /// Size of the message.
        len: usize,
        /// The cap that was exceeded.
        limit: usize,
    },
}

/// What the message looked like, which decides whether an invalid one is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Had `method` and `id`: answered with an error carrying the id.
    Request,
    /// Had `method` and no `id`: never answered.
    Notification,
    /// Had `result` or `error`: never answered.
    Response,
    /// Valid JSON but no recognisable shape: answered with `-32600` and `id: null`.
    Unknown,
}

/// Valid JSON that is not a valid JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The shape the message appeared to have.
    pub shape: Shape,
    /// The id, when it could be read.
    pub id: Option<RequestId>,
    /// The method, when it could be read.
    pub method: Option<String>,
    /// What was wrong, naming the field.
    pub reason: String,
}

impl Invalid {
    /// Whether JSON-RPC requires an error reply (requests and shapeless messages).
    pub fn needs_reply(&self) -> bool {
        matches!(self.shape, Shape::Request | Shape::Unknown)
    }

    /// The error response to send, if one is due.
    pub fn reply(&self) -> Option<ErrorResponse> {
        self.needs_reply().then(|| ErrorResponse {
            id: self.id.clone(),
            error: ErrorObject::invalid_request(self.reason.clone()),
        })
    }
}

/// A decoded inbound frame.
#[derive(Debug)]
pub enum Decoded {
    /// One message (or one invalid message).
    Single(Result<Message, Invalid>),
    /// A JSON array of messages. Whether batches are allowed depends on the session's revision.
    Batch(Vec<Result<Message, Invalid>>),
}

/// Decodes one frame, applying `limits` before parsing.
pub fn decode(bytes: &[u8], limits: &Limits) -> Result<Decoded, ParseError> {
    if bytes.len() > limits.max_message_bytes {
        return Err(ParseError::TooLarge {
            len: bytes.len(),
            limit: limits.max_message_bytes,
        });
    }
    if exceeds_depth(bytes, limits.max_depth) {
        return Err(ParseError::TooDeep {
            limit: limits.max_depth,
        });
    }
    // JSON text is UTF-8 (RFC 8259 §8.1). serde_json checks the strings it decodes but not the
    // ones it skips (unknown members, the validity check below), so bytes that are not UTF-8
    // would otherwise be acted on or answered instead of dropped: check once, up front.
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ParseError::Syntax(format!("invalid UTF-8: {e}")))?;
    let first = text.bytes().find(|b| !b.is_ascii_whitespace());
    match first {
        Some(b'[') => {
            let items: Vec<&RawValue> =
                serde_json::from_str(text).map_err(|e| ParseError::Syntax(e.to_string()))?;
            if items.is_empty() {
                return Ok(Decoded::Single(Err(unknown(None, "empty batch"))));
            }
            Ok(Decoded::Batch(
                items.into_iter().map(classify_raw).collect(),
            ))
        }
        Some(b'{') => match serde_json::from_str::<Envelope<'_>>(text) {
            Ok(env) => Ok(Decoded::Single(classify(env))),
            Err(e) => {
                // Valid JSON that the envelope reader refused: a duplicate member, a member
                // that is not JSON-RPC's. Answer it as an invalid request rather than drop it.
                if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
                    Ok(Decoded::Single(Err(unknown(None, &e.to_string()))))
                } else {
                    Err(ParseError::Syntax(e.to_string()))
                }
            }
        },
        _ => {
            serde_json::from_str::<serde::de::IgnoredAny>(text)
                .map_err(|e| ParseError::Syntax(e.to_string()))?;
            Ok(Decoded::Single(Err(unknown(
                None,
                "a JSON-RPC message must be an object",
            ))))
        }
    }
}

/// Returns whether `bytes` nests arrays and objects deeper than `max_depth`.
///
/// A linear scan that skips strings; it never recurses, so 100,000 levels cost 100,000
/// iterations and no stack.
pub fn exceeds_depth(bytes: &[u8], max_depth: usize) -> bool {
    if bytes.len() <= max_depth {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string in jumps to the next quote or backslash (most of a large
                // message is string content); a backslash escapes the byte after it.
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        None => return false,
                        Some(at) if bytes[i + at] == b'\\' => i += at + 2,
                        Some(at) => {
                            i += at;
                            break;
                        }
                    }
                    if i >= bytes.len() {
                        return false;
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// Every member of interest left raw; `null` is kept distinct from absent.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D>(d: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    <&RawValue>::deserialize(d).map(Some)
}

fn classify_raw(raw: &RawValue) -> Result<Message, Invalid> {
    let text = raw.get();
    if !text.starts_with('{') {
        return Err(unknown(None, "a JSON-RPC message must be an object"));
    }
    match serde_json::from_str::<Envelope<'_>>(text) {
        Ok(env) => classify(env),
        Err(e) => Err(unknown(None, &e.to_string())),
    }
}

fn unknown(id: Option<RequestId>, reason: &str) -> Invalid {
    Invalid {
        shape: Shape::Unknown,
        id,
        method: None,
        reason: format!("Invalid request: {reason}"),
    }
}

fn classify(env: Envelope<'_>) -> Result<Message, Invalid> {
    let id = env.id.map(parse_id);
    let readable_id = id.as_ref().and_then(|r| r.as_ref().ok().cloned());

    if let Some(method_raw) = env.method {
        let shape = if env.id.is_some() {
            Shape::Request
        } else {
            Shape::Notification
        };
        let method: String = match serde_json::from_str(method_raw.get()) {
            Ok(m) => m,
            Err(_) => {
                return Err(Invalid {
                    shape,
                    id: readable_id,
                    method: None,
                    reason: "Invalid request: `method` must be a string".into(),
                });
            }
        };
        let fail = |reason: String| Invalid {
            shape,
            id: readable_id.clone(),
            method: Some(method.clone()),
            reason: format!("Invalid request `{method}`: {reason}"),
        };
        check_version(env.jsonrpc).map_err(&fail)?;
        if env.result.is_some() || env.error.is_some() {
            return Err(fail("a request must not carry `result` or `error`".into()));
        }
        let params = match env.params {
            None => None,
            Some(p) if p.get().starts_with('{') || p.get().starts_with('[') => Some(p.to_owned()),
            Some(_) => return Err(fail("`params` must be an object".into())),
        };
        return match id {
            None => Ok(Message::Notification(Notification { method, params })),
            Some(Ok(id)) => Ok(Message::Request(Request { id, method, params })),
            Some(Err(why)) => Err(fail(why)),
        };
    }

    if env.result.is_some() || env.error.is_some() {
        let fail = |reason: String| Invalid {
            shape: Shape::Response,
            id: readable_id.clone(),
            method: None,
            reason: format!("Invalid response: {reason}"),
        };
        check_version(env.jsonrpc).map_err(&fail)?;
        if env.params.is_some() {
            return Err(fail("a response must not carry `params`".into()));
        }
        return match (env.result, env.error) {
            (Some(_), Some(_)) => Err(fail("both `result` and `error` are present".into())),
            (Some(result), None) => match id {
                Some(Ok(id)) => Ok(Message::Response(Response {
                    id,
                    result: result.to_owned(),
                })),
                Some(Err(why)) => Err(fail(why)),
                None => Err(fail("a result must carry an `id`".into())),
            },
            (None, Some(error)) => {
                let error: ErrorObject = serde_json::from_str(error.get())
                    .map_err(|e| fail(format!("`error` is malformed: {e}")))?;
                let id = match (env.id, id) {
                    (Some(raw), _) if raw.get() == "null" => None,
                    (_, Some(Ok(id))) => Some(id),
                    (_, Some(Err(why))) => return Err(fail(why)),
                    (_, None) => None,
                };
                Ok(Message::Error(ErrorResponse { id, error }))
            }
            (None, None) => unreachable_shape(),
        };
    }

    Err(Invalid {
        shape: Shape::Unknown,
        id: readable_id,
        method: None,
        reason: "Invalid request: no `method`, `result` or `error` member".into(),
    })
}

// Kept out of line so the match above stays exhaustive without a panic path.
fn unreachable_shape() -> Result<Message, Invalid> {
    Err(unknown(None, "no `result` or `error` member"))
}

fn check_version(jsonrpc: Option<&RawValue>) -> Result<(), String> {
    match jsonrpc {
        Some(v) if v.get() == "\"2.0\"" => Ok(()),
        Some(_) => Err("`jsonrpc` must be \"2.0\"".into()),
        None => Err("missing `jsonrpc` member".into()),
    }
}

fn parse_id(raw: &RawValue) -> Result<RequestId, String> {
    let text = raw.get();
    if text == "null" {
        return Err("`id` must not be null".into());
    }
    serde_json::from_str::<RequestId>(text).map_err(|e| {
        let msg = e.to_string();
        format!("`id` {}", msg.split(" at line").next().unwrap_or(&msg))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain byte-at-a-time scan `exceeds_depth` must agree with.
    fn depth_reference(bytes: &[u8], max_depth: usize) -> bool {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for &b in bytes {
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > max_depth {
                        return true;
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        false
    }

    #[test]
    fn depth_scan_agrees_with_the_byte_by_byte_reference() {
        // Strings of the bytes that matter (quotes, backslashes, brackets) in every mix,
        // including unterminated strings and a backslash as the last byte.
        let alphabet = b"\"\\[]{}a ";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in 0..64usize {
            for _ in 0..300 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        alphabet[(seed % alphabet.len() as u64) as usize]
                    })
                    .collect();
                for max in [0, 1, 2, 3, 5] {
                    assert_eq!(
                        exceeds_depth(&bytes, max),
                        depth_reference(&bytes, max),
                        "{:?} max {max}",
                        String::from_utf8_lossy(&bytes)
                    );
                }
            }
        }
    }

    fn one(s: &str) -> Result<Message, Invalid> {
        match decode(s.as_bytes(), &Limits::SERVER).expect("valid JSON") {
            Decoded::Single(m) => m,
            Decoded::Batch(_) => panic!("unexpected batch"),
        }
    }

    #[test]
    fn ids_keep_their_json_type() {
        let a = one(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        let b = one(r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#).unwrap();
        let (Message::Request(a), Message::Request(b)) = (a, b) else {
            panic!()
        };
        assert_ne!(a.id, b.id);
        assert_eq!(a.id, RequestId::Number(1));
        assert_eq!(b.id, RequestId::String("1".into()));
    }

    #[test]
    fn null_id_is_an_invalid_request_answered_without_id() {
        let e = one(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).unwrap_err();
        assert_eq!(e.shape, Shape::Request);
        assert!(e.id.is_none());
        assert!(e.reason.contains("null"), "{}", e.reason);
        assert!(e.needs_reply());
    }

    #[test]
    fn errors_name_method_and_field() {
        let e = one(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":3}"#).unwrap_err();
        assert_eq!(e.id, Some(RequestId::Number(7)));
        assert!(
            e.reason.contains("tools/call") && e.reason.contains("params"),
            "{}",
            e.reason
        );
    }

    #[test]
    fn bad_notifications_and_responses_are_not_answered() {
        let n = one(r#"{"jsonrpc":"2.0","method":"x","params":"s"}"#).unwrap_err();
        assert!(!n.needs_reply());
        let r = one(r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#).unwrap_err();
        assert!(!r.needs_reply());
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let deep = "[".repeat(100_000);
        assert_eq!(
            decode(deep.as_bytes(), &Limits::SERVER).unwrap_err(),
            ParseError::TooDeep { limit: 128 }
        );
    }

    #[test]
    fn strings_do_not_count_as_nesting() {
        let s = format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":"{}"}}}}"#,
            "[".repeat(500)
        );
        assert!(one(&s).is_ok());
    }

    #[test]
    fn json_rpc_spec_vectors() {
        assert!(matches!(
            decode(b"[]", &Limits::SERVER),
            Ok(Decoded::Single(Err(_)))
        ));
        let Ok(Decoded::Batch(items)) = decode(b"[1,2,3]", &Limits::SERVER) else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        assert!(
            items
                .iter()
                .all(|i| i.as_ref().is_err_and(|e| e.needs_reply()))
        );
        assert!(
            decode(
                br#"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#,
                &Limits::SERVER
            )
            .is_err()
        );
    }
}
