//! The OAuth 2.1 client of the MCP authorization spec, as the HTTP transport's
//! [`AuthProvider`]: it supplies the bearer token of each request, and when the server
//! answers 401 (or 403 `insufficient_scope`) it runs the whole flow (discovery, registration,
//! the user's authorization with PKCE, the token exchange) and the request is sent again.
//!
//! One flow runs at a time: a GET stream and a POST that both get a 401 share one
//! authorization, the second finding the token the first earned. Tokens are refreshed before
//! they expire and after a 401, and a failed refresh falls back to authorizing again.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use http::Uri;

use super::{
    authorize::{Authorizer, HeadlessAuthorizer, Pkce, check_authorization_url, read_callback},
    challenge::{BearerChallenge, split_scopes},
    fetch::{AuthHttp, encode_form},
    jwt::ClientAssertionKey,
    metadata::{Discovery, discover},
    registration::{ClientMetadata, metadata_document_usable, register},
    store::{MemoryStore, StoredAuth, TokenStore, store_key},
    target::TargetPolicy,
    token::{ClientCredentials, TokenEndpointAuth, TokenRequest, Tokens},
};
use crate::Error;

/// Plugs authorization into the HTTP client transport.
pub trait AuthProvider: Send + Sync {
    /// The bearer token for the next request (`None`: send none).
    fn token(&self) -> BoxFuture<'_, Result<Option<String>, Error>>;
    /// The server refused a request; `Ok` means "send it again", `Err` fails it.
    fn challenged<'a>(&'a self, challenge: &'a Challenge) -> BoxFuture<'a, Result<(), Error>>;
}

