//! `tools/call` with the arguments and the result as JSON text.
//!
//! A binding whose language holds JSON as text (Node: `JSON.stringify` in, `JSON.parse` out)
//! would otherwise pay for four passes over data that crosses unchanged: the arguments parsed
//! into a `Value` and encoded again into the request, the result parsed into a `Value`,
//! decoded into [`CallToolResult`] and encoded once more for the binding. Here the arguments are
//! checked (one JSON object) and spliced into the request as they came, and the result is
//! checked against [`CallToolResult`] and handed back as the text the server sent. The typed
//! `call_tool_with` takes the same road in the handshake era: its arguments are encoded once,
//! straight into the request, and its result decoded once, straight from the response.

use serde_json::{Value, value::RawValue};

use super::Client;
use crate::{
    Error, Result,
    protocol::{CallToolResult, methods},
    session::RequestOptions,
};

impl Client {
    /// [`Client::call_tool_with`] for callers that hold JSON text: `arguments` is a JSON
    /// object (or `null`, or `None`, for none) and the answer is the result's JSON, already
    /// checked to be a valid `CallToolResult`.
    pub async fn call_tool_json(
        &self,
        name: &str,
        arguments: Option<&str>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>> {
        self.refuse_task_only(name)?;
        let arguments = match arguments {
            None => None,
            Some(text) => {
                let raw: &RawValue = serde_json::from_str(text).map_err(|e| {
                    Error::InvalidArgument(format!("tool arguments are not valid JSON: {e}"))
                })?;
                match raw.get().as_bytes().first() {
                    Some(b'{') => Some(raw),
                    _ if raw.get() == "null" => None,
                    _ => {
                        return Err(Error::InvalidArgument(
                            "tool arguments must be a JSON object".into(),
                        ));
                    }
                }
            }
        };
        if self.inner.stateless_meta.is_some() {
            // A stateless request merges `_meta` and may come back asking for input: both
            // work on values, so this era takes the typed path.
            let arguments = match arguments {
                Some(raw) => serde_json::from_str(raw.get()).map_err(|e| {
                    Error::InvalidArgument(format!("tool arguments are not valid JSON: {e}"))
                })?,
                None => Value::Null,
            };
            let result = self.call_tool_with(name, arguments, options).await?;
            return serde_json::value::to_raw_value(&result)
                .map_err(|e| Error::Protocol(format!("`tools/call` result: {e}")));
        }

        let result = self
            .call_tool_encoded(name, arguments, options)
            .await
            .map_err(|e| super::tasks::task_required(name, e))?;
        serde_json::from_str::<CallToolResult>(result.get()).map_err(invalid_result)?;
        Ok(result)
    }

    /// Sends `tools/call` with `arguments` (a checked JSON object) spliced in as they are and
    /// returns the result unparsed. Handshake era only: a stateless request works on values.
    pub(super) async fn call_tool_encoded(
        &self,
        name: &str,
        arguments: Option<&RawValue>,
        mut options: RequestOptions,
    ) -> Result<Box<RawValue>> {
        let session = &self.inner.session;
        let id = options.id.take().unwrap_or_else(|| session.allocate_id());
        // A progress token is always attached: progress keeps a long call alive.
        options.request_progress = true;
        let mut params =
            Vec::with_capacity(64 + name.len() + arguments.map_or(0, |a| a.get().len()));
        params.extend_from_slice(br#"{"name":"#);
        serde_json::to_writer(&mut params, name)
            .map_err(|e| Error::InvalidArgument(format!("tool name: {e}")))?;
        if let Some(arguments) = arguments {
            params.extend_from_slice(br#","arguments":"#);
            params.extend_from_slice(arguments.get().as_bytes());
        }
        params.extend_from_slice(br#","_meta":{"progressToken":"#);
        id.write_json(&mut params);
        params.extend_from_slice(b"}}");
        // Built from a JSON string, a checked JSON object and an id, so this check (a scan,
        // no allocation) cannot fail; it keeps the invariant without `unsafe`.
        let params = String::from_utf8(params)
            .map_err(|e| e.to_string())
            .and_then(|text| RawValue::from_string(text).map_err(|e| e.to_string()))
            .map_err(|e| Error::InvalidArgument(format!("`tools/call` params: {e}")))?;

        session
            .request_encoded(methods::TOOLS_CALL, Some(params), id, options)
            .await
    }
}

/// A `tools/call` result that is not a `CallToolResult`.
pub(super) fn invalid_result(e: serde_json::Error) -> Error {
    Error::Protocol(format!("invalid `tools/call` result: {e}"))
}
