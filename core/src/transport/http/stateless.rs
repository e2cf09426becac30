//! What a Streamable HTTP server checks of a 2026-07-28 request before the engine sees it:
//! the standard headers mirror the body (SEP-2243), the body carries the stateless `_meta`,
//! and the answer's HTTP status follows its JSON-RPC error.

use http::{HeaderMap, StatusCode};
use serde_json::Value;

use super::headers;
use crate::{
    jsonrpc::{ErrorObject, codes},
    protocol::meta,
};

/// A refusal: status and JSON-RPC error.
pub(crate) type Refusal = (StatusCode, ErrorObject);

fn mismatch(message: String) -> Refusal {
    (
        StatusCode::BAD_REQUEST,
        ErrorObject::new(codes::HEADER_MISMATCH, message),
    )
}

/// A header's value with optional whitespace trimmed, decoding the `=?base64?…?=` form.
pub(crate) fn header_value(
    headers: &HeaderMap,
    name: &http::HeaderName,
) -> Result<Option<String>, Refusal> {
    let values: Vec<_> = headers.get_all(name).iter().collect();
    let raw = match values.as_slice() {
        [] => return Ok(None),
        [one] => *one,
        _ => {
            return Err(mismatch(format!(
                "Header mismatch: more than one `{name}` header"
            )));
        }
    };
    crate::protocol::param_headers::decode(raw.as_bytes())
        .map(Some)
        .map_err(|why| mismatch(format!("Header mismatch: `{name}` {why}")))
}

/// Checks one stateless message against the headers it came with.
pub(crate) fn check(
    headers: &HeaderMap,
    header_version: &str,
    message: &Value,
) -> Result<(), Refusal> {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match header_value(headers, &headers::MCP_METHOD)? {
        Some(h) if h == method => {}
        Some(h) => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Method `{h}` but the body's method is `{method}`"
            )));
        }
        None => {
            return Err(mismatch(
                "Header mismatch: the Mcp-Method header is required".into(),
            ));
        }
    }
    let params = message.get("params");
    if let Some(name) = crate::protocol::param_headers::mcp_name_of(method, params) {
        match header_value(headers, &headers::MCP_NAME)? {
            Some(h) if h == name => {}
            Some(h) => {
                return Err(mismatch(format!(
                    "Header mismatch: Mcp-Name `{h}` but the body names `{name}`"
                )));
            }
            None => {
                return Err(mismatch(format!(
                    "Header mismatch: the Mcp-Name header is required for `{method}`"
                )));
            }
        }
    }
    if message.get("id").is_none() {
        return Ok(());
    }
    let invalid = |what: &str| {
        (
            StatusCode::BAD_REQUEST,
            ErrorObject::invalid_params(format!("Invalid params: {what}")),
        )
    };
    let meta_obj = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("`_meta` is required"))?;
    let declared = meta_obj
        .get(meta::PROTOCOL_VERSION)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("`_meta` must carry io.modelcontextprotocol/protocolVersion"))?;
    if !meta_obj
        .get(meta::CLIENT_CAPABILITIES)
        .is_some_and(Value::is_object)
    {
        return Err(invalid(
            "`_meta` must carry io.modelcontextprotocol/clientCapabilities",
        ));
    }
    if declared != header_version {
        return Err(mismatch(format!(
            "Header mismatch: MCP-Protocol-Version `{header_version}` but `_meta` declares `{declared}`"
        )));
    }
    Ok(())
}

/// The HTTP status of a stateless answer: errors the revision assigns a status to get it.
pub(crate) fn status_of(final_json: &[u8]) -> StatusCode {
    #[derive(serde::Deserialize)]
    struct Probe {
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    match serde_json::from_slice::<Probe>(final_json)
        .ok()
        .and_then(|p| p.error)
        .map(|e| e.code)
    {
        Some(codes::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            codes::INVALID_PARAMS
            | codes::INVALID_REQUEST
            | codes::HEADER_MISMATCH
            | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
            | codes::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}
