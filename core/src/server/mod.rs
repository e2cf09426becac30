//! The server role: tools, resources, resource templates, prompts and completions registered
//! at runtime, served over any transport to clients of either era.
//!
//! ```no_run
//! use oxmcp::{protocol::{CallToolResult, Tool}, server::{Context, Server}};
//! use serde_json::{json, Value};
//!
//! # async fn run() -> oxmcp::Result<()> {
//! let server = Server::builder("weather", "1.0.0").build();
//! server.add_tool(
//!     Tool::new("echo", "Echo the text", json!({"type": "object", "properties": {"text": {"type": "string"}}})),
//!     |args: Value, _ctx: Context| async move {
//!         Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
//!     },
//! )?;
//! server.serve_stdio().await
//! # }
//! ```

pub mod coerce;
mod compat;
mod completion;
mod context;
mod dispatch;
mod features;
mod handshake;
mod input;
mod lifecycle;
mod pagination;
mod prompts;
mod resources;
mod session_data;
mod subscriptions;
mod tasks;
mod tools;
pub mod uri_template;

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

pub use completion::CompletionHandler;
pub use context::{Context, Question, QuestionKind};
pub use pagination::DEFAULT_PAGE_SIZE;
pub use prompts::{PromptHandler, PromptResult};
pub use resources::{ResourceError, ResourceHandler, ResourceResult};
use session_data::SessionData;
use subscriptions::Listener;
pub use tasks::TaskOptions;
use tokio_util::sync::CancellationToken;
use tools::RegisteredTool;
pub use tools::{TaskStart, ToolError, ToolHandler, ToolOptions, ToolResult};

use crate::{
    Error, Result,
    embed::Spawner,
    jsonrpc::RequestId,
    protocol::{
        Implementation, Prompt, ProtocolVersion, Resource, ResourceTemplate, Tool, methods,
    },
    session::{Role, Session, SessionConfig},
    sync::{Mutex, RwLock},
    transport::{Transport, stdio::StdioTransport},
};

/// Configures a [`Server`].
#[derive(Debug)]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    versions: Vec<ProtocolVersion>,
    page_size: usize,
    list_ttl: Duration,
    session_config: SessionConfig,
    state_key: Option<[u8; 32]>,
    advertise: Advertise,
    task_options: TaskOptions,
    task_store: Option<Arc<dyn crate::task_store::TaskStore>>,
}

/// Capabilities declared even before anything is registered, for servers that register at
/// runtime after clients connect.
#[derive(Debug, Default, Clone, Copy)]
struct Advertise {
    resources: bool,
    prompts: bool,
}

impl ServerBuilder {
    /// Guidance for the model, sent in the handshake and `server/discover`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Restricts the revisions this server speaks (default: all five).
    pub fn protocol_versions(
        mut self,
        versions: impl IntoIterator<Item = ProtocolVersion>,
    ) -> Self {
        self.versions = versions.into_iter().collect();
        self.versions.sort();
        self.versions.dedup();
        self
    }

    /// Items per page of every list method.
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// `ttlMs` on list and read results (2026-07-28); 0 (the default) means "do not cache".
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// Engine settings for every session.
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.session_config = config;
        self
    }

    /// The key that signs `requestState` in multi round-trip requests. Several instances
    /// behind one load balancer must share it; by default each server picks a random one.
    pub fn request_state_key(mut self, key: [u8; 32]) -> Self {
        self.state_key = Some(key);
        self
    }

    /// How tasks are kept and bounded (TTLs, poll interval, running tasks per client, lease).
    pub fn task_options(mut self, options: TaskOptions) -> Self {
        self.task_options = options;
        self
    }

    /// Where tasks are kept (default: this process's memory; a scaled-out HTTP server moves
    /// them to its shared store by itself).
    pub fn task_store(mut self, store: Arc<dyn crate::task_store::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Declares the resources capability even while none is registered.
    pub fn advertise_resources(mut self) -> Self {
        self.advertise.resources = true;
        self
    }

    /// Declares the prompts capability even while none is registered.
    pub fn advertise_prompts(mut self) -> Self {
        self.advertise.prompts = true;
        self
    }

    /// Builds the server.
    pub fn build(self) -> Server {
        Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                versions: self.versions,
                page_size: self.page_size,
                list_ttl: self.list_ttl,
                session_config: self.session_config,
                sealer: match self.state_key {
                    Some(key) => input::StateSealer::new(key),
                    None => input::StateSealer::random(),
                },
                advertise: self.advertise,
                tasks: tasks::TaskEngine::new(self.task_options, self.task_store),
                tools: RwLock::new(ToolRegistry::default()),
                resources: RwLock::new(resources::ResourceRegistry::default()),
                prompts: RwLock::new(prompts::PromptRegistry::default()),
                sessions: Mutex::new(HashMap::new()),
                listeners: Mutex::new(HashMap::new()),
                next_session: AtomicU64::new(0),
                shutdown: CancellationToken::new(),
                fanout: Mutex::new(None),
            }),
        }
    }
}

