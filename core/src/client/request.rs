//! Any request to the server. In the stateless era each one carries our version,
//! capabilities and identity in `_meta`, and a result that asks for input
//! (`InputRequiredResult`) is answered with this client's handlers and the request sent again
//! with the answers, round after round, until it completes.

use std::{collections::BTreeMap, sync::Arc};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Client;
use crate::{
    Error, Result,
    protocol::{InputRequest, InputRequiredResult, JsonObject},
    session::RequestOptions,
};

impl Client {
    /// Sends any request, adding the stateless `_meta` when the era needs it, and returns
    /// the result as JSON. In the stateless era a result that asks for input
    /// (`InputRequiredResult`) is answered with this client's handlers and the request
    /// retried, until it completes.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value> {
        let Some(meta) = &self.inner.stateless_meta else {
            return self.inner.session.request(method, params, options).await;
        };
        let mut params = merge_meta(params, meta)?;
        let mut options = options;
        // Every round is a new request with its own options; progress reaches the same callback.
        let progress = options
            .on_progress
            .take()
            .map(|f| Arc::new(crate::sync::Mutex::new(f)));
        for _ in 0..self.inner.max_input_rounds {
            let mut round = RequestOptions {
                timeout: options.timeout,
                max_total_timeout: options.max_total_timeout,
                reset_timeout_on_progress: options.reset_timeout_on_progress,
                request_progress: options.request_progress,
                cancel: options.cancel.clone(),
                route: options.route.clone(),
                id: options.id.take(),
                on_progress: None,
            };
            if let Some(progress) = &progress {
                let progress = progress.clone();
                round.on_progress = Some(Box::new(move |p| (progress.lock())(p)));
            }
            let value = self
                .inner
                .session
                .request(method, Some(params.clone()), round)
                .await?;
            match value.get("resultType").and_then(Value::as_str) {
                // A task (the caller asked for one; see `tasks`) is the caller's to follow.
                None | Some("complete" | "task") => return Ok(value),
                Some("input_required") => {
                    let asked: InputRequiredResult =
                        serde_json::from_value(value).map_err(|e| {
                            Error::Protocol(format!(
                                "invalid InputRequiredResult for `{method}`: {e}"
                            ))
                        })?;
                    let requests = asked.input_requests.unwrap_or_default();
                    let answers = self
                        .answer_inputs(method, requests, options.cancel.clone())
                        .await?;
                    if let Value::Object(map) = &mut params {
                        map.insert("inputResponses".into(), Value::Object(answers));
                        match asked.request_state {
                            Some(state) => map.insert("requestState".into(), Value::String(state)),
                            None => map.remove("requestState"),
                        };
                    }
                }
                Some(other) => {
                    return Err(Error::Protocol(format!(
                        "`{method}` returned unknown resultType `{other}`"
                    )));
                }
            }
        }
        Err(Error::Protocol(format!(
            "`{method}` still asked for input after {} rounds",
            self.inner.max_input_rounds
        )))
    }

    /// Answers the questions of an `InputRequiredResult` with this client's handlers.
    pub(super) async fn answer_inputs(
        &self,
        method: &str,
        requests: BTreeMap<String, InputRequest>,
        cancel: Option<CancellationToken>,
    ) -> Result<JsonObject> {
        let cancel = cancel.unwrap_or_default();
        let answers = futures::future::join_all(requests.into_iter().map(|(key, request)| {
            let handlers = self.inner.handlers.clone();
            let cancel = cancel.clone();
            async move {
                let answer = handlers
                    .answer(&request.method, request.params, cancel)
                    .await;
                (key, request.method, answer)
            }
        }))
        .await;
        let mut out = JsonObject::new();
        for (key, asked, answer) in answers {
            match answer {
                Ok(value) => {
                    out.insert(key, value);
                }
                Err(e) => {
                    return Err(Error::Protocol(format!(
                        "`{method}` asked for `{asked}`, which this client could not answer: {e}"
                    )));
                }
            }
        }
        Ok(out)
    }
}

/// Adds the stateless keys to a request's `_meta`, keeping whatever the caller put there.
fn merge_meta(params: Option<Value>, extra: &JsonObject) -> Result<Value> {
    let mut params = params.unwrap_or_else(|| json!({}));
    let Value::Object(map) = &mut params else {
        return Err(Error::InvalidArgument(
            "request params must be a JSON object".into(),
        ));
    };
    let meta = map.entry("_meta").or_insert_with(|| json!({}));
    let Value::Object(meta) = meta else {
        return Err(Error::InvalidArgument(
            "`_meta` must be a JSON object".into(),
        ));
    };
    for (k, v) in extra {
        meta.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Ok(params)
}
