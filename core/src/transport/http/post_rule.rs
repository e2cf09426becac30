//! What every POST to the server gets: the one rule, decided in one place.
//!
//! An HTTP POST must get exactly one answer, and the answer must say what happened to the
//! body. Two halves decide it, both here: [`read_body`] (media type, size, JSON) and
//! [`decide`] (the JSON-RPC shape of the body against the revision in force). The handlers
//! (`server.rs`, `legacy.rs`) only carry the verdict out: hand the body to the engine, answer
//! 202, wait for the engine's answers, or send the refusal.
//!
//! The revision in force is the session's negotiated one (stateful, `json_response`, legacy
//! `/messages`), the `MCP-Protocol-Version` header (`stateless`: 2025-03-26 when absent), or
//! the stateless era's header (2026-07-28 and any unknown value).
//!
//! | body                                   | 2025-03-26 (any mode)              | every other revision and mode (2024-11-05 legacy, 2025-06-18, 2025-11-25, 2026-07-28) |
//! |----------------------------------------|------------------------------------|--------------------------------------|
//! | `Accept` lacking JSON or SSE (`/mcp`)  | 406, -32600                        | 406, -32600                          |
//! | wrong `Content-Type`                   | 415, -32600                        | 415, -32600                          |
//! | over `max_body_bytes`                  | 413, -32600                        | 413, -32600                          |
//! | not JSON (or not UTF-8, too deep)      | 400, -32700                        | 400, -32700                          |
//! | one request                            | the engine's answer (200 JSON/SSE) | the engine's answer (200 JSON/SSE)   |
//! | one notification or response           | 202, no body                       | 202, no body                         |
//! | one invalid message (any shape)        | 400, -32600 (its id if readable)   | 400, -32600 (its id if readable)     |
//! | scalar, `null`, `{}`, object no message| 400, -32600                        | 400, -32600                          |
//! | `[]`                                   | 400, -32600 (one error)            | 400, -32600 (one error)              |
//! | array with ≥ 1 valid request           | 200, one array: an answer per request, an error per invalid element that JSON-RPC answers (`id` null when unreadable) | 400, -32600 (batches refused) |
//! | array of notifications/responses only  | 202, no body                       | 400, -32600                          |
//! | array, no valid request, ≥ 1 invalid   | 400, an array: an error for each invalid element (`id` null when unreadable); nothing is processed | 400, -32600 |
//! | array holding `initialize`             | 400, -32600                        | 400, -32600                          |
//!
//! How the modes differ, all of it after the verdict:
//! - stateful / `json_response`: no `Mcp-Session-Id` (but for `initialize`): 400, -32600; an
//!   unknown one: 404. An answered body opens a response stream on the session;
//!   `json_response` always answers with one JSON body, otherwise SSE when anything comes
//!   before the answer. A request id already in flight on the session: 400, -32600.
//! - `stateless` (handshake era without sessions): an answered body gets an engine of its own.
//! - 2026-07-28 (stateless era): the headers must mirror the body first (400, -32020; a
//!   response has no method for `Mcp-Method` to mirror, and no server request to answer in
//!   this era, so it is refused that way); notifications are 202 and reach no engine;
//!   errors carry their HTTP status.
//! - legacy `/messages` (HTTP+SSE): "the engine's answer" rows are 202 too, the answer
//!   travelling on the session's SSE stream; every refusal is on the POST, as in the table. A batch (2025-03-26 sessions only) holding an invalid element is
//!   refused whole with the errors, since its answer could not be completed on the stream.
//!
//! Never a 202 for a body that carried an invalid message, never a request without an answer:
//! a request the engine cannot see is refused here, on the POST itself.

use std::sync::Arc;

use http::{HeaderMap, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};

use super::{
    body::{self, Body},
    server::{State, refuse},
};
use crate::{
    jsonrpc::{
        Decoded, ErrorObject, Invalid, Limits, Message, RequestId, codes, decode, encode_error,
    },
    protocol::{ProtocolVersion, methods},
    transport::HttpFrame,
};

/// What a decoded POST body gets.
#[derive(Debug)]
pub(super) enum Verdict {
    /// Answered now; the engine never sees the body.
    Refuse(Refusal),
    /// Handed to the engine and acknowledged with 202: nothing in it wants an answer.
    Accept,
    /// Handed to the engine, whose answers to these requests are the POST's answer.
    Answer(Requests),
}

/// A refusal: the HTTP status and the JSON body (one error, or an array of them).
#[derive(Debug)]
pub(super) struct Refusal {
    pub(super) status: StatusCode,
    pub(super) json: Vec<u8>,
}

