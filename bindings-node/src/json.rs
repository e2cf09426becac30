//! JSON text in and out of the boundary, and the envelope a JavaScript handler settles with.

use napi::bindgen_prelude::{Either, Promise};
use oxmcp::jsonrpc::ErrorObject;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::invalid;

/// Parses JSON text that JavaScript produced with `JSON.stringify`, into `T`.
pub(crate) fn parse<T: DeserializeOwned>(what: &str, text: &str) -> napi::Result<T> {
    serde_json::from_str(text).map_err(|e| invalid(format!("{what}: {e}")))
}

/// Parses optional JSON text; `None` or `"null"` give `None`.
pub(crate) fn parse_opt(what: &str, text: Option<String>) -> napi::Result<Option<Value>> {
    match text {
        None => Ok(None),
        Some(t) => match parse::<Value>(what, &t)? {
            Value::Null => Ok(None),
            v => Ok(Some(v)),
        },
    }
}

/// Serialises a value for JavaScript (`JSON.parse` on the other side).
pub(crate) fn text<T: serde::Serialize>(value: &T) -> napi::Result<String> {
    serde_json::to_string(value).map_err(|e| invalid(format!("serialising a result: {e}")))
}

/// What a function wrapped by `lib/handlers.cjs` returns: its envelope when it finished
/// synchronously, a Promise of the envelope when it returned a thenable.
pub(crate) type Envelope = Either<String, Promise<String>>;

/// What `lib/handlers.cjs` puts before a string result it sends unencoded.
const STRING_TAG: char = '\u{1}';

/// How a JavaScript handler settled, as the shim in `lib/handlers.cjs` reports it.
pub(crate) enum Settled {
    /// It returned this value.
    Ok(Value),
    /// It threw (or rejected with) an ordinary error with this message.
    Threw(String),
    /// It threw an `McpError` on purpose: this protocol error.
    Rpc(ErrorObject),
}

impl Settled {
    /// Waits for what a threadsafe call of a wrapped function returned (`call_async_catch`'s
    /// result) and reads its envelope; a throw the shim could not catch is a failure.
    pub(crate) async fn from_call(returned: napi::Result<Envelope>) -> Settled {
        match returned {
            Err(e) => Settled::Threw(e.reason),
            Ok(Either::A(envelope)) => Settled::from_envelope(&envelope),
            Ok(Either::B(promise)) => match promise.await {
                Ok(envelope) => Settled::from_envelope(&envelope),
                Err(e) => Settled::Threw(e.reason),
            },
        }
    }

    /// Reads the shim's envelope: `{"ok": v}`, `{"threw": "msg"}` or `{"rpc": {code, message, data}}`,
    /// or a string result as itself behind [`STRING_TAG`].
    pub(crate) fn from_envelope(text: &str) -> Settled {
        if let Some(string) = text.strip_prefix(STRING_TAG) {
            return Settled::Ok(Value::String(string.to_owned()));
        }
        let mut value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return Settled::Threw(format!("handler result is not JSON: {e}")),
        };
        if let Some(v) = value.get_mut("ok") {
            return Settled::Ok(v.take());
        }
        if let Some(rpc) = value.get("rpc") {
            let code = rpc.get("code").and_then(Value::as_i64).unwrap_or(-32603);
            let message = rpc
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error")
                .to_owned();
            let mut obj = ErrorObject::new(code, message);
            if let Some(data) = rpc.get("data").filter(|d| !d.is_null()) {
                obj = obj.with_data(data.clone());
            }
            return Settled::Rpc(obj);
        }
        let message = value
            .get("threw")
            .and_then(Value::as_str)
            .unwrap_or("handler failed")
            .to_owned();
        Settled::Threw(message)
    }
}
