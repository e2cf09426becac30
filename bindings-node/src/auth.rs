//! Authorization for JavaScript: the options of `Client.http(url, { auth })` turned into the
//! core's [`OAuthOptions`], a JavaScript `authorize(url)` callback adapted to the core's
//! [`Authorizer`], and a JavaScript `verifyToken(token)` callback adapted to the core's
//! [`TokenVerifier`] for `server.runHttp({ auth })`.
//!
//! The whole OAuth flow (discovery, registration, PKCE, token exchange, refresh, the target
//! policy, the checks on a verified token) stays in the core; this file only converts values
//! and callbacks. Neither callback's token or URL is ever logged here.

use std::sync::Arc;

use futures::future::BoxFuture;
use napi::{Status, threadsafe_function::ThreadsafeFunction};
use oxmcp::{
    Error,
    auth::{
        AccessClaims, Authorizer, ClientAssertionKey, ClientCredentials, EnterpriseIdentity,
        FileStore, Grant, OAuthOptions, ProtectedResourceMetadata, ResourceServer, TargetPolicy,
        TokenEndpointAuth, TokenVerifier,
    },
};
use serde::Deserialize;
use serde_json::Value;

use crate::{
    error::{invalid, to_js},
    json::{Envelope, Settled},
};

/// `(argJson) => envelopeJson | Promise<envelopeJson>`: a JavaScript function behind the
/// handler shim.
pub(crate) type JsAuthCallback = ThreadsafeFunction<String, Envelope, String, Status, false, true>;

/// The redirect URI when none is given: a headless flow never connects to it, it only
/// recognises the authorization server's redirect to it.
const DEFAULT_REDIRECT: &str = "http://localhost/callback";

/// The `auth` option of `Client.http`, as JSON (the `authorize` function travels apart).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub(crate) struct ClientAuth {
    client_name: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    token_endpoint_auth: Option<String>,
    client_metadata_url: Option<String>,
    application_type: Option<String>,
    /// `authorization_code` (default) or `client_credentials`.
    grant: Option<String>,
    private_key_pem: Option<String>,
    key_id: Option<String>,
    enterprise: Option<Enterprise>,
    offline_access: Option<bool>,
    allow_loopback: bool,
    allow_private: bool,
    allow_origins: Vec<String>,
    token_store: Option<String>,
}

/// SEP-990's identity-provider side.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Enterprise {
    idp_token_endpoint: String,
    idp_client_id: String,
    id_token: String,
}

impl ClientAuth {
    /// The core's options; `client_name` defaults to the client's own name.
    pub(crate) fn into_options(
        self,
        default_name: &str,
        authorize: Option<JsAuthCallback>,
    ) -> napi::Result<OAuthOptions> {
        let mut o = OAuthOptions::new(
            self.client_name.as_deref().unwrap_or(default_name),
            self.redirect_uri.as_deref().unwrap_or(DEFAULT_REDIRECT),
        );
        if let Some(id) = self.client_id {
            let mut credentials = match self.client_secret {
                Some(secret) => ClientCredentials::confidential(id, secret),
                None => ClientCredentials::public(id),
            };
            if let Some(method) = &self.token_endpoint_auth {
                credentials.auth_method =
                    Some(TokenEndpointAuth::parse(method).ok_or_else(|| {
                        invalid(format!(
                            "auth.tokenEndpointAuth: `{method}` is not client_secret_basic, \
                         client_secret_post, none or private_key_jwt"
                        ))
                    })?);
            }
            o.client = Some(credentials);
        } else if self.client_secret.is_some() || self.token_endpoint_auth.is_some() {
            return Err(invalid(
                "auth: clientSecret and tokenEndpointAuth need a clientId",
            ));
        }
        o.client_metadata_url = self.client_metadata_url;
        if let Some(kind) = self.application_type {
            if kind != "native" && kind != "web" {
                return Err(invalid(format!(
                    "auth.applicationType must be `native` or `web`, not `{kind}`"
                )));
            }
            o.application_type = kind;
        }
        o.grant = match self.grant.as_deref() {
            None | Some("authorization_code") => Grant::AuthorizationCode,
            Some("client_credentials") => Grant::ClientCredentials,
            Some(other) => {
                return Err(invalid(format!(
                    "auth.grant must be `authorization_code` or `client_credentials`, not `{other}`"
                )));
            }
        };
        if let Some(e) = self.enterprise {
            o.grant = Grant::EnterpriseManaged(EnterpriseIdentity {
                idp_token_endpoint: e.idp_token_endpoint,
                idp_client_id: e.idp_client_id,
                id_token: e.id_token,
            });
        }
        if let Some(pem) = self.private_key_pem {
            let key = ClientAssertionKey::es256_from_pem(&pem, self.key_id).map_err(to_js)?;
            o.signing_key = Some(Arc::new(key));
        }
        if let Some(offline) = self.offline_access {
            o.offline_access = offline;
        }
        let mut targets = TargetPolicy::public_only();
        if self.allow_loopback {
            targets = targets.allow_loopback();
        }
        if self.allow_private {
            targets = targets.allow_private();
        }
        for origin in self.allow_origins {
            targets = targets.allow_origin(origin);
        }
        o.targets = targets;
        if let Some(dir) = self.token_store {
            o.store = Arc::new(FileStore::new(dir).map_err(to_js)?);
        }
        if let Some(f) = authorize {
            o.authorizer = Some(Arc::new(JsAuthorizer(Arc::new(f))));
        }
        Ok(o)
    }
}

