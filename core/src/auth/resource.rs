//! The resource-server side: an MCP server that accepts OAuth bearer tokens.
//!
//! [`ResourceServer`] publishes the protected-resource metadata (RFC 9728) at its well-known
//! path and checks the token of every request with a pluggable [`TokenVerifier`] (an
//! introspection call, a JWT check, a database lookup). Whatever the verifier says, the core
//! then checks what a verifier could forget: the token is not expired, it was minted for this
//! resource (its audience, RFC 8707), and it carries the required scopes. A refusal is a 401
//! (`invalid_token`) or a 403 (`insufficient_scope`) with the `WWW-Authenticate` header that
//! tells a client where the metadata is and which scopes to ask for. The HTTP server strips
//! the `Authorization` header once it is checked, so the client's token is never passed on.

use std::sync::Arc;

use futures::future::BoxFuture;
use http::{HeaderMap, StatusCode, header};

use super::{challenge::BearerChallenge, metadata::ProtectedResourceMetadata, token::now_secs};
use crate::Error;

/// What a verifier learned about a token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessClaims {
    /// Who the token stands for.
    pub subject: Option<String>,
    /// The client it was issued to.
    pub client_id: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The resources it is for (`aud`, or the `resource` it was requested with).
    pub audience: Vec<String>,
    /// When it expires (seconds since the Unix epoch).
    pub expires_at: Option<u64>,
}

/// Checks a bearer token; `Err` means it is not valid (unknown, revoked, bad signature).
pub trait TokenVerifier: Send + Sync {
    /// Verifies `token`.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessClaims, Error>>;
}

impl<F> TokenVerifier for F
where
    F: Fn(String) -> BoxFuture<'static, Result<AccessClaims, Error>> + Send + Sync,
{
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessClaims, Error>> {
        self(token.to_owned())
    }
}

/// A request the resource server refused.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// 401 or 403.
    pub status: StatusCode,
    /// The `WWW-Authenticate` value.
    pub www_authenticate: String,
    /// Why, for the body.
    pub message: String,
}

/// Protects an MCP endpoint with bearer tokens.
#[derive(Clone)]
pub struct ResourceServer {
    metadata: ProtectedResourceMetadata,
    metadata_url: String,
    metadata_path: String,
    required_scopes: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("metadata", &self.metadata)
            .field("required_scopes", &self.required_scopes)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// Protects the resource `metadata.resource` (the server's full MCP URL, say
    /// `https://mcp.example.com/mcp`); tokens must carry `required_scopes`.
    pub fn new(
        metadata: ProtectedResourceMetadata,
        required_scopes: Vec<String>,
        verifier: Arc<dyn TokenVerifier>,
    ) -> Result<Self, Error> {
        let uri: http::Uri = metadata.resource.parse().map_err(|e| {
            Error::InvalidArgument(format!("bad resource `{}`: {e}", metadata.resource))
        })?;
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Err(Error::InvalidArgument(format!(
                "the resource `{}` must be an absolute URL",
                metadata.resource
            )));
        };
        if metadata.authorization_servers.is_empty() {
            return Err(Error::InvalidArgument(
                "protected-resource metadata needs at least one authorization server".into(),
            ));
        }
        let path = uri.path().trim_end_matches('/');
        let metadata_path = format!("/.well-known/oauth-protected-resource{path}");
        Ok(ResourceServer {
            metadata_url: format!("{scheme}://{authority}{metadata_path}"),
            metadata_path,
            metadata,
            required_scopes,
            verifier,
        })
    }

    /// Where the metadata is served (a path on this server).
    pub fn metadata_path(&self) -> &str {
        &self.metadata_path
    }

    /// The metadata document.
    pub fn metadata_json(&self) -> Vec<u8> {
        serde_json::to_vec(&self.metadata).unwrap_or_default()
    }

    fn refuse(
        &self,
        status: StatusCode,
        error: Option<&str>,
        scopes: &[String],
        message: String,
    ) -> Refusal {
        let challenge = BearerChallenge {
            resource_metadata: Some(self.metadata_url.clone()),
            scope: (!scopes.is_empty()).then(|| scopes.join(" ")),
            error: error.map(str::to_owned),
            error_description: error.map(|_| message.clone()),
        };
        Refusal {
            status,
            www_authenticate: challenge.to_header(),
            message,
        }
    }

    /// Checks a request's token.
    pub async fn authorize(&self, headers: &HeaderMap) -> Result<AccessClaims, Refusal> {
        let values: Vec<_> = headers.get_all(header::AUTHORIZATION).iter().collect();
        let token = match values.as_slice() {
            [] => None,
            [one] => one.to_str().ok().and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then(|| token.trim())
                    .filter(|t| !t.is_empty())
            }),
            _ => {
                return Err(self.refuse(
                    StatusCode::BAD_REQUEST,
                    Some("invalid_request"),
                    &[],
                    "more than one Authorization header".into(),
                ));
            }
        };
        let Some(token) = token else {
            return Err(self.refuse(
                StatusCode::UNAUTHORIZED,
                None,
                &self.required_scopes,
                "a bearer token is required".into(),
            ));
        };
        let invalid = |why: String| {
            self.refuse(
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                &self.required_scopes,
                why,
            )
        };
        let claims = self
            .verifier
            .verify(token)
            .await
            .map_err(|e| invalid(format!("the token is not valid: {e}")))?;
        if claims.expires_at.is_some_and(|at| at <= now_secs()) {
            return Err(invalid("the token has expired".into()));
        }
        let ours = |aud: &String| {
            aud.trim_end_matches('/') == self.metadata.resource.trim_end_matches('/')
        };
        if !claims.audience.iter().any(ours) {
            return Err(invalid(format!(
                "the token was not issued for `{}`",
                self.metadata.resource
            )));
        }
        let missing: Vec<&String> = self
            .required_scopes
            .iter()
            .filter(|s| !claims.scopes.contains(s))
            .collect();
        if !missing.is_empty() {
            return Err(self.refuse(
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                &self.required_scopes,
                format!("the token lacks the scope(s) {missing:?}"),
            ));
        }
        Ok(claims)
    }
}
