//! `oxmcp.OAuth` to the core's `OAuthClient` (`oxmcp::auth`).
//!
//! The whole OAuth 2.1 flow (discovery, registration, PKCE, token exchange, refresh, step-up,
//! the target policy that keeps discovery off private addresses) is the core's, and so is
//! reading the settings: the plain values of the dict the Python `OAuth` class builds cross
//! as JSON into the core's `OAuthSettings`. This file adapts what is a Python object: a
//! token store, and the user step, a Python callable taking the authorization URL and
//! returning the URL the authorization server redirected to. Without one the core's headless
//! authorizer follows the redirects itself (tests, CLIs, auto-approving servers).

use std::sync::Arc;

use futures::future::BoxFuture;
use oxmcp::{
    Error,
    auth::{Authorizer, OAuthClient, OAuthSettings, StoredAuth, TokenStore},
};
use pyo3::{
    prelude::*,
    types::{PyDict, PyTuple},
};
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

/// The settings that are Python objects rather than data: the user step, a token store and
/// extra root certificates (bytes). They are taken out before the rest crosses as JSON.
const NOT_DATA: [&str; 3] = ["authorizer", "token_store", "root_certificates"];

/// Builds the core's OAuth client from the settings dict (see `oxmcp/auth.py`): the data goes
/// through the core's [`OAuthSettings`], which applies every rule; the objects are adapted
/// here.
pub fn oauth_client(
    py: Python<'_>,
    cfg: &Bound<'_, PyAny>,
    handle: &LoopHandle,
) -> PyResult<Arc<OAuthClient>> {
    let cfg = cfg.cast::<PyDict>()?;
    let get = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(cfg.get_item(key)?.filter(|v| !v.is_none()))
    };
    let data = PyDict::new(py);
    for (key, value) in cfg.iter() {
        if !NOT_DATA.iter().any(|n| key.eq(*n).unwrap_or(false)) {
            data.set_item(key, value)?;
        }
    }
    let settings: OAuthSettings = convert::decode(
        convert::from_py(&data, "the OAuth settings")?,
        "OAuth settings",
    )?;
    // Checked before the core builds anything, so a refused store leaves no token directory.
    let store = match (settings.token_dir.is_some(), get("token_store")?) {
        (true, Some(_)) => return Err(invalid("token_dir and token_store: give one")),
        (false, Some(store)) => {
            for method in ["load", "save", "remove"] {
                if !store.hasattr(method)? {
                    return Err(invalid(format!("token_store has no `{method}` method")));
                }
            }
            Some(PyStore(store.unbind()))
        }
        (_, None) => None,
    };
    let mut o = settings.into_options().map_err(|e| to_pyerr(e.into()))?;
    if let Some(store) = store {
        o.store = Arc::new(store);
    }
    if let Some(func) = get("authorizer")? {
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
    if let Some(certs) = get("root_certificates")? {
        let certs: Vec<Vec<u8>> = certs.extract()?;
        o.extra_root_certificates = certs;
    }
    OAuthClient::new(o).map(Arc::new).map_err(to_pyerr)
}
