//! JavaScript functions as core handlers (tools, resources, prompts, completions).
//!
//! Each registered function is kept twice. A session hosted on the JavaScript thread
//! (`embed.rs`) calls it directly through a reference, from inside the run that read the
//! request: no thread hop, and a synchronous answer is written in the same run. A session on
//! tokio (HTTP, worker threads) reaches it through a weak, callee-handled-false threadsafe
//! function: weak so that registering handlers never keeps Node alive, called with
//! `call_async_catch` so a synchronous throw comes back as an error instead of aborting the
//! process. The JavaScript shim
//! (`lib/handlers.cjs`) wraps every user handler so it returns a JSON envelope (`{"ok"}` /
//! `{"threw"}` / `{"rpc"}`), as a string when the handler finished synchronously. For an
//! `async` handler it answers [`PENDING`] and later hands the envelope to `settle_call`,
//! which sends it down the call's channel: sync and async handlers, throws and rejections,
//! circular or `BigInt` results all arrive here as one of three cases.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use futures::{channel::oneshot, future::BoxFuture};
use napi::{
    Env, Status,
    bindgen_prelude::{Either, FnArgs, Function, FunctionRef},
    threadsafe_function::ThreadsafeFunction,
};
use oxmcp::{
    jsonrpc::{ErrorObject, codes},
    protocol::{Completion, GetPromptResult, JsonObject, ReadResourceResult},
    server::{
        CompletionHandler, Context, PromptHandler, PromptResult, ResourceError, ResourceHandler,
        ResourceResult, ToolError, ToolHandler, ToolResult,
        coerce::{self, Shape},
    },
};
use serde_json::{Value, json};

use super::context::{CallHandle, CallPayload, RequestContext};
use crate::{
    cancel::Cancellation,
    json::{Envelope, Settled},
};

/// `(payloadJson, ctxHandle) => envelopeJson | Promise<envelopeJson>`, weak and not
/// callee-handled (`ctxHandle`: see `context.rs`). A handler that returned (or threw) synchronously hands its envelope back as a string: no
/// Promise is made, no `then` is attached, and the answer leaves the JavaScript thread with
/// the call's own return.
pub(crate) type JsHandler = ThreadsafeFunction<
    FnArgs<(String, CallHandle)>,
    Envelope,
    FnArgs<(String, CallHandle)>,
    Status,
    false,
    true,
>;

/// A handler as JavaScript passes it to a registration method.
pub(crate) type JsFunction<'a> = Function<'a, FnArgs<(String, CallHandle)>, Envelope>;

/// What the shim returns for a handler whose promise has not settled yet (`PENDING` in
/// `lib/handlers.cjs`); its envelope then comes through `settle_call`.
const PENDING: &str = "\u{2}";

/// A shared JavaScript handler.
#[derive(Clone)]
pub(crate) struct JsCallback(Arc<Callback>);

struct Callback {
    threadsafe: JsHandler,
    /// For direct calls on the function's own thread (napi-rs releases it there when it is
    /// dropped elsewhere).
    direct: FunctionRef<FnArgs<(String, CallHandle)>, Envelope>,
    /// The env the function belongs to, as an integer (the pointer is not `Send`).
    env: usize,
}

impl JsCallback {
    pub(crate) fn new(env: &Env, f: JsFunction<'_>) -> napi::Result<Self> {
        let threadsafe = f
            .build_threadsafe_function::<FnArgs<(String, CallHandle)>>()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
        Ok(JsCallback(Arc::new(Callback {
            threadsafe,
            direct: f.create_ref()?,
            env: env.raw() as usize,
        })))
    }

    /// Calls the function once and waits for it to settle. The context's cancellation ends
    /// when this future completes or is dropped.
    async fn invoke(&self, payload: String, ctx: Context) -> Settled {
        let (cancel, _finished) = Cancellation::for_call(ctx.cancellation().clone());
        let (answer, answered) = oneshot::channel();
        let js_ctx = CallHandle(Box::new(CallPayload {
            context: RequestContext { ctx, cancel },
            answer: Mutex::new(Some(answer)),
        }));
        let args = FnArgs::from((payload, js_ctx));
        let cb = &self.0;
        let returned = if crate::embed::may_call_js(cb.env as napi::sys::napi_env) {
            cb.call_here(args)
        } else {
            cb.threadsafe.call_async_catch(args).await
        };
        match returned {
            // Still running: the shim hands the envelope over through `settle_call` when the
            // handler's promise settles. A channel and two closures cost far less than
            // napi-rs's Promise conversion, which makes two native functions per call.
            Ok(Either::A(text)) if text == PENDING => match answered.await {
                Ok(envelope) => Settled::from_envelope(&envelope),
                Err(_) => Settled::Threw(
                    "the handler's promise was collected without settling".to_owned(),
                ),
            },
            returned => Settled::from_call(returned).await,
        }
    }
}

