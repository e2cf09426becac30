//! Authorization for JavaScript: the options of `Client.http(url, { auth })` turned into the
//! core's [`OAuthOptions`] (the core's [`OAuthSettings`] decodes and checks them), a
//! JavaScript `authorize(url)` callback adapted to the core's [`Authorizer`], and a JavaScript
//! `verifyToken(token)` callback adapted to the core's [`TokenVerifier`] for
//! `server.runHttp({ auth })`.
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
        AccessClaims, Authorizer, OAuthOptions, OAuthSettings, ProtectedResourceMetadata,
        ResourceServer, SettingsError, Spelling, TokenVerifier,
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

/// The core's options from the `auth` settings (decoded by the core's [`OAuthSettings`], every
/// rule applied there); `clientName` defaults to the client's own name, and `authorize` is
/// attached as the user step.
pub(crate) fn oauth_options(
    mut settings: OAuthSettings,
    default_name: &str,
    authorize: Option<JsAuthCallback>,
) -> napi::Result<OAuthOptions> {
    if settings.client_name.is_none() {
        settings.client_name = Some(default_name.to_owned());
    }
    let mut o = settings.into_options().map_err(|e| match e {
        SettingsError::Unusable(e) => to_js(e),
        // Named as JavaScript users write them (`clientSecret`, not `client_secret`).
        refused => invalid(format!("auth: {}", refused.message(Spelling::Camel))),
    })?;
    if let Some(f) = authorize {
        o.authorizer = Some(Arc::new(JsAuthorizer(Arc::new(f))));
    }
    Ok(o)
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
