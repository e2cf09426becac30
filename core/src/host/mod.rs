//! The host: many servers from one `mcpServers` config, behind one set of namespaced tools.
//!
//! Every framework re-implements this layer and its users report the same faults: one dead
//! server failing them all (langchain-mcp-adapters #401, #492), a new session per tool call
//! (#207), `tools/list` re-fetched on every model step (n8n #37354, kilocode #7922). Here:
//!
//! - servers connect concurrently, each under its own timeout; a server that does not exist,
//!   crashes at start or never answers is reported by name with its stderr tail
//!   ([`ServerStatus`]) while the others work;
//! - each server has one long-lived session; its tools, resources and prompts are cached and
//!   listed again only after it sends `list_changed`;
//! - a stdio server that crashed is started again on the next call made to it;
//! - [`Host::translate`] gives the tools in any provider's format with the name map, and
//!   [`Host::run_agent`] (in `agent`) runs the agent loop over them.

pub mod agent;
pub mod approval;
pub mod config;
mod connect;
mod docker;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU32, Ordering},
    },
    time::Duration,
};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::Mutex;

pub use agent::{
    AgentOptions, CallRecord, MAX_FORMAT_ERRORS, Model, ModelRequest, StopReason, Transcript,
};
pub use approval::{Approval, ApprovalFuture, ApprovalHook, ApprovalRequest, Approver};
pub use config::{Config, ServerSpec, ToolFilter, TransportSpec};

use crate::{
    Error, ErrorKind, Result,
    client::Client,
    protocol::{CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool},
    schema::{ServerTools, TranslateOptions, Translation, translate},
    session::RequestOptions,
    transport::{child::StderrHandle, tap::Direction},
};

/// Sees every JSON-RPC message: the server's name, the direction and the raw frame.
pub type TraceFn = Arc<dyn Fn(&str, Direction, &[u8]) + Send + Sync>;

/// Gives an HTTP server of the config its authorization (an [`crate::auth::OAuthClient`],
/// say), or `None` to connect without; called once per connection to a `url` server.
pub type AuthFactory = Arc<
    dyn Fn(&ServerSpec) -> crate::Result<Option<Arc<dyn crate::auth::AuthProvider>>> + Send + Sync,
>;

/// Adjusts the [`crate::client::ClientOptions`] of one server of the config (see
/// [`HostOptions::client_hook`]).
pub type ClientHook = Arc<
    dyn Fn(&ServerSpec, crate::client::ClientOptions) -> crate::client::ClientOptions + Send + Sync,
>;

/// How the host runs its servers.
#[derive(Clone)]
pub struct HostOptions {
    /// Our client name and version, sent in the handshake.
    pub client_name: String,
    /// Our client version.
    pub client_version: String,
    /// How long one server may take to start and handshake (a config `timeout` overrides).
    pub connect_timeout: Duration,
    /// Start a crashed server again on the next call to it.
    pub restart: bool,
    /// Receives every JSON-RPC message of every server (`--trace`).
    pub trace: Option<TraceFn>,
    /// Bytes of a failed server's stderr kept in its status.
    pub stderr_tail: usize,
    /// Authorization for HTTP servers (`None`: headers from the config only).
    pub auth: Option<AuthFactory>,
    /// Adjusts each server's client options before it connects: the handlers that answer
    /// the server's questions (sampling, elicitation, roots) and a notification callback,
    /// which is called after the host's own `list_changed` bookkeeping (`oxmcp inspect`).
    pub client_hook: Option<ClientHook>,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            client_name: "oxmcp-host".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            connect_timeout: Duration::from_secs(30),
            restart: true,
            trace: None,
            stderr_tail: 4096,
            auth: None,
            client_hook: None,
        }
    }
}

impl std::fmt::Debug for HostOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostOptions")
            .field("connect_timeout", &self.connect_timeout)
            .field("restart", &self.restart)
            .finish_non_exhaustive()
    }
}