/// Calls a callback once with `arg` and waits for it to settle.
async fn call(f: &JsAuthCallback, arg: String) -> Settled {
    Settled::from_call(f.call_async_catch(arg).await).await
}

/// `authorize(url) => redirectedUrl`: the user step (open a browser, wait for the redirect).
struct JsAuthorizer(Arc<JsAuthCallback>);

impl Authorizer for JsAuthorizer {
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, Error>> {
        Box::pin(async move {
            match call(&self.0, Value::String(url).to_string()).await {
                Settled::Ok(Value::String(redirected)) => Ok(redirected),
                Settled::Ok(_) => Err(Error::Auth(
                    "auth.authorize must resolve to the URL the authorization server \
                     redirected to (a string)"
                        .into(),
                )),
                Settled::Threw(message) => {
                    Err(Error::Auth(format!("auth.authorize failed: {message}")))
                }
                Settled::Rpc(e) => {
                    Err(Error::Auth(format!("auth.authorize failed: {}", e.message)))
                }
            }
        })
    }
}

/// The `runHttp` options that protect the endpoint, as JSON (`auth` travels apart).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ServerAuth {
    /// Whether `auth` (the verifier) was given.
    auth: bool,
    resource: Option<String>,
    authorization_servers: Vec<String>,
    required_scopes: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    resource_name: Option<String>,
}

impl ServerAuth {
    /// The resource server, when `auth` was given; `endpoint` is this server's own URL when
    /// it is known before binding (a fixed port).
    pub(crate) fn into_resource_server(
        self,
        endpoint: Option<String>,
        verifier: Option<JsAuthCallback>,
    ) -> napi::Result<Option<Arc<ResourceServer>>> {
        let verifier = match (self.auth, verifier) {
            (true, Some(v)) => v,
            (false, None) => {
                if self.resource.is_some() || !self.authorization_servers.is_empty() {
                    return Err(invalid(
                        "runHttp: `resource` and `authorizationServers` need `auth` (the token verifier)",
                    ));
                }
                return Ok(None);
            }
            _ => {
                return Err(invalid(
                    "runHttp: `auth` must be a function (token) => claims | null",
                ));
            }
        };
        let resource = self.resource.or(endpoint).ok_or_else(|| {
            invalid(
                "runHttp: with `auth` and no fixed `port`, give `resource` (the MCP URL clients use)",
            )
        })?;
        let metadata = ProtectedResourceMetadata {
            resource,
            authorization_servers: self.authorization_servers,
            scopes_supported: self.scopes_supported.or_else(|| {
                (!self.required_scopes.is_empty()).then(|| self.required_scopes.clone())
            }),
            bearer_methods_supported: Some(vec!["header".into()]),
            resource_name: self.resource_name,
        };
        let verifier = Arc::new(JsVerifier(Arc::new(verifier)));
        ResourceServer::new(metadata, self.required_scopes, verifier)
            .map(|r| Some(Arc::new(r)))
            .map_err(to_js)
    }
}

/// `verifyToken(token) => claims | null`: the introspection, JWT check or lookup the user
/// supplies; the core then checks expiry, audience and scopes itself.
struct JsVerifier(Arc<JsAuthCallback>);

impl TokenVerifier for JsVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AccessClaims, Error>> {
        Box::pin(async move {
            let value = match call(&self.0, Value::String(token.to_owned()).to_string()).await {
                Settled::Ok(v) => v,
                Settled::Threw(message) => {
                    return Err(Error::Auth(format!("the token verifier failed: {message}")));
                }
                Settled::Rpc(e) => {
                    return Err(Error::Auth(format!(
                        "the token verifier failed: {}",
                        e.message
                    )));
                }
            };
            // `null`/`false`, claims in any spelling `AccessClaims::from_verifier` reads
            // (`expiresAt`, `clientId`, JWT names), or an auth error: a 401 for this request.
            AccessClaims::from_verifier(value)
        })
    }
}
