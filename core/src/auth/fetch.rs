//! The OAuth flow's own HTTP client: small capped requests to metadata, registration and
//! token endpoints, each target checked against the [`TargetPolicy`] first.
//!
//! It is separate from the MCP transport's client on purpose: it never carries the MCP
//! server's bearer token, it never follows a redirect to a target the policy refuses (each
//! hop is checked again, and addresses are checked at connect time), and it reads at most
//! [`MAX_BODY`] bytes of any answer. Each request has its own limit ([`REQUEST_TIMEOUT`]),
//! capped by what remains of the flow's deadline when there is one (a CLI's `--timeout`), so
//! a silent or trickling endpoint cannot stretch a login past it.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnectorBuilder;
use hyper_util::{
    client::legacy::{Client as HyperClient, connect::HttpConnector},
    rt::TokioExecutor,
};
use serde_json::Value;

use super::target::{GuardedResolver, TargetPolicy};
use crate::Error;

/// The largest metadata document or token response read.
pub(crate) const MAX_BODY: usize = 1 << 20;
/// How long one OAuth request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed for a metadata GET.
const MAX_REDIRECTS: usize = 3;

/// An answer, its body read.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub(crate) fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// The OAuth flow's HTTP client.
#[derive(Clone)]
pub(crate) struct AuthHttp {
    policy: TargetPolicy,
    tls: Arc<rustls::ClientConfig>,
    /// When the whole flow must be over (`None`: each request has [`REQUEST_TIMEOUT`]).
    deadline: Option<Instant>,
}

impl AuthHttp {
    pub(crate) fn new(policy: TargetPolicy, extra_roots: &[Vec<u8>]) -> Result<Self, Error> {
        Ok(AuthHttp {
            policy,
            tls: crate::transport::http::tls::client_config(extra_roots)?,
            deadline: None,
        })
    }

    /// Ends every request by `deadline` at the latest.
    pub(crate) fn with_deadline(mut self, deadline: Option<Instant>) -> Self {
        self.deadline = deadline;
        self
    }

    /// This request's limit: [`REQUEST_TIMEOUT`], or less when the deadline is nearer.
    fn limit(&self) -> Duration {
        match self.deadline {
            Some(d) => REQUEST_TIMEOUT.min(d.saturating_duration_since(Instant::now())),
            None => REQUEST_TIMEOUT,
        }
    }

