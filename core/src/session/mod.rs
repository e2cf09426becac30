//! The engine both roles share.
//!
//! A [`Session`] owns one transport link. A driver task reads inbound frames in order and
//! never waits on a handler: requests are spawned (on a current-thread runtime, a handler
//! ready at its first poll is answered by the driver itself), responses resolve their
//! pending entry, cancellations fire tokens, progress resets timers. Outbound messages from
//! any task go through one bounded queue to the transport. Every request we send resolves
//! exactly once; every request we receive is answered exactly once, unless the peer
//! cancelled it.

mod context;
mod dispatch;
mod driver;
mod pending;
mod ratelimit;
mod state;

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

pub use context::{Detached, RequestContext};
pub use dispatch::{Dispatch, HandlerResult, IncomingRequest};
use pending::{Entry, PendingGuard, PendingTable, ProgressInbox};
pub use pending::{ProgressCallback, RequestOptions};
use ratelimit::LogLimiter;
use serde_json::{Value, value::RawValue};
pub use state::{Phase, SessionState};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::{
    Error, Result,
    embed::Spawner,
    jsonrpc::{Limits, RequestId, encode_notification, encode_request},
    protocol::{ProgressNotificationParams, ProtocolVersion, meta},
    sync::{Mutex, RwLock},
    transport::{OutFrame, Outbound, Route, Transport},
};

/// Which side of the protocol a session plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends `initialize` / probes `server/discover`; answers sampling, elicitation, roots.
    Client,
    /// Answers `initialize` and `server/discover`; offers tools, resources, prompts.
    Server,
}

/// Engine settings. Defaults follow DESIGN §6.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// Caps applied to every inbound message.
    pub limits: Limits,
    /// Default time to wait for a response (reset by progress).
    pub request_timeout: Duration,
    /// Hard cap on a request's total time.
    pub max_request_timeout: Duration,
    /// How long in-flight handlers may finish after the peer hangs up.
    pub shutdown_grace: Duration,
    /// How long a server's request to its client (sampling, elicitation, roots) waits for the
    /// client's `notifications/initialized` when asked before it, before failing with
    /// [`Error::HandshakeIncomplete`] unsent.
    pub initialized_wait: Duration,
}

impl SessionConfig {
    /// The defaults for a role: servers cap inbound messages at 4 MiB, clients at 16 MiB.
    pub fn for_role(role: Role) -> Self {
        SessionConfig {
            limits: match role {
                Role::Server => Limits::SERVER,
                Role::Client => Limits::CLIENT,
            },
            request_timeout: Duration::from_secs(60),
            max_request_timeout: Duration::from_secs(600),
            shutdown_grace: Duration::from_millis(1500),
            initialized_wait: Duration::from_secs(5),
        }
    }
}

/// A live session. Cloning gives another handle to the same session.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("role", &self.inner.role)
            .finish_non_exhaustive()
    }
}

/// The in-flight table: keyed by ids the peer chooses, so the hasher must stay keyed against
/// collision flooding. `ahash`'s `RandomState` is seeded from the OS once per process (and
/// varied per table). SipHash, the std default, cost about 400 more instructions per request
/// for its insert and remove (of about 20 k for a small `tools/call`).
type InflightTable = HashMap<RequestId, Inflight, ahash::RandomState>;

struct Inflight {
    cancel: CancellationToken,
    /// `initialize` must not be cancelled (the only method a cancel needs to know).
    initialize: bool,
}

struct Inner {
    role: Role,
    config: SessionConfig,
    outbound: mpsc::Sender<Outbound>,
    pending: Mutex<PendingTable>,
    inflight: Mutex<InflightTable>,
    inflight_drained: Notify,
    /// Batch responses still being assembled (they count as in flight at shutdown).
    batches_pending: std::sync::atomic::AtomicUsize,
    next_id: AtomicI64,
    state: RwLock<SessionState>,
    /// Wakes whoever waits for the lifecycle phase to move (a server request held until the
    /// client's `notifications/initialized`).
    state_changed: Notify,
    close_requested: CancellationToken,
    done: CancellationToken,
    close_reason: Mutex<Option<Error>>,
    dropped_log: Mutex<LogLimiter>,
    /// Whether the driver polls a new request's handler once itself before giving it a task
    /// (see [`Spawner::runs_on_this_thread`]).
    poll_inline: bool,
    /// Where the driver, waiting handlers and helper tasks run.
    spawner: Spawner,
}

