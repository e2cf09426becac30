//! `oxmcp.OAuth` to the core's `OAuthClient` (`oxmcp::auth`).
//!
//! The whole OAuth 2.1 flow (discovery, registration, PKCE, token exchange, refresh, step-up,
//! the target policy that keeps discovery off private addresses) is the core's; this file
//! reads the Python settings (a dict the Python `OAuth` class builds) into `OAuthOptions` and
//! adapts the one callback, the user step: a Python callable taking the authorization URL and
//! returning the URL the authorization server redirected to. Without one the core's headless
//! authorizer follows the redirects itself (tests, CLIs, auto-approving servers).

use std::sync::Arc;

use futures::future::BoxFuture;
use oxmcp::{
    Error,
    auth::{
        Authorizer, ClientAssertionKey, ClientCredentials, EnterpriseIdentity, FileStore, Grant,
        OAuthClient, OAuthOptions, StoredAuth, TargetPolicy, TokenEndpointAuth, TokenStore,
    },
};
use pyo3::{prelude::*, types::PyTuple};
use serde_json::Value;

use crate::{
    callable::{Callable, LoopSlot},
    convert,
    errors::to_pyerr,
    runtime::LoopHandle,
};

fn invalid(message: impl Into<String>) -> PyErr {
    to_pyerr(Error::InvalidArgument(message.into()))
}

/// The Python user step as the core's [`Authorizer`].
struct PyAuthorizer(Callable);

impl Authorizer for PyAuthorizer {
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, Error>> {
        let callable = self.0.clone();
        Box::pin(async move {
            let out = callable
                .call("the authorizer's redirect URL", move |py| {
                    PyTuple::new(py, [url])
                })
                .await
                .map_err(|e| {
                    let message =
                        crate::runtime::attach(|py| e.value(py).to_string()).unwrap_or_default();
                    Error::Auth(format!("the authorizer raised: {message}"))
                })?;
            match out {
                Value::String(s) => Ok(s),
                other => Err(Error::Auth(format!(
                    "the authorizer must return the redirect URL as a string, not `{other}`"
                ))),
            }
        })
    }
}

/// A Python token store (an object with `load(key)`, `save(key, value)` and `remove(key)`,
/// values as plain dicts) as the core's [`TokenStore`]. The trait is synchronous because the
/// flow touches the store once per authorization, so the methods are plain `def`s, called
/// with the GIL taken for the call only.
struct PyStore(Py<PyAny>);

impl PyStore {
    fn call(&self, method: &str, args: Vec<Value>) -> Result<Value, Error> {
        crate::runtime::attach(|py| {
            let args: Vec<Py<PyAny>> = args
                .iter()
                .map(|a| convert::to_py(py, a))
                .collect::<PyResult<_>>()?;
            let out = self
                .0
                .bind(py)
                .call_method1(method, PyTuple::new(py, args)?)?;
            convert::from_py(&out, "the token store's answer")
        })
        .unwrap_or_else(|| Err(pyo3::exceptions::PyRuntimeError::new_err("exiting")))
        .map_err(|e| {
            let message = crate::runtime::attach(|py| e.value(py).to_string()).unwrap_or_default();
            Error::Auth(format!("the token store's `{method}` raised: {message}"))
        })
    }
}

impl TokenStore for PyStore {
    fn load(&self, key: &str) -> Result<Option<StoredAuth>, Error> {
        match self.call("load", vec![Value::String(key.to_owned())])? {
            Value::Null => Ok(None),
            v => serde_json::from_value(v)
                .map(Some)
                .map_err(|e| Error::Auth(format!("the token store's `load` answer: {e}"))),
        }
    }

    fn save(&self, key: &str, value: &StoredAuth) -> Result<(), Error> {
        let value = serde_json::to_value(value).map_err(|e| Error::Auth(e.to_string()))?;
        self.call("save", vec![Value::String(key.to_owned()), value])
            .map(drop)
    }

    fn remove(&self, key: &str) -> Result<(), Error> {
        self.call("remove", vec![Value::String(key.to_owned())])
            .map(drop)
    }
}