impl Refusal {
    fn one(id: Option<&RequestId>, error: ErrorObject) -> Self {
        let json = match id {
            Some(id) => encode_error(Some(id), &error),
            // The transport specification's "JSON-RPC error response that has no id".
            None => crate::jsonrpc::encode_error_without_id(&error),
        };
        Refusal {
            status: StatusCode::BAD_REQUEST,
            json,
        }
    }

    pub(super) fn into_response(self) -> Response<Body> {
        body::json(self.status, self.json)
    }
}

/// The requests of a body the engine answers.
#[derive(Debug)]
pub(super) struct Requests {
    /// Every valid request's id, in body order.
    pub(super) ids: Vec<RequestId>,
    /// Whether the answer is one JSON-RPC batch response.
    pub(super) batch: bool,
    /// Whether the body is the `initialize` request.
    pub(super) initialize: bool,
}

impl Requests {
    /// No request: the body is handed over and acknowledged.
    pub(super) fn none() -> Self {
        Requests {
            ids: Vec::new(),
            batch: false,
            initialize: false,
        }
    }
}

/// Whether JSON-RPC batches are accepted on HTTP at `revision`: only 2025-03-26 has them (they
/// arrived with Streamable HTTP and left in 2025-06-18; the legacy 2024-11-05 transport never
/// had them).
pub(super) fn batches_allowed(revision: Option<ProtocolVersion>) -> bool {
    revision == Some(ProtocolVersion::V2025_03_26)
}

/// Whether the body is a single `initialize` request (the one body that opens a session).
pub(super) fn is_initialize(decoded: &Decoded) -> bool {
    matches!(decoded, Decoded::Single(Ok(Message::Request(r))) if r.method == methods::INITIALIZE)
}

/// The verdict for `decoded` at `revision` (its wire string; `None` before any is known).
pub(super) fn decide(decoded: &Decoded, revision: Option<&str>) -> Verdict {
    match decoded {
        Decoded::Single(Ok(Message::Request(r))) => Verdict::Answer(Requests {
            ids: vec![r.id.clone()],
            batch: false,
            initialize: r.method == methods::INITIALIZE,
        }),
        Decoded::Single(Ok(_)) => Verdict::Accept,
        // Whatever shape it pretended to have: HTTP has no way to 202 something unusable.
        Decoded::Single(Err(invalid)) => Verdict::Refuse(Refusal::one(
            invalid.id.as_ref(),
            ErrorObject::invalid_request(invalid.reason.clone()),
        )),
        Decoded::Batch(items) => decide_batch(items, revision),
    }
}

fn decide_batch(items: &[Result<Message, Invalid>], revision: Option<&str>) -> Verdict {
    if !batches_allowed(revision.and_then(ProtocolVersion::parse)) {
        let why = match revision {
            Some(v) => format!(
                "Invalid request: JSON-RPC batches are not supported in protocol version {v}"
            ),
            None => {
                "Invalid request: JSON-RPC batches are only supported on 2025-03-26 sessions".into()
            }
        };
        return Verdict::Refuse(Refusal::one(None, ErrorObject::invalid_request(why)));
    }
    let mut ids = Vec::new();
    let mut invalid = Vec::new();
    for item in items {
        match item {
            Ok(Message::Request(r)) if r.method == methods::INITIALIZE => {
                return Verdict::Refuse(Refusal::one(
                    None,
                    ErrorObject::invalid_request(
                        "Invalid request: initialize must not be part of a batch",
                    ),
                ));
            }
            Ok(Message::Request(r)) => ids.push(r.id.clone()),
            Ok(_) => {}
            Err(e) => invalid.push(e),
        }
    }
    if !ids.is_empty() {
        // The engine answers the batch as JSON-RPC says, the invalid elements included.
        return Verdict::Answer(Requests {
            ids,
            batch: true,
            initialize: false,
        });
    }
    if invalid.is_empty() {
        return Verdict::Accept;
    }
    // Nothing the engine would answer, yet something unusable: refuse the whole body, with
    // an error for each bad element as JSON-RPC 2.0 writes them (`id: null` when unreadable).
    Verdict::Refuse(errors_for(&invalid))
}

/// 400 with an array holding an error for each invalid element.
fn errors_for(invalid: &[&Invalid]) -> Refusal {
    let mut json = vec![b'['];
    for (i, e) in invalid.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        json.extend(encode_error(
            e.id.as_ref(),
            &ErrorObject::invalid_request(e.reason.clone()),
        ));
    }
    json.push(b']');
    Refusal {
        status: StatusCode::BAD_REQUEST,
        json,
    }
}