/// An MCP server: registries plus the sessions serving them. Cheap to clone.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

/// Tools in registration order, with an index by name.
#[derive(Default)]
struct ToolRegistry {
    order: Vec<String>,
    /// Shared, so a call takes its tool out of the lock with a reference count rather than a
    /// deep copy of the definition and its schemas.
    by_name: HashMap<String, Arc<RegisteredTool>>,
}

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    versions: Vec<ProtocolVersion>,
    page_size: usize,
    list_ttl: Duration,
    session_config: SessionConfig,
    sealer: input::StateSealer,
    advertise: Advertise,
    tasks: tasks::TaskEngine,
    tools: RwLock<ToolRegistry>,
    resources: RwLock<resources::ResourceRegistry>,
    prompts: RwLock<prompts::PromptRegistry>,
    sessions: Mutex<HashMap<u64, (Session, Arc<SessionData>)>>,
    listeners: Mutex<HashMap<(u64, RequestId), Listener>>,
    next_session: AtomicU64,
    shutdown: CancellationToken,
    /// Tells the other replicas of a scaled-out server about a change made here.
    fanout: Mutex<Option<ChangeSink>>,
}

/// Where a change made on this replica goes (`method`, and the resource for an update).
type ChangeSink = Arc<dyn Fn(&str, Option<&str>) + Send + Sync>;

