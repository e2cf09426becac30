//! The request context a JavaScript server handler receives (`ctx` in `handler(args, ctx)`).
//!
//! It wraps the core's `oxmcp::server::Context`, so progress, logging, a task's status and
//! the questions a handler asks its client (`sample`, `elicit`, `listRoots`) behave the same
//! in both eras: in the stateless era a question either returns the answer the client's retry
//! carries, or ends the round (the core drops the handler, and the pending method rejects
//! with `cancelled`). A task's `tasks/cancel` fires the same cancellation as a cancelled
//! request, so `ctx.signal` aborts for both.
//!
//! A handler is not given the class itself but a [`CallHandle`]: a bare N-API external that
//! `lib/context.cjs` turns into a `RequestContext` only when the handler first uses `ctx`.
//! Most handlers never do, and a class instance costs a constructor call, a wrap and
//! napi-rs's bookkeeping on every call, where an external is one allocation. The external
//! lives as long as JavaScript holds the handler's `ctx`, so a context first used late (in a
//! timer, after the call ended) behaves exactly as one made up front.

use std::{cell::RefCell, collections::HashSet, ffi::c_void, ptr, sync::Mutex};

use futures::channel::oneshot;

use napi::{JsValue, bindgen_prelude::ToNapiValue, sys};
use napi_derive::napi;
use oxmcp::protocol::LoggingLevel;
use serde_json::Value;

use crate::{cancel::Cancellation, error::to_js, json};

/// One call's context as JavaScript first receives it (see the module docs).
pub struct CallHandle(pub(crate) Box<CallPayload>);

/// What a call handle points to: the context, and where an `async` handler's answer goes.
pub(crate) struct CallPayload {
    pub(crate) context: RequestContext,
    /// Taken by the first [`settle_call`]; dropped unused when a handler finished at once.
    pub(crate) answer: Mutex<Option<oneshot::Sender<String>>>,
}

thread_local! {
    /// The payloads of this thread's live call handles: [`request_context`] reads only
    /// these, so an external made elsewhere (another addon's, say) is refused, never
    /// dereferenced.
    static LIVE_HANDLES: RefCell<HashSet<usize>> = RefCell::new(HashSet::new());
}

impl ToNapiValue for CallHandle {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        let payload = Box::into_raw(val.0);
        let mut out = ptr::null_mut();
        // SAFETY: on the env's thread (napi-rs converts arguments there); the payload is
        // freed by `release_handle`, once, when the external is collected.
        let status = unsafe {
            sys::napi_create_external(
                env,
                payload.cast(),
                Some(release_handle),
                ptr::null_mut(),
                &mut out,
            )
        };
        if status != sys::Status::napi_ok {
            // SAFETY: Node did not take the payload.
            drop(unsafe { Box::from_raw(payload) });
            return Err(napi::Error::from_reason("could not make a request context"));
        }
        LIVE_HANDLES.with(|live| live.borrow_mut().insert(payload as usize));
        Ok(out)
    }
}

unsafe extern "C" fn release_handle(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // `try_with`: a panic must not unwind into Node, even at thread exit.
    let _ = LIVE_HANDLES.try_with(|live| live.borrow_mut().remove(&(data as usize)));
    // SAFETY: the payload `to_napi_value` leaked for this external, freed only here.
    drop(unsafe { Box::from_raw(data.cast::<CallPayload>()) });
}

/// The payload of `handle` if it is a live call handle of this thread.
///
/// The reference is valid for the N-API call `handle` is an argument of: the payload is
/// freed only when its external is collected, which cannot happen while it is an argument.
fn payload<'a>(handle: &napi::Unknown<'a>) -> Option<&'a CallPayload> {
    let value = handle.value();
    let mut data = ptr::null_mut();
    // SAFETY: on the env's thread, inside this N-API call; a non-external fails the status.
    let status = unsafe { sys::napi_get_value_external(value.env, value.value, &mut data) };
    let live = status == sys::Status::napi_ok
        && LIVE_HANDLES.with(|live| live.borrow().contains(&(data as usize)));
    // SAFETY: a live payload of this thread (checked above), alive for the call (see above).
    live.then(|| unsafe { &*data.cast::<CallPayload>() })
}

/// The `RequestContext` of a call handle (`lib/context.cjs` calls it on first use of `ctx`).
#[napi]
pub fn request_context(handle: napi::Unknown<'_>) -> napi::Result<RequestContext> {
    let context = &payload(&handle)
        .ok_or_else(|| crate::error::invalid("not a request context handle"))?
        .context;
    Ok(RequestContext {
        ctx: context.ctx.clone(),
        cancel: context.cancel.clone(),
    })
}

/// Hands an `async` handler's envelope to the call waiting for it (`lib/handlers.cjs` calls
/// it from the handler's promise reactions, after the handler answered "pending"). Never
/// throws: `false` when the handle is not a live call or its answer was already given.
#[napi]
pub fn settle_call(handle: napi::Unknown<'_>, envelope: String) -> bool {
    let Some(payload) = payload(&handle) else {
        return false;
    };
    let sender = payload
        .answer
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    sender.is_some_and(|sender| sender.send(envelope).is_ok())
}

/// One request's context.
#[napi]
pub struct RequestContext {
    pub(crate) ctx: oxmcp::server::Context,
    pub(crate) cancel: Cancellation,
}

