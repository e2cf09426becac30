//! Tasks on the server: a `tools/call` that becomes a task is answered at once with the
//! task's id, and its handler goes on in the background, detached from the request and from
//! the client's connection, until it finishes, is cancelled, or its TTL runs out.
//!
//! - `call`: deciding whether a call is a task (the tool's [`TaskSupport`](crate::protocol::TaskSupport),
//!   the era, the client's opt-in) and starting it;
//! - `link`: what the handler's context uses while it runs as a task (its questions);
//! - `runner`: the background loop that owns the handler, renews its lease, delivers answers
//!   and writes the outcome;
//! - `methods`: `tasks/get`, `tasks/update`, `tasks/cancel`, and the 2025-11-25 `tasks/result`
//!   and `tasks/list`;
//! - `view`: reading a stored task and writing it out per era.
//!
//! Tasks live in a [`TaskStore`]: this process's memory by default, Redis when the server is
//! scaled out (the store of [`HttpServerOptions::shared_store`](crate::transport::http::HttpServerOptions)).
//! A change made on one replica (an answer, a cancel, an outcome) is signalled to the others
//! over the store's change fan-out, so the replica running the task wakes at once; every
//! waiter also re-reads the store now and then, so a lost signal only delays.
//!
//! **Whose task.** A task belongs to a scope, and a request of another scope cannot tell it
//! from an unknown id: in the handshake era the session (the `Mcp-Session-Id` on HTTP, so any
//! replica agrees), in the stateless era the `Authorization` header's hash, or one shared
//! anonymous scope when there is none (then the 128-bit id is the only key). The bound on
//! running tasks is per scope.

mod call;
mod link;
mod methods;
mod runner;
mod view;

use std::{collections::HashMap, sync::Arc, time::Duration};

pub(crate) use call::{TaskCall, TaskPlan, call_as_task, plan};
pub(crate) use link::TaskLink;
pub(crate) use methods::serve;
use tokio::sync::watch;
pub(crate) use view::TaskEra;
use view::TaskView;

use super::Inner;
use crate::{
    jsonrpc::{ErrorObject, codes},
    session::RequestContext,
    sync::{Mutex, RwLock},
    task_store::{MemoryTaskStore, TaskStore, TaskStoreError, field},
};

/// How a server runs tasks. The defaults are documented in `docs/reference/defaults.md`.
#[derive(Clone, Debug)]
pub struct TaskOptions {
    /// How long a task is kept from its creation when the client asks for nothing.
    pub default_ttl: Duration,
    /// The shortest TTL granted: a smaller request (0 included) is raised to it.
    pub min_ttl: Duration,
    /// The longest TTL granted: a larger request is lowered to it.
    pub max_ttl: Duration,
    /// The poll interval suggested to clients.
    pub poll_interval: Duration,
    /// Running tasks at once per session (handshake era) or per authenticated client
    /// (stateless era); one more is refused with an error saying so.
    pub max_running_per_client: usize,
    /// Running tasks at once for all stateless clients without an `Authorization` header
    /// together (they cannot be told apart).
    pub max_running_anonymous: usize,
    /// How long a running task's replica is trusted without renewing its lease: a task whose
    /// replica died is marked `failed` this long after its last renewal.
    pub lease: Duration,
    /// Tasks kept per client (running and finished, until their TTL): past it the oldest
    /// finished ones go first, so nobody fills the store with results. Ten times as many for
    /// the anonymous scope.
    pub max_kept_per_client: usize,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            default_ttl: Duration::from_secs(60 * 60),
            min_ttl: Duration::from_secs(10),
            max_ttl: Duration::from_secs(24 * 60 * 60),
            poll_interval: Duration::from_millis(500),
            max_running_per_client: 100,
            max_running_anonymous: 1000,
            lease: Duration::from_secs(10),
            max_kept_per_client: 1000,
        }
    }
}

/// The method name of a task change on the store's change fan-out (never sent to clients).
pub(crate) const TASK_SIGNAL: &str = "oxmcp/task-changed";