impl Callback {
    /// Calls the function on this thread, inside a run of its env's host loop (so its env
    /// is in an N-API call or callback, with a handle scope open). A throw the shim did not
    /// catch comes back as an error.
    fn call_here(&self, args: FnArgs<(String, CallHandle)>) -> napi::Result<Envelope> {
        let env = Env::from_raw(self.env as napi::sys::napi_env);
        self.direct.borrow_back(&env)?.call(args)
    }
}

/// `value` as JSON text, written into a buffer sized for a typical payload up front:
/// `Value::to_string` starts empty and reallocates as it grows, several times per call.
fn json_text(value: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    match serde_json::to_writer(&mut out, value) {
        // serde_json writes UTF-8 only.
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => value.to_string(),
    }
}

/// A tool: the returned value goes through the core's coercion rule, unchanged.
pub(crate) struct JsTool(pub(crate) JsCallback);

impl ToolHandler for JsTool {
    fn call(&self, arguments: Value, ctx: Context) -> BoxFuture<'static, ToolResult> {
        let cb = self.0.clone();
        Box::pin(async move {
            match cb.invoke(json_text(&arguments), ctx).await {
                Settled::Ok(value) => Ok(coerce::tool_result(value, Shape::Plain)),
                Settled::Threw(message) => Err(ToolError::Failed(message)),
                Settled::Rpc(error) => Err(ToolError::Protocol(error)),
            }
        })
    }
}

/// A resource or template read: the handler returns a `ReadResourceResult`.
pub(crate) struct JsResource(pub(crate) JsCallback);

impl ResourceHandler for JsResource {
    fn read(
        &self,
        uri: String,
        variables: JsonObject,
        ctx: Context,
    ) -> BoxFuture<'static, ResourceResult> {
        let cb = self.0.clone();
        Box::pin(async move {
            let payload = json!({ "uri": uri, "variables": variables }).to_string();
            match cb.invoke(payload, ctx).await {
                Settled::Ok(value) => serde_json::from_value::<ReadResourceResult>(value)
                    .map_err(|e| {
                        ResourceError::Failed(format!(
                            "resource handler for `{uri}` returned no valid `{{contents: [...]}}`: {e}"
                        ))
                    }),
                Settled::Threw(message) => Err(ResourceError::Failed(message)),
                Settled::Rpc(error) => Err(ResourceError::Protocol(error)),
            }
        })
    }
}

/// A prompt: the handler returns a `GetPromptResult`; a failure is a JSON-RPC error.
pub(crate) struct JsPrompt(pub(crate) JsCallback);

impl PromptHandler for JsPrompt {
    fn get(
        &self,
        arguments: BTreeMap<String, String>,
        ctx: Context,
    ) -> BoxFuture<'static, PromptResult> {
        let cb = self.0.clone();
        Box::pin(async move {
            match cb.invoke(json!(arguments).to_string(), ctx).await {
                Settled::Ok(value) => {
                    serde_json::from_value::<GetPromptResult>(value).map_err(|e| {
                        ErrorObject::new(
                            codes::INTERNAL_ERROR,
                            format!("prompt handler returned no valid `{{messages: [...]}}`: {e}"),
                        )
                    })
                }
                Settled::Threw(message) => Err(ErrorObject::new(codes::INTERNAL_ERROR, message)),
                Settled::Rpc(error) => Err(error),
            }
        })
    }
}

/// A completion: the handler returns a list of strings or a `{values, total, hasMore}`.
pub(crate) struct JsCompletion(pub(crate) JsCallback);

impl CompletionHandler for JsCompletion {
    fn complete(
        &self,
        value: String,
        context: BTreeMap<String, String>,
        ctx: Context,
    ) -> BoxFuture<'static, Result<Completion, ErrorObject>> {
        let cb = self.0.clone();
        Box::pin(async move {
            let payload = json!({ "value": value, "context": context }).to_string();
            match cb.invoke(payload, ctx).await {
                Settled::Ok(Value::Array(items)) => {
                    let values: Option<Vec<String>> = items
                        .into_iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect();
                    values.map(Completion::from_values).ok_or_else(|| {
                        ErrorObject::new(
                            codes::INTERNAL_ERROR,
                            "completion handler returned a list that is not all strings",
                        )
                    })
                }
                Settled::Ok(value) => serde_json::from_value::<Completion>(value).map_err(|e| {
                    ErrorObject::new(
                        codes::INTERNAL_ERROR,
                        format!("completion handler returned neither string[] nor {{values}}: {e}"),
                    )
                }),
                Settled::Threw(message) => Err(ErrorObject::new(codes::INTERNAL_ERROR, message)),
                Settled::Rpc(error) => Err(error),
            }
        })
    }
}