    /// Sends one request; never follows a redirect.
    pub(crate) async fn send(
        &self,
        method: Method,
        uri: &Uri,
        headers: HeaderMap,
        body: Option<Bytes>,
    ) -> Result<Answer, Error> {
        self.policy.check_url(uri)?;
        let limit = self.limit();
        if limit.is_zero() {
            return Err(Error::Auth(format!(
                "the time for this authorization ran out before `{uri}` could be asked"
            )));
        }
        let mut connector = HttpConnector::new_with_resolver(GuardedResolver {
            policy: self.policy.clone(),
            allow_all: self.policy.is_allowed_origin(uri),
        });
        connector.enforce_http(false);
        connector.set_connect_timeout(Some(Duration::from_secs(10)));
        connector.set_nodelay(true);
        let connector = HttpsConnectorBuilder::new()
            .with_tls_config((*self.tls).clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        let client: HyperClient<_, Full<Bytes>> =
            HyperClient::builder(TokioExecutor::new()).build(connector);
        let mut builder = Request::builder().method(method).uri(uri.clone());
        if let Some(h) = builder.headers_mut() {
            *h = headers;
            h.entry(header::USER_AGENT)
                .or_insert(HeaderValue::from_static(concat!(
                    "oxmcp/",
                    env!("CARGO_PKG_VERSION")
                )));
        }
        let req = builder
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| Error::Auth(format!("could not build a request to `{uri}`: {e}")))?;
        let exchange = async {
            let response = client
                .request(req)
                .await
                .map_err(|e| Error::Auth(format!("request to `{uri}` failed: {}", chain(&e))))?;
            let (parts, body) = response.into_parts();
            let body = http_body_util::Limited::new(body, MAX_BODY)
                .collect()
                .await
                .map_err(|e| {
                    Error::Auth(format!(
                        "reading the answer of `{uri}` failed (cap {MAX_BODY} bytes): {e}"
                    ))
                })?
                .to_bytes();
            Ok(Answer {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(limit, exchange).await.map_err(|_| {
            Error::Auth(format!(
                "`{uri}` did not answer within {:.1} s{}",
                limit.as_secs_f64(),
                if limit < REQUEST_TIMEOUT {
                    " (the rest of the time allowed for this authorization)"
                } else {
                    ""
                }
            ))
        })?
    }

    /// GETs a JSON document, following a few redirects (each hop checked again). `Ok(None)`:
    /// the server has no such document (any 4xx), so the caller tries its next candidate.
    pub(crate) async fn get_json(&self, uri: &Uri) -> Result<Option<Value>, Error> {
        let mut at = uri.clone();
        for _ in 0..=MAX_REDIRECTS {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
            let answer = self.send(Method::GET, &at, h, None).await?;
            if answer.status.is_redirection() {
                let location = answer
                    .headers
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| Error::Auth(format!("`{at}` redirected without a Location")))?;
                at = resolve(&at, location)?;
                continue;
            }
            if answer.status.is_client_error() {
                return Ok(None);
            }
            if !answer.status.is_success() {
                return Err(Error::Auth(format!(
                    "`{at}` answered HTTP {}",
                    answer.status
                )));
            }
            return answer
                .json()
                .filter(Value::is_object)
                .map(Some)
                .ok_or_else(|| Error::Auth(format!("`{at}` did not answer with a JSON object")));
        }
        Err(Error::Auth(format!("`{uri}` redirected too many times")))
    }

    /// POSTs a form (`application/x-www-form-urlencoded`).
    pub(crate) async fn post_form(
        &self,
        uri: &Uri,
        form: &[(&str, &str)],
        mut headers: HeaderMap,
    ) -> Result<Answer, Error> {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        self.send(
            Method::POST,
            uri,
            headers,
            Some(Bytes::from(encode_form(form))),
        )
        .await
    }

    /// POSTs a JSON body.
    pub(crate) async fn post_json(&self, uri: &Uri, body: &Value) -> Result<Answer, Error> {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        let bytes = serde_json::to_vec(body).map_err(|e| Error::Auth(e.to_string()))?;
        self.send(Method::POST, uri, headers, Some(Bytes::from(bytes)))
            .await
    }
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

/// `application/x-www-form-urlencoded` (also the query string of an authorization URL).
pub(crate) fn encode_form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", form_escape(k), form_escape(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-encodes everything but the RFC 3986 unreserved characters.
pub(crate) fn form_escape(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, UNRESERVED).to_string()
}

const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Decodes a query string into pairs (`+` is a space, as in forms).
pub(crate) fn decode_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let d = |s: &str| {
                percent_encoding::percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (d(k), d(v))
        })
        .collect()
}

/// Resolves a reference (absolute, or absolute-path) against `base`.
pub(crate) fn resolve(base: &Uri, reference: &str) -> Result<Uri, Error> {
    let bad = |e: &dyn std::fmt::Display| Error::Auth(format!("bad URL `{reference}`: {e}"));
    if reference.starts_with('/') && !reference.starts_with("//") {
        let scheme = base.scheme_str().unwrap_or("https");
        let authority = base.authority().map(|a| a.as_str()).unwrap_or_default();
        return format!("{scheme}://{authority}{reference}")
            .parse()
            .map_err(|e| bad(&e));
    }
    let uri: Uri = reference.parse().map_err(|e| bad(&e))?;
    if uri.scheme().is_none() || uri.authority().is_none() {
        return Err(bad(&"not an absolute URL"));
    }
    Ok(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_round_trip() {
        let s = encode_form(&[("a b", "c&d=e"), ("x", "ü~")]);
        assert_eq!(s, "a%20b=c%26d%3De&x=%C3%BC~");
        assert_eq!(
            decode_query(&s),
            vec![("a b".into(), "c&d=e".into()), ("x".into(), "ü~".into())]
        );
        assert_eq!(
            decode_query("a=1+2&&b"),
            vec![("a".into(), "1 2".into()), ("b".into(), "".into())]
        );
    }

    #[test]
    fn references_resolve_against_their_base() {
        let base: Uri = "https://a.example/x/y".parse().unwrap();
        assert_eq!(
            resolve(&base, "/z").unwrap().to_string(),
            "https://a.example/z"
        );
        assert_eq!(
            resolve(&base, "https://b.example/q").unwrap().to_string(),
            "https://b.example/q"
        );
        assert!(resolve(&base, "//evil.example/q").is_err());
        assert!(resolve(&base, "relative").is_err());
    }
}