/// The tasks side of a server.
pub(crate) struct TaskEngine {
    pub(crate) options: TaskOptions,
    store: RwLock<Arc<dyn TaskStore>>,
    /// One version counter per task somebody here waits on: bumped on every change.
    signals: Mutex<HashMap<String, watch::Sender<u64>>>,
    /// Pending 2025-11-25 `tasks/result` requests by task: a task's questions go on the
    /// stream of the newest one (its session and request id).
    result_streams: Mutex<HashMap<String, Vec<ResultStream>>>,
    /// This server instance, for scopes of sessions that have no HTTP id.
    pub(crate) instance: String,
}

#[derive(Clone)]
pub(crate) struct ResultStream {
    pub(crate) session: crate::session::Session,
    pub(crate) request: crate::jsonrpc::RequestId,
}

impl TaskEngine {
    pub(crate) fn new(options: TaskOptions, store: Option<Arc<dyn TaskStore>>) -> Self {
        TaskEngine {
            options,
            store: RwLock::new(store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new()))),
            signals: Mutex::new(HashMap::new()),
            result_streams: Mutex::new(HashMap::new()),
            instance: crate::random::id128(),
        }
    }

    pub(crate) fn store(&self) -> Arc<dyn TaskStore> {
        self.store.read().clone()
    }

    /// Moves the tasks to a shared store (a scaled-out server).
    pub(crate) fn use_store(&self, store: Arc<dyn TaskStore>) {
        *self.store.write() = store;
    }

    /// A TTL the server grants for a requested one (ms).
    pub(crate) fn grant_ttl(&self, requested: Option<u64>) -> u64 {
        let o = &self.options;
        let asked = requested.map_or(o.default_ttl, Duration::from_millis);
        asked.clamp(o.min_ttl, o.max_ttl.max(o.min_ttl)).as_millis() as u64
    }

    /// The bound on running tasks of a scope.
    pub(crate) fn limit_of(&self, scope: &str) -> usize {
        if scope == ANONYMOUS {
            self.options.max_running_anonymous
        } else {
            self.options.max_running_per_client
        }
    }

    /// How many tasks of a scope are kept in all.
    pub(crate) fn keep_of(&self, scope: &str) -> usize {
        let keep = if scope == ANONYMOUS {
            self.options.max_kept_per_client.saturating_mul(10)
        } else {
            self.options.max_kept_per_client
        };
        keep.max(self.limit_of(scope))
    }

    /// Follows the changes of one task made here (and, through [`signal`], elsewhere).
    pub(crate) fn watch(&self, id: &str) -> watch::Receiver<u64> {
        let mut signals = self.signals.lock();
        // Counters nobody follows any more go now and then (each one is also dropped at the
        // first change after its last follower left).
        if signals.len() >= 64 && signals.len().is_power_of_two() {
            signals.retain(|_, tx| tx.receiver_count() > 0);
        }
        signals
            .entry(id.to_owned())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// Wakes whoever here follows `id`.
    pub(crate) fn bump_local(&self, id: &str) {
        let mut signals = self.signals.lock();
        if let Some(tx) = signals.get(id) {
            if tx.receiver_count() == 0 {
                signals.remove(id);
            } else {
                tx.send_modify(|v| *v += 1);
            }
        }
    }

    fn add_result_stream(&self, id: &str, stream: ResultStream) {
        self.result_streams
            .lock()
            .entry(id.to_owned())
            .or_default()
            .push(stream);
        // A question waiting for a way to the client (see `link`) can go now.
        self.bump_local(id);
    }

    fn remove_result_stream(&self, id: &str, request: &crate::jsonrpc::RequestId) {
        let mut streams = self.result_streams.lock();
        if let Some(list) = streams.get_mut(id) {
            list.retain(|s| &s.request != request);
            if list.is_empty() {
                streams.remove(id);
            }
        }
    }

    /// The newest `tasks/result` still open for `id` on `session` (where the task's
    /// questions are best sent).
    pub(crate) fn result_stream(
        &self,
        id: &str,
        session: &crate::session::Session,
    ) -> Option<crate::jsonrpc::RequestId> {
        let streams = self.result_streams.lock();
        streams.get(id)?.iter().rev().find_map(|s| {
            (!s.session.is_closed() && s.session.same_as(session)).then(|| s.request.clone())
        })
    }
}

