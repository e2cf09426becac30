//! Resources and resource templates registered at runtime.

use std::{collections::HashMap, future::Future, sync::Arc};

use futures::future::BoxFuture;

use super::{Context, completion::CompletionHandler, uri_template::UriTemplate};
use crate::{
    Error,
    jsonrpc::ErrorObject,
    protocol::{JsonObject, ReadResourceResult, Resource, ResourceTemplate},
};

/// Why a read produced no contents.
#[derive(Debug, Clone)]
pub enum ResourceError {
    /// No such resource (answered with the revision's not-found code).
    NotFound,
    /// The read failed (answered as an internal error with this message).
    Failed(String),
    /// A specific protocol error.
    Protocol(ErrorObject),
}

impl From<Error> for ResourceError {
    fn from(e: Error) -> Self {
        ResourceError::Failed(e.to_string())
    }
}

/// What a resource handler returns.
pub type ResourceResult = Result<ReadResourceResult, ResourceError>;

/// Reads a resource. `variables` holds the template's variables for a templated resource
/// (empty for a static one).
pub trait ResourceHandler: Send + Sync + 'static {
    /// Reads `uri`.
    fn read(
        &self,
        uri: String,
        variables: JsonObject,
        ctx: Context,
    ) -> BoxFuture<'static, ResourceResult>;
}

impl<F, Fut> ResourceHandler for F
where
    F: Fn(String, JsonObject, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ResourceResult> + Send + 'static,
{
    fn read(
        &self,
        uri: String,
        variables: JsonObject,
        ctx: Context,
    ) -> BoxFuture<'static, ResourceResult> {
        Box::pin(self(uri, variables, ctx))
    }
}

pub(crate) struct RegisteredTemplate {
    pub(crate) template: ResourceTemplate,
    pub(crate) matcher: UriTemplate,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) completions: HashMap<String, Arc<dyn CompletionHandler>>,
}

/// Static resources and templates, in registration order.
#[derive(Default)]
pub(crate) struct ResourceRegistry {
    pub(crate) order: Vec<String>,
    pub(crate) by_uri: HashMap<String, (Resource, Arc<dyn ResourceHandler>)>,
    pub(crate) templates: Vec<RegisteredTemplate>,
}

impl ResourceRegistry {
    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty() && self.templates.is_empty()
    }

    pub(crate) fn add(&mut self, resource: Resource, handler: Arc<dyn ResourceHandler>) {
        let uri = resource.uri.clone();
        if self
            .by_uri
            .insert(uri.clone(), (resource, handler))
            .is_none()
        {
            self.order.push(uri);
        }
    }

    pub(crate) fn remove(&mut self, uri: &str) -> bool {
        let removed = self.by_uri.remove(uri).is_some();
        if removed {
            self.order.retain(|u| u != uri);
        }
        removed
    }

    pub(crate) fn add_template(
        &mut self,
        template: ResourceTemplate,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<(), Error> {
        let matcher = UriTemplate::parse(&template.uri_template)?;
        let registered = RegisteredTemplate {
            template,
            matcher,
            handler,
            completions: HashMap::new(),
        };
        match self
            .templates
            .iter_mut()
            .find(|t| t.template.uri_template == registered.template.uri_template)
        {
            Some(existing) => *existing = registered,
            None => self.templates.push(registered),
        }
        Ok(())
    }

    /// The handler for `uri` and its template variables: an exact static match first, then
    /// the first template that matches.
    pub(crate) fn resolve(&self, uri: &str) -> Option<(Arc<dyn ResourceHandler>, JsonObject)> {
        if let Some((_, handler)) = self.by_uri.get(uri) {
            return Some((handler.clone(), JsonObject::new()));
        }
        self.templates
            .iter()
            .find_map(|t| t.matcher.matches(uri).map(|vars| (t.handler.clone(), vars)))
    }
}