/// A refusal by the MCP server.
#[derive(Clone)]
pub struct Challenge {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` header, if any.
    pub www_authenticate: Option<String>,
    /// The MCP endpoint.
    pub server: Uri,
    /// The token the refused request carried.
    pub token: Option<String>,
}

impl std::fmt::Debug for Challenge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Challenge")
            .field("status", &self.status)
            .field("www_authenticate", &self.www_authenticate)
            .field("server", &self.server)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Which grant the client uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// Authorization code with PKCE: a user authorizes.
    AuthorizationCode,
    /// Client credentials: a machine client with its own credentials (no user).
    ClientCredentials,
    /// Enterprise-managed authorization (SEP-990): the user's identity-provider ID token is
    /// exchanged at the IdP for an identity assertion grant (RFC 8693), which the
    /// authorization server takes as a JWT-bearer grant (RFC 7523). No user step.
    EnterpriseManaged(EnterpriseIdentity),
}

/// The identity-provider side of [`Grant::EnterpriseManaged`].
#[derive(Clone, PartialEq, Eq)]
pub struct EnterpriseIdentity {
    /// The IdP's token endpoint.
    pub idp_token_endpoint: String,
    /// This client's id at the IdP.
    pub idp_client_id: String,
    /// The user's ID token from the IdP.
    pub id_token: String,
}

impl std::fmt::Debug for EnterpriseIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseIdentity")
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .field("id_token", &"<redacted>")
            .finish()
    }
}

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// How the client authorizes.
#[derive(Clone)]
pub struct OAuthOptions {
    /// Shown on the consent screen (dynamic registration).
    pub client_name: String,
    /// Where the authorization server sends the user back.
    pub redirect_uri: String,
    /// Credentials registered beforehand (used at any authorization server).
    pub client: Option<ClientCredentials>,
    /// An https URL serving this client's metadata document, used as the client id where
    /// the server supports it.
    pub client_metadata_url: Option<String>,
    /// `native` or `web` (dynamic registration).
    pub application_type: String,
    /// The grant.
    pub grant: Grant,
    /// The key for `private_key_jwt`.
    pub signing_key: Option<Arc<ClientAssertionKey>>,
    /// Ask for `offline_access` (a refresh token) where the server lists it.
    pub offline_access: bool,
    /// Where discovery, registration and token requests may go.
    pub targets: TargetPolicy,
    /// The user step (`None`: [`HeadlessAuthorizer`]).
    pub authorizer: Option<Arc<dyn Authorizer>>,
    /// Where registrations and tokens are kept.
    pub store: Arc<dyn TokenStore>,
    /// Extra root certificates (DER) for https endpoints.
    pub extra_root_certificates: Vec<Vec<u8>>,
    /// When every request of the flow must have ended (`None`: 30 s each, no overall bound).
    /// A CLI sets it from its `--timeout`, so one deadline bounds discovery, registration and
    /// the token exchange; give the user step the same one (`BrowserAuthorizer::with_deadline`).
    pub deadline: Option<std::time::Instant>,
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri)
            .field("client", &self.client)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("grant", &self.grant)
            .field("targets", &self.targets)
            .finish_non_exhaustive()
    }
}

impl OAuthOptions {
    /// An authorization-code client named `client_name`, redirecting to `redirect_uri`,
    /// public targets only, tokens in memory.
    pub fn new(client_name: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        OAuthOptions {
            client_name: client_name.into(),
            redirect_uri: redirect_uri.into(),
            client: None,
            client_metadata_url: None,
            application_type: "native".into(),
            grant: Grant::AuthorizationCode,
            signing_key: None,
            offline_access: true,
            targets: TargetPolicy::public_only(),
            authorizer: None,
            store: Arc::new(MemoryStore::new()),
            extra_root_certificates: Vec::new(),
            deadline: None,
        }
    }
}

/// Refresh a token this long before it expires.
const REFRESH_MARGIN: Duration = Duration::from_secs(30);

struct Current {
    key: String,
    discovery: Discovery,
    client: ClientCredentials,
    tokens: Tokens,
    /// The scopes asked for (a server may grant fewer than it was asked).
    requested: Vec<String>,
}

/// Step-ups for scopes already asked for that may run before the client gives up (the
/// server will not grant them; authorizing again would loop).
const FUTILE_STEP_UPS: usize = 1;

/// The OAuth 2.1 client (see the module doc).
pub struct OAuthClient {
    options: OAuthOptions,
    http: Arc<AuthHttp>,
    authorizer: Arc<dyn Authorizer>,
    current: tokio::sync::Mutex<Option<Current>>,
    /// Step-ups that asked again for scopes already asked for.
    futile: std::sync::atomic::AtomicUsize,
    /// Flows that have ended, and how and when the last one failed: a request that waited
    /// for a flow to end, or that comes right after one failed ([`SHARED_FAILURE`]), shares
    /// its failure rather than starting another (a second browser window for a login whose
    /// token endpoint never answered).
    flows: std::sync::atomic::AtomicU64,
    last_failure: std::sync::Mutex<Option<(Error, std::time::Instant)>>,
}

/// How long a failed flow answers the requests that follow it: the requests queued behind
/// it (the handshake after a timed-out probe) are sent the moment it ends.
const SHARED_FAILURE: Duration = Duration::from_secs(2);

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client with `options`.
    pub fn new(options: OAuthOptions) -> Result<Self, Error> {
        check_authorization_url(&options.redirect_uri)
            .map_err(|e| Error::InvalidArgument(format!("redirect_uri: {e}")))?;
        let http = Arc::new(
            AuthHttp::new(options.targets.clone(), &options.extra_root_certificates)?
                .with_deadline(options.deadline),
        );
        let authorizer = options.authorizer.clone().unwrap_or_else(|| {
            Arc::new(HeadlessAuthorizer::new(
                http.clone(),
                options.redirect_uri.clone(),
            ))
        });
        Ok(OAuthClient {
            options,
            http,
            authorizer,
            current: tokio::sync::Mutex::new(None),
            futile: std::sync::atomic::AtomicUsize::new(0),
            flows: std::sync::atomic::AtomicU64::new(0),
            last_failure: std::sync::Mutex::new(None),
        })
    }

    /// The tokens held now (for a CLI's `login` to report).
    pub async fn tokens(&self) -> Option<Tokens> {
        self.current.lock().await.as_ref().map(|c| c.tokens.clone())
    }

    async fn refresh(&self, current: &mut Current) -> Result<(), Error> {
        let refresh = current
            .tokens
            .refresh_token
            .clone()
            .ok_or_else(|| Error::Auth("no refresh token".into()))?;
        let endpoint = token_endpoint(&current.discovery)?;
        let mut params = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh.clone()),
        ];
        params.push(("resource", current.discovery.resource_indicator.clone()));
        let mut tokens = self
            .token_request(
                &current.discovery,
                &current.client,
                &endpoint,
                params,
                &current.tokens.scopes,
            )
            .await?;
        // A server may keep the refresh token (no rotation): keep ours then.
        tokens.refresh_token.get_or_insert(refresh);
        current.tokens = tokens;
        self.options.store.save(
            &current.key,
            &StoredAuth {
                client: Some(current.client.clone()),
                tokens: Some(current.tokens.clone()),
            },
        )?;
        Ok(())
    }

    async fn token_request(
        &self,
        discovery: &Discovery,
        client: &ClientCredentials,
        endpoint: &Uri,
        params: Vec<(&str, String)>,
        requested: &[String],
    ) -> Result<Tokens, Error> {
        let method = client.method(
            discovery
                .server
                .token_endpoint_auth_methods_supported
                .as_deref(),
            self.options.signing_key.is_some(),
        );
        TokenRequest {
            http: &self.http,
            endpoint,
            issuer: &discovery.issuer,
            client,
            method,
            key: self.options.signing_key.as_deref(),
            params,
            requested,
        }
        .send()
        .await
    }

    /// The whole flow for `challenge`.
    async fn authorize(
        &self,
        challenge: &Challenge,
        previous: Option<&Current>,
    ) -> Result<Current, Error> {
        let bearer = challenge
            .www_authenticate
            .as_deref()
            .and_then(BearerChallenge::parse)
            .unwrap_or_default();
        let discovery = discover(
            &self.http,
            &challenge.server,
            bearer.resource_metadata.as_deref(),
        )
        .await?;
        let scopes = self.select_scopes(&bearer, &discovery, previous);
        let key = store_key(&discovery.issuer, &discovery.resource_indicator);
        let stored = self.options.store.load(&key)?.unwrap_or_default();
        let scope_param = (!scopes.is_empty()).then(|| scopes.join(" "));
        // Tokens kept from an earlier run (a CLI's login) are tried before a new flow.
        if !bearer.insufficient_scope()
            && let (Some(client), Some(tokens)) = (stored.client.clone(), stored.tokens.clone())
            && challenge.token.as_ref() != Some(&tokens.access_token)
        {
            let mut kept = Current {
                key: key.clone(),
                discovery: discovery.clone(),
                requested: tokens.scopes.clone(),
                client,
                tokens,
            };
            if !kept.tokens.expires_within(REFRESH_MARGIN) || self.refresh(&mut kept).await.is_ok()
            {
                return Ok(kept);
            }
        }
        let client = match (stored.client, &self.options.client) {
            (Some(c), _) => c,
            (None, Some(pre)) => pre.clone(),
            (None, None) => match &self.options.client_metadata_url {
                Some(url) if metadata_document_usable(&discovery.server, url) => {
                    ClientCredentials {
                        client_id: url.clone(),
                        client_secret: None,
                        auth_method: Some(TokenEndpointAuth::None),
                    }
                }
                _ => {
                    let grants: &[&str] = match &self.options.grant {
                        Grant::AuthorizationCode => &["authorization_code", "refresh_token"],
                        Grant::ClientCredentials => &["client_credentials"],
                        Grant::EnterpriseManaged(_) => &[JWT_BEARER],
                    };
                    let metadata = ClientMetadata {
                        client_name: self.options.client_name.clone(),
                        redirect_uris: vec![self.options.redirect_uri.clone()],
                        application_type: self.options.application_type.clone(),
                        extra: Default::default(),
                    };
                    let c = register(
                        &self.http,
                        &discovery.server,
                        &metadata,
                        grants,
                        scope_param.as_deref(),
                    )
                    .await?;
                    self.options.store.save(
                        &key,
                        &StoredAuth {
                            client: Some(c.clone()),
                            tokens: None,
                        },
                    )?;
                    c
                }
            },
        };
        let endpoint = token_endpoint(&discovery)?;
        let resource = discovery.resource_indicator.clone();
        let tokens = match &self.options.grant {
            Grant::ClientCredentials => {
                let mut params = vec![("grant_type", "client_credentials".to_owned())];
                if let Some(s) = &scope_param {
                    params.push(("scope", s.clone()));
                }
                params.push(("resource", resource));
                self.token_request(&discovery, &client, &endpoint, params, &scopes)
                    .await?
            }
            Grant::EnterpriseManaged(identity) => {
                let assertion = self
                    .identity_assertion(identity, &discovery, scope_param.as_deref())
                    .await?;
                let mut params = vec![
                    ("grant_type", JWT_BEARER.to_owned()),
                    ("assertion", assertion),
                ];
                if let Some(s) = &scope_param {
                    params.push(("scope", s.clone()));
                }
                self.token_request(&discovery, &client, &endpoint, params, &scopes)
                    .await?
            }
            Grant::AuthorizationCode => {
                let code = self
                    .user_step(&discovery, &client, scope_param.as_deref())
                    .await?;
                let params = vec![
                    ("grant_type", "authorization_code".to_owned()),
                    ("code", code.0),
                    ("redirect_uri", self.options.redirect_uri.clone()),
                    ("code_verifier", code.1),
                    ("resource", resource),
                ];
                self.token_request(&discovery, &client, &endpoint, params, &scopes)
                    .await?
            }
        };
        self.options.store.save(
            &key,
            &StoredAuth {
                client: Some(client.clone()),
                tokens: Some(tokens.clone()),
            },
        )?;
        Ok(Current {
            key,
            discovery,
            client,
            tokens,
            requested: scopes,
        })
    }

    /// The scopes to ask for (MCP "Scope Selection Strategy"): the challenge's, else all the
    /// resource supports, else none; a step-up adds to what the token had; `offline_access`
    /// only where the authorization server lists it.
    fn select_scopes(
        &self,
        bearer: &BearerChallenge,
        discovery: &Discovery,
        previous: Option<&Current>,
    ) -> Vec<String> {
        let mut scopes = bearer.scopes();
        if scopes.is_empty() {
            scopes = discovery
                .resource
                .as_ref()
                .and_then(|r| r.scopes_supported.clone())
                .unwrap_or_default();
        }
        if bearer.insufficient_scope()
            && let Some(p) = previous
        {
            let mut all = p.tokens.scopes.clone();
            all.extend(scopes);
            scopes = split_scopes(Some(&all.join(" ")));
        }
        let offers_offline = discovery
            .server
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == "offline_access"));
        if self.options.grant == Grant::AuthorizationCode
            && self.options.offline_access
            && offers_offline
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".into());
        }
        scopes
    }

    /// SEP-990 step one: the IdP exchanges the user's ID token for an identity assertion
    /// grant addressed to this authorization server and resource.
    async fn identity_assertion(
        &self,
        identity: &EnterpriseIdentity,
        discovery: &Discovery,
        scope: Option<&str>,
    ) -> Result<String, Error> {
        let endpoint: Uri = identity.idp_token_endpoint.parse().map_err(|e| {
            Error::Auth(format!(
                "bad IdP token endpoint `{}`: {e}",
                identity.idp_token_endpoint
            ))
        })?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("audience", discovery.issuer.as_str()),
            ("resource", discovery.resource_indicator.as_str()),
            ("subject_token", identity.id_token.as_str()),
            ("subject_token_type", ID_TOKEN),
            ("client_id", identity.idp_client_id.as_str()),
        ];
        if let Some(s) = scope {
            form.push(("scope", s));
        }
        let answer = self
            .http
            .post_form(&endpoint, &form, http::HeaderMap::new())
            .await?;
        let body = answer.json().unwrap_or_default();
        if !answer.status.is_success() {
            return Err(Error::Auth(format!(
                "the IdP refused the token exchange (HTTP {}): {}",
                answer.status,
                body.get("error")
                    .and_then(|e| e.as_str())
                    .unwrap_or("no error code")
            )));
        }
        body.get("access_token")
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| Error::Auth("the IdP's token exchange returned no assertion".into()))
    }

    /// The user's authorization; returns the code and the PKCE verifier.
    async fn user_step(
        &self,
        discovery: &Discovery,
        client: &ClientCredentials,
        scope: Option<&str>,
    ) -> Result<(String, String), Error> {
        let server = &discovery.server;
        if let Some(methods) = &server.code_challenge_methods_supported
            && !methods.iter().any(|m| m == "S256")
        {
            return Err(Error::Auth(format!(
                "`{}` does not support PKCE S256 (it lists {methods:?}); refusing to authorize \
                 without it",
                discovery.issuer
            )));
        }
        let endpoint = server.authorization_endpoint.as_deref().ok_or_else(|| {
            Error::Auth(format!(
                "`{}` names no authorization endpoint",
                discovery.issuer
            ))
        })?;
        let pkce = Pkce::new();
        let state = crate::random::id128();
        let mut params: Vec<(&str, &str)> = vec![
            ("response_type", "code"),
            ("client_id", &client.client_id),
            ("redirect_uri", &self.options.redirect_uri),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &state),
        ];
        if let Some(s) = scope {
            params.push(("scope", s));
        }
        params.push(("resource", &discovery.resource_indicator));
        let separator = if endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{endpoint}{separator}{}", encode_form(&params));
        check_authorization_url(&url)?;
        let redirect = self.authorizer.authorize(url).await?;
        let callback = read_callback(
            &redirect,
            &self.options.redirect_uri,
            &state,
            &discovery.issuer,
            server.authorization_response_iss_parameter_supported == Some(true),
        )?;
        Ok((callback.code, pkce.verifier))
    }
}

fn token_endpoint(discovery: &Discovery) -> Result<Uri, Error> {
    let endpoint =
        discovery.server.token_endpoint.as_deref().ok_or_else(|| {
            Error::Auth(format!("`{}` names no token endpoint", discovery.issuer))
        })?;
    endpoint
        .parse()
        .map_err(|e| Error::Auth(format!("bad token endpoint `{endpoint}`: {e}")))
}

impl AuthProvider for OAuthClient {
    fn token(&self) -> BoxFuture<'_, Result<Option<String>, Error>> {
        Box::pin(async move {
            let mut guard = self.current.lock().await;
            let Some(current) = guard.as_mut() else {
                return Ok(None);
            };
            if current.tokens.expires_within(REFRESH_MARGIN) {
                if current.tokens.refresh_token.is_some() && self.refresh(current).await.is_ok() {
                    return Ok(Some(current.tokens.access_token.clone()));
                }
                // Expired and not refreshable: go without, and let the 401 start a new flow.
                *guard = None;
                return Ok(None);
            }
            Ok(Some(current.tokens.access_token.clone()))
        })
    }

    fn challenged<'a>(&'a self, challenge: &'a Challenge) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            use std::sync::atomic::Ordering;
            let flows_before = self.flows.load(Ordering::SeqCst);
            let mut guard = self.current.lock().await;
            let waited_for_one = self.flows.load(Ordering::SeqCst) != flows_before;
            if let Ok(last) = self.last_failure.lock()
                && let Some((e, at)) = last.as_ref()
                && (waited_for_one || at.elapsed() < SHARED_FAILURE)
            {
                // The flow this request waited for, or just missed, failed: that is its
                // answer too.
                return Err(e.clone());
            }
            let held = guard.as_ref().map(|c| c.tokens.access_token.clone());
            if held.is_some() && held != challenge.token {
                // Another request already earned a newer token: just retry with it.
                return Ok(());
            }
            let bearer = challenge
                .www_authenticate
                .as_deref()
                .and_then(BearerChallenge::parse)
                .unwrap_or_default();
            let insufficient = bearer.insufficient_scope();
            if insufficient && let Some(current) = guard.as_ref() {
                let wanted = bearer.scopes();
                if wanted.iter().all(|s| current.requested.contains(s)) {
                    // Asked for already and still refused: the server will not grant them.
                    if self.futile.fetch_add(1, Ordering::SeqCst) >= FUTILE_STEP_UPS {
                        return Err(Error::Auth(format!(
                            "the server keeps refusing the token for lack of scope `{}`, which \
                             was already requested; not authorizing again",
                            bearer.scope.as_deref().unwrap_or_default()
                        )));
                    }
                } else {
                    self.futile.store(0, Ordering::SeqCst);
                }
            }
            if challenge.status == 401
                && !insufficient
                && let Some(current) = guard.as_mut()
                && current.tokens.refresh_token.is_some()
            {
                match self.refresh(current).await {
                    Ok(()) => return Ok(()),
                    Err(e) => {
                        tracing::debug!(target: "oxmcp::auth", "refresh failed ({e}); authorizing again")
                    }
                }
            }
            let outcome = self.authorize(challenge, guard.as_ref()).await;
            if let Ok(mut last) = self.last_failure.lock() {
                *last = outcome
                    .as_ref()
                    .err()
                    .map(|e| (e.clone(), std::time::Instant::now()));
            }
            self.flows.fetch_add(1, Ordering::SeqCst);
            *guard = Some(outcome?);
            Ok(())
        })
    }
}