/// Tells the task's followers here and on the other replicas that it changed.
pub(crate) fn signal(server: &Inner, id: &str) {
    server.tasks.bump_local(id);
    server.share(TASK_SIGNAL, Some(id));
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The scope of stateless requests without credentials.
const ANONYMOUS: &str = "anonymous";

/// Whose task a request creates or may see (see the module doc).
pub(crate) fn scope_of(
    server: &Inner,
    ctx: &RequestContext,
    stateless: bool,
    session_id: u64,
) -> String {
    let header = |name: &str| {
        ctx.http_headers()
            .and_then(|h| h.get(name))
            .and_then(|v| v.to_str().ok())
    };
    if stateless {
        return match crate::transport::http::store::principal_of(header("authorization")) {
            Some(principal) => format!("client:{principal}"),
            None => ANONYMOUS.to_owned(),
        };
    }
    match header("mcp-session-id") {
        Some(id) => format!("session:{id}"),
        None => format!("local:{}:{session_id}", server.tasks.instance),
    }
}

/// The answer to any id that is not a task of this scope: unknown, expired, another
/// client's, or malformed all look the same.
pub(crate) fn unknown_task() -> ErrorObject {
    ErrorObject::invalid_params(
        "Invalid params: unknown task (no task with this id is visible to this client; it may have expired)",
    )
}

pub(crate) fn store_error(e: TaskStoreError) -> ErrorObject {
    match e {
        TaskStoreError::TooMany { limit } => ErrorObject::new(
            codes::INVALID_REQUEST,
            format!(
                "Too many running tasks: this client already has {limit} (the limit); wait for one \
                 to finish or cancel one"
            ),
        )
        .with_data(serde_json::json!({ "limit": limit })),
        TaskStoreError::Unavailable(why) => ErrorObject::internal(format!(
            "Internal error: the task store is unavailable: {why}"
        )),
    }
}

/// Loads a task of this scope and era, failing the ones whose replica stopped renewing the
/// lease (the first reader to see it writes the outcome).
pub(crate) async fn find(
    server: &Inner,
    id: &str,
    scope: &str,
    era: TaskEra,
) -> Result<TaskView, ErrorObject> {
    // Ids are 22 characters; anything much longer is not one of ours.
    if id.is_empty() || id.len() > 128 {
        return Err(unknown_task());
    }
    let store = server.tasks.store();
    let fields = store.load(id).await.map_err(store_error)?;
    let view = fields
        .as_ref()
        .and_then(|f| TaskView::read(id, f))
        .filter(|v| v.scope == scope && v.meta.era == era)
        .ok_or_else(unknown_task)?;
    let abandoned = view.outcome.is_none() && view.lease.is_some_and(|l| l < now_ms());
    if !abandoned {
        return Ok(view);
    }
    let outcome = view::Outcome::failed(
        ErrorObject::internal(
            "Internal error: the server instance running this task stopped before it finished",
        ),
        now_ms(),
    );
    store
        .finish(id, outcome.to_json())
        .await
        .map_err(store_error)?;
    signal(server, id);
    let fields = store.load(id).await.map_err(store_error)?;
    fields
        .as_ref()
        .and_then(|f| TaskView::read(id, f))
        .ok_or_else(unknown_task)
}

/// The field of a question's answer.
pub(crate) fn answer_field(key: &str) -> String {
    format!("{}{key}", field::ANSWER)
}

/// The field of a question.
pub(crate) fn ask_field(key: &str) -> String {
    format!("{}{key}", field::ASK)
}
