//! What a client answers when a server asks: sampling, elicitation and roots.
//!
//! The same handlers serve both eras: a handshake-era server sends the request over the
//! connection; a stateless server embeds it in an `InputRequiredResult` and the client
//! retries with the answers. Handlers are trait objects so bindings can wrap host callables.

use std::future::Future;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    jsonrpc::ErrorObject,
    protocol::{
        CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
        ElicitResult, ListRootsResult,
    },
};

/// Answers `sampling/createMessage` with the host's model.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Produces the model's message. `cancel` fires if the server withdraws the request.
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>>;
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(CreateMessageRequestParams, CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
{
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(self(params, cancel))
    }
}

/// Answers `elicitation/create` by asking the user.
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Shows the form (or URL) and returns what the user did.
    fn elicit(
        &self,
        params: ElicitRequestParams,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>>;
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitRequestParams, CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
{
    fn elicit(
        &self,
        params: ElicitRequestParams,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        Box::pin(self(params, cancel))
    }
}

/// Answers `roots/list`.
pub trait RootsHandler: Send + Sync + 'static {
    /// The client's current roots.
    fn list_roots(
        &self,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ListRootsResult, ErrorObject>>;
}

impl<F, Fut> RootsHandler for F
where
    F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ListRootsResult, ErrorObject>> + Send + 'static,
{
    fn list_roots(
        &self,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ListRootsResult, ErrorObject>> {
        Box::pin(self(cancel))
    }
}

/// SEP-1034: an accepted form answer gets the schema's default for every field the user left
/// out, so servers see complete answers whatever the client's UI did.
pub(crate) fn apply_defaults(params: &ElicitRequestParams, result: &mut ElicitResult) {
    if result.action != ElicitAction::Accept {
        return;
    }
    let Some(properties) = params
        .requested_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return;
    };
    let content = result.content.get_or_insert_with(Default::default);
    for (name, schema) in properties {
        if let Some(default) = schema.get("default") {
            content
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn defaults_fill_only_missing_fields_of_accepted_answers() {
        let params = ElicitRequestParams::form(
            "m",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "Anon"},
                "age": {"type": "integer", "default": 30},
                "plain": {"type": "string"}
            }}),
        );
        let mut accepted = ElicitResult::accept(json!({"age": 41}));
        apply_defaults(&params, &mut accepted);
        assert_eq!(
            Value::Object(accepted.content.unwrap()),
            json!({"age": 41, "name": "Anon"})
        );
        let mut declined = ElicitResult::decline();
        apply_defaults(&params, &mut declined);
        assert!(declined.content.is_none());
    }
}
