//! What a client does with requests and notifications from its server.

use futures::future::BoxFuture;
use serde_json::Value;

use super::NotificationCallback;
use crate::{
    jsonrpc::{ErrorObject, Notification},
    session::{Dispatch, HandlerResult, IncomingRequest, RequestContext, Session},
};

pub(crate) struct ClientDispatch {
    on_notification: Option<NotificationCallback>,
}

impl ClientDispatch {
    pub(crate) fn new(on_notification: Option<NotificationCallback>) -> Self {
        ClientDispatch { on_notification }
    }
}

impl Dispatch for ClientDispatch {
    fn request(
        &self,
        request: IncomingRequest,
        _ctx: RequestContext,
    ) -> BoxFuture<'static, HandlerResult> {
        Box::pin(async move { Err(ErrorObject::method_not_found(&request.method)) })
    }

    fn notification(&self, notification: Notification, _session: &Session) {
        if let Some(callback) = &self.on_notification {
            let params = notification
                .params
                .and_then(|p| serde_json::from_str::<Value>(p.get()).ok());
            callback(&notification.method, params);
        }
    }
}
