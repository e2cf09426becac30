//! The user-facing step of the authorization code flow: an authorization URL goes out, a
//! redirect URL carrying the code comes back.
//!
//! What happens in between is the host's business (open a browser and listen on a loopback
//! port; print the URL and read the redirect back; follow the redirect headless in tests and
//! CLIs against a test server), so it is the pluggable [`Authorizer`]. What the flow does
//! around it lives here: PKCE S256 and `state` (RFC 7636, OAuth 2.1 §7.5), the safety check
//! of the URL before any host opens it (only http(s), no control characters, nothing that a
//! launcher could read as a command-line flag), and the checks of the redirect (our
//! `redirect_uri`, our `state`, the `iss` of RFC 9207).

use std::sync::Arc;

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use futures::future::BoxFuture;
use http::{HeaderMap, Method, Uri, header};
use sha2::{Digest, Sha256};

use super::fetch::{AuthHttp, decode_query, resolve};
use crate::Error;

/// Takes the user through authorization: gets the authorization URL, returns the URL the
/// authorization server redirected to (with `code` and `state`, or `error`).
pub trait Authorizer: Send + Sync {
    /// Runs the user step for `url` (already checked by [`check_authorization_url`]).
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, Error>>;
}

impl<F> Authorizer for F
where
    F: Fn(String) -> BoxFuture<'static, Result<String, Error>> + Send + Sync,
{
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, Error>> {
        self(url)
    }
}

/// Follows the authorization URL without a user: GETs it, follows redirects on the
/// authorization server, and returns the first redirect that points at `redirect_uri`. For
/// tests, the conformance client and CLIs talking to an authorization server that
/// auto-approves; every hop goes through the flow's [`crate::auth::TargetPolicy`].
#[derive(Clone)]
pub struct HeadlessAuthorizer {
    http: Arc<AuthHttp>,
    redirect_uri: String,
}

impl std::fmt::Debug for HeadlessAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadlessAuthorizer")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl HeadlessAuthorizer {
    pub(crate) fn new(http: Arc<AuthHttp>, redirect_uri: String) -> Self {
        HeadlessAuthorizer { http, redirect_uri }
    }
}

impl Authorizer for HeadlessAuthorizer {
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, Error>> {
        Box::pin(async move {
            let mut at: Uri = url
                .parse()
                .map_err(|e| Error::Auth(format!("bad authorization URL: {e}")))?;
            for _ in 0..5 {
                let answer = self
                    .http
                    .send(Method::GET, &at, HeaderMap::new(), None)
                    .await?;
                if !answer.status.is_redirection() {
                    return Err(Error::Auth(format!(
                        "the authorization endpoint answered HTTP {} instead of redirecting \
                         (headless authorization needs an auto-approving server)",
                        answer.status
                    )));
                }
                let location = answer
                    .headers
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| Error::Auth("a redirect without a Location".into()))?;
                if same_endpoint(location, &self.redirect_uri) {
                    return Ok(location.to_owned());
                }
                at = resolve(&at, location)?;
            }
            Err(Error::Auth(
                "the authorization server redirected too many times".into(),
            ))
        })
    }
}

/// Whether `url` is the redirect URI (same scheme, authority and path; any query).
fn same_endpoint(url: &str, redirect_uri: &str) -> bool {
    let strip = |s: &str| s.split(['?', '#']).next().unwrap_or_default().to_owned();
    strip(url).eq_ignore_ascii_case(&strip(redirect_uri))
}

/// Refuses an authorization URL a host should not open: a scheme other than http(s) (a
/// `file:`, `javascript:` or custom-handler URL), control characters (CR/LF smuggle headers
/// or a second command), a leading `-` (read as a flag by `open`/`xdg-open`-style launchers),
/// whitespace or quotes, or no host. Hosts open it with an argument vector, never a shell.
pub fn check_authorization_url(url: &str) -> Result<Uri, Error> {
    if url.starts_with('-') {
        return Err(Error::Auth(
            "the authorization URL looks like a command-line flag".into(),
        ));
    }
    if url
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '\\'))
    {
        return Err(Error::Auth(
            "the authorization URL holds control characters, whitespace or quotes".into(),
        ));
    }
    let uri: Uri = url
        .parse()
        .map_err(|e| Error::Auth(format!("bad authorization URL: {e}")))?;
    match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
        Some("https" | "http") => {}
        other => {
            return Err(Error::Auth(format!(
                "refusing an authorization URL with scheme `{}` (http or https only)",
                other.unwrap_or("none")
            )));
        }
    }
    match uri.host() {
        Some(h) if !h.is_empty() && !h.starts_with('-') => Ok(uri),
        _ => Err(Error::Auth(
            "the authorization URL has no usable host".into(),
        )),
    }
}

