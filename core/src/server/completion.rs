//! Argument completion handlers for prompt arguments and resource-template variables.

use std::{collections::BTreeMap, future::Future};

use futures::future::BoxFuture;

use super::Context;
use crate::{jsonrpc::ErrorObject, protocol::Completion};

/// Suggests values for one argument. `value` is what has been typed so far; `context` holds
/// the arguments already chosen (2025-06-18+).
pub trait CompletionHandler: Send + Sync + 'static {
    /// Returns suggestions (the server truncates them to 100).
    fn complete(
        &self,
        value: String,
        context: BTreeMap<String, String>,
        ctx: Context,
    ) -> BoxFuture<'static, Result<Completion, ErrorObject>>;
}

impl<F, Fut> CompletionHandler for F
where
    F: Fn(String, BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, ErrorObject>> + Send + 'static,
{
    fn complete(
        &self,
        value: String,
        context: BTreeMap<String, String>,
        ctx: Context,
    ) -> BoxFuture<'static, Result<Completion, ErrorObject>> {
        Box::pin(self(value, context, ctx))
    }
}