/// Builds the core's OAuth client from the settings dict (see `oxmcp/auth.py`).
pub fn oauth_client(
    py: Python<'_>,
    cfg: &Bound<'_, PyAny>,
    handle: &LoopHandle,
) -> PyResult<Arc<OAuthClient>> {
    let get =
        |key: &str| -> Option<Bound<'_, PyAny>> { cfg.get_item(key).ok().filter(|v| !v.is_none()) };
    let text = |key: &str| -> PyResult<Option<String>> {
        get(key).map(|v| v.extract::<String>()).transpose()
    };
    let flag =
        |key: &str| -> PyResult<bool> { get(key).map_or(Ok(false), |v| v.extract::<bool>()) };
    let client_name = text("client_name")?.unwrap_or_else(|| "oxmcp-python".into());
    let redirect_uri =
        text("redirect_uri")?.unwrap_or_else(|| "http://localhost:3000/callback".into());
    let mut o = OAuthOptions::new(client_name, redirect_uri);
    let mut targets = TargetPolicy::public_only();
    if flag("allow_loopback")? {
        targets = targets.allow_loopback();
    }
    if flag("allow_private")? {
        targets = targets.allow_private();
    }
    o.targets = targets;
    o.client_metadata_url = text("client_metadata_url")?;
    if let Some(v) = get("offline_access") {
        o.offline_access = v.extract()?;
    }
    if let Some(id) = text("client_id")? {
        let mut creds = match text("client_secret")? {
            Some(secret) => ClientCredentials::confidential(id, secret),
            None => ClientCredentials::public(id),
        };
        if let Some(method) = text("token_endpoint_auth")? {
            creds.auth_method = Some(TokenEndpointAuth::parse(&method).ok_or_else(|| {
                invalid(format!(
                    "token_endpoint_auth `{method}` (none, client_secret_basic, \
                     client_secret_post, private_key_jwt)"
                ))
            })?);
        }
        o.client = Some(creds);
    } else if text("client_secret")?.is_some() {
        return Err(invalid("client_secret without client_id"));
    }
    if let Some(pem) = text("private_key_pem")? {
        let key = ClientAssertionKey::es256_from_pem(&pem, text("key_id")?).map_err(to_pyerr)?;
        o.signing_key = Some(Arc::new(key));
    }
    o.grant = match text("grant")?.as_deref() {
        None | Some("authorization_code") => Grant::AuthorizationCode,
        Some("client_credentials") => Grant::ClientCredentials,
        Some("enterprise") => {
            let need = |k: &str| -> PyResult<String> {
                text(k)?.ok_or_else(|| invalid(format!("the enterprise grant needs `{k}`")))
            };
            Grant::EnterpriseManaged(EnterpriseIdentity {
                idp_token_endpoint: need("idp_token_endpoint")?,
                idp_client_id: need("idp_client_id")?,
                id_token: need("idp_id_token")?,
            })
        }
        Some(other) => {
            return Err(invalid(format!(
                "unknown grant `{other}` (authorization_code, client_credentials, enterprise)"
            )));
        }
    };
    match (text("token_dir")?, get("token_store")) {
        (Some(_), Some(_)) => return Err(invalid("token_dir and token_store: give one")),
        (Some(dir), None) => o.store = Arc::new(FileStore::new(dir).map_err(to_pyerr)?),
        (None, Some(store)) => {
            for method in ["load", "save", "remove"] {
                if !store.hasattr(method)? {
                    return Err(invalid(format!("token_store has no `{method}` method")));
                }
            }
            o.store = Arc::new(PyStore(store.unbind()));
        }
        (None, None) => {}
    }
    if let Some(func) = get("authorizer") {
        if !func.is_callable() {
            return Err(invalid(
                "authorizer must be a callable: authorization URL -> redirect URL",
            ));
        }
        let is_async = py
            .import("inspect")?
            .call_method1("iscoroutinefunction", (&func,))?
            .is_truthy()?;
        let slot = LoopSlot::fixed(handle.clone());
        o.authorizer = Some(Arc::new(PyAuthorizer(Callable::new(
            func.unbind(),
            is_async,
            slot,
        ))));
    }
    if let Some(certs) = get("root_certificates") {
        let certs: Vec<Vec<u8>> = certs.extract()?;
        o.extra_root_certificates = certs;
    }
    OAuthClient::new(o).map(Arc::new).map_err(to_pyerr)
}
