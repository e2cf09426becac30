//! `subscriptions/listen` (2026-07-28): long-lived requests over which a server delivers the
//! change notifications the client opted in to, each tagged with the stream's id.
//!
//! A listen request stays in flight until the client cancels it (or the connection ends), or
//! until the server ends it gracefully with a result. The first message on the stream is
//! `notifications/subscriptions/acknowledged`, naming what the server agreed to deliver.

use serde_json::{Value, json};

use super::{Inner, lifecycle::respond};
use crate::{
    jsonrpc::RequestId,
    protocol::{
        ProtocolVersion, SubscriptionFilter, SubscriptionsListenRequestParams, meta, methods,
    },
    session::{HandlerResult, Session},
    transport::Route,
};

/// One open listen stream.
pub(crate) struct Listener {
    session: Session,
    id: RequestId,
    filter: SubscriptionFilter,
}

/// Removes the listener when the request ends, however it ends.
struct Registration<'a> {
    server: &'a Inner,
    key: (u64, RequestId),
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.server.listeners.lock().remove(&self.key);
    }
}

pub(crate) async fn listen(
    server: &Inner,
    session_id: u64,
    params: SubscriptionsListenRequestParams,
    ctx: &crate::session::RequestContext,
    version: ProtocolVersion,
) -> HandlerResult {
    let honored = honor(server, params.notifications);
    let id = ctx.id().clone();
    // The acknowledgement is the first message carrying this stream's id.
    let ack = json!({ "_meta": { meta::SUBSCRIPTION_ID: id }, "notifications": honored });
    let _ = ctx
        .notify(methods::SUBSCRIPTIONS_ACKNOWLEDGED, Some(ack))
        .await;
    let key = (session_id, id.clone());
    server.listeners.lock().insert(
        key.clone(),
        Listener {
            session: ctx.session().clone(),
            id: id.clone(),
            filter: honored,
        },
    );
    let _registration = Registration { server, key };
    // Runs until the client cancels (the engine then drops this future) or the server ends
    // its subscriptions.
    server.shutdown.cancelled().await;
    let result = json!({ "_meta": { meta::SUBSCRIPTION_ID: id } });
    respond(server, Some(version), &result)
}

/// What the server can deliver, out of what was asked.
fn honor(server: &Inner, asked: SubscriptionFilter) -> SubscriptionFilter {
    let has_resources = !server.resources.read().is_empty() || server.advertise.resources;
    let has_prompts = !server.prompts.read().order.is_empty() || server.advertise.prompts;
    SubscriptionFilter {
        tools_list_changed: asked.tools_list_changed.filter(|b| *b),
        prompts_list_changed: asked.prompts_list_changed.filter(|b| *b && has_prompts),
        resources_list_changed: asked.resources_list_changed.filter(|b| *b && has_resources),
        resource_subscriptions: asked
            .resource_subscriptions
            .filter(|uris| has_resources && !uris.is_empty()),
        extra: Default::default(),
    }
}

/// Sends a change notification to every listen stream that asked for it.
pub(crate) fn deliver(server: &Inner, method: &str, uri: Option<&str>) {
    let listeners = server.listeners.lock();
    for listener in listeners.values() {
        let wanted = match method {
            methods::TOOLS_LIST_CHANGED => listener.filter.tools_list_changed == Some(true),
            methods::PROMPTS_LIST_CHANGED => listener.filter.prompts_list_changed == Some(true),
            methods::RESOURCES_LIST_CHANGED => listener.filter.resources_list_changed == Some(true),
            methods::RESOURCES_UPDATED => uri.is_some_and(|u| {
                listener
                    .filter
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|list| list.iter().any(|s| s == u))
            }),
            _ => false,
        };
        if !wanted {
            continue;
        }
        let mut params = json!({ "_meta": { meta::SUBSCRIPTION_ID: listener.id } });
        if let Some(uri) = uri {
            params["uri"] = Value::String(uri.to_owned());
        }
        listener
            .session
            .notify_nowait(method, Some(params), Route::Related(listener.id.clone()));
    }
}
