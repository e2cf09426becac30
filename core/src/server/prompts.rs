//! Prompts registered at runtime.

use std::{
    collections::{BTreeMap, HashMap},
    future::Future,
    sync::Arc,
};

use futures::future::BoxFuture;

use super::{Context, completion::CompletionHandler};
use crate::{
    Error,
    jsonrpc::ErrorObject,
    protocol::{GetPromptResult, Prompt},
};

/// What a prompt handler returns; an error is a JSON-RPC error (prompts have no `isError`).
pub type PromptResult = Result<GetPromptResult, ErrorObject>;

/// Renders a prompt from its arguments (required ones are checked before it is called).
pub trait PromptHandler: Send + Sync + 'static {
    /// Renders the prompt.
    fn get(
        &self,
        arguments: BTreeMap<String, String>,
        ctx: Context,
    ) -> BoxFuture<'static, PromptResult>;
}

impl<F, Fut> PromptHandler for F
where
    F: Fn(BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = PromptResult> + Send + 'static,
{
    fn get(
        &self,
        arguments: BTreeMap<String, String>,
        ctx: Context,
    ) -> BoxFuture<'static, PromptResult> {
        Box::pin(self(arguments, ctx))
    }
}

pub(crate) struct RegisteredPrompt {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Arc<dyn PromptHandler>,
    pub(crate) completions: HashMap<String, Arc<dyn CompletionHandler>>,
}

/// Prompts in registration order.
#[derive(Default)]
pub(crate) struct PromptRegistry {
    pub(crate) order: Vec<String>,
    pub(crate) by_name: HashMap<String, RegisteredPrompt>,
}

impl PromptRegistry {
    pub(crate) fn add(
        &mut self,
        prompt: Prompt,
        handler: Arc<dyn PromptHandler>,
    ) -> Result<(), Error> {
        if prompt.name.is_empty() {
            return Err(Error::InvalidArgument("a prompt needs a name".into()));
        }
        let name = prompt.name.clone();
        let completions = self
            .by_name
            .remove(&name)
            .map(|p| p.completions)
            .unwrap_or_default();
        if !self.order.contains(&name) {
            self.order.push(name.clone());
        }
        self.by_name.insert(
            name,
            RegisteredPrompt {
                prompt,
                handler,
                completions,
            },
        );
        Ok(())
    }

    pub(crate) fn remove(&mut self, name: &str) -> bool {
        let removed = self.by_name.remove(name).is_some();
        if removed {
            self.order.retain(|n| n != name);
        }
        removed
    }
}
