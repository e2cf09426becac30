//! Writing messages: the envelope is assembled around already-serialized params and results,
//! so a handler's output is serialized exactly once.

use serde_json::value::RawValue;

use super::{ErrorObject, RequestId};

const HEAD: &[u8] = br#"{"jsonrpc":"2.0""#;

/// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`
pub fn encode_request(id: &RequestId, method: &str, params: Option<&RawValue>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + method.len() + params.map_or(0, |p| p.get().len()));
    out.extend_from_slice(HEAD);
    out.extend_from_slice(br#","id":"#);
    id.write_json(&mut out);
    write_method_params(&mut out, method, params);
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","method":…,"params":…}`
pub fn encode_notification(method: &str, params: Option<&RawValue>) -> Vec<u8> {
    let mut out = Vec::with_capacity(48 + method.len() + params.map_or(0, |p| p.get().len()));
    out.extend_from_slice(HEAD);
    write_method_params(&mut out, method, params);
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`
pub fn encode_response(id: &RequestId, result: &RawValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + result.get().len());
    out.extend_from_slice(HEAD);
    out.extend_from_slice(br#","id":"#);
    id.write_json(&mut out);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.get().as_bytes());
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","id":…|null,"error":{…}}` — `null` when the request's id was unreadable,
/// as JSON-RPC 2.0 (and MCP up to 2025-06-18) has it.
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + error.message.len());
    out.extend_from_slice(HEAD);
    out.extend_from_slice(br#","id":"#);
    match id {
        Some(id) => id.write_json(&mut out),
        None => out.extend_from_slice(b"null"),
    }
    write_error_tail(&mut out, error);
    out
}

/// `{"jsonrpc":"2.0","error":{…}}` — MCP 2025-11-25 and later omit the id of an error about a
/// request whose id could not be read (their schema allows no `null` id).
pub fn encode_error_without_id(error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + error.message.len());
    out.extend_from_slice(HEAD);
    write_error_tail(&mut out, error);
    out
}

fn write_error_tail(out: &mut Vec<u8>, error: &ErrorObject) {
    out.extend_from_slice(br#","error":"#);
    // An ErrorObject holds only strings, integers and JSON values: serializing cannot fail.
    let _ = serde_json::to_writer(&mut *out, error);
    out.push(b'}');
}

fn write_method_params(out: &mut Vec<u8>, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(br#","method":"#);
    let _ = serde_json::to_writer(&mut *out, method);
    if let Some(params) = params {
        out.extend_from_slice(br#","params":"#);
        out.extend_from_slice(params.get().as_bytes());
    }
}
