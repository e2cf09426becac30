//! `serve_http(auth=verify_token)`: a Python callable as the core's
//! `oxmcp::auth::TokenVerifier`. The callable gets the bearer token and returns the claims (a
//! dict) or `None`; the core's `ResourceServer` does everything else (the 401/403 answers with
//! `WWW-Authenticate`, the expiry, audience and scope checks, the protected-resource metadata).

use std::sync::Arc;

use futures::future::BoxFuture;
use oxmcp::{
    Error,
    auth::{AccessClaims, ProtectedResourceMetadata, ResourceServer, TokenVerifier},
};
use pyo3::{prelude::*, types::PyTuple};

use crate::callable::Callable;

struct PyVerifier {
    callable: Callable,
}

impl TokenVerifier for PyVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessClaims, Error>> {
        let token = token.to_owned();
        Box::pin(async move {
            let out = self
                .callable
                .call("the verifier's claims", move |py| {
                    PyTuple::new(py, [token.into_pyobject(py)?.into_any()])
                })
                .await
                // The exception's text becomes the 401's `error_description`; the token itself
                // never appears in it (the verifier got it, the client already has it).
                .map_err(|e| Error::Auth(format!("the verifier raised: {e}")))?;
            // `None`, a dict in any of the spellings `AccessClaims::from_verifier` reads, or
            // something it refuses with an auth error (a 401 for this request only).
            AccessClaims::from_verifier(out)
        })
    }
}

/// The resource server for `serve_http(auth=...)`: `resource` is the endpoint's canonical URL
/// (tokens must name it in their audience), `authorization_servers` the issuers the metadata
/// points clients at.
pub fn resource_server(
    callable: Callable,
    resource: String,
    authorization_servers: Vec<String>,
    required_scopes: Vec<String>,
    resource_name: Option<String>,
) -> Result<Arc<ResourceServer>, Error> {
    let metadata = ProtectedResourceMetadata {
        resource,
        authorization_servers,
        scopes_supported: (!required_scopes.is_empty()).then(|| required_scopes.clone()),
        bearer_methods_supported: Some(vec!["header".into()]),
        resource_name,
    };
    let verifier = Arc::new(PyVerifier { callable });
    ResourceServer::new(metadata, required_scopes, verifier).map(Arc::new)
}
