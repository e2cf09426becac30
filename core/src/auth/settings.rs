//! OAuth client settings as plain data, and the one place they become [`OAuthOptions`].
//!
//! Both bindings take OAuth settings as values (a dict the Python `OAuth` class builds, the
//! `auth` object of the Node `Client.http`) and used to read them into `OAuthOptions` each in
//! its own way, so a rule (a secret needs a client id, which grants exist) could drift
//! between them. [`OAuthSettings`] is that data once, deserialisable from either spelling
//! (Python sends `client_id`, JavaScript `clientId`), and [`OAuthSettings::into_options`]
//! applies every rule. A binding converts its value, calls it, attaches what only it has
//! (the user step as an [`Authorizer`](super::Authorizer), a host-language token store) and
//! maps the error. [`SettingsError`] keeps the names of the settings at fault apart from the
//! sentence, so each binding can name them as its users typed them ([`Spelling`]).

use std::{fmt, sync::Arc};

use serde::Deserialize;

use super::{
    ClientAssertionKey, ClientCredentials, EnterpriseIdentity, FileStore, Grant, OAuthOptions,
    TargetPolicy, TokenEndpointAuth,
};
use crate::Error;

/// The client name when the settings give none (a binding usually fills in its own).
pub const DEFAULT_CLIENT_NAME: &str = "oxmcp";

/// The redirect URI when the settings give none: a headless flow never connects to it, it
/// only recognises the authorization server's redirect to it.
pub const DEFAULT_REDIRECT_URI: &str = "http://localhost/callback";

const GRANTS: &[&str] = &["authorization_code", "client_credentials", "enterprise"];
const TOKEN_ENDPOINT_AUTHS: &[&str] = &[
    "none",
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
];
const APPLICATION_TYPES: &[&str] = &["native", "web"];

