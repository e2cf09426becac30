//! Who may talk to the inspector: the checks every request passes before anything is served.
//!
//! A local inspector is a web server that can start processes, so any page the user visits is
//! a would-be client (CVE-2025-49596: an unauthenticated proxy that spawned commands on a
//! cross-site request; DNS rebinding to reach it by another name). The defence, in order:
//!
//! 1. `Host` must name the inspector itself (`127.0.0.1:PORT` or `localhost:PORT`): a
//!    rebinding page reaches us under its own name and is refused on every route, `/`
//!    included, before anything is read.
//! 2. A present `Origin` must be ours, and `Sec-Fetch-Site` (sent by browsers) must not say
//!    `cross-site` or `same-site`: other pages, preflights included, get 403.
//! 3. A state-changing request (`POST`) must carry our `Origin`: a browser always sends one,
//!    so its absence means a form or a tool that bypasses the browser's rules.
//! 4. The session token, fresh per launch (256 random bits), compared in constant time: in
//!    the page URL (`?token=`, read once, then taken out of the address bar) and in the
//!    `X-Oxmcp-Token` header of every API call. No cookie, so no ambient authority.
//!
//! There is no CORS at all: no `Access-Control-Allow-*` header is ever sent.

use http::{HeaderMap, Method, StatusCode, header};

/// The header the page sends its token in.
pub(crate) const TOKEN_HEADER: &str = "x-oxmcp-token";

/// The session token of one launch.
#[derive(Clone)]
pub(crate) struct Token(String);

impl Token {
    /// A fresh token: 32 random bytes, base64url (43 characters).
    pub(crate) fn generate() -> Token {
        let mut bytes = [0u8; 32];
        crate::random::fill(&mut bytes);
        use base64::Engine;
        Token(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The token's text, for the URL printed on stdout.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `given` is the token, in time that does not depend on where they differ.
    pub(crate) fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        // The length is not secret (always 43); every byte is compared when it matches.
        if a.len() != b.len() {
            return false;
        }
        a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// Why a request was refused: its status and a short reason (no server data).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) reason: &'static str,
}

const fn refuse(status: StatusCode, reason: &'static str) -> Refusal {
    Refusal { status, reason }
}

/// The names and origins the inspector answers to, for the port it listens on.
#[derive(Clone, Debug)]
pub(crate) struct Guard {
    token: Token,
    hosts: [String; 2],
    origins: [String; 2],
}

impl Guard {
    pub(crate) fn new(token: Token, port: u16) -> Guard {
        Guard {
            token,
            hosts: [format!("127.0.0.1:{port}"), format!("localhost:{port}")],
            origins: [
                format!("http://127.0.0.1:{port}"),
                format!("http://localhost:{port}"),
            ],
        }
    }

    pub(crate) fn token(&self) -> &Token {
        &self.token
    }

    /// Checks one request's head: `query` is the URI's query string (the page's token).
    pub(crate) fn check(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<(), Refusal> {
        let one = |name: header::HeaderName| -> Result<Option<&str>, Refusal> {
            let mut all = headers.get_all(name).iter();
            match (all.next(), all.next()) {
                (None, _) => Ok(None),
                (Some(v), None) => v
                    .to_str()
                    .map(Some)
                    .map_err(|_| refuse(StatusCode::BAD_REQUEST, "a header is not text")),
                (Some(_), Some(_)) => Err(refuse(StatusCode::BAD_REQUEST, "a header is repeated")),
            }
        };
        let host = one(header::HOST)?;
        if !host.is_some_and(|h| self.hosts.iter().any(|ours| ours.eq_ignore_ascii_case(h))) {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "this Host is not the inspector's",
            ));
        }
        let origin = one(header::ORIGIN)?;
        if let Some(o) = origin
            && !self.origins.iter().any(|ours| ours.eq_ignore_ascii_case(o))
        {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "requests from other origins are refused",
            ));
        }
        if let Some(site) = one(header::HeaderName::from_static("sec-fetch-site"))?
            && (site == "cross-site" || site == "same-site")
        {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "requests from other sites are refused",
            ));
        }
        if method != Method::GET && method != Method::POST {
            // Preflights included: there is no CORS to negotiate.
            return Err(refuse(StatusCode::METHOD_NOT_ALLOWED, "only GET and POST"));
        }
        if method == Method::POST && origin.is_none() {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "a POST must carry the inspector's Origin",
            ));
        }
        let given = if path.starts_with("/api/") {
            one(header::HeaderName::from_static(TOKEN_HEADER))?
        } else {
            query.and_then(token_param)
        };
        match given {
            Some(t) if self.token.matches(t) => Ok(()),
            Some(_) => Err(refuse(StatusCode::UNAUTHORIZED, "wrong token")),
            None => Err(refuse(
                StatusCode::UNAUTHORIZED,
                "no token: open the URL that `oxmcp inspect` printed",
            )),
        }
    }
}

