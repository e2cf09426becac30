//! Authorization: the MCP OAuth 2.1 client flow and the resource-server side.
//!
//! Client: give [`OAuthClient`] to the HTTP transport (`HttpClientOptions::auth`) and a
//! server's 401 starts discovery (RFC 9728, RFC 8414 / OpenID), registration (pre-registered,
//! client ID metadata document, RFC 7591), the user's authorization (PKCE S256, `state`,
//! `resource=` of RFC 8707, `iss` of RFC 9207) through a pluggable [`Authorizer`], and the
//! token exchange; tokens are refreshed and kept in a pluggable [`TokenStore`]. Every URL a
//! peer hands the flow passes the [`TargetPolicy`] (no private or loopback targets unless
//! allowed) and an authorization URL passes [`check_authorization_url`] before any host
//! opens it. A binding describes the client as data, [`OAuthSettings`], which
//! [`OAuthSettings::into_options`] checks and turns into [`OAuthOptions`].
//!
//! Server: [`ResourceServer`] (`HttpServerOptions::resource_server`) serves the
//! protected-resource metadata and answers requests without a valid token with 401 or 403
//! and the right `WWW-Authenticate`.

mod authorize;
mod browser;
mod challenge;
mod claims;
mod fetch;
mod jwt;
mod metadata;
mod provider;
mod registration;
mod resource;
mod settings;
mod store;
mod target;
mod token;

pub use authorize::{Authorizer, HeadlessAuthorizer, check_authorization_url};
/// Starts the user's browser on a URL (`$BROWSER`, else `xdg-open` or `open`); `oxmcp inspect`
/// opens its page with it.
pub(crate) use browser::open_browser;
pub use browser::{BrowserAuthorizer, UrlNotice};
pub use challenge::BearerChallenge;
pub use jwt::ClientAssertionKey;
pub use metadata::{
    AuthorizationServerMetadata, Discovery, ProtectedResourceMetadata,
    authorization_server_metadata_urls, canonical_resource, resource_matches,
    resource_metadata_urls,
};
pub use provider::{AuthProvider, Challenge, EnterpriseIdentity, Grant, OAuthClient, OAuthOptions};
pub use registration::ClientMetadata;
pub use resource::{AccessClaims, Refusal, ResourceServer, TokenVerifier};
pub use settings::{
    DEFAULT_CLIENT_NAME, DEFAULT_REDIRECT_URI, EnterpriseSettings, OAuthSettings, SettingsError,
    Spelling,
};
pub use store::{FileStore, MemoryStore, StoredAuth, TokenStore, store_key};
pub use target::TargetPolicy;
pub use token::{ClientCredentials, TokenEndpointAuth, Tokens};