impl Session {
    /// Starts a session over `transport`, handing requests and notifications to `dispatch`.
    /// Must be called within a tokio runtime.
    pub fn start(
        transport: impl Transport,
        role: Role,
        dispatch: Arc<dyn Dispatch>,
        config: SessionConfig,
    ) -> Session {
        Session::start_on(transport, role, dispatch, config, Spawner::Tokio)
    }

    /// Starts a session whose driver and waiting handlers run on `spawner`: on a host loop,
    /// everything the session does itself happens on the host thread (see [`crate::embed`]).
    /// With [`Spawner::Tokio`], must be called within a tokio runtime.
    pub fn start_on(
        transport: impl Transport,
        role: Role,
        dispatch: Arc<dyn Dispatch>,
        config: SessionConfig,
        spawner: Spawner,
    ) -> Session {
        // A transport registers its pipes with the runtime: from a host thread, enter it.
        let _runtime = spawner.host().map(|host| host.runtime().enter());
        let link = transport.into_link();
        let session = Session {
            inner: Arc::new(Inner {
                role,
                config,
                outbound: link.outbound,
                pending: Mutex::new(PendingTable::default()),
                inflight: Mutex::new(InflightTable::default()),
                inflight_drained: Notify::new(),
                batches_pending: std::sync::atomic::AtomicUsize::new(0),
                next_id: AtomicI64::new(0),
                state: RwLock::new(SessionState::default()),
                state_changed: Notify::new(),
                close_requested: CancellationToken::new(),
                done: CancellationToken::new(),
                close_reason: Mutex::new(None),
                dropped_log: Mutex::new(LogLimiter::new(10, Duration::from_secs(1))),
                poll_inline: spawner.runs_on_this_thread(),
                spawner: spawner.clone(),
            }),
        };
        spawner.detach(driver::drive(session.clone(), link.inbound, dispatch));
        session
    }

    /// The role this session plays.
    pub fn role(&self) -> Role {
        self.inner.role
    }

    /// Where the session's own tasks run.
    pub fn spawner(&self) -> &Spawner {
        &self.inner.spawner
    }

    /// The engine settings.
    pub fn config(&self) -> &SessionConfig {
        &self.inner.config
    }

    /// A snapshot of the handshake-era state.
    pub fn state(&self) -> SessionState {
        self.inner.state.read().clone()
    }