/// Refuses an allowed batch that holds invalid elements, for transports that cannot add their
/// errors to the engine's answer (the legacy stream): 400 with an error for each.
pub(super) fn refuse_incomplete_batch(decoded: &Decoded) -> Option<Refusal> {
    let Decoded::Batch(items) = decoded else {
        return None;
    };
    let invalid: Vec<&Invalid> = items.iter().filter_map(|i| i.as_ref().err()).collect();
    (!invalid.is_empty()).then(|| errors_for(&invalid))
}

/// Reads a POST body as JSON-RPC: `application/json` only, refused with 413 past the cap
/// (before reading it when `Content-Length` says so), parsed with the depth cap. The frame
/// carries the decoded message on to the session, which does not parse it again.
pub(super) async fn read_body<B>(
    state: &State,
    headers: &Arc<HeaderMap>,
    body: B,
) -> Result<HttpFrame, Response<Body>>
where
    B: hyper::body::Body,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let header_str = |name: &header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let json_body = header_str(&header::CONTENT_TYPE).is_some_and(|ct| {
        ct.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json_body {
        return Err(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            codes::INVALID_REQUEST,
            "Unsupported Media Type: the body must be application/json",
        ));
    }
    let cap = state.options.max_body_bytes;
    let declared = header_str(&header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > cap as u64) {
        return Err(too_large(cap));
    }
    let bytes = match Limited::new(body, cap).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return Err(too_large(cap));
        }
        Err(_) => return Err(body::empty(StatusCode::BAD_REQUEST)),
    };
    let limits = Limits {
        max_message_bytes: cap,
        max_depth: Limits::SERVER.max_depth,
    };
    match decode(&bytes, &limits) {
        Ok(decoded) => Ok(HttpFrame {
            bytes,
            headers: headers.clone(),
            decoded: Box::new(decoded),
            limits,
        }),
        Err(e) => Err(refuse(
            StatusCode::BAD_REQUEST,
            codes::PARSE_ERROR,
            format!("Parse error: {e}"),
        )),
    }
}

fn too_large(cap: usize) -> Response<Body> {
    refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        codes::INVALID_REQUEST,
        format!("Payload Too Large: the cap is {cap} bytes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(body: &str, revision: Option<&str>) -> Verdict {
        let decoded = decode(body.as_bytes(), &Limits::SERVER).expect("JSON");
        decide(&decoded, revision)
    }

    fn refused(v: Verdict) -> serde_json::Value {
        match v {
            Verdict::Refuse(r) => {
                assert_eq!(r.status, StatusCode::BAD_REQUEST);
                serde_json::from_slice(&r.json).expect("a JSON refusal")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn arrays_are_refused_outside_2025_03_26() {
        let one = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
        for revision in [
            None,
            Some("2024-11-05"),
            Some("2025-06-18"),
            Some("2025-11-25"),
            Some("2026-07-28"),
            Some("1999-01-01"),
        ] {
            let e = refused(verdict(one, revision));
            assert_eq!(e["error"]["code"], codes::INVALID_REQUEST, "{revision:?}");
            assert!(e.get("id").is_none(), "{e}");
        }
        assert!(
            matches!(verdict(one, Some("2025-03-26")), Verdict::Answer(r) if r.batch && r.ids.len() == 1)
        );
    }

    #[test]
    fn an_array_of_invalid_elements_gets_an_error_each() {
        let e = refused(verdict("[1,2]", Some("2025-03-26")));
        let items = e.as_array().expect("an array");
        assert_eq!(items.len(), 2);
        for item in items {
            assert_eq!(item["id"], serde_json::Value::Null);
            assert_eq!(item["error"]["code"], codes::INVALID_REQUEST);
        }
        // An invalid notification is no more acceptable than an invalid request.
        let e = refused(verdict(
            r#"[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","method":"y","params":3}]"#,
            Some("2025-03-26"),
        ));
        assert_eq!(e.as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn notifications_alone_are_accepted_and_initialize_never_batched() {
        assert!(matches!(
            verdict(r#"[{"jsonrpc":"2.0","method":"x"}]"#, Some("2025-03-26")),
            Verdict::Accept
        ));
        let init = r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]"#;
        refused(verdict(init, Some("2025-03-26")));
    }

    #[test]
    fn single_invalid_values_keep_a_readable_id() {
        let e = refused(verdict(r#"{"jsonrpc":"2.0","id":7}"#, Some("2025-11-25")));
        assert_eq!(e["id"], 7);
        for body in ["123", "null", "{}", "[]", "\"x\""] {
            let e = refused(verdict(body, Some("2025-03-26")));
            assert_eq!(e["error"]["code"], codes::INVALID_REQUEST, "{body}");
        }
    }
}
