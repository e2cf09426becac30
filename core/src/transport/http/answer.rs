//! What the HTTP client makes of one message a server sent back (a JSON body, or one SSE
//! event), so that a malformed answer fails the request it was for at once instead of being
//! dropped by the engine and leaving the request to its timeout.
//!
//! The client-side table, for a message arriving on a POST's answer (JSON body or SSE event):
//!
//! | message                                     | what happens                                           |
//! |---------------------------------------------|--------------------------------------------------------|
//! | a valid response or error with an id        | handed to the engine: it resolves that request         |
//! | a valid request or notification             | handed to the engine (server-to-client traffic)        |
//! | an array                                    | each element on its own, by these rows (never handed over as a batch, which a client session would refuse) |
//! | a malformed response whose id can be read   | that request fails now (a protocol error naming why)   |
//! | an error with no id or `id: null`           | every request still waiting on the answer fails with that error |
//! | not JSON, a scalar, `null`, `{}`, `[]`, an object that is no message | every request still waiting on the answer fails now (protocol error) |
//! | a malformed request or notification         | handed to the engine, which answers or drops it as JSON-RPC says; nothing fails |
//!
//! A request that a JSON answer leaves unanswered fails as soon as the body is read; a request
//! answered with 202 fails at once (a server must answer requests). On the session's GET
//! stream and the legacy SSE stream nothing is waiting on a particular message: malformed
//! responses with an id still fail their request; the rest is dropped (and logged).

use bytes::Bytes;

use crate::jsonrpc::{
    Decoded, ErrorObject, Invalid, Limits, Message, RequestId, Shape, codes, decode,
};

/// A message sorted out for the client.
#[derive(Debug, Default)]
pub(super) struct Screened {
    /// Frames for the engine, one message each.
    pub(super) forward: Vec<Bytes>,
    /// Requests of ours this message answers.
    pub(super) answered: Vec<RequestId>,
    /// Requests whose answer arrived malformed, and what was wrong with it.
    pub(super) malformed: Vec<(RequestId, String)>,
    /// Something that answers no request that can be named: what the waiting requests fail
    /// with.
    pub(super) stray: Option<Stray>,
}

/// A message that answers no request it names.
#[derive(Debug)]
pub(super) enum Stray {
    /// The server's own error about a request whose id it could not read.
    ServerError(ErrorObject),
    /// Not a JSON-RPC answer at all: what is wrong with it.
    Malformed(String),
}

impl Stray {
    /// The error the waiting requests fail with.
    pub(super) fn into_error(self) -> ErrorObject {
        match self {
            Stray::ServerError(e) => e,
            Stray::Malformed(why) => {
                ErrorObject::new(codes::INTERNAL_ERROR, format!("HTTP transport: {why}"))
            }
        }
    }
}

/// Sorts out one message (`bytes`: a JSON body or an SSE event's data).
pub(super) fn screen(bytes: &[u8], max_message_bytes: usize) -> Screened {
    let limits = Limits {
        max_message_bytes,
        max_depth: Limits::CLIENT.max_depth,
    };
    let mut out = Screened::default();
    match decode(bytes, &limits) {
        Err(e) => {
            out.stray = Some(Stray::Malformed(format!(
                "the server's answer is not JSON: {e}"
            )))
        }
        Ok(Decoded::Single(item)) => sort(&mut out, item, bytes, false),
        Ok(Decoded::Batch(items)) => {
            for item in items {
                sort(&mut out, item, &[], true);
            }
        }
    }
    out
}

fn sort(out: &mut Screened, item: Result<Message, Invalid>, raw: &[u8], in_array: bool) {
    match item {
        Ok(message) => {
            match &message {
                Message::Response(r) => out.answered.push(r.id.clone()),
                Message::Error(e) => match &e.id {
                    Some(id) => out.answered.push(id.clone()),
                    None => {
                        out.stray = Some(Stray::ServerError(e.error.clone()));
                        return;
                    }
                },
                Message::Request(_) | Message::Notification(_) => {}
            }
            // Whole messages pass as they came; array elements are re-encoded one by one.
            let frame = if in_array || raw.is_empty() {
                Bytes::from(message.to_bytes())
            } else {
                Bytes::copy_from_slice(raw)
            };
            out.forward.push(frame);
        }
        Err(invalid) => match (invalid.shape, invalid.id.clone()) {
            (Shape::Response, Some(id)) => out.malformed.push((id, invalid.reason)),
            // The engine answers a malformed server request (or drops a notification) as
            // JSON-RPC says; it is no answer of ours.
            (Shape::Request | Shape::Notification, _) if !in_array => {
                out.forward.push(Bytes::copy_from_slice(raw));
            }
            (Shape::Request | Shape::Notification, _) => {}
            (Shape::Response | Shape::Unknown, _) => {
                out.stray.get_or_insert_with(|| {
                    Stray::Malformed(format!(
                        "the server's answer is no JSON-RPC response: {}",
                        invalid.reason
                    ))
                });
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Screened {
        screen(text.as_bytes(), 1 << 20)
    }

    #[test]
    fn a_valid_answer_is_forwarded_whole() {
        let r = s(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert_eq!(r.answered, vec![RequestId::Number(1)]);
        assert_eq!(r.forward.len(), 1);
        assert!(r.stray.is_none() && r.malformed.is_empty());
    }

    #[test]
    fn arrays_are_taken_apart() {
        let r = s(r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"x"},3]"#);
        assert_eq!(r.answered, vec![RequestId::Number(1)]);
        assert_eq!(r.forward.len(), 2);
        assert!(r.stray.is_some());
    }

    #[test]
    fn malformed_answers_name_their_request_when_they_can() {
        let r = s(r#"{"jsonrpc":"2.0","id":4,"result":1,"error":{"code":1,"message":"x"}}"#);
        assert_eq!(r.malformed.len(), 1);
        assert_eq!(r.malformed[0].0, RequestId::Number(4));
        for junk in [
            "{}",
            "[]",
            "null",
            "7",
            "{not json",
            r#"{"jsonrpc":"2.0","result":{}}"#,
        ] {
            let r = s(junk);
            assert!(r.stray.is_some(), "{junk}");
            assert!(r.forward.is_empty() && r.answered.is_empty(), "{junk}");
        }
    }

    #[test]
    fn an_error_without_id_is_the_servers_word() {
        let r = s(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"nope"}}"#);
        assert!(matches!(r.stray, Some(Stray::ServerError(e)) if e.code == -32600));
    }
}