/// A PKCE pair (RFC 7636): the verifier stays here, the S256 challenge goes out.
pub(crate) struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    pub(crate) fn new() -> Self {
        let mut bytes = [0u8; 32];
        crate::random::fill(&mut bytes);
        let verifier = URL_SAFE_NO_PAD.encode(bytes);
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        Pkce {
            verifier,
            challenge,
        }
    }
}

/// What the redirect carried.
#[derive(Debug)]
pub(crate) struct Callback {
    pub code: String,
}

/// Checks the redirect: ours, our `state`, no `error`, a code, and an `iss` that is the
/// issuer whenever it is present or promised (RFC 9207 §2.4, simple string comparison).
pub(crate) fn read_callback(
    redirect: &str,
    redirect_uri: &str,
    state: &str,
    issuer: &str,
    iss_promised: bool,
) -> Result<Callback, Error> {
    if !same_endpoint(redirect, redirect_uri) {
        return Err(Error::Auth(
            "the authorization response did not come back to our redirect URI".into(),
        ));
    }
    let query = redirect
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or_default())
        .unwrap_or_default();
    let params = decode_query(query);
    let get = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    // iss first: a response from the wrong server is refused whatever else it says (the
    // mix-up attack of RFC 9207).
    match get("iss") {
        Some(iss) if iss != issuer => {
            return Err(Error::Auth(format!(
                "the authorization response came from `{iss}`, not the issuer `{issuer}` \
                 (RFC 9207)"
            )));
        }
        None if iss_promised => {
            return Err(Error::Auth(
                "the authorization server promised an `iss` parameter but sent none (RFC 9207)"
                    .into(),
            ));
        }
        _ => {}
    }
    if get("state").as_deref() != Some(state) {
        return Err(Error::Auth(
            "the authorization response's state does not match (a forged or replayed response)"
                .into(),
        ));
    }
    if let Some(error) = get("error") {
        let description = get("error_description").unwrap_or_default();
        return Err(Error::Auth(format!(
            "the authorization server refused: {} {}",
            crate::sanitize::clean(&error, false, 100),
            crate::sanitize::clean(&description, false, 200)
        )));
    }
    let code = get("code")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| Error::Auth("the authorization response carried no code".into()))?;
    Ok(Callback { code })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_authorization_urls_are_refused() {
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "-oProxyCommand=calc",
            "--help",
            "https://a.example/authorize\r\nX: 1",
            "https://a.example/authorize?x=1\n",
            "https://a.example/authorize?x=1;rm -rf /",
            "https://a.example/a\"b",
            "ms-settings:privacy",
            "ssh://a.example",
            "http:///nohost",
            "",
        ] {
            assert!(check_authorization_url(bad).is_err(), "{bad:?} accepted");
        }
        assert!(check_authorization_url("https://a.example/authorize?a=1&b=%20").is_ok());
        assert!(check_authorization_url("http://127.0.0.1:8/authorize").is_ok());
    }

    #[test]
    fn pkce_challenge_is_s256_of_the_verifier() {
        let p = Pkce::new();
        assert_eq!(p.verifier.len(), 43);
        assert_eq!(
            p.challenge,
            URL_SAFE_NO_PAD.encode(Sha256::digest(p.verifier.as_bytes()))
        );
        assert_ne!(Pkce::new().verifier, p.verifier);
    }

    #[test]
    fn callbacks_are_checked() {
        let cb = "http://localhost:3000/callback";
        let ok = read_callback(
            &format!("{cb}?code=c1&state=s1&iss=https%3A%2F%2Fa"),
            cb,
            "s1",
            "https://a",
            true,
        );
        assert_eq!(ok.unwrap().code, "c1");
        // iss absent and not promised: fine.
        assert!(
            read_callback(&format!("{cb}?code=c&state=s"), cb, "s", "https://a", false).is_ok()
        );
        for (url, promised) in [
            (format!("{cb}?code=c&state=s"), true),
            (format!("{cb}?code=c&state=s&iss=https%3A%2F%2Fevil"), false),
            (format!("{cb}?code=c&state=s&iss=https%3A%2F%2Fa%2F"), false),
            (format!("{cb}?code=c&state=other"), false),
            (format!("{cb}?code=c"), false),
            (format!("{cb}?state=s"), false),
            (format!("{cb}?error=access_denied&state=s"), false),
            (
                "http://evil.example/callback?code=c&state=s".to_owned(),
                false,
            ),
        ] {
            assert!(
                read_callback(&url, cb, "s", "https://a", promised).is_err(),
                "{url}"
            );
        }
    }
}