#[napi]
impl RequestContext {
    /// The JSON-RPC id of the request, as JSON text (ids keep their type: `1` is not `"1"`).
    #[napi(getter)]
    pub fn request_id(&self) -> String {
        serde_json::to_string(self.ctx.id()).unwrap_or_else(|_| "null".into())
    }

    /// The request's `_meta`, as JSON text (`null` if absent).
    #[napi(getter)]
    pub fn meta(&self) -> String {
        self.ctx
            .meta()
            .and_then(|m| serde_json::to_string(m).ok())
            .unwrap_or_else(|| "null".into())
    }

    /// The revision of this request (`null` before negotiation).
    #[napi(getter)]
    pub fn protocol_version(&self) -> Option<String> {
        self.ctx.protocol_version().map(|v| v.as_str().to_owned())
    }

    /// Whether the request came from a stateless (2026-07-28) client.
    #[napi(getter)]
    pub fn stateless(&self) -> bool {
        self.ctx.is_stateless()
    }

    /// This call's cancellation (the peer's `notifications/cancelled`).
    #[napi(getter)]
    pub fn cancellation(&self) -> Cancellation {
        self.cancel.clone()
    }

    /// The id of the task this call runs as, once it is one (`null` otherwise).
    #[napi(getter)]
    pub fn task_id(&self) -> Option<String> {
        self.ctx.task_id().map(str::to_owned)
    }

    /// Turns a deferred task tool's call into a task now and resolves with its id (at once
    /// for a tool whose tasks start immediately); `null` when the call is not a task.
    #[napi]
    pub async fn start_task(&self) -> napi::Result<Option<String>> {
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move { ctx.start_task().await.map_err(to_js) })
            .await
    }

    /// Sets the task's `statusMessage` (nothing for a call that is not a task).
    #[napi]
    pub async fn report_status(&self, message: String) -> napi::Result<()> {
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move { ctx.report_status(&message).await.map_err(to_js) })
            .await
    }

    /// Sends `notifications/progress` if the caller asked for progress.
    #[napi]
    pub async fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> napi::Result<()> {
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move {
                ctx.report_progress(progress, total, message.as_deref())
                    .await
                    .map_err(to_js)
            })
            .await
    }

    /// Sends a log message at `level` (JSON text `data`) if the client asked for that level.
    #[napi]
    pub async fn log(
        &self,
        level: String,
        data: String,
        logger: Option<String>,
    ) -> napi::Result<()> {
        let level: LoggingLevel = json::parse("log level", &Value::String(level).to_string())?;
        let data: Value = json::parse("log data", &data)?;
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move { ctx.log(level, logger.as_deref(), data).await.map_err(to_js) })
            .await
    }

    /// Whether the client declared a capability (`sampling`, `elicitation`, `roots`, …).
    #[napi]
    pub fn client_supports(&self, capability: String) -> bool {
        self.ctx.client_supports(&capability)
    }

    /// Ends this request's HTTP response stream early (the client resumes with
    /// `Last-Event-ID`); a no-op on other transports.
    #[napi]
    pub async fn close_stream(&self) -> napi::Result<()> {
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move {
                ctx.close_stream().await;
                Ok(())
            })
            .await
    }

    /// Asks several questions in one go: `questions` is a JSON list of `{kind: "sample" |
    /// "elicit" | "roots", params, key?}`; the result a JSON list of `{ok: result}` or
    /// `{error: encoded error}`, in order. The JavaScript layer sends every question a handler
    /// asks in one tick (`Promise.all([ctx.elicit(..), ctx.sample(..)])`) through here, so a
    /// stateless round registers them all in one poll, before the core ends the round.
    #[napi]
    pub async fn ask_all(&self, questions: String) -> napi::Result<String> {
        let questions: Vec<oxmcp::server::Question> = json::parse("questions", &questions)?;
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move {
                let answers: Vec<Value> = ctx
                    .ask_all(questions)
                    .await
                    .into_iter()
                    .map(|r| match r {
                        Ok(v) => serde_json::json!({ "ok": v }),
                        Err(e) => serde_json::json!({ "error": to_js(e).reason }),
                    })
                    .collect();
                json::text(&answers)
            })
            .await
    }

    /// `sampling/createMessage` (params and result as JSON text); `key` names the question in
    /// a stateless round's `inputRequests`.
    #[napi]
    pub async fn sample(&self, params: String, key: Option<String>) -> napi::Result<String> {
        let params = json::parse("sampling params", &params)?;
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move {
                let r = match key {
                    Some(k) => ctx.sample_keyed(&k, params).await,
                    None => ctx.sample(params).await,
                };
                json::text(&r.map_err(to_js)?)
            })
            .await
    }

    /// `elicitation/create` (params and result as JSON text).
    #[napi]
    pub async fn elicit(&self, params: String, key: Option<String>) -> napi::Result<String> {
        let params = json::parse("elicitation params", &params)?;
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move {
                let r = match key {
                    Some(k) => ctx.elicit_keyed(&k, params).await,
                    None => ctx.elicit(params).await,
                };
                json::text(&r.map_err(to_js)?)
            })
            .await
    }

    /// `roots/list` (the result as JSON text).
    #[napi]
    pub async fn list_roots(&self, key: Option<String>) -> napi::Result<String> {
        let ctx = self.ctx.clone();
        self.cancel
            .bounded(async move {
                let r = match key {
                    Some(k) => ctx.list_roots_keyed(&k).await,
                    None => ctx.list_roots().await,
                };
                json::text(&r.map_err(to_js)?)
            })
            .await
    }
}
