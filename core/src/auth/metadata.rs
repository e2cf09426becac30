//! Discovery: protected-resource metadata (RFC 9728) and authorization-server metadata
//! (RFC 8414, OpenID Connect Discovery), fetched in the order the MCP authorization spec
//! gives, and checked before anything in them is used.
//!
//! - Protected resource: the `resource_metadata` URL of the challenge, else
//!   `/.well-known/oauth-protected-resource{path}`, else the same at the root. Its `resource`
//!   must be the server we talk to (same origin, our path under its path), or a hostile server
//!   could collect tokens minted for another resource.
//! - Authorization server with a path: `/.well-known/oauth-authorization-server{path}`,
//!   `/.well-known/openid-configuration{path}`, `{path}/.well-known/openid-configuration`;
//!   without one: the two well-known names at the root. The document's `issuer` must be the
//!   issuer we derived the URL from (RFC 8414 §3.3, OpenID Connect Discovery §4.3), compared
//!   as strings, on every path: the 2025-03-26 one below included.
//! - 2025-03-26 servers publish no protected-resource metadata: the MCP server's origin hosts
//!   the authorization server's metadata, and without it the endpoints default to
//!   `/authorize`, `/token` and `/register` there. No issuer was named to the client on this
//!   path, so the one it checks against is the origin the URL was built from: the document's
//!   `issuer` must be on that origin (scheme, host and port), with a path or without. The
//!   official conformance suite's back-compat server names `{origin}/oauth`, which is honest;
//!   `https://evil.example` is not, and is refused before anything is registered.

use http::Uri;
use serde::{Deserialize, Serialize};

use super::fetch::{AuthHttp, resolve};
use crate::Error;

/// Protected-resource metadata (RFC 9728 §2), the fields the flow uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource's identifier (its canonical URL).
    pub resource: String,
    /// Issuers of the authorization servers that mint tokens for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource understands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How tokens may be presented (`header`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
}

/// Authorization-server metadata (RFC 8414 §2), the fields the flow uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    #[serde(default)]
    pub issuer: String,
    /// Where the user authorizes.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where codes and refresh tokens are exchanged.
    #[serde(default)]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591).
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// Scopes the server can grant.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Grants it supports.
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods (`S256`).
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client authentication at the token endpoint.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Accepts URL client ids backed by a client ID metadata document.
    #[serde(default)]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Sends `iss` with the authorization response (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: Option<bool>,
}

/// What discovery found for one MCP server.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// The protected-resource metadata (`None`: a 2025-03-26 server).
    pub resource: Option<ProtectedResourceMetadata>,
    /// The issuer the flow talks to.
    pub issuer: String,
    /// Its metadata (defaults for a 2025-03-26 server that publishes none).
    pub server: AuthorizationServerMetadata,
    /// The `resource` parameter for authorization and token requests (RFC 8707).
    pub resource_indicator: String,
}

/// The candidate URLs for protected-resource metadata of `server` (RFC 9728 §3.1).
pub fn resource_metadata_urls(server: &Uri) -> Vec<String> {
    let base = origin_of(server);
    let path = server.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!("{base}/.well-known/oauth-protected-resource{path}"));
    }
    urls.push(format!("{base}/.well-known/oauth-protected-resource"));
    urls
}

/// The candidate URLs for the metadata of `issuer`, in the spec's order.
pub fn authorization_server_metadata_urls(issuer: &Uri) -> Vec<String> {
    let base = origin_of(issuer);
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{base}/.well-known/oauth-authorization-server"),
            format!("{base}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{base}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration{path}"),
            format!("{base}{path}/.well-known/openid-configuration"),
        ]
    }
}

fn origin_of(uri: &Uri) -> String {
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map(|a| a.as_str()).unwrap_or_default()
    )
}

/// The canonical URI of an MCP server: lower-case scheme and host, no query or fragment
/// (MCP authorization, "Canonical Server URI").
pub fn canonical_resource(server: &Uri) -> String {
    let path = server.path();
    let path = if path == "/" { "" } else { path };
    format!("{}{}", origin_of(server).to_ascii_lowercase(), path)
}