/// How a client authorizes, as data. Every field is optional (`null` counts as absent, as
/// Python's `None` arrives); unknown fields are refused, so a misspelt setting is an error
/// rather than silently the default. Each field also accepts its camelCase name.
#[derive(Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// Shown on the consent screen (dynamic registration); default [`DEFAULT_CLIENT_NAME`].
    #[serde(alias = "clientName")]
    pub client_name: Option<String>,
    /// Where the authorization server sends the user back; default [`DEFAULT_REDIRECT_URI`].
    #[serde(alias = "redirectUri")]
    pub redirect_uri: Option<String>,
    /// A pre-registered client id.
    #[serde(alias = "clientId")]
    pub client_id: Option<String>,
    /// Its secret (a confidential client); needs `client_id`.
    #[serde(alias = "clientSecret")]
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`; needs
    /// `client_id`. Absent: chosen from the server's metadata.
    #[serde(alias = "tokenEndpointAuth")]
    pub token_endpoint_auth: Option<String>,
    /// An https URL serving this client's metadata document.
    #[serde(alias = "clientMetadataUrl")]
    pub client_metadata_url: Option<String>,
    /// `native` (default) or `web`.
    #[serde(alias = "applicationType")]
    pub application_type: Option<String>,
    /// `authorization_code` (default), `client_credentials` or `enterprise`.
    pub grant: Option<String>,
    /// An ES256 key (PKCS#8 PEM) for `private_key_jwt`.
    #[serde(alias = "privateKeyPem")]
    pub private_key_pem: Option<String>,
    /// The `kid` of that key.
    #[serde(alias = "keyId")]
    pub key_id: Option<String>,
    /// The enterprise grant's identity provider as one object (the Node spelling); giving it
    /// selects that grant.
    pub enterprise: Option<EnterpriseSettings>,
    /// The enterprise grant's identity provider as flat fields (the Python spelling), read
    /// when `grant` is `enterprise` and `enterprise` is absent.
    #[serde(alias = "idpTokenEndpoint")]
    pub idp_token_endpoint: Option<String>,
    /// See [`OAuthSettings::idp_token_endpoint`].
    #[serde(alias = "idpClientId")]
    pub idp_client_id: Option<String>,
    /// See [`OAuthSettings::idp_token_endpoint`].
    #[serde(alias = "idpIdToken")]
    pub idp_id_token: Option<String>,
    /// Ask for `offline_access` (a refresh token) where offered; default true.
    #[serde(alias = "offlineAccess")]
    pub offline_access: Option<bool>,
    /// Let discovery and token requests reach loopback addresses.
    #[serde(alias = "allowLoopback")]
    pub allow_loopback: Option<bool>,
    /// Let them reach private and link-local addresses.
    #[serde(alias = "allowPrivate")]
    pub allow_private: Option<bool>,
    /// Origins allowed whatever their address.
    #[serde(alias = "allowOrigins")]
    pub allow_origins: Option<Vec<String>>,
    /// Keep registrations and tokens in this directory (files 0600) instead of memory. The
    /// Node option has always been called `tokenStore`; Python's `token_store` is an object
    /// and never reaches this struct.
    #[serde(alias = "tokenStore")]
    pub token_dir: Option<String>,
}

// Secrets (the client secret, the key, the ID token) stay out of logs.
impl fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_id", &self.client_id)
            .field("grant", &self.grant)
            .field("token_dir", &self.token_dir)
            .finish_non_exhaustive()
    }
}

/// SEP-990's identity-provider side, as one object.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct EnterpriseSettings {
    /// The IdP's token endpoint.
    #[serde(alias = "idpTokenEndpoint")]
    pub idp_token_endpoint: String,
    /// This client's id at the IdP.
    #[serde(alias = "idpClientId")]
    pub idp_client_id: String,
    /// The user's ID token from the IdP.
    #[serde(alias = "idToken")]
    pub id_token: String,
}

impl fmt::Debug for EnterpriseSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseSettings")
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .finish_non_exhaustive()
    }
}

/// How a binding's users spell setting names, for [`SettingsError::message`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// `client_id` (Python, the CLI).
    Snake,
    /// `clientId` (JavaScript).
    Camel,
}

impl Spelling {
    fn name(self, snake: &str) -> String {
        match self {
            Spelling::Snake => snake.to_owned(),
            Spelling::Camel => {
                let mut out = String::with_capacity(snake.len());
                let mut upper = false;
                for c in snake.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }
}

/// Settings [`OAuthSettings::into_options`] refuses. Names are the snake_case field names;
/// [`SettingsError::message`] spells them for a binding.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum SettingsError {
    /// A setting's value is not one the core knows.
    Unknown {
        /// The setting.
        setting: &'static str,
        /// What was given.
        given: String,
        /// What is accepted (values, not names: they are spelt the same everywhere).
        accepted: &'static [&'static str],
    },
    /// A setting that means nothing without another one.
    Without {
        /// The setting given.
        setting: &'static str,
        /// The one it needs.
        needs: &'static str,
    },
    /// A grant that needs a setting that is absent.
    Incomplete {
        /// The grant.
        grant: &'static str,
        /// The setting it needs.
        needs: &'static str,
    },
    /// Two settings that contradict each other.
    Conflict {
        /// One setting.
        setting: &'static str,
        /// The other.
        with: &'static str,
    },
    /// A value that names something unusable (a key that is not a key, a directory that
    /// cannot be created); the core's own error, kind and all.
    Unusable(Error),
}

impl SettingsError {
    /// The message, with setting names spelt `spelling`'s way.
    pub fn message(&self, spelling: Spelling) -> String {
        let name = |n: &str| spelling.name(n);
        match self {
            SettingsError::Unknown {
                setting,
                given,
                accepted,
            } => format!(
                "unknown {} `{given}` (one of: {})",
                name(setting),
                accepted.join(", ")
            ),
            SettingsError::Without { setting, needs } => {
                format!("{} without {}", name(setting), name(needs))
            }
            SettingsError::Incomplete { grant, needs } => {
                format!("the {grant} grant needs {}", name(needs))
            }
            SettingsError::Conflict { setting, with } => {
                format!("{} and {}: give one", name(setting), name(with))
            }
            SettingsError::Unusable(e) => e.to_string(),
        }
    }
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(Spelling::Snake))
    }
}

impl std::error::Error for SettingsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SettingsError::Unusable(e) => Some(e),
            _ => None,
        }
    }
}

/// A refused setting is the caller's mistake (`InvalidArgument`); an unusable value keeps the
/// kind the core gave it (an I/O error creating the token directory stays `Io`).
impl From<SettingsError> for Error {
    fn from(e: SettingsError) -> Self {
        match e {
            SettingsError::Unusable(e) => e,
            other => Error::InvalidArgument(other.to_string()),
        }
    }
}

impl OAuthSettings {
    /// The core's options. The authorizer and token store stay the defaults (headless, in
    /// memory, or the `token_dir` files): a binding attaches its own callbacks afterwards.
    /// The redirect URI is checked by [`OAuthClient::new`](super::OAuthClient::new), where
    /// every way of building options meets.
    pub fn into_options(self) -> Result<OAuthOptions, SettingsError> {
        let mut o = OAuthOptions::new(
            self.client_name.as_deref().unwrap_or(DEFAULT_CLIENT_NAME),
            self.redirect_uri.as_deref().unwrap_or(DEFAULT_REDIRECT_URI),
        );
        o.client = credentials(self.client_id, self.client_secret, self.token_endpoint_auth)?;
        o.client_metadata_url = self.client_metadata_url;
        if let Some(kind) = self.application_type {
            if !APPLICATION_TYPES.contains(&kind.as_str()) {
                return Err(SettingsError::Unknown {
                    setting: "application_type",
                    given: kind,
                    accepted: APPLICATION_TYPES,
                });
            }
            o.application_type = kind;
        }
        o.grant = grant(
            self.grant,
            self.enterprise,
            [
                ("idp_token_endpoint", self.idp_token_endpoint),
                ("idp_client_id", self.idp_client_id),
                ("idp_id_token", self.idp_id_token),
            ],
        )?;
        if let Some(pem) = self.private_key_pem {
            let key = ClientAssertionKey::es256_from_pem(&pem, self.key_id)
                .map_err(SettingsError::Unusable)?;
            o.signing_key = Some(Arc::new(key));
        }
        if let Some(offline) = self.offline_access {
            o.offline_access = offline;
        }
        let mut targets = TargetPolicy::public_only();
        if self.allow_loopback == Some(true) {
            targets = targets.allow_loopback();
        }
        if self.allow_private == Some(true) {
            targets = targets.allow_private();
        }
        for origin in self.allow_origins.unwrap_or_default() {
            targets = targets.allow_origin(origin);
        }
        o.targets = targets;
        if let Some(dir) = self.token_dir {
            o.store = Arc::new(FileStore::new(dir).map_err(SettingsError::Unusable)?);
        }
        Ok(o)
    }
}

/// Pre-registered credentials; a secret or an auth method without an id would be silently
/// unused, so it is refused.
fn credentials(
    id: Option<String>,
    secret: Option<String>,
    method: Option<String>,
) -> Result<Option<ClientCredentials>, SettingsError> {
    let Some(id) = id else {
        return match (secret, method) {
            (Some(_), _) => Err(SettingsError::Without {
                setting: "client_secret",
                needs: "client_id",
            }),
            (None, Some(_)) => Err(SettingsError::Without {
                setting: "token_endpoint_auth",
                needs: "client_id",
            }),
            (None, None) => Ok(None),
        };
    };
    let mut creds = match secret {
        Some(secret) => ClientCredentials::confidential(id, secret),
        None => ClientCredentials::public(id),
    };
    if let Some(method) = method {
        creds.auth_method = Some(TokenEndpointAuth::parse(&method).ok_or(
            SettingsError::Unknown {
                setting: "token_endpoint_auth",
                given: method,
                accepted: TOKEN_ENDPOINT_AUTHS,
            },
        )?);
    }
    Ok(Some(creds))
}

/// The grant: named by `grant`, or the enterprise one when its identity provider is given as
/// an object (which is how the Node option has always selected it).
fn grant(
    named: Option<String>,
    enterprise: Option<EnterpriseSettings>,
    flat: [(&'static str, Option<String>); 3],
) -> Result<Grant, SettingsError> {
    match (named.as_deref(), enterprise) {
        (Some(g), _) if !GRANTS.contains(&g) => Err(SettingsError::Unknown {
            setting: "grant",
            given: g.to_owned(),
            accepted: GRANTS,
        }),
        (Some("client_credentials"), Some(_)) => Err(SettingsError::Conflict {
            setting: "enterprise",
            with: "grant",
        }),
        (Some("client_credentials"), None) => Ok(Grant::ClientCredentials),
        (_, Some(e)) => Ok(Grant::EnterpriseManaged(EnterpriseIdentity {
            idp_token_endpoint: e.idp_token_endpoint,
            idp_client_id: e.idp_client_id,
            id_token: e.id_token,
        })),
        (Some("enterprise"), None) => {
            let [endpoint, client, token] = flat.map(|(needs, v)| {
                v.ok_or(SettingsError::Incomplete {
                    grant: "enterprise",
                    needs,
                })
            });
            Ok(Grant::EnterpriseManaged(EnterpriseIdentity {
                idp_token_endpoint: endpoint?,
                idp_client_id: client?,
                id_token: token?,
            }))
        }
        _ => Ok(Grant::AuthorizationCode),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{ErrorKind, auth::OAuthClient};

    fn settings(v: Value) -> Result<OAuthSettings, serde_json::Error> {
        serde_json::from_value(v)
    }

    fn refused(v: Value) -> SettingsError {
        settings(v).unwrap().into_options().unwrap_err()
    }

    /// A fresh P-256 key as PKCS#8 PEM.
    fn pem() -> String {
        use base64::{Engine, engine::general_purpose::STANDARD};
        use ring::{
            rand::SystemRandom,
            signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair},
        };
        let doc =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .unwrap();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(doc.as_ref())
        )
    }

    #[test]
    fn empty_settings_are_a_public_authorization_code_client() {
        let o = settings(json!({})).unwrap().into_options().unwrap();
        assert_eq!(o.client_name, DEFAULT_CLIENT_NAME);
        assert_eq!(o.redirect_uri, DEFAULT_REDIRECT_URI);
        assert!(o.client.is_none());
        assert!(matches!(o.grant, Grant::AuthorizationCode));
        assert!(o.offline_access);
        assert_eq!(o.application_type, "native");
        assert!(OAuthClient::new(o).is_ok());
    }

    #[test]
    fn both_spellings_read_the_same_settings() {
        let snake = json!({
            "client_name": "app", "redirect_uri": "http://localhost:3000/cb",
            "client_id": "id", "client_secret": "s", "token_endpoint_auth": "client_secret_post",
            "client_metadata_url": "https://app.example/meta.json", "application_type": "web",
            "offline_access": false, "allow_loopback": true, "allow_private": null,
            "allow_origins": ["https://idp.example"],
        });
        let camel = json!({
            "clientName": "app", "redirectUri": "http://localhost:3000/cb",
            "clientId": "id", "clientSecret": "s", "tokenEndpointAuth": "client_secret_post",
            "clientMetadataUrl": "https://app.example/meta.json", "applicationType": "web",
            "offlineAccess": false, "allowLoopback": true, "allowPrivate": null,
            "allowOrigins": ["https://idp.example"],
        });
        for v in [snake, camel] {
            let o = settings(v).unwrap().into_options().unwrap();
            assert_eq!(o.client_name, "app");
            assert_eq!(o.redirect_uri, "http://localhost:3000/cb");
            let creds = o.client.as_ref().unwrap();
            assert_eq!(creds.client_id, "id");
            assert_eq!(creds.auth_method, Some(TokenEndpointAuth::ClientSecretPost));
            assert_eq!(
                o.client_metadata_url.as_deref(),
                Some("https://app.example/meta.json")
            );
            assert_eq!(o.application_type, "web");
            assert!(!o.offline_access);
            assert_eq!(
                format!("{:?}", o.targets),
                format!(
                    "{:?}",
                    TargetPolicy::public_only()
                        .allow_loopback()
                        .allow_origin("https://idp.example")
                )
            );
        }
    }

    #[test]
    fn the_enterprise_grant_reads_the_object_or_the_flat_fields() {
        let object = json!({"enterprise": {
            "idpTokenEndpoint": "https://idp.example/token", "idpClientId": "c", "idToken": "t"
        }});
        let flat = json!({
            "grant": "enterprise", "idp_token_endpoint": "https://idp.example/token",
            "idp_client_id": "c", "idp_id_token": "t",
        });
        for v in [object, flat] {
            let Grant::EnterpriseManaged(id) = settings(v).unwrap().into_options().unwrap().grant
            else {
                panic!("not the enterprise grant");
            };
            assert_eq!(id.idp_token_endpoint, "https://idp.example/token");
            assert_eq!(
                (id.idp_client_id.as_str(), id.id_token.as_str()),
                ("c", "t")
            );
        }
        let o = settings(json!({"grant": "client_credentials", "client_id": "m"}))
            .unwrap()
            .into_options()
            .unwrap();
        assert!(matches!(o.grant, Grant::ClientCredentials));
    }

    #[test]
    fn a_signing_key_and_a_token_directory_are_built() {
        let dir = std::env::temp_dir().join(format!("oxmcp-settings-{}", std::process::id()));
        let o = settings(json!({
            "client_id": "id", "token_endpoint_auth": "private_key_jwt",
            "private_key_pem": pem(), "key_id": "k1", "token_dir": dir,
        }))
        .unwrap()
        .into_options()
        .unwrap();
        assert!(o.signing_key.is_some());
        assert!(dir.is_dir());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_refused_while_decoding() {
        let e = settings(json!({"client_nmae": "x"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `client_nmae`"), "{e}");
        assert!(e.contains("client_name"), "{e}");
        // `token_store` is Python's object, taken out by the binding; never a directory here.
        assert!(settings(json!({"token_store": "/tmp"})).is_err());
        assert!(settings(json!({"enterprise": {"idpTokenEndpoint": "x"}})).is_err());
        assert!(
            settings(
                json!({"enterprise": {"idp_token_endpoint": "x", "idp_client_id": "c",
            "id_token": "t", "extra": 1}})
            )
            .is_err()
        );
        for v in [
            json!({"client_id": 5}),
            json!({"allow_loopback": "yes"}),
            json!({"allow_origins": "https://a.example"}),
            json!({"offlineAccess": 1}),
            json!("settings"),
            json!(true),
        ] {
            let e = settings(v.clone()).unwrap_err().to_string();
            assert!(e.contains("invalid type"), "{v}: {e}");
        }
    }

    #[test]
    fn values_outside_their_set_name_the_setting_and_what_is_accepted() {
        let e = refused(json!({"client_id": "c", "token_endpoint_auth": "magic"}));
        assert_eq!(
            e.to_string(),
            "unknown token_endpoint_auth `magic` (one of: none, client_secret_basic, \
             client_secret_post, private_key_jwt)"
        );
        assert!(
            e.message(Spelling::Camel)
                .starts_with("unknown tokenEndpointAuth `magic`")
        );
        for name in TOKEN_ENDPOINT_AUTHS {
            assert!(TokenEndpointAuth::parse(name).is_some(), "{name}");
        }
        let e = refused(json!({"grant": "password"}));
        assert_eq!(
            e.to_string(),
            "unknown grant `password` (one of: authorization_code, client_credentials, enterprise)"
        );
        let e = refused(json!({"applicationType": "desktop"}));
        assert_eq!(
            e.message(Spelling::Camel),
            "unknown applicationType `desktop` (one of: native, web)"
        );
        let core: Error = e.into();
        assert_eq!(core.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn settings_that_would_be_silently_unused_are_refused() {
        let e = refused(json!({"client_secret": "s"}));
        assert_eq!(e.to_string(), "client_secret without client_id");
        assert_eq!(e.message(Spelling::Camel), "clientSecret without clientId");
        let e = refused(json!({"token_endpoint_auth": "none"}));
        assert_eq!(e.to_string(), "token_endpoint_auth without client_id");
        let e = refused(json!({"grant": "enterprise", "idp_token_endpoint": "https://i/t"}));
        assert_eq!(e.to_string(), "the enterprise grant needs idp_client_id");
        assert_eq!(
            e.message(Spelling::Camel),
            "the enterprise grant needs idpClientId"
        );
        let e = refused(json!({"grant": "client_credentials", "enterprise": {
            "idp_token_endpoint": "x", "idp_client_id": "c", "id_token": "t"
        }}));
        assert_eq!(e.to_string(), "enterprise and grant: give one");
    }

    #[test]
    fn unusable_values_keep_the_core_error() {
        let e = refused(json!({"client_id": "c", "private_key_pem": "not a key"}));
        let core: Error = e.into();
        assert_eq!(core.kind(), ErrorKind::InvalidArgument);
        assert!(core.to_string().contains("private key"), "{core}");
        // A directory under a regular file cannot be created.
        let file = std::env::temp_dir().join(format!("oxmcp-settings-file-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        let e = refused(json!({"token_dir": file.join("tokens")}));
        assert!(matches!(e, SettingsError::Unusable(_)), "{e}");
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn a_hostile_redirect_uri_is_refused_when_the_client_is_built() {
        for bad in [
            "javascript:alert(1)",
            "http://localhost/cb\r\nX-Evil: 1",
            "file:///etc/passwd",
        ] {
            let o = settings(json!({"redirect_uri": bad}))
                .unwrap()
                .into_options()
                .unwrap();
            let e = OAuthClient::new(o).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}");
            assert!(e.to_string().contains("redirect_uri"), "{bad}: {e}");
        }
    }
}
