//! DNS-rebinding protection: the `Host` and `Origin` of every request are checked against an
//! allowlist before anything else is read, and a mismatch is answered `403 Forbidden`.
//!
//! A page on `evil.example` whose name resolves to 127.0.0.1 can make a browser send requests
//! to a local server; such requests carry `Host: evil.example` and an `Origin` of that page.
//! Matching is exact on the host name (case-insensitive, port ignored): no suffix or prefix
//! matching, no trailing-dot normalisation, no numeric-address parsing, so `localhost.`,
//! `localhost.evil.com`, `127.0.0.1.nip.io`, `2130706433`, `0177.0.0.1` and
//! `[::ffff:127.0.0.1]` are all refused unless listed verbatim.

use http::{HeaderMap, StatusCode, header};

/// The host names a loopback server accepts by default.
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 400 for a malformed header, 403 for a disallowed one.
    pub status: StatusCode,
    /// What was wrong.
    pub reason: String,
}

/// The allowlist of one server.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// `None`: any well-formed host (a network server that authenticates every request).
    hosts: Option<Vec<String>>,
    origins: Option<Vec<String>>,
}

impl HostPolicy {
    /// Hosts (names without port) and, optionally, full origins (`https://app.example`). When
    /// `origins` is `None`, an `Origin` is allowed if its host is an allowed host.
    pub fn new(hosts: impl IntoIterator<Item = String>, origins: Option<Vec<String>>) -> Self {
        HostPolicy {
            hosts: Some(hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect()),
            origins: origins.map(|o| {
                o.into_iter()
                    .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                    .collect()
            }),
        }
    }

    /// The loopback-only default.
    pub fn loopback() -> Self {
        HostPolicy::new(LOOPBACK_HOSTS.iter().map(|s| (*s).to_owned()), None)
    }

    /// Any host name, for a server reachable from the network that authenticates every
    /// request (rebinding gains an attacker nothing without credentials). An `Origin` must
    /// then be one of `origins`, or name the same host as `Host`.
    pub fn any_host(origins: Option<Vec<String>>) -> Self {
        HostPolicy {
            hosts: None,
            ..HostPolicy::new([], origins)
        }
    }

    fn host_allowed(&self, name: &str) -> bool {
        self.hosts
            .as_ref()
            .is_none_or(|hosts| hosts.iter().any(|h| h.eq_ignore_ascii_case(name)))
    }

    /// Checks a request: an absolute-form target's authority (which RFC 9112 §3.2.2 makes
    /// the host, whatever `Host` says), then the `Host` and `Origin` headers.
    pub fn check_request(&self, uri: &http::Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        if let Some(authority) = uri.authority() {
            let name =
                host_name(authority.as_str()).ok_or_else(|| bad("malformed request target"))?;
            if !self.host_allowed(name) {
                return Err(forbidden(format!(
                    "request target host `{authority}` is not allowed"
                )));
            }
        }
        self.check(headers)
    }

    /// Checks the `Host` and `Origin` headers.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let hosts: Vec<_> = headers.get_all(header::HOST).iter().collect();
        let host = match hosts.as_slice() {
            [] => return Err(bad("missing Host header")),
            [one] => one
                .to_str()
                .map_err(|_| bad("Host header is not visible ASCII"))?,
            _ => return Err(bad("more than one Host header")),
        };
        let name = host_name(host).ok_or_else(|| bad("malformed Host header"))?;
        if !self.host_allowed(name) {
            return Err(forbidden(format!("Host `{host}` is not allowed")));
        }
        let origins: Vec<_> = headers.get_all(header::ORIGIN).iter().collect();
        let origin = match origins.as_slice() {
            [] => return Ok(()),
            [one] => one
                .to_str()
                .map_err(|_| bad("Origin header is not visible ASCII"))?,
            _ => return Err(bad("more than one Origin header")),
        };
        if self.origin_allowed(origin, name) {
            Ok(())
        } else {
            Err(forbidden(format!("Origin `{origin}` is not allowed")))
        }
    }

    fn origin_allowed(&self, origin: &str, request_host: &str) -> bool {
        let origin = origin.trim();
        if let Some(list) = &self.origins {
            return list
                .iter()
                .any(|o| o.eq_ignore_ascii_case(origin.trim_end_matches('/')));
        }
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            // `null`, `file://`, and anything else that is not an http(s) origin.
            return false;
        };
        if rest.contains('/') || rest.contains('@') || rest.is_empty() {
            return false;
        }
        host_name(rest).is_some_and(|name| match &self.hosts {
            Some(hosts) => hosts.iter().any(|h| h.eq_ignore_ascii_case(name)),
            None => name.eq_ignore_ascii_case(request_host),
        })
    }
}