/// Whether protected-resource metadata naming `resource` may be used for `server`: the
/// same origin, and the server's path equal to or under the resource's path.
pub fn resource_matches(resource: &str, server: &Uri) -> bool {
    let Ok(r) = resource.parse::<Uri>() else {
        return false;
    };
    if !origin_of(&r).eq_ignore_ascii_case(&origin_of(server)) || r.scheme().is_none() {
        return false;
    }
    let want = r.path().trim_end_matches('/');
    let have = server.path().trim_end_matches('/');
    want.is_empty() || have == want || have.starts_with(&format!("{want}/"))
}

/// Runs discovery for `server`, starting from the challenge's `resource_metadata` if any.
pub(crate) async fn discover(
    http: &AuthHttp,
    server: &Uri,
    resource_metadata: Option<&str>,
) -> Result<Discovery, Error> {
    let mut candidates = Vec::new();
    if let Some(url) = resource_metadata {
        candidates.push(resolve(server, url)?);
    }
    for url in resource_metadata_urls(server) {
        candidates.push(resolve(server, &url)?);
    }
    let mut prm = None;
    for url in &candidates {
        if let Some(doc) = http.get_json(url).await? {
            let parsed: ProtectedResourceMetadata = serde_json::from_value(doc).map_err(|e| {
                Error::Auth(format!("bad protected-resource metadata at `{url}`: {e}"))
            })?;
            prm = Some(parsed);
            break;
        }
    }
    let Some(prm) = prm else {
        return discover_legacy(http, server).await;
    };
    if !resource_matches(&prm.resource, server) {
        return Err(Error::Auth(format!(
            "the protected-resource metadata names `{}`, not this server `{server}`: refusing to \
             authorize for another resource",
            prm.resource
        )));
    }
    let issuer = prm.authorization_servers.first().cloned().ok_or_else(|| {
        Error::Auth("the protected-resource metadata names no authorization server".into())
    })?;
    let issuer_uri: Uri = issuer
        .parse()
        .map_err(|e| Error::Auth(format!("bad authorization server `{issuer}`: {e}")))?;
    let metadata = fetch_server_metadata(http, Expected::Issuer(&issuer), &issuer_uri)
        .await?
        .ok_or_else(|| {
            Error::Auth(format!(
                "authorization server `{issuer}` publishes no metadata"
            ))
        })?;
    Ok(Discovery {
        resource_indicator: prm.resource.clone(),
        resource: Some(prm),
        issuer,
        server: metadata,
    })
}

/// The first metadata document found for `issuer`, whose own `issuer` must be `issuer`
/// exactly: RFC 8414 §3.3 for the OAuth well-known name, OpenID Connect Discovery §4.3 for
/// `openid-configuration`. A document that names another issuer is refused (not skipped): the
/// server at that URL answered, and what it answered is a lie or a misconfiguration.
pub(crate) async fn fetch_server_metadata(
    http: &AuthHttp,
    expected: Expected<'_>,
    issuer_uri: &Uri,
) -> Result<Option<AuthorizationServerMetadata>, Error> {
    for url in authorization_server_metadata_urls(issuer_uri) {
        let uri = resolve(issuer_uri, &url)?;
        if let Some(doc) = http.get_json(&uri).await? {
            let parsed: AuthorizationServerMetadata = serde_json::from_value(doc).map_err(|e| {
                Error::Auth(format!("bad authorization server metadata at `{uri}`: {e}"))
            })?;
            check_issuer(expected, &uri, &parsed)?;
            return Ok(Some(parsed));
        }
    }
    Ok(None)
}