impl Server {
    /// Starts configuring a server with a name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            versions: ProtocolVersion::ALL.to_vec(),
            page_size: DEFAULT_PAGE_SIZE,
            list_ttl: Duration::ZERO,
            session_config: SessionConfig::for_role(Role::Server),
            state_key: None,
            advertise: Advertise::default(),
            task_options: TaskOptions::default(),
            task_store: None,
        }
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// Registers (or replaces) a tool. Fails if its name or schemas are invalid. Connected
    /// clients are told the list changed. A definition that declares
    /// `execution.taskSupport` is served as a task tool accordingly (see
    /// [`Server::add_tool_with`] for more).
    pub fn add_tool(&self, tool: Tool, handler: impl ToolHandler) -> Result<()> {
        self.add_tool_arc(tool, Arc::new(handler))
    }

    /// Registers (or replaces) a tool served as `options` say: whether its calls may or must
    /// run as tasks, and when they become one.
    pub fn add_tool_with(
        &self,
        tool: Tool,
        options: ToolOptions,
        handler: impl ToolHandler,
    ) -> Result<()> {
        self.add_tool_arc_with(tool, options, Arc::new(handler))
    }

    /// Like [`Server::add_tool`], for a handler that is already shared. A definition that
    /// declares `execution.taskSupport` is served so ([`ToolOptions::from_tool`]).
    pub fn add_tool_arc(&self, tool: Tool, handler: Arc<dyn ToolHandler>) -> Result<()> {
        let options = ToolOptions::from_tool(&tool);
        self.add_tool_arc_with(tool, options, handler)
    }

    /// Like [`Server::add_tool_with`], for a handler that is already shared.
    pub fn add_tool_arc_with(
        &self,
        tool: Tool,
        options: ToolOptions,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<()> {
        let registered = RegisteredTool::new(tool, options, handler)?;
        {
            let mut tools = self.inner.tools.write();
            let name = registered.tool.name.clone();
            if tools
                .by_name
                .insert(name.clone(), Arc::new(registered))
                .is_none()
            {
                tools.order.push(name);
            }
        }
        self.inner.list_changed(methods::TOOLS_LIST_CHANGED);
        Ok(())
    }

    /// Removes a tool; returns whether it existed. Connected clients are told.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = {
            let mut tools = self.inner.tools.write();
            let removed = tools.by_name.remove(name).is_some();
            if removed {
                tools.order.retain(|n| n != name);
            }
            removed
        };
        self.inner
            .list_changed_if(removed, methods::TOOLS_LIST_CHANGED)
    }

    /// The registered tools, in registration order.
    pub fn tools(&self) -> Vec<Tool> {
        let tools = self.inner.tools.read();
        tools
            .order
            .iter()
            .filter_map(|n| tools.by_name.get(n))
            .map(|t| t.tool.clone())
            .collect()
    }

    /// Registers (or replaces) a resource with a fixed URI.
    pub fn add_resource(&self, resource: Resource, handler: impl ResourceHandler) {
        self.inner
            .resources
            .write()
            .add(resource, Arc::new(handler));
        self.inner.list_changed(methods::RESOURCES_LIST_CHANGED);
    }

    /// Removes a resource; returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.inner.resources.write().remove(uri);
        self.inner
            .list_changed_if(removed, methods::RESOURCES_LIST_CHANGED)
    }

    /// Registers (or replaces) a resource template. Fails if the URI template is malformed.
    pub fn add_resource_template(
        &self,
        template: ResourceTemplate,
        handler: impl ResourceHandler,
    ) -> Result<()> {
        self.inner
            .resources
            .write()
            .add_template(template, Arc::new(handler))?;
        self.inner.list_changed(methods::RESOURCES_LIST_CHANGED);
        Ok(())
    }

    /// Completes one variable of a registered template.
    pub fn add_template_completion(
        &self,
        uri_template: &str,
        variable: &str,
        handler: impl CompletionHandler,
    ) -> Result<()> {
        let mut resources = self.inner.resources.write();
        let template = resources
            .templates
            .iter_mut()
            .find(|t| t.template.uri_template == uri_template)
            .ok_or_else(|| {
                Error::InvalidArgument(format!("no resource template `{uri_template}`"))
            })?;
        if !template.matcher.variables().any(|v| v == variable) {
            return Err(Error::InvalidArgument(format!(
                "`{uri_template}` has no variable `{variable}`"
            )));
        }
        template
            .completions
            .insert(variable.to_owned(), Arc::new(handler));
        Ok(())
    }

    /// Registers (or replaces) a prompt.
    pub fn add_prompt(&self, prompt: Prompt, handler: impl PromptHandler) -> Result<()> {
        self.inner.prompts.write().add(prompt, Arc::new(handler))?;
        self.inner.list_changed(methods::PROMPTS_LIST_CHANGED);
        Ok(())
    }

    /// Removes a prompt; returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.inner.prompts.write().remove(name);
        self.inner
            .list_changed_if(removed, methods::PROMPTS_LIST_CHANGED)
    }

    /// Completes one argument of a registered prompt.
    pub fn add_prompt_completion(
        &self,
        prompt: &str,
        argument: &str,
        handler: impl CompletionHandler,
    ) -> Result<()> {
        let mut prompts = self.inner.prompts.write();
        let registered = prompts
            .by_name
            .get_mut(prompt)
            .ok_or_else(|| Error::InvalidArgument(format!("no prompt `{prompt}`")))?;
        let known = registered
            .prompt
            .arguments
            .iter()
            .flatten()
            .any(|a| a.name == argument);
        if !known {
            return Err(Error::InvalidArgument(format!(
                "prompt `{prompt}` has no argument `{argument}`"
            )));
        }
        registered
            .completions
            .insert(argument.to_owned(), Arc::new(handler));
        Ok(())
    }

    /// Tells subscribers that a resource changed: handshake-era sessions that sent
    /// `resources/subscribe` for it, and `subscriptions/listen` streams that asked for it.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner.resource_updated(uri);
    }

    /// Serves one client over `transport`. The session runs until the transport closes.
    pub fn serve(&self, transport: impl Transport) -> Session {
        self.serve_on(transport, Spawner::Tokio)
    }

    /// Serves one session over `transport`, with the session's own tasks on `spawner` (a
    /// host loop whose thread reads the transport: see [`crate::embed`]).
    pub fn serve_on(&self, transport: impl Transport, spawner: Spawner) -> Session {
        let id = self.inner.next_session.fetch_add(1, Ordering::Relaxed);
        let data = Arc::new(SessionData::default());
        let dispatch = Arc::new(dispatch::ServerDispatch::new(
            self.inner.clone(),
            id,
            data.clone(),
        ));
        let session = Session::start_on(
            transport,
            Role::Server,
            dispatch,
            self.inner.session_config.clone(),
            spawner,
        );
        self.inner
            .sessions
            .lock()
            .insert(id, (session.clone(), data));
        session
    }

    /// Serves Streamable HTTP (both eras) until the returned server is shut down or dropped,
    /// and WebSocket on the same path when `options.websocket` is set. Binds 127.0.0.1
    /// unless the options say otherwise (and then only with a Host allowlist or an auth
    /// hook).
    pub async fn serve_http(
        &self,
        options: crate::transport::http::HttpServerOptions,
    ) -> Result<crate::transport::http::HttpServer> {
        if let Some(store) = &options.shared_store {
            self.share_changes(store.clone());
        }
        let server = self.clone();
        let factory: crate::transport::http::SessionFactory =
            Arc::new(move |link| server.serve(link));
        crate::transport::http::HttpServer::bind(options, factory).await
    }

    /// Serves WebSocket alone (`ws://127.0.0.1:PORT/mcp` by default): each socket is one
    /// session, in either era, until the returned server is shut down or dropped. The
    /// security rules are the Streamable HTTP server's (see [`Server::serve_http`]); to serve
    /// both transports on one port, set `websocket` in its options instead.
    pub async fn serve_ws(
        &self,
        options: crate::transport::ws::WsServerOptions,
    ) -> Result<crate::transport::ws::WsServer> {
        let server = self.clone();
        let factory: crate::transport::http::SessionFactory =
            Arc::new(move |link| server.serve(link));
        let http =
            crate::transport::http::HttpServer::bind_ws_only(options.into_http(), factory).await?;
        Ok(crate::transport::ws::WsServer::new(http))
    }

    /// Joins the change fan-out of a scaled-out server: what changes here is published to the
    /// other replicas, and what they publish reaches this replica's listeners and sessions.
    fn share_changes(&self, store: Arc<dyn crate::transport::http::store::SharedStore>) {
        use crate::transport::http::store::Change;
        if let Some(tasks) = store.task_store() {
            self.inner.tasks.use_store(tasks);
        }
        let publisher = store.clone();
        let sink: ChangeSink = Arc::new(move |method: &str, uri: Option<&str>| {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let sent = publisher.publish_change(Change {
                method: method.to_owned(),
                uri: uri.map(str::to_owned),
            });
            runtime.spawn(async move {
                if let Err(e) = sent.await {
                    tracing::warn!(target: "oxmcp::server", "a change was not shared with the other replicas: {e}");
                }
            });
        });
        *self.inner.fanout.lock() = Some(sink);
        let Some(mut changes) = store.subscribe_changes() else {
            return;
        };
        let inner = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            while let Some(change) = changes.recv().await {
                let Some(inner) = inner.upgrade() else { return };
                match (change.method.as_str(), change.uri.as_deref()) {
                    (tasks::TASK_SIGNAL, Some(id)) => inner.tasks.bump_local(id),
                    (methods::RESOURCES_UPDATED, Some(uri)) => inner.resource_updated_here(uri),
                    (
                        methods::TOOLS_LIST_CHANGED
                        | methods::PROMPTS_LIST_CHANGED
                        | methods::RESOURCES_LIST_CHANGED,
                        None,
                    ) => inner.list_changed_here(&change.method),
                    _ => {
                        tracing::debug!(target: "oxmcp::server", "ignored a shared change: {change:?}")
                    }
                }
            }
        });
    }

    /// Serves over this process's stdin/stdout until the client hangs up.
    pub async fn serve_stdio(&self) -> Result<()> {
        let session = self.serve(StdioTransport::new());
        match session.closed().await {
            Some(Error::Io(e)) => Err(Error::Io(e)),
            _ => Ok(()),
        }
    }

    /// Ends every `subscriptions/listen` stream with its final result (for a graceful stop).
    pub fn end_subscriptions(&self) {
        self.inner.shutdown.cancel();
    }

    /// How many sessions are open.
    pub fn session_count(&self) -> usize {
        self.inner.sessions.lock().len()
    }
}

