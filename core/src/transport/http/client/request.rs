//! One HTTP request to the server, with what every request carries: the configured headers,
//! the session id and protocol revision, a bearer token, and for a stateless (2026-07-28)
//! request the `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` mirrors of its body. A 401 (or a
//! 403 asking for more scope) runs the authorization provider and sends the request again,
//! and a pooled connection the server had already closed is retried once on a new one.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, Uri, header};
use http_body_util::Full;
use serde_json::Value;

use super::{Shared, headers};
use crate::{
    Error,
    auth::Challenge,
    protocol::{meta, methods, param_headers},
};

/// The headers a stateless (2026-07-28) request needs: its version, `Mcp-Method`, `Mcp-Name`
/// and the `Mcp-Param-*` mirrors of its arguments. (A session's version is added to every
/// request by `request`.)
pub(super) fn message_headers(shared: &Shared, message: &Value) -> HeaderMap {
    let mut h = HeaderMap::new();
    let params = message.get("params");
    let declared = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(meta::PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let (Some(version), Some(method)) = (declared, message.get("method").and_then(Value::as_str))
    else {
        return h;
    };
    // Values that cannot travel as plain ASCII go base64-encoded (SEP-2243).
    let mut set = |name: HeaderName, value: &str| {
        if let Ok(v) = HeaderValue::from_str(&param_headers::encode(value)) {
            h.insert(name, v);
        }
    };
    set(headers::MCP_PROTOCOL_VERSION, version);
    set(headers::MCP_METHOD, method);
    let Some(name) = param_headers::mcp_name_of(method, params) else {
        return h;
    };
    set(headers::MCP_NAME, name);
    if method == methods::TOOLS_CALL {
        let arguments = params.and_then(|p| p.get("arguments"));
        for (header, value) in shared
            .param_headers
            .headers_for(name, arguments.unwrap_or(&Value::Null))
        {
            if let (Ok(n), Ok(v)) = (HeaderName::try_from(header), HeaderValue::from_str(&value)) {
                h.insert(n, v);
            }
        }
    }
    h
}

/// How many times one request may send the user through authorization (a server that
/// keeps refusing must not loop us forever).
const MAX_AUTH_ROUNDS: usize = 3;

/// What one request is made of, besides what [`request`] adds to every request: the method,
/// the URL, and the session, body, headers and resumption point when it has them.
pub(super) struct Call<'a> {
    method: Method,
    uri: &'a Uri,
    session: Option<&'a str>,
    body: Option<Bytes>,
    headers: HeaderMap,
    last_event_id: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// A bodiless request (GET, DELETE).
    pub(super) fn new(method: Method, uri: &'a Uri) -> Self {
        Call {
            method,
            uri,
            session: None,
            body: None,
            headers: HeaderMap::new(),
            last_event_id: None,
        }
    }

    /// A POST of one JSON-RPC message (or batch).
    pub(super) fn post(uri: &'a Uri, body: Bytes) -> Self {
        Call {
            body: Some(body),
            ..Call::new(Method::POST, uri)
        }
    }

    /// In this session (`Mcp-Session-Id`).
    pub(super) fn session(mut self, session: Option<&'a str>) -> Self {
        self.session = session;
        self
    }

    /// With these headers as well.
    pub(super) fn headers(mut self, headers: HeaderMap) -> Self {
        self.headers = headers;
        self
    }

    /// Resuming a stream after this event (`Last-Event-ID`).
    pub(super) fn resume_from(mut self, last_event_id: Option<&'a str>) -> Self {
        self.last_event_id = last_event_id;
        self
    }
}