/// What the metadata's `issuer` is checked against.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Expected<'a> {
    /// The issuer the URL was built from (RFC 8414 §3.3): identical, as strings.
    Issuer(&'a str),
    /// The 2025-03-26 path, where the client was named no issuer: the origin the URL was
    /// built from (`scheme://authority`); the issuer must be on it.
    Origin(&'a str),
}

/// The metadata's `issuer` is the one it was fetched for ([`Expected`]).
fn check_issuer(
    expected: Expected<'_>,
    at: &Uri,
    metadata: &AuthorizationServerMetadata,
) -> Result<(), Error> {
    let issuer = metadata.issuer.as_str();
    match expected {
        Expected::Issuer(want) if issuer == want => Ok(()),
        Expected::Issuer(want) => Err(Error::Auth(format!(
            "the authorization server metadata at `{at}` names the issuer `{issuer}`, but it was \
             fetched for the issuer `{want}` (RFC 8414 §3.3: they must be identical); refusing it"
        ))),
        Expected::Origin(origin) if on_origin(issuer, origin) => Ok(()),
        Expected::Origin(origin) => Err(Error::Auth(format!(
            "the authorization server metadata at `{at}` names the issuer `{issuer}`, which is \
             not on the server's origin `{origin}` it was fetched from (RFC 8414 §3.3); \
             refusing it"
        ))),
    }
}

/// `issuer` is an https-or-http URL on `origin` (same scheme, host and port, compared
/// case-insensitively), with no query or fragment (RFC 8414 §2).
fn on_origin(issuer: &str, origin: &str) -> bool {
    let Ok(uri) = issuer.parse::<Uri>() else {
        return false;
    };
    if uri.scheme().is_none() || uri.authority().is_none() || uri.query().is_some() {
        return false;
    }
    if issuer.contains('#') {
        return false;
    }
    origin_of(&uri).eq_ignore_ascii_case(origin)
}

/// 2025-03-26: the MCP server's origin is the authorization server.
async fn discover_legacy(http: &AuthHttp, server: &Uri) -> Result<Discovery, Error> {
    let base = origin_of(server);
    let root: Uri = base
        .parse()
        .map_err(|e| Error::Auth(format!("bad server URL `{server}`: {e}")))?;
    // No issuer was named to us: the document must name one on this origin, or it would
    // pick the registration endpoint, the expected `iss` and the token store's key.
    let metadata = match fetch_server_metadata(http, Expected::Origin(&base), &root).await? {
        Some(m) => m,
        None => AuthorizationServerMetadata {
            issuer: base.clone(),
            authorization_endpoint: Some(format!("{base}/authorize")),
            token_endpoint: Some(format!("{base}/token")),
            registration_endpoint: Some(format!("{base}/register")),
            ..Default::default()
        },
    };
    Ok(Discovery {
        resource: None,
        issuer: metadata.issuer.clone(),
        server: metadata,
        resource_indicator: canonical_resource(server),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn a_legacy_issuer_must_be_on_the_servers_origin() {
        let origin = "http://localhost:8080";
        for honest in [
            "http://localhost:8080",
            "http://localhost:8080/",
            "http://localhost:8080/oauth",
            "HTTP://LOCALHOST:8080/tenant/a",
        ] {
            assert!(on_origin(honest, origin), "{honest}");
        }
        for foreign in [
            "https://evil.example",
            "https://localhost:8080",
            "http://localhost:8081",
            "http://localhost:8080.evil.example",
            "http://user@localhost:8080",
            "http://localhost:8080/oauth?x=1",
            "http://localhost:8080/oauth#f",
            "/oauth",
            "",
        ] {
            assert!(!on_origin(foreign, origin), "{foreign}");
        }
    }

    #[test]
    fn resource_metadata_is_tried_path_first() {
        assert_eq!(
            resource_metadata_urls(&u("https://h.example/public/mcp")),
            vec![
                "https://h.example/.well-known/oauth-protected-resource/public/mcp",
                "https://h.example/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_urls(&u("https://h.example/")),
            vec!["https://h.example/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_follows_the_spec_order() {
        assert_eq!(
            authorization_server_metadata_urls(&u("https://a.example/tenant1")),
            vec![
                "https://a.example/.well-known/oauth-authorization-server/tenant1",
                "https://a.example/.well-known/openid-configuration/tenant1",
                "https://a.example/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls(&u("https://a.example")),
            vec![
                "https://a.example/.well-known/oauth-authorization-server",
                "https://a.example/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn a_resource_must_cover_the_server() {
        let server = u("https://h.example/mcp");
        assert!(resource_matches("https://h.example/mcp", &server));
        assert!(resource_matches("https://h.example/", &server));
        assert!(resource_matches("https://H.example", &server));
        assert!(!resource_matches("https://evil.example/mcp", &server));
        assert!(!resource_matches("http://h.example/mcp", &server));
        assert!(!resource_matches("https://h.example/other", &server));
        assert!(!resource_matches("https://h.example/mc", &server));
        assert!(!resource_matches("not a url", &server));
        assert_eq!(
            canonical_resource(&u("https://H.example/mcp?x=1")),
            "https://h.example/mcp"
        );
    }
}