/// How one server is doing.
#[derive(Clone, Debug, Serialize)]
pub struct ServerStatus {
    /// Its name in the config.
    pub name: String,
    /// `connected`, `failed` or `disabled`.
    pub state: &'static str,
    /// The revision spoken, when connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// `serverInfo.name` and version, when connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<String>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The error's stable kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<&'static str>,
    /// The tail of its stderr, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// How many times it was started again after a crash.
    pub restarts: u32,
    /// Entries of its lists the host left out because they do not parse (the rest work).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<crate::client::EntryIssue>,
    /// Entries it kept after repairing a slip (a schema spelled `input_schema`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repaired: Vec<crate::client::EntryIssue>,
}

/// A tool the config hides (`includeTools`, `excludeTools`, `disabledTools`) gets the error
/// of a tool the server does not have: a hidden tool cannot even be told from a missing one.
fn hidden(slot: &Slot, tool: &str) -> Result<()> {
    if slot.spec.tools.allows(tool) {
        return Ok(());
    }
    Err(Error::Rpc(crate::jsonrpc::ErrorObject::invalid_params(
        format!("Unknown tool: {tool}"),
    )))
}

/// Set by the server's `list_changed` notifications; cleared when the list is fetched.
#[derive(Default)]
pub(crate) struct Dirty {
    pub(crate) tools: AtomicBool,
    pub(crate) resources: AtomicBool,
    pub(crate) prompts: AtomicBool,
}

#[derive(Default)]
struct Conn {
    client: Option<Client>,
    stderr: Option<StderrHandle>,
    failure: Option<(Error, Option<String>)>,
    tools: Option<Arc<Vec<Tool>>>,
    resources: Option<Arc<Vec<Resource>>>,
    prompts: Option<Arc<Vec<Prompt>>>,
    /// Whether it ever connected (a restart is counted only after a real session).
    ever_connected: bool,
    /// Bumped on every (re)connect, so a failure is pinned on the session that had it.
    generation: u64,
    /// A call saw the connection end (the session may not have noticed yet).
    dead: bool,
    /// The revision the server spoke last time: a restart speaks it again without probing.
    spoke: Option<crate::client::ProtocolMode>,
}

impl Conn {
    fn live(&self) -> Option<&Client> {
        self.client
            .as_ref()
            .filter(|c| !self.dead && !c.session().is_closed())
    }
}

struct Slot {
    spec: ServerSpec,
    conn: Mutex<Conn>,
    dirty: Arc<Dirty>,
    restarts: AtomicU32,
}

