//! What a client does with requests and notifications from its server.

use std::{collections::HashMap, sync::Arc};

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{
    NotificationCallback,
    handlers::{ElicitationHandler, RootsHandler, SamplingHandler, apply_defaults},
};
use crate::{
    jsonrpc::{ErrorObject, Notification, RequestId},
    protocol::{ElicitRequestParams, meta, methods},
    session::{Dispatch, HandlerResult, IncomingRequest, RequestContext, Session},
    sync::Mutex,
};

/// A notification the server sent.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerNotification {
    /// Its method.
    pub method: String,
    /// Its params.
    pub params: Option<Value>,
}

/// Routes notifications tagged with a `subscriptions/listen` stream id to that stream.
pub(crate) type Streams = Arc<Mutex<HashMap<RequestId, mpsc::UnboundedSender<ServerNotification>>>>;

/// The host's answers to server requests.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) roots: Option<Arc<dyn RootsHandler>>,
}

impl Handlers {
    /// Answers one server request (a real one, or one embedded in an `InputRequiredResult`).
    pub(crate) async fn answer(
        &self,
        method: &str,
        params: Option<Value>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<Value, ErrorObject> {
        fn parse<T: DeserializeOwned>(
            method: &str,
            params: Option<Value>,
        ) -> Result<T, ErrorObject> {
            serde_json::from_value(params.unwrap_or_else(|| json!({}))).map_err(|e| {
                ErrorObject::invalid_params(format!("Invalid params for `{method}`: {e}"))
            })
        }
        let to_value = |v: Result<Value, serde_json::Error>| {
            v.map_err(|e| ErrorObject::internal(e.to_string()))
        };
        match method {
            methods::SAMPLING_CREATE_MESSAGE => match &self.sampling {
                Some(h) => to_value(serde_json::to_value(
                    h.create_message(parse(method, params)?, cancel).await?,
                )),
                None => Err(ErrorObject::method_not_found(method)),
            },
            methods::ELICITATION_CREATE => match &self.elicitation {
                Some(h) => {
                    let params: ElicitRequestParams = parse(method, params)?;
                    let mut result = h.elicit(params.clone(), cancel).await?;
                    apply_defaults(&params, &mut result);
                    to_value(serde_json::to_value(result))
                }
                None => Err(ErrorObject::method_not_found(method)),
            },
            methods::ROOTS_LIST => match &self.roots {
                Some(h) => to_value(serde_json::to_value(h.list_roots(cancel).await?)),
                None => Err(ErrorObject::method_not_found(method)),
            },
            _ => Err(ErrorObject::method_not_found(method)),
        }
    }
}

pub(crate) struct ClientDispatch {
    handlers: Handlers,
    on_notification: Option<NotificationCallback>,
    streams: Streams,
}

impl ClientDispatch {
    pub(crate) fn new(
        handlers: Handlers,
        on_notification: Option<NotificationCallback>,
        streams: Streams,
    ) -> Self {
        ClientDispatch {
            handlers,
            on_notification,
            streams,
        }
    }
}

impl Dispatch for ClientDispatch {
    fn request(
        &self,
        request: IncomingRequest,
        ctx: RequestContext,
    ) -> BoxFuture<'static, HandlerResult> {
        let handlers = self.handlers.clone();
        let version = ctx.session().protocol_version();
        Box::pin(async move {
            // A server must not ask for what the negotiated revision does not define.
            let too_new = request.method == methods::ELICITATION_CREATE
                && version.is_some_and(|v| v < crate::protocol::ProtocolVersion::V2025_06_18);
            if too_new {
                return Err(ErrorObject::method_not_found(&request.method));
            }
            let params = match request.params {
                Some(raw) => Some(
                    serde_json::from_str::<Value>(raw.get())
                        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))?,
                ),
                None => None,
            };
            let result = handlers
                .answer(&request.method, params, ctx.cancellation().clone())
                .await?;
            serde_json::value::to_raw_value(&result)
                .map_err(|e| ErrorObject::internal(e.to_string()))
        })
    }

    fn notification(&self, notification: Notification, _session: &Session) {
        let params = notification
            .params
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok());
        let stream = params
            .as_ref()
            .and_then(|p| {
                p.pointer(&format!(
                    "/_meta/{}",
                    meta::SUBSCRIPTION_ID.replace('/', "~1")
                ))
            })
            .and_then(RequestId::from_value);
        if let Some(id) = stream
            && let Some(tx) = self.streams.lock().get(&id)
        {
            let _ = tx.send(ServerNotification {
                method: notification.method,
                params,
            });
            return;
        }
        if let Some(callback) = &self.on_notification {
            callback(&notification.method, params);
        }
    }
}
