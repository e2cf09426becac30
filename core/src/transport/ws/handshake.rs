//! The upgrade's rules, on both sides, as plain functions of the request and response heads:
//! is this an upgrade, which subprotocol, what the 101 carries, whether a 101 is acceptable.
//!
//! The subprotocol is where WebSocket peers most often fail each other (RFC 6455 §4.1: a
//! client fails the connection when the server names a subprotocol it did not offer, and
//! libraries also fail when they offered one and got none back). So the server echoes `mcp`
//! only when it was offered, as one of the values, exactly; and our client, which offers
//! `mcp`, accepts either the echo or silence (servers that never name one exist), but
//! refuses anything else.

use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use super::SUBPROTOCOL;
use crate::Error;

/// The only WebSocket version (RFC 6455).
const VERSION: &str = "13";

/// Whether a request asks to switch to WebSocket (`Upgrade: websocket`, in any case, among
/// the protocols listed). Tells an upgrade apart from a Streamable HTTP `GET` on one path.
pub(crate) fn is_upgrade(headers: &HeaderMap) -> bool {
    has_token(headers, &header::UPGRADE, "websocket")
}

/// Whether a comma-separated header lists `token` (case-insensitive, as for `Connection` and
/// `Upgrade`).
fn has_token(headers: &HeaderMap, name: &header::HeaderName, token: &str) -> bool {
    values(headers, name).any(|v| v.eq_ignore_ascii_case(token))
}

/// Every comma-separated value of every `name` header, trimmed.
fn values<'a>(
    headers: &'a HeaderMap,
    name: &header::HeaderName,
) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
}

/// Whether the client offered the `mcp` subprotocol, as one of its values, exactly.
fn offers_mcp(headers: &HeaderMap) -> bool {
    values(headers, &header::SEC_WEBSOCKET_PROTOCOL).any(|v| v == SUBPROTOCOL)
}

/// The headers of the 101 answering an upgrade request, or why it is refused (the status and
/// a message). Called after the server's own checks (`Host`, `Origin`, authentication).
pub(super) fn answer(
    method: &Method,
    headers: &HeaderMap,
) -> Result<HeaderMap, (StatusCode, String)> {
    if method != Method::GET {
        return Err((
            StatusCode::METHOD_NOT_ALLOWED,
            format!("a WebSocket upgrade is a GET, not {method}"),
        ));
    }
    if !has_token(headers, &header::CONNECTION, "upgrade") {
        return Err((
            StatusCode::BAD_REQUEST,
            "a WebSocket upgrade needs `Connection: Upgrade`".into(),
        ));
    }
    let version = headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .and_then(|v| v.to_str().ok());
    if version.map(str::trim) != Some(VERSION) {
        return Err((
            StatusCode::UPGRADE_REQUIRED,
            format!("unsupported WebSocket version (`Sec-WebSocket-Version: {VERSION}` only)"),
        ));
    }
    let key = match headers
        .get_all(header::SEC_WEBSOCKET_KEY)
        .iter()
        .collect::<Vec<_>>()[..]
    {
        // 16 random bytes in base64.
        [key] if key.len() == 24 => key.as_bytes().to_vec(),
        _ => {
            return Err((
                StatusCode::BAD_REQUEST,
                "a WebSocket upgrade needs one `Sec-WebSocket-Key` of 16 bytes in base64".into(),
            ));
        }
    };
    let mut out = HeaderMap::new();
    out.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    out.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    let accept = HeaderValue::from_str(&derive_accept_key(&key)).map_err(|_| {
        (
            StatusCode::BAD_REQUEST,
            "bad `Sec-WebSocket-Key`".to_owned(),
        )
    })?;
    out.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    if offers_mcp(headers) {
        out.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static(SUBPROTOCOL),
        );
    }
    Ok(out)
}

/// The client's upgrade headers for a fresh `key`.
pub(super) fn request_headers(key: &str) -> Result<HeaderMap, Error> {
    let mut h = HeaderMap::new();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    h.insert(
        header::SEC_WEBSOCKET_VERSION,
        HeaderValue::from_static(VERSION),
    );
    h.insert(
        header::SEC_WEBSOCKET_KEY,
        HeaderValue::from_str(key)
            .map_err(|_| Error::InvalidArgument("bad WebSocket key".into()))?,
    );
    h.insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(SUBPROTOCOL),
    );
    Ok(h)
}

/// Checks the server's 101 against the request made with `key`.
pub(super) fn check_switch(headers: &HeaderMap, key: &str) -> Result<(), Error> {
    let refuse = |what: String| Err(Error::Protocol(format!("WebSocket upgrade: {what}")));
    if !has_token(headers, &header::UPGRADE, "websocket") {
        return refuse("the server's 101 lacks `Upgrade: websocket`".into());
    }
    if !has_token(headers, &header::CONNECTION, "upgrade") {
        return refuse("the server's 101 lacks `Connection: Upgrade`".into());
    }
    let accept = headers
        .get(header::SEC_WEBSOCKET_ACCEPT)
        .and_then(|v| v.to_str().ok());
    if accept != Some(derive_accept_key(key.as_bytes()).as_str()) {
        return refuse("the server's `Sec-WebSocket-Accept` does not match our key".into());
    }
    let chosen: Vec<_> = values(headers, &header::SEC_WEBSOCKET_PROTOCOL).collect();
    match chosen[..] {
        [] | [SUBPROTOCOL] => {}
        _ => {
            return refuse(format!(
                "the server chose the subprotocol `{}`, but only `{SUBPROTOCOL}` was offered",
                crate::sanitize::line(&chosen.join(", "))
            ));
        }
    }
    if headers.contains_key(header::SEC_WEBSOCKET_EXTENSIONS) {
        return refuse("the server chose an extension, but none was offered".into());
    }
    Ok(())
}