/// Many servers, one set of tools.
pub struct Host {
    slots: Vec<Arc<Slot>>,
    disabled: Vec<String>,
    options: HostOptions,
    /// Set by [`Host::close`]: no server is started again after it.
    closed: AtomicBool,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field(
                "servers",
                &self.slots.iter().map(|s| &s.spec.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Host {
    /// Loads a config file and starts every enabled server. Only a bad config fails; a server
    /// that cannot start is reported in [`Host::status`].
    pub async fn from_config_file(
        path: impl AsRef<std::path::Path>,
        options: HostOptions,
    ) -> Result<Host> {
        let config = Config::from_file(path)?;
        Ok(Host::start(config, options).await)
    }

    /// Starts every server of `config` concurrently, each under its timeout.
    pub async fn start(config: Config, options: HostOptions) -> Host {
        let slots: Vec<Arc<Slot>> = config
            .servers
            .into_iter()
            .map(|spec| {
                Arc::new(Slot {
                    spec,
                    conn: Mutex::new(Conn::default()),
                    dirty: Arc::default(),
                    restarts: AtomicU32::new(0),
                })
            })
            .collect();
        let host = Host {
            slots,
            disabled: config.disabled,
            options,
            closed: AtomicBool::new(false),
        };
        futures::future::join_all(host.slots.iter().map(|slot| async {
            let mut conn = slot.conn.lock().await;
            host.connect_slot(slot, &mut conn).await;
        }))
        .await;
        host
    }

    async fn connect_slot(&self, slot: &Slot, conn: &mut Conn) {
        let timeout = slot.spec.timeout.unwrap_or(self.options.connect_timeout);
        conn.tools = None;
        conn.resources = None;
        conn.prompts = None;
        // A pinned revision (the config's `protocolVersion` or `era`), else the one the server
        // spoke before: either way no `server/discover` probe (an old server that ignores it
        // would cost its timeout at every start).
        let mode = slot.spec.protocol.clone().or_else(|| conn.spoke.clone());
        match connect::connect(&slot.spec, &self.options, slot.dirty.clone(), timeout, mode).await {
            Ok((client, stderr)) => {
                if conn.ever_connected {
                    slot.restarts.fetch_add(1, Ordering::Relaxed);
                }
                conn.spoke = Some(crate::client::ProtocolMode::of(client.protocol_version()));
                conn.client = Some(client);
                conn.stderr = stderr;
                conn.failure = None;
                conn.ever_connected = true;
                conn.generation += 1;
                conn.dead = false;
            }
            Err((error, stderr)) => {
                tracing::warn!(server = %slot.spec.name, "server failed to start: {error}");
                conn.client = None;
                conn.failure = Some((error, stderr));
            }
        }
    }

    /// The names of the enabled servers, in config order.
    pub fn server_names(&self) -> Vec<String> {
        self.slots.iter().map(|s| s.spec.name.clone()).collect()
    }

    /// Every server's state, disabled ones included.
    pub async fn status(&self) -> Vec<ServerStatus> {
        let mut out = Vec::new();
        for slot in &self.slots {
            let conn = slot.conn.lock().await;
            let mut status = ServerStatus {
                name: slot.spec.name.clone(),
                state: "failed",
                protocol_version: None,
                server_info: None,
                error: None,
                error_kind: None,
                stderr: None,
                restarts: slot.restarts.load(Ordering::Relaxed),
                skipped: Vec::new(),
                repaired: Vec::new(),
            };
            match (&conn.client, &conn.failure) {
                (Some(c), _) if conn.live().is_some() => {
                    status.state = "connected";
                    status.skipped = c.skipped_entries();
                    status.repaired = c.repaired_entries();
                    status.protocol_version = Some(c.protocol_version().as_str().to_owned());
                    let info = &c.server().info;
                    status.server_info = Some(format!("{} {}", info.name, info.version));
                }
                (Some(_), _) => {
                    status.error =
                        Some("the server exited; it is started again on the next call".into());
                    status.error_kind = Some(ErrorKind::ConnectionClosed.as_str());
                    status.stderr = conn
                        .stderr
                        .as_ref()
                        .map(|s| s.tail(self.options.stderr_tail));
                }
                (None, Some((e, stderr))) => {
                    status.error = Some(e.to_string());
                    status.error_kind = Some(e.kind().as_str());
                    status.stderr = stderr.clone();
                }
                (None, None) => status.error = Some("not started".into()),
            }
            out.push(status);
        }
        for name in &self.disabled {
            out.push(ServerStatus {
                name: name.clone(),
                state: "disabled",
                protocol_version: None,
                server_info: None,
                error: None,
                error_kind: None,
                stderr: None,
                restarts: 0,
                skipped: Vec::new(),
                repaired: Vec::new(),
            });
        }
        out
    }

    /// The config entry of `server`, if the host runs one of that name.
    pub fn spec(&self, server: &str) -> Option<&ServerSpec> {
        self.slot(server).ok().map(|slot| &slot.spec)
    }

    fn slot(&self, server: &str) -> Result<&Arc<Slot>> {
        self.slots
            .iter()
            .find(|s| s.spec.name == server)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "no server named `{server}` (servers: {})",
                    self.server_names().join(", ")
                ))
            })
    }

    /// The live client of a server. A server whose session ended (a crashed child) is started
    /// again when `restart_failed` or it had been connected; one that never started is tried
    /// again only when asked for by name.
    async fn client(&self, slot: &Slot, retry_failed: bool) -> Result<Client> {
        self.client_generation(slot, retry_failed)
            .await
            .map(|(c, _)| c)
    }

    async fn client_generation(&self, slot: &Slot, retry_failed: bool) -> Result<(Client, u64)> {
        let mut conn = slot.conn.lock().await;
        // Checked under the lock `close` takes, so a call racing the close cannot restart a
        // server behind it.
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::closed(format!(
                "the host is closed (server `{}`)",
                slot.spec.name
            )));
        }
        if let Some(c) = conn.live() {
            return Ok((c.clone(), conn.generation));
        }
        let crashed = conn.client.is_some();
        if (crashed && self.options.restart) || (!crashed && retry_failed) {
            if let Some(old) = conn.client.take() {
                old.close().await;
            }
            self.connect_slot(slot, &mut conn).await;
            if let Some(c) = &conn.client {
                return Ok((c.clone(), conn.generation));
            }
        }
        match &conn.failure {
            Some((e, _)) => Err(e.clone()),
            None => Err(Error::closed(format!(
                "server `{}` is not running",
                slot.spec.name
            ))),
        }
    }

    /// Every connected server's tools, from the cache unless the server said they changed.
    /// Servers that are down are left out (see [`Host::status`]).
    pub async fn tools(&self) -> Vec<(String, Arc<Vec<Tool>>)> {
        let lists = futures::future::join_all(self.slots.iter().map(|slot| async move {
            let tools = match self.cached(slot, Kind::Tools).await {
                Ok(t) => t,
                Err(e) => {
                    // A server that never started is already reported by `status`.
                    if slot.conn.lock().await.failure.is_none() {
                        tracing::warn!(server = %slot.spec.name, "tools/list failed: {e}");
                    }
                    return None;
                }
            };
            Some((slot.spec.name.clone(), tools.into_tools()?))
        }))
        .await;
        lists.into_iter().flatten().collect()
    }

    /// Every connected server's resources (cached like tools).
    pub async fn resources(&self) -> Vec<(String, Arc<Vec<Resource>>)> {
        let lists = futures::future::join_all(self.slots.iter().map(|slot| async move {
            let list = self.cached(slot, Kind::Resources).await.ok()?;
            Some((slot.spec.name.clone(), list.into_resources()?))
        }))
        .await;
        lists.into_iter().flatten().collect()
    }

    /// Every connected server's prompts (cached like tools).
    pub async fn prompts(&self) -> Vec<(String, Arc<Vec<Prompt>>)> {
        let lists = futures::future::join_all(self.slots.iter().map(|slot| async move {
            let list = self.cached(slot, Kind::Prompts).await.ok()?;
            Some((slot.spec.name.clone(), list.into_prompts()?))
        }))
        .await;
        lists.into_iter().flatten().collect()
    }

    async fn cached(&self, slot: &Slot, kind: Kind) -> Result<Listed> {
        let client = self.client(slot, false).await?;
        {
            let conn = slot.conn.lock().await;
            let dirty = match kind {
                Kind::Tools => &slot.dirty.tools,
                Kind::Resources => &slot.dirty.resources,
                Kind::Prompts => &slot.dirty.prompts,
            };
            if !dirty.load(Ordering::Acquire) {
                let hit = match kind {
                    Kind::Tools => conn.tools.clone().map(Listed::Tools),
                    Kind::Resources => conn.resources.clone().map(Listed::Resources),
                    Kind::Prompts => conn.prompts.clone().map(Listed::Prompts),
                };
                if let Some(hit) = hit {
                    return Ok(hit);
                }
            }
            // Cleared before listing, so a change announced during the listing is not lost.
            dirty.store(false, Ordering::Release);
        }
        let caps = &client.server().capabilities;
        let listed = match kind {
            Kind::Tools if caps.tools.is_some() => {
                let mut tools = client.list_all_tools().await?;
                // Least privilege: what the config hides is never shown (nor callable).
                tools.retain(|t| slot.spec.tools.allows(&t.name));
                Listed::Tools(Arc::new(tools))
            }
            Kind::Resources if caps.resources.is_some() => {
                Listed::Resources(Arc::new(client.list_all_resources().await?))
            }
            Kind::Prompts if caps.prompts.is_some() => {
                Listed::Prompts(Arc::new(client.list_all_prompts().await?))
            }
            Kind::Tools => Listed::Tools(Arc::default()),
            Kind::Resources => Listed::Resources(Arc::default()),
            Kind::Prompts => Listed::Prompts(Arc::default()),
        };
        let mut conn = slot.conn.lock().await;
        match &listed {
            Listed::Tools(t) => conn.tools = Some(t.clone()),
            Listed::Resources(r) => conn.resources = Some(r.clone()),
            Listed::Prompts(p) => conn.prompts = Some(p.clone()),
        }
        Ok(listed)
    }

    /// The tools of every connected server in `provider`'s format.
    pub async fn translate(
        &self,
        provider: crate::schema::Provider,
        options: &TranslateOptions,
    ) -> Translation {
        let tools = self.tools().await;
        let servers: Vec<ServerTools<'_>> = tools
            .iter()
            .map(|(server, tools)| ServerTools { server, tools })
            .collect();
        translate(provider, &servers, options)
    }

    /// Calls a tool on a server (60 s timeout reset by progress). A server that crashed is
    /// started again first.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<CallToolResult> {
        self.call_tool_with(server, tool, arguments, RequestOptions::default())
            .await
    }

    /// [`Host::call_tool`] with request options (progress callback, timeout, cancellation).
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<CallToolResult> {
        let slot = self.slot(server)?;
        hidden(slot, tool)?;
        let (client, generation) = self.client_generation(slot, true).await?;
        let result = client.call_tool_with(tool, arguments, options).await;
        if let Err(e) = &result
            && e.kind() == ErrorKind::ConnectionClosed
        {
            // The call saw the server go; mark it now, not when the session notices, so the
            // status says so and the next call starts it again.
            let mut conn = slot.conn.lock().await;
            if conn.generation == generation {
                conn.dead = true;
            }
        }
        result
    }

    /// Calls a tool as a task (see [`crate::client::Client::call_tool_as_task`]): the handle follows it, and
    /// outlives the call, so a long tool neither times out nor holds a request open. A server
    /// that offers no tasks gets a plain call, whose result the handle holds.
    pub async fn call_tool_as_task(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        options: crate::client::TaskCallOptions,
    ) -> Result<crate::client::TaskHandle> {
        let slot = self.slot(server)?;
        hidden(slot, tool)?;
        let client = self.client(slot, true).await?;
        client.call_tool_as_task(tool, arguments, options).await
    }

    /// Reads a resource from a server.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<ReadResourceResult> {
        let slot = self.slot(server)?;
        self.client(slot, true).await?.read_resource(uri).await
    }

    /// Gets a prompt from a server.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: std::collections::BTreeMap<String, String>,
    ) -> Result<GetPromptResult> {
        let slot = self.slot(server)?;
        self.client(slot, true)
            .await?
            .get_prompt(name, arguments)
            .await
    }

    /// The live client of a server, for anything the host does not wrap.
    pub async fn server_client(&self, server: &str) -> Result<Client> {
        let slot = self.slot(server)?;
        self.client(slot, true).await
    }

    /// Closes every session (children go through the shutdown ladder), concurrently.
    pub async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        futures::future::join_all(self.slots.iter().map(|slot| async move {
            let client = slot.conn.lock().await.client.take();
            if let Some(c) = client {
                c.close().await;
            }
        }))
        .await;
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Tools,
    Resources,
    Prompts,
}

enum Listed {
    Tools(Arc<Vec<Tool>>),
    Resources(Arc<Vec<Resource>>),
    Prompts(Arc<Vec<Prompt>>),
}

impl Listed {
    fn into_tools(self) -> Option<Arc<Vec<Tool>>> {
        match self {
            Listed::Tools(t) => Some(t),
            _ => None,
        }
    }
    fn into_resources(self) -> Option<Arc<Vec<Resource>>> {
        match self {
            Listed::Resources(r) => Some(r),
            _ => None,
        }
    }
    fn into_prompts(self) -> Option<Arc<Vec<Prompt>>> {
        match self {
            Listed::Prompts(p) => Some(p),
            _ => None,
        }
    }
}
