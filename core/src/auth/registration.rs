//! Getting a client id at an authorization server, in the MCP spec's order of preference:
//! credentials registered beforehand, a client ID metadata document (the client id is an
//! https URL the server fetches, when it says `client_id_metadata_document_supported`), and
//! dynamic client registration (RFC 7591).

use http::Uri;
use serde_json::{Value, json};

use super::{
    fetch::AuthHttp,
    metadata::AuthorizationServerMetadata,
    token::{ClientCredentials, TokenEndpointAuth},
};
use crate::Error;

/// What the client says about itself when it registers dynamically.
#[derive(Debug, Clone)]
pub struct ClientMetadata {
    /// Shown to the user on the consent screen.
    pub client_name: String,
    /// Where the authorization server sends the user back.
    pub redirect_uris: Vec<String>,
    /// `native` (loopback or custom-scheme redirects) or `web` (SEP-837).
    pub application_type: String,
    /// Other RFC 7591 fields, merged in as given.
    pub extra: serde_json::Map<String, Value>,
}

/// Registers with `server` per RFC 7591; `grant_types` says what the client will use.
pub(crate) async fn register(
    http: &AuthHttp,
    server: &AuthorizationServerMetadata,
    metadata: &ClientMetadata,
    grant_types: &[&str],
    scope: Option<&str>,
) -> Result<ClientCredentials, Error> {
    let endpoint = server.registration_endpoint.as_deref().ok_or_else(|| {
        Error::Auth(format!(
            "`{}` offers no registration endpoint and no client id is configured for it \
             (pre-register this client, or give a client ID metadata document URL)",
            server.issuer
        ))
    })?;
    let uri: Uri = endpoint
        .parse()
        .map_err(|e| Error::Auth(format!("bad registration endpoint `{endpoint}`: {e}")))?;
    let method = preferred_method(server.token_endpoint_auth_methods_supported.as_deref());
    let mut body = json!({
        "client_name": metadata.client_name,
        "redirect_uris": metadata.redirect_uris,
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": method.as_str(),
        "application_type": metadata.application_type,
    });
    if let Some(scope) = scope {
        body["scope"] = json!(scope);
    }
    if let Value::Object(map) = &mut body {
        for (k, v) in &metadata.extra {
            map.insert(k.clone(), v.clone());
        }
    }
    let answer = http.post_json(&uri, &body).await?;
    let doc = answer.json().unwrap_or_default();
    if !answer.status.is_success() {
        return Err(Error::Auth(format!(
            "dynamic client registration at `{endpoint}` failed (HTTP {}): {}",
            answer.status,
            crate::sanitize::clean(
                doc.get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("no error code"),
                false,
                100
            )
        )));
    }
    let client_id = doc
        .get("client_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error::Auth("the registration response has no client_id".into()))?;
    let secret = doc
        .get("client_secret")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let granted = doc
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .and_then(TokenEndpointAuth::parse);
    Ok(ClientCredentials {
        client_id: client_id.to_owned(),
        auth_method: match (&granted, &secret) {
            (Some(m), _) => Some(m.clone()),
            // The server did not say: what we asked for, if we can do it.
            (None, Some(_)) => Some(method),
            (None, None) => Some(TokenEndpointAuth::None),
        },
        client_secret: secret,
    })
}

/// The method to ask for: a public client (`none`) when the server allows it, else a secret
/// in a Basic header, else in the body.
fn preferred_method(supported: Option<&[String]>) -> TokenEndpointAuth {
    let Some(s) = supported else {
        return TokenEndpointAuth::None;
    };
    let has = |m: &str| s.iter().any(|x| x == m);
    if has("none") {
        TokenEndpointAuth::None
    } else if has("client_secret_basic") {
        TokenEndpointAuth::ClientSecretBasic
    } else if has("client_secret_post") {
        TokenEndpointAuth::ClientSecretPost
    } else {
        TokenEndpointAuth::None
    }
}

/// Whether a client ID metadata document URL may be used with `server`.
pub(crate) fn metadata_document_usable(server: &AuthorizationServerMetadata, url: &str) -> bool {
    server.client_id_metadata_document_supported == Some(true)
        && url.starts_with("https://")
        && url.parse::<Uri>().is_ok_and(|u| u.path() != "/")
}