/// The error for an upgrade the server answered with something other than 101: its status
/// and the start of its body. 401 and 403 are authorization failures.
pub(super) fn refused(status: StatusCode, body: &[u8]) -> Error {
    let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
    let text = text.trim();
    let detail = if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    };
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Error::Auth(format!(
            "the server refused the WebSocket upgrade with HTTP {status}{detail}"
        )),
        _ => Error::Protocol(format!(
            "the server answered the WebSocket upgrade with HTTP {status}{detail}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

    fn upgrade(extra: &[(&str, &str)]) -> HeaderMap {
        let mut pairs = vec![
            ("upgrade", "websocket"),
            ("connection", "keep-alive, Upgrade"),
            ("sec-websocket-version", "13"),
            ("sec-websocket-key", KEY),
        ];
        pairs.extend_from_slice(extra);
        request(&pairs)
    }

    #[test]
    fn the_rfc_example_key_is_answered() {
        let out = answer(&Method::GET, &upgrade(&[])).unwrap();
        assert_eq!(
            out[header::SEC_WEBSOCKET_ACCEPT],
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert!(!out.contains_key(header::SEC_WEBSOCKET_PROTOCOL));
    }

    #[test]
    fn mcp_is_echoed_only_when_offered_exactly() {
        let echoed = |offer: &[&str]| {
            let extra: Vec<_> = offer
                .iter()
                .map(|o| ("sec-websocket-protocol", *o))
                .collect();
            answer(&Method::GET, &upgrade(&extra))
                .unwrap()
                .get(header::SEC_WEBSOCKET_PROTOCOL)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        assert_eq!(echoed(&["mcp"]).as_deref(), Some("mcp"));
        assert_eq!(echoed(&["mcp, x"]).as_deref(), Some("mcp"));
        assert_eq!(echoed(&["x", "mcp"]).as_deref(), Some("mcp"));
        assert_eq!(echoed(&["x"]), None);
        assert_eq!(echoed(&["MCP"]), None);
        assert_eq!(echoed(&["mcp.auth.token"]), None);
    }

    #[test]
    fn malformed_upgrades_are_refused() {
        let status = |method: Method, h: HeaderMap| answer(&method, &h).unwrap_err().0;
        assert_eq!(
            status(Method::POST, upgrade(&[])),
            StatusCode::METHOD_NOT_ALLOWED
        );
        let mut h = upgrade(&[]);
        h.remove(header::SEC_WEBSOCKET_KEY);
        assert_eq!(status(Method::GET, h), StatusCode::BAD_REQUEST);
        let mut h = upgrade(&[]);
        h.insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("8"));
        assert_eq!(status(Method::GET, h), StatusCode::UPGRADE_REQUIRED);
        let mut h = upgrade(&[]);
        h.insert(header::CONNECTION, HeaderValue::from_static("close"));
        assert_eq!(status(Method::GET, h), StatusCode::BAD_REQUEST);
        assert_eq!(
            status(Method::GET, upgrade(&[("sec-websocket-key", KEY)])),
            StatusCode::BAD_REQUEST
        );
    }

    fn switch(extra: &[(&str, &str)]) -> Result<(), Error> {
        let mut pairs = vec![
            ("upgrade", "websocket"),
            ("connection", "Upgrade"),
            ("sec-websocket-accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        ];
        pairs.extend_from_slice(extra);
        check_switch(&request(&pairs), KEY)
    }

    #[test]
    fn the_client_takes_mcp_or_no_subprotocol_and_nothing_else() {
        switch(&[]).unwrap();
        switch(&[("sec-websocket-protocol", "mcp")]).unwrap();
        let e = switch(&[("sec-websocket-protocol", "graphql-ws")]).unwrap_err();
        assert!(e.to_string().contains("`graphql-ws`"), "{e}");
        assert!(switch(&[("sec-websocket-protocol", "mcp, x")]).is_err());
        assert!(switch(&[("sec-websocket-extensions", "permessage-deflate")]).is_err());
        let mut wrong = request(&[
            ("upgrade", "websocket"),
            ("connection", "Upgrade"),
            ("sec-websocket-accept", "AAAAAAAAAAAAAAAAAAAAAAAAAAA="),
        ]);
        assert!(check_switch(&wrong, KEY).is_err());
        wrong.remove(header::UPGRADE);
        assert!(check_switch(&wrong, KEY).is_err());
    }

    #[test]
    fn refusals_name_their_status() {
        let e = refused(StatusCode::UNAUTHORIZED, b"{\"error\":\"no token\"}");
        assert_eq!(e.kind(), crate::ErrorKind::Auth);
        assert!(e.to_string().contains("401"), "{e}");
        let e = refused(StatusCode::NOT_FOUND, b"");
        assert_eq!(e.kind(), crate::ErrorKind::Protocol);
    }
}