impl Inner {
    /// Tells handshake-era sessions (once their handshake is complete) and listen streams that
    /// asked, here and on the other replicas.
    fn list_changed(&self, method: &str) {
        self.list_changed_here(method);
        self.share(method, None);
    }

    /// After a removal: tells of the change when something was removed, and passes on
    /// whether it was. (Called once the list's lock is released, as `list_changed` must be.)
    fn list_changed_if(&self, removed: bool, method: &str) -> bool {
        if removed {
            self.list_changed(method);
        }
        removed
    }

    fn resource_updated(&self, uri: &str) {
        self.resource_updated_here(uri);
        self.share(methods::RESOURCES_UPDATED, Some(uri));
    }

    fn share(&self, method: &str, uri: Option<&str>) {
        let sink = self.fanout.lock().clone();
        if let Some(sink) = sink {
            sink(method, uri);
        }
    }

    /// Tells this replica's sessions (as far as their handshakes allow: see `handshake`) and
    /// listen streams that the list behind `method` changed.
    fn list_changed_here(&self, method: &str) {
        // Copied out, so no session is told while the table is locked.
        let sessions: Vec<(Session, Arc<SessionData>)> =
            self.sessions.lock().values().cloned().collect();
        for (session, data) in &sessions {
            handshake::tell(session, data, handshake::Change::ListChanged(method));
        }
        subscriptions::deliver(self, method, None);
    }

    /// Tells this replica's sessions subscribed to `uri` (as their handshakes allow) and
    /// listen streams that asked that the resource changed.
    fn resource_updated_here(&self, uri: &str) {
        let sessions: Vec<(Session, Arc<SessionData>)> = self
            .sessions
            .lock()
            .values()
            .filter(|(_, data)| data.subscriptions.lock().contains(uri))
            .cloned()
            .collect();
        for (session, data) in &sessions {
            handshake::tell(session, data, handshake::Change::Updated(uri));
        }
        subscriptions::deliver(self, methods::RESOURCES_UPDATED, Some(uri));
    }
}
