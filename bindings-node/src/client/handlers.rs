//! JavaScript functions as the client's handlers: sampling, elicitation, roots, and the
//! notification callback (logging, list_changed, resource updates, progress of others).
//!
//! Like the server's handlers they are weak threadsafe functions called with
//! `call_async_catch`, wrapped by the JavaScript shim so they settle with a JSON envelope.

use std::sync::Arc;

use futures::future::BoxFuture;
use napi::{
    Status,
    bindgen_prelude::FnArgs,
    threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode},
};
use oxmcp::{
    client::{ElicitationHandler, RootsHandler, SamplingHandler},
    jsonrpc::{ErrorObject, codes},
    protocol::{
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ListRootsResult,
    },
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{
    cancel::Cancellation,
    json::{Envelope, Settled},
};

/// `(paramsJson, cancellation) => envelopeJson | Promise<envelopeJson>`.
pub(crate) type JsClientHandler = ThreadsafeFunction<
    FnArgs<(String, Cancellation)>,
    Envelope,
    FnArgs<(String, Cancellation)>,
    Status,
    false,
    true,
>;

/// `(method, paramsJson) => void`, fire and forget.
pub(crate) type JsNotify =
    ThreadsafeFunction<FnArgs<(String, String)>, (), FnArgs<(String, String)>, Status, false, true>;

/// A client-side handler answering one kind of server request.
#[derive(Clone)]
pub(crate) struct JsAnswer(Arc<JsClientHandler>);

impl JsAnswer {
    pub(crate) fn new(f: JsClientHandler) -> Self {
        JsAnswer(Arc::new(f))
    }

    async fn answer<T: DeserializeOwned>(
        &self,
        what: &str,
        params: Value,
        cancel: CancellationToken,
    ) -> Result<T, ErrorObject> {
        let (cancel, _finished) = Cancellation::for_call(cancel);
        let settled = Settled::from_call(
            self.0
                .call_async_catch(FnArgs::from((params.to_string(), cancel)))
                .await,
        )
        .await;
        match settled {
            Settled::Ok(value) => serde_json::from_value(value).map_err(|e| {
                ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    format!("the {what} handler returned an invalid result: {e}"),
                )
            }),
            Settled::Threw(message) => Err(ErrorObject::new(codes::INTERNAL_ERROR, message)),
            Settled::Rpc(error) => Err(error),
        }
    }
}

fn to_value<T: serde::Serialize>(params: &T) -> Value {
    serde_json::to_value(params).unwrap_or(Value::Null)
}

impl SamplingHandler for JsAnswer {
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        let this = self.clone();
        Box::pin(async move { this.answer("sampling", to_value(&params), cancel).await })
    }
}

impl ElicitationHandler for JsAnswer {
    fn elicit(
        &self,
        params: ElicitRequestParams,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        let this = self.clone();
        Box::pin(async move { this.answer("elicitation", to_value(&params), cancel).await })
    }
}

impl RootsHandler for JsAnswer {
    fn list_roots(
        &self,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ListRootsResult, ErrorObject>> {
        let this = self.clone();
        Box::pin(async move {
            this.answer("roots", Value::Object(Default::default()), cancel)
                .await
        })
    }
}

/// Delivers a notification to JavaScript without waiting (the callback returns nothing).
pub(crate) fn notify(f: &JsNotify, method: &str, params: Option<Value>) {
    let params = params.map_or_else(|| "null".to_owned(), |p| p.to_string());
    let _ = f.call(
        FnArgs::from((method.to_owned(), params)),
        ThreadsafeFunctionCallMode::NonBlocking,
    );
}