/// One HTTP request with the common headers; a 401 (or 403 `insufficient_scope`) goes to the
/// auth provider, and the request is sent again when it says so.
pub(super) async fn request(
    shared: &Shared,
    call: Call<'_>,
) -> Result<http::Response<hyper::body::Incoming>, Error> {
    let Some(auth) = &shared.options.auth else {
        let token = match &shared.options.token {
            Some(provider) => provider().await,
            None => None,
        };
        return request_once(shared, &call, token).await;
    };
    let mut rounds = 0;
    loop {
        let token = auth.token().await?;
        let response = request_once(shared, &call, token.clone()).await?;
        let status = response.status();
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let step_up = status == StatusCode::FORBIDDEN
            && challenge
                .as_deref()
                .and_then(crate::auth::BearerChallenge::parse)
                .is_some_and(|c| c.insufficient_scope());
        if !(status == StatusCode::UNAUTHORIZED || step_up) {
            return Ok(response);
        }
        if rounds == MAX_AUTH_ROUNDS {
            return Err(Error::Auth(format!(
                "the server still answers HTTP {status} after {MAX_AUTH_ROUNDS} authorizations"
            )));
        }
        rounds += 1;
        drop(response);
        auth.challenged(&Challenge {
            status: status.as_u16(),
            www_authenticate: challenge,
            server: shared.url.clone(),
            token,
        })
        .await?;
    }
}

/// One attempt at `call`, with `token` as the bearer.
async fn request_once(
    shared: &Shared,
    call: &Call<'_>,
    token: Option<String>,
) -> Result<http::Response<hyper::body::Incoming>, Error> {
    let (method, uri) = (&call.method, call.uri);
    let mut builder = Request::builder().method(method.clone()).uri(uri.clone());
    let h = builder
        .headers_mut()
        .ok_or_else(|| Error::InvalidArgument("bad request parts".into()))?;
    for (k, v) in &shared.options.headers {
        h.insert(k, v.clone());
    }
    h.extend(call.headers.clone());
    // Every request after the handshake names the revision (2025-06-18 on), GET and DELETE too.
    if !h.contains_key(headers::MCP_PROTOCOL_VERSION) {
        let version = shared.conn.lock().protocol_version.clone();
        if let Some(v) = version.and_then(|v| HeaderValue::from_str(&v).ok()) {
            h.insert(headers::MCP_PROTOCOL_VERSION, v);
        }
    }
    if *method == Method::POST {
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    } else {
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
    }
    if let Some(id) = call.session.and_then(|s| HeaderValue::from_str(s).ok()) {
        h.insert(headers::MCP_SESSION_ID, id);
    }
    if let Some(id) = call
        .last_event_id
        .and_then(|s| HeaderValue::from_str(s).ok())
    {
        h.insert(headers::LAST_EVENT_ID, id);
    }
    // The token goes to the MCP endpoint's own origin only (a legacy endpoint is checked to
    // be same-origin; redirects are never followed).
    if let Some(token) = token
        && let Ok(mut v) = HeaderValue::from_str(&format!("Bearer {token}"))
    {
        v.set_sensitive(true);
        h.insert(header::AUTHORIZATION, v);
    }
    let sent_headers = h.clone();
    let body = call.body.clone().unwrap_or_default();
    let req = builder
        .body(Full::new(body.clone()))
        .map_err(|e| Error::InvalidArgument(format!("could not build the HTTP request: {e}")))?;
    let failed = |e: hyper_util::client::legacy::Error| Error::ConnectionClosed {
        reason: format!("HTTP request to {uri} failed: {e}"),
        stderr: None,
    };
    match shared.http.request(req).await {
        Ok(r) => Ok(r),
        // A pooled keep-alive connection the server had already closed (a restart, an idle
        // timeout) fails before the server saw the request: send it once more on a new one.
        Err(e) if stale_connection(&e) => {
            let mut retry = Request::builder().method(method.clone()).uri(uri.clone());
            if let Some(h) = retry.headers_mut() {
                *h = sent_headers;
            }
            let req = retry.body(Full::new(body)).map_err(|e| {
                Error::InvalidArgument(format!("could not build the HTTP request: {e}"))
            })?;
            shared.http.request(req).await.map_err(failed)
        }
        Err(e) => Err(failed(e)),
    }
}

/// Whether a request failed because its pooled connection was already dead: closed before a
/// response began, or reset by the peer while the request was going out.
fn stale_connection(error: &hyper_util::client::legacy::Error) -> bool {
    use std::io::ErrorKind;
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(e) = source {
        if let Some(h) = e.downcast_ref::<hyper::Error>()
            && (h.is_canceled() || h.is_closed() || h.is_incomplete_message())
        {
            return true;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::BrokenPipe
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::TimedOut
            );
        }
        source = e.source();
    }
    false
}
