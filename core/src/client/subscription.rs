//! `subscriptions/listen` (2026-07-28) on the client: a stream of the change notifications the
//! client opted in to. Dropping the [`Subscription`] cancels the request.

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Client, ServerNotification};
use crate::{
    Error, Result,
    jsonrpc::RequestId,
    protocol::{SubscriptionFilter, methods},
    session::RequestOptions,
};

/// An open `subscriptions/listen` stream.
#[derive(Debug)]
pub struct Subscription {
    id: RequestId,
    acknowledged: SubscriptionFilter,
    rx: mpsc::UnboundedReceiver<ServerNotification>,
    cancel: CancellationToken,
}

impl Subscription {
    /// The stream's id (the listen request's JSON-RPC id).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// What the server agreed to deliver.
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// The next notification; `None` once the stream has ended.
    pub async fn next(&mut self) -> Option<ServerNotification> {
        self.rx.recv().await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl Client {
    /// Opens a `subscriptions/listen` stream (2026-07-28) and waits for its acknowledgement.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        if !self.protocol_version().is_stateless() {
            return Err(Error::InvalidArgument(
                "subscriptions/listen needs protocol version 2026-07-28; subscribe with resources/subscribe".into(),
            ));
        }
        let id = self.session().allocate_id();
        let (tx, mut rx) = mpsc::unbounded_channel();
        self.inner.streams.lock().insert(id.clone(), tx);
        let cancel = CancellationToken::new();
        let mut options = RequestOptions::without_timeout().cancel_with(cancel.clone());
        options.id = Some(id.clone());
        let client = self.clone();
        let streams = self.inner.streams.clone();
        let stream_id = id.clone();
        tokio::spawn(async move {
            let params = json!({ "notifications": filter });
            let _ = client
                .request(methods::SUBSCRIPTIONS_LISTEN, Some(params), options)
                .await;
            // Ended by the server, by cancellation or by the connection: close the stream.
            streams.lock().remove(&stream_id);
        });
        // The acknowledgement comes first on the stream.
        let first = rx
            .recv()
            .await
            .ok_or_else(|| Error::closed("the listen stream ended before its acknowledgement"))?;
        if first.method != methods::SUBSCRIPTIONS_ACKNOWLEDGED {
            cancel.cancel();
            return Err(Error::Protocol(format!(
                "the first message on a listen stream was `{}`, not the acknowledgement",
                first.method
            )));
        }
        let acknowledged = first
            .params
            .and_then(|p| p.get("notifications").cloned())
            .and_then(|n| serde_json::from_value(n).ok())
            .unwrap_or_default();
        Ok(Subscription {
            id,
            acknowledged,
            rx,
            cancel,
        })
    }
}