/// The host name of `host[:port]`, keeping IPv6 brackets; `None` if malformed.
fn host_name(authority: &str) -> Option<&str> {
    let authority = authority.trim();
    if authority.is_empty() || authority.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return None;
    }
    let (name, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        // Only a port may follow the bracket: `[::1]evil.example` is malformed.
        let port = match &authority[end + 1..] {
            "" => None,
            rest => Some(rest.strip_prefix(':')?),
        };
        (&authority[..=end], port)
    } else {
        match authority.rsplit_once(':') {
            Some((n, p)) if !n.contains(':') => (n, Some(p)),
            Some(_) => return None,
            None => (authority, None),
        }
    };
    if let Some(port) = port
        && (port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    (!name.is_empty()).then_some(name)
}

fn bad(reason: &str) -> Refusal {
    Refusal {
        status: StatusCode::BAD_REQUEST,
        reason: reason.to_owned(),
    }
}

fn forbidden(reason: String) -> Refusal {
    Refusal {
        status: StatusCode::FORBIDDEN,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn check(host: &[&[u8]], origin: &[&[u8]]) -> Result<(), StatusCode> {
        let mut h = HeaderMap::new();
        for v in host {
            h.append(header::HOST, HeaderValue::from_bytes(v).unwrap());
        }
        for v in origin {
            h.append(header::ORIGIN, HeaderValue::from_bytes(v).unwrap());
        }
        HostPolicy::loopback().check(&h).map_err(|r| r.status)
    }

    #[test]
    fn loopback_names_pass() {
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:3000",
            "LOCALHOST",
        ] {
            assert_eq!(check(&[host.as_bytes()], &[]), Ok(()), "{host}");
        }
        assert_eq!(
            check(&[b"localhost:1"], &[b"http://localhost:5173"]),
            Ok(())
        );
        assert_eq!(check(&[b"127.0.0.1:1"], &[b"https://127.0.0.1"]), Ok(()));
    }

    #[test]
    fn only_a_port_may_follow_an_ipv6_bracket() {
        for host in ["[::1]evil.example", "[::1]x:80", "[::1]:", "[::1]:80x"] {
            assert_eq!(
                check(&[host.as_bytes()], &[]),
                Err(StatusCode::BAD_REQUEST),
                "{host}"
            );
        }
    }

    #[test]
    fn an_absolute_form_target_is_checked_as_the_host() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("localhost"));
        let policy = HostPolicy::loopback();
        let evil: http::Uri = "http://evil.example/mcp".parse().unwrap();
        let fine: http::Uri = "http://127.0.0.1:9/mcp".parse().unwrap();
        let origin_form: http::Uri = "/mcp".parse().unwrap();
        assert_eq!(
            policy.check_request(&evil, &h).map_err(|r| r.status),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(policy.check_request(&fine, &h), Ok(()));
        assert_eq!(policy.check_request(&origin_form, &h), Ok(()));
    }

    #[test]
    fn any_host_still_wants_a_same_host_origin() {
        let policy = HostPolicy::any_host(None);
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("mcp.example:8080"));
        assert_eq!(policy.check(&h), Ok(()));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://mcp.example"),
        );
        assert_eq!(policy.check(&h), Ok(()));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        assert_eq!(
            policy.check(&h).map_err(|r| r.status),
            Err(StatusCode::FORBIDDEN)
        );
    }
}
