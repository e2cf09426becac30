//! The interface between the engine and a role (server or client).
//!
//! The engine owns ids, timeouts, cancellation and progress; a role decides what requests
//! mean. Handlers are trait objects with boxed futures and JSON in and out, so the Python and
//! Node bindings can implement them around host callables.

use futures::future::BoxFuture;
use serde_json::value::RawValue;

use super::{RequestContext, Session};
use crate::jsonrpc::{ErrorObject, Notification};

/// What a request handler produces: a serialized result or a JSON-RPC error.
pub type HandlerResult = Result<Box<RawValue>, ErrorObject>;

/// A request as the role sees it.
#[derive(Debug)]
pub struct IncomingRequest {
    /// The method name.
    pub method: String,
    /// Params, unparsed.
    pub params: Option<Box<RawValue>>,
}

/// A role: what to do with requests and notifications the engine does not handle itself.
///
/// The engine handles responses, `notifications/cancelled`, `notifications/progress` and
/// handshake-era `ping`; everything else comes here.
pub trait Dispatch: Send + Sync + 'static {
    /// Handles one request. The future runs on its own task (on a current-thread runtime the
    /// driver polls it once first, and spawns it only if it is not ready); it is dropped if
    /// the peer cancels the request (the context's token fires first).
    fn request(
        &self,
        request: IncomingRequest,
        ctx: RequestContext,
    ) -> BoxFuture<'static, HandlerResult>;

    /// Whether requests for `method` change the session's lifecycle, so the engine must finish
    /// them before reading the next message (`initialize`: a pipelined request right behind it
    /// must see the initialized session).
    fn is_sequential(&self, _method: &str) -> bool {
        false
    }

    /// Handles one notification. Must not block; spawn for async work.
    fn notification(&self, notification: Notification, session: &Session);

    /// Called once when the session has closed.
    fn closed(&self, _session: &Session) {}
}
