//! Tokens and the token endpoint: exchanging a code, refreshing, client credentials, and
//! authenticating the client there (`client_secret_basic`, `client_secret_post`, `none`,
//! `private_key_jwt`).
//!
//! Secrets and tokens never reach a log: their `Debug` output is redacted, and errors quote
//! the server's `error` code and description, never the request.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::{Engine, engine::general_purpose::STANDARD};
use http::{HeaderMap, HeaderValue, Uri, header};
use serde::{Deserialize, Serialize};

use super::{
    challenge::split_scopes,
    fetch::{AuthHttp, form_escape},
    jwt::ClientAssertionKey,
};
use crate::Error;

/// Tokens from the token endpoint.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The bearer token for the MCP server.
    pub access_token: String,
    /// Exchanged for a new access token when this one expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (seconds since the Unix epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (or, when the server did not say, requested).
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl Tokens {
    /// Whether the access token is expired, or expires within `margin`.
    pub fn expires_within(&self, margin: Duration) -> bool {
        self.expires_at
            .is_some_and(|at| now_secs() + margin.as_secs() >= at)
    }
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// How the client proves who it is at the token endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenEndpointAuth {
    /// A public client: `client_id` in the body, no secret.
    None,
    /// HTTP Basic with the URL-encoded id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the body.
    ClientSecretPost,
    /// A signed JWT assertion (RFC 7523 §2.2).
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    /// The RFC 7591 name.
    pub fn as_str(&self) -> &'static str {
        match self {
            TokenEndpointAuth::None => "none",
            TokenEndpointAuth::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuth::ClientSecretPost => "client_secret_post",
            TokenEndpointAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// Reads an RFC 7591 name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "none" => TokenEndpointAuth::None,
            "client_secret_basic" => TokenEndpointAuth::ClientSecretBasic,
            "client_secret_post" => TokenEndpointAuth::ClientSecretPost,
            "private_key_jwt" => TokenEndpointAuth::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// A client's credentials at one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientCredentials {
    /// The client id (a URL for a client ID metadata document).
    pub client_id: String,
    /// The secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How to authenticate at the token endpoint (`None`: chosen from the server's metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<TokenEndpointAuth>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

impl ClientCredentials {
    /// A public client.
    pub fn public(client_id: impl Into<String>) -> Self {
        ClientCredentials {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: None,
        }
    }

    /// A confidential client.
    pub fn confidential(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        ClientCredentials {
            client_id: client_id.into(),
            client_secret: Some(secret.into()),
            auth_method: None,
        }
    }

    /// The method to use with a server supporting `supported` (RFC 8414's default when it
    /// does not say: `client_secret_basic`).
    pub(crate) fn method(&self, supported: Option<&[String]>, has_key: bool) -> TokenEndpointAuth {
        if let Some(m) = &self.auth_method {
            return m.clone();
        }
        let supports = |m: &str| supported.is_none_or(|s| s.iter().any(|x| x == m));
        if has_key && supports("private_key_jwt") {
            TokenEndpointAuth::PrivateKeyJwt
        } else if self.client_secret.is_none() {
            TokenEndpointAuth::None
        } else if supports("client_secret_basic") {
            TokenEndpointAuth::ClientSecretBasic
        } else if supports("client_secret_post") {
            TokenEndpointAuth::ClientSecretPost
        } else {
            TokenEndpointAuth::ClientSecretBasic
        }
    }
}

/// One token request.
pub(crate) struct TokenRequest<'a> {
    pub http: &'a AuthHttp,
    pub endpoint: &'a Uri,
    pub issuer: &'a str,
    pub client: &'a ClientCredentials,
    pub method: TokenEndpointAuth,
    pub key: Option<&'a ClientAssertionKey>,
    /// The grant's own parameters (`grant_type`, `code`, …).
    pub params: Vec<(&'a str, String)>,
    /// Scopes asked for (kept when the answer does not say what was granted).
    pub requested: &'a [String],
}

impl TokenRequest<'_> {
    pub(crate) async fn send(self) -> Result<Tokens, Error> {
        let mut form: Vec<(&str, String)> = self.params.clone();
        let mut headers = HeaderMap::new();
        match self.method {
            TokenEndpointAuth::None => form.push(("client_id", self.client.client_id.clone())),
            TokenEndpointAuth::ClientSecretPost => {
                form.push(("client_id", self.client.client_id.clone()));
                form.push((
                    "client_secret",
                    self.client.client_secret.clone().unwrap_or_default(),
                ));
            }
            TokenEndpointAuth::ClientSecretBasic => {
                let pair = format!(
                    "{}:{}",
                    form_escape(&self.client.client_id),
                    form_escape(self.client.client_secret.as_deref().unwrap_or_default())
                );
                let value = HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(pair)))
                    .map_err(|_| Error::Auth("client credentials unusable in a header".into()))?;
                headers.insert(header::AUTHORIZATION, value);
            }
            TokenEndpointAuth::PrivateKeyJwt => {
                let key = self.key.ok_or_else(|| {
                    Error::Auth("private_key_jwt needs a signing key in the OAuth options".into())
                })?;
                let assertion = key.assertion(&self.client.client_id, self.issuer)?;
                form.push(("client_id", self.client.client_id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
                ));
                form.push(("client_assertion", assertion));
            }
        }
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let answer = self.http.post_form(self.endpoint, &pairs, headers).await?;
        let body = answer.json().unwrap_or_default();
        if !answer.status.is_success() {
            let error = body
                .get("error")
                .and_then(|e| e.as_str())
                .map(str::to_owned);
            let description = body
                .get("error_description")
                .and_then(|e| e.as_str())
                .unwrap_or_default();
            return Err(Error::Auth(format!(
                "the token endpoint refused (HTTP {}): {} {}",
                answer.status,
                crate::sanitize::clean(error.as_deref().unwrap_or("no error code"), false, 100),
                crate::sanitize::clean(description, false, 200)
            )));
        }
        let access_token = body
            .get("access_token")
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty() && t.len() <= 16 * 1024)
            .ok_or_else(|| Error::Auth("the token response has no access_token".into()))?;
        // A token that cannot travel in a header would be dropped silently later.
        if HeaderValue::from_str(access_token).is_err() {
            return Err(Error::Auth(
                "the access token holds characters a header cannot carry".into(),
            ));
        }
        // RFC 6749 §5.1 makes `token_type` required; a token of another type (or of no
        // stated type) would be sent as a bearer token it is not, so nothing is kept.
        match body.get("token_type").and_then(|t| t.as_str()) {
            Some(t) if t.eq_ignore_ascii_case("bearer") => {}
            Some(t) => {
                return Err(Error::Auth(format!(
                    "the token endpoint issued a token of type `{}`; only Bearer tokens are \
                     supported, so it was not stored",
                    crate::sanitize::clean(t, false, 64)
                )));
            }
            None => {
                return Err(Error::Auth(
                    "the token response has no `token_type` (RFC 6749 §5.1 requires it; \
                     Bearer expected), so it was not stored"
                        .into(),
                ));
            }
        }
        let expires_at = body
            .get("expires_in")
            .and_then(|e| {
                e.as_u64()
                    .or_else(|| e.as_str().and_then(|s| s.parse().ok()))
            })
            .map(|secs| now_secs().saturating_add(secs));
        let granted = body.get("scope").and_then(|s| s.as_str());
        Ok(Tokens {
            access_token: access_token.to_owned(),
            refresh_token: body
                .get("refresh_token")
                .and_then(|t| t.as_str())
                .map(str::to_owned),
            expires_at,
            scopes: match granted {
                Some(s) => split_scopes(Some(s)),
                None => self.requested.to_vec(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_debug_output() {
        let t = Tokens {
            access_token: "AT-secret".into(),
            refresh_token: Some("RT-secret".into()),
            expires_at: Some(1),
            scopes: vec!["a".into()],
        };
        let c = ClientCredentials::confidential("id", "CS-secret");
        let shown = format!("{t:?} {c:?}");
        assert!(
            !shown.contains("secret\"")
                && !shown.contains("AT-")
                && !shown.contains("RT-")
                && !shown.contains("CS-"),
            "{shown}"
        );
        assert!(t.expires_within(Duration::ZERO));
    }

    #[test]
    fn the_auth_method_follows_the_server() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let conf = ClientCredentials::confidential("id", "s");
        assert_eq!(
            conf.method(None, false),
            TokenEndpointAuth::ClientSecretBasic
        );
        assert_eq!(
            conf.method(Some(&s(&["client_secret_post"])), false),
            TokenEndpointAuth::ClientSecretPost
        );
        assert_eq!(
            ClientCredentials::public("id").method(Some(&s(&["client_secret_basic"])), false),
            TokenEndpointAuth::None
        );
    }
}