/// The `token` parameter of a query string (base64url needs no decoding).
fn token_param(query: &str) -> Option<&str> {
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    fn guard() -> (Guard, String) {
        let token = Token::generate();
        let t = token.as_str().to_owned();
        (Guard::new(token, 4000), t)
    }

    #[test]
    fn tokens_are_fresh_and_long() {
        let a = Token::generate();
        let b = Token::generate();
        assert_eq!(a.as_str().len(), 43);
        assert_ne!(a.as_str(), b.as_str());
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(b.as_str()));
        assert!(!a.matches(""));
        assert!(!a.matches(&a.as_str()[..42]));
        assert!(!a.matches(&format!("{}x", a.as_str())));
        assert_eq!(format!("{a:?}"), "Token(…)");
    }

    #[test]
    fn the_page_needs_the_token_in_its_url() {
        let (g, t) = guard();
        let h = headers(&[("host", "127.0.0.1:4000")]);
        let q = format!("token={t}");
        assert!(g.check(&Method::GET, "/", Some(&q), &h).is_ok());
        let localhost = headers(&[("host", "localhost:4000")]);
        assert!(g.check(&Method::GET, "/", Some(&q), &localhost).is_ok());
        let no = g.check(&Method::GET, "/", None, &h).unwrap_err();
        assert_eq!(no.status, StatusCode::UNAUTHORIZED);
        let wrong = g
            .check(&Method::GET, "/", Some("token=abc"), &h)
            .unwrap_err();
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
        // The page's token does not open the API: that needs the header.
        let api = g
            .check(&Method::GET, "/api/state", Some(&q), &h)
            .unwrap_err();
        assert_eq!(api.status, StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn the_api_needs_the_token_header() {
        let (g, t) = guard();
        let ok = headers(&[("host", "127.0.0.1:4000"), (TOKEN_HEADER, &t)]);
        assert!(g.check(&Method::GET, "/api/state", None, &ok).is_ok());
        let bad = headers(&[("host", "127.0.0.1:4000"), (TOKEN_HEADER, "nope")]);
        assert_eq!(
            g.check(&Method::GET, "/api/state", None, &bad)
                .unwrap_err()
                .status,
            StatusCode::UNAUTHORIZED
        );
        let twice = headers(&[
            ("host", "127.0.0.1:4000"),
            (TOKEN_HEADER, &t),
            (TOKEN_HEADER, &t),
        ]);
        assert_eq!(
            g.check(&Method::GET, "/api/state", None, &twice)
                .unwrap_err()
                .status,
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn other_hosts_are_refused_before_the_token_is_looked_at() {
        let (g, t) = guard();
        let q = format!("token={t}");
        for host in [
            "evil.example:4000",
            "127.0.0.1:4001",
            "127.0.0.1",
            "0.0.0.0:4000",
        ] {
            let h = headers(&[("host", host), (TOKEN_HEADER, &t)]);
            assert_eq!(
                g.check(&Method::GET, "/", Some(&q), &h).unwrap_err().status,
                StatusCode::FORBIDDEN,
                "{host}"
            );
            assert_eq!(
                g.check(&Method::GET, "/api/state", None, &h)
                    .unwrap_err()
                    .status,
                StatusCode::FORBIDDEN,
                "{host}"
            );
        }
        let none = headers(&[(TOKEN_HEADER, &t)]);
        assert_eq!(
            g.check(&Method::GET, "/api/state", None, &none)
                .unwrap_err()
                .status,
            StatusCode::FORBIDDEN
        );
    }

    #[test]
    fn other_origins_and_sites_are_refused_even_with_the_token() {
        let (g, t) = guard();
        for (k, v) in [
            ("origin", "http://evil.example"),
            ("origin", "http://127.0.0.1:4001"),
            ("origin", "null"),
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-site", "same-site"),
        ] {
            let h = headers(&[("host", "127.0.0.1:4000"), (TOKEN_HEADER, &t), (k, v)]);
            assert_eq!(
                g.check(&Method::POST, "/api/call", None, &h)
                    .unwrap_err()
                    .status,
                StatusCode::FORBIDDEN,
                "{k}: {v}"
            );
        }
        let preflight = headers(&[
            ("host", "127.0.0.1:4000"),
            ("origin", "http://evil.example"),
        ]);
        assert_eq!(
            g.check(&Method::OPTIONS, "/api/call", None, &preflight)
                .unwrap_err()
                .status,
            StatusCode::FORBIDDEN
        );
    }

    #[test]
    fn a_post_needs_our_origin() {
        let (g, t) = guard();
        let bare = headers(&[("host", "127.0.0.1:4000"), (TOKEN_HEADER, &t)]);
        assert_eq!(
            g.check(&Method::POST, "/api/call", None, &bare)
                .unwrap_err()
                .status,
            StatusCode::FORBIDDEN
        );
        let ours = headers(&[
            ("host", "127.0.0.1:4000"),
            (TOKEN_HEADER, &t),
            ("origin", "http://127.0.0.1:4000"),
            ("sec-fetch-site", "same-origin"),
        ]);
        assert!(g.check(&Method::POST, "/api/call", None, &ours).is_ok());
        let no_token = headers(&[
            ("host", "127.0.0.1:4000"),
            ("origin", "http://127.0.0.1:4000"),
        ]);
        assert_eq!(
            g.check(&Method::POST, "/api/call", None, &no_token)
                .unwrap_err()
                .status,
            StatusCode::UNAUTHORIZED
        );
    }
}