    /// The negotiated handshake-era revision, if `initialize` has been answered.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.inner.state.read().protocol_version
    }

    /// Whether `initialize` has been answered, without copying the state (a request checks
    /// this on every call; [`Session::state`] clones the peer's identity and capabilities).
    pub fn is_initialized(&self) -> bool {
        self.inner.state.read().is_initialized()
    }

    /// Reads the state in place, for callers that need one field of it.
    pub(crate) fn with_state<R>(&self, read: impl FnOnce(&SessionState) -> R) -> R {
        read(&self.inner.state.read())
    }

    /// Changes the state (used by the roles to record the handshake).
    pub fn update_state(&self, change: impl FnOnce(&mut SessionState)) {
        change(&mut self.inner.state.write());
        self.inner.state_changed.notify_waiters();
    }

    /// How many inbound requests are being handled right now.
    pub fn in_flight(&self) -> usize {
        self.inner.inflight.lock().len()
    }

    /// How many outbound requests await a response right now.
    pub fn pending(&self) -> usize {
        self.inner.pending.lock().entries.len()
    }

    /// Whether two handles name the same session.
    pub fn same_as(&self, other: &Session) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Whether the session has closed.
    pub fn is_closed(&self) -> bool {
        self.inner.done.is_cancelled()
    }

    /// Waits until the session has closed and returns why, if the transport said.
    pub async fn closed(&self) -> Option<Error> {
        self.inner.done.cancelled().await;
        self.inner.close_reason.lock().clone()
    }

    /// Closes the session: pending requests fail, the transport shuts down (a child process
    /// goes through the shutdown ladder), and this returns once everything is released.
    pub async fn close(&self) {
        self.inner.close_requested.cancel();
        self.inner.done.cancelled().await;
    }

    /// A fresh id for an outgoing request (see [`RequestOptions::id`]).
    pub fn allocate_id(&self) -> RequestId {
        RequestId::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Numbers this session's outgoing requests from `first` on. Several engines serving one
    /// client (replicas of a scaled-out HTTP server) each start at a different point, so the
    /// client's replies name exactly one of them.
    pub fn number_requests_from(&self, first: i64) {
        self.inner.next_id.store(first, Ordering::Relaxed);
    }

    /// Asks the session to close without waiting (for use in `Drop`).
    pub fn request_close(&self) {
        self.inner.close_requested.cancel();
    }

    /// Sends a request and waits for its result as a JSON value.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value> {
        let raw = self.request_raw(method, params, options).await?;
        serde_json::from_str(raw.get())
            .map_err(|e| Error::Protocol(format!("`{method}` result is not valid JSON: {e}")))
    }

    /// Sends a request and waits for its result, unparsed.
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<Value>,
        mut options: RequestOptions,
    ) -> Result<Box<RawValue>> {
        let id = options.id.take().unwrap_or_else(|| self.allocate_id());
        let params = if options.on_progress.is_some() || options.request_progress {
            Some(with_progress_token(params, &id)?)
        } else {
            params
        };
        let params = params
            .map(|p| serde_json::value::to_raw_value(&p))
            .transpose()
            .map_err(|e| Error::InvalidArgument(format!("params of `{method}`: {e}")))?;
        self.request_encoded(method, params, id, options).await
    }

    /// Sends a request whose params are already encoded and waits for its result, unparsed.
    /// If progress is wanted (`on_progress` or `request_progress`), the params' `_meta` must
    /// already carry `progressToken` equal to `id`; `options.id` is ignored.
    pub async fn request_encoded(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        id: RequestId,
        mut options: RequestOptions,
    ) -> Result<Box<RawValue>> {
        if self.inner.role == Role::Server {
            self.until_client_initialized(method, options.cancel.as_ref())
                .await?;
        }
        let wants_progress = options.on_progress.is_some() || options.request_progress;
        let (reply_tx, mut reply_rx) = oneshot::channel();
        let inbox = wants_progress.then(|| Arc::new(ProgressInbox::default()));
        {
            let mut table = self.inner.pending.lock();
            if let Some(reason) = &table.closed {
                return Err(reason.clone());
            }
            table.entries.insert(
                id.clone(),
                Entry {
                    reply: reply_tx,
                    progress: inbox.clone(),
                },
            );
        }
        let mut guard = PendingGuard {
            session: self,
            id: id.clone(),
            method,
            route: options.route.clone(),
            armed: true,
        };

        let frame = encode_request(&id, method, params.as_deref());
        self.send_frame(frame, options.route.clone()).await?;

        let timeout = options.timeout.unwrap_or(self.inner.config.request_timeout);
        let max_total = options
            .max_total_timeout
            .unwrap_or(self.inner.config.max_request_timeout);
        let started = tokio::time::Instant::now();
        // A deadline too far to represent never fires.
        let far = started + Duration::from_secs(100 * 365 * 24 * 3600);
        let hard_deadline = started.checked_add(max_total).unwrap_or(far).min(far);
        let mut deadline = started
            .checked_add(timeout)
            .unwrap_or(far)
            .min(hard_deadline);
        // No token is made for a caller that gave none: nothing could fire it.
        let cancel = options.cancel.take();
        loop {
            tokio::select! {
                biased;
                reply = &mut reply_rx => {
                    guard.disarm();
                    // Progress sent just before the response may still be queued: deliver it
                    // first, so a callback never misses the final steps.
                    if let (Some(inbox), Some(callback)) = (inbox.as_deref(), options.on_progress.as_mut()) {
                        while let Some(progress) = inbox.try_next() {
                            callback(progress);
                        }
                    }
                    return reply.unwrap_or_else(|_| Err(self.closed_error()));
                }
                _ = cancelled(cancel.as_ref()) => {
                    guard.withdraw("cancelled by caller");
                    return Err(Error::Cancelled);
                }
                progress = next_progress(inbox.as_deref()) => {
                    if options.reset_timeout_on_progress {
                        let now = tokio::time::Instant::now();
                        deadline = now.checked_add(timeout).unwrap_or(far).min(hard_deadline);
                    }
                    if let Some(callback) = options.on_progress.as_mut() {
                        callback(progress);
                    }
                }
                _ = tokio::time::sleep_until(deadline) => {
                    guard.withdraw("request timed out");
                    return Err(Error::Timeout {
                        method: method.to_owned(),
                        after: tokio::time::Instant::now() - started,
                    });
                }
            }
        }
    }

    /// Sends a notification not tied to any request.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        self.notify_routed(method, params, Route::Unrelated).await
    }

    pub(crate) async fn notify_routed(
        &self,
        method: &str,
        params: Option<Value>,
        route: Route,
    ) -> Result<()> {
        let params = params
            .map(|p| serde_json::value::to_raw_value(&p))
            .transpose()
            .map_err(|e| Error::InvalidArgument(format!("params of `{method}`: {e}")))?;
        self.send_frame(encode_notification(method, params.as_deref()), route)
            .await
    }

    /// Queues a notification without waiting (for use in `Drop`).
    pub(crate) fn notify_nowait(&self, method: &str, params: Option<Value>, route: Route) {
        let params = match params
            .map(|p| serde_json::value::to_raw_value(&p))
            .transpose()
        {
            Ok(p) => p,
            Err(_) => return,
        };
        let frame = Outbound::Frame(OutFrame {
            bytes: encode_notification(method, params.as_deref()),
            route,
        });
        match self.inner.outbound.try_send(frame) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(frame)) => {
                let tx = self.inner.outbound.clone();
                let send = async move {
                    let _ = tx.send(frame).await;
                };
                match &self.inner.spawner {
                    Spawner::Host(host) => host.spawn(send),
                    Spawner::Tokio => {
                        if let Ok(handle) = tokio::runtime::Handle::try_current() {
                            handle.spawn(send);
                        }
                    }
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    pub(crate) fn outbound(&self) -> &mpsc::Sender<Outbound> {
        &self.inner.outbound
    }

    /// Writes one serialized message to the transport.
    pub(crate) async fn send_frame(&self, bytes: Vec<u8>, route: Route) -> Result<()> {
        self.inner
            .outbound
            .send(Outbound::Frame(OutFrame { bytes, route }))
            .await
            .map_err(|_| self.closed_error())
    }

    fn closed_error(&self) -> Error {
        self.inner
            .close_reason
            .lock()
            .clone()
            .unwrap_or_else(|| Error::closed("the session is closed"))
    }
}

/// Fires with the caller's token; never without one.
async fn cancelled(token: Option<&CancellationToken>) {
    match token {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

/// The request's next progress notification; never if it asked for none.
async fn next_progress(inbox: Option<&ProgressInbox>) -> ProgressNotificationParams {
    match inbox {
        Some(inbox) => inbox.next().await,
        None => std::future::pending().await,
    }
}

/// Puts `_meta.progressToken` into a request's params, creating them if needed.
fn with_progress_token(params: Option<Value>, id: &RequestId) -> Result<Value> {
    let mut params = params.unwrap_or_else(|| Value::Object(Default::default()));
    let Value::Object(map) = &mut params else {
        return Err(Error::InvalidArgument(
            "request params must be a JSON object".into(),
        ));
    };
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(Default::default()));
    match meta {
        Value::Object(meta_map) => {
            meta_map.insert(meta::PROGRESS_TOKEN.into(), id.to_value());
        }
        _ => {
            return Err(Error::InvalidArgument(
                "`_meta` must be a JSON object".into(),
            ));
        }
    }
    Ok(params)
}
