//! The server role: runtime registration of tools (and, in later modules, resources and
//! prompts), served over any transport to clients of either era.
//!
//! ```no_run
//! use oxmcp::{protocol::{CallToolResult, Tool}, server::Server};
//! use serde_json::json;
//!
//! # async fn run() -> oxmcp::Result<()> {
//! let server = Server::builder("weather", "1.0.0").build();
//! server.add_tool(
//!     Tool::new("echo", "Echo the text", json!({"type": "object", "properties": {"text": {"type": "string"}}})),
//!     |args: serde_json::Value, _ctx| async move {
//!         Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
//!     },
//! )?;
//! server.serve_stdio().await
//! # }
//! ```

mod dispatch;
mod pagination;
mod tools;

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

pub use pagination::DEFAULT_PAGE_SIZE;
use tools::RegisteredTool;
pub use tools::{ToolError, ToolHandler, ToolResult};

use crate::{
    Error, Result,
    protocol::{Implementation, ProtocolVersion, Tool, methods},
    session::{Role, Session, SessionConfig},
    sync::{Mutex, RwLock},
    transport::{Route, Transport, stdio::StdioTransport},
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

    /// `ttlMs` on list results (2026-07-28); 0 (the default) means "do not cache".
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// Engine settings for every session.
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.session_config = config;
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
                tools: RwLock::new(Registry::default()),
                sessions: Mutex::new(HashMap::new()),
                next_session: AtomicU64::new(0),
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
struct Registry {
    order: Vec<String>,
    by_name: HashMap<String, RegisteredTool>,
}

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    versions: Vec<ProtocolVersion>,
    page_size: usize,
    list_ttl: Duration,
    session_config: SessionConfig,
    tools: RwLock<Registry>,
    sessions: Mutex<HashMap<u64, Session>>,
    next_session: AtomicU64,
}

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
        }
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// Registers (or replaces) a tool. Fails if its name or schemas are invalid. Connected
    /// clients are told the list changed.
    pub fn add_tool(&self, tool: Tool, handler: impl ToolHandler) -> Result<()> {
        self.add_tool_arc(tool, Arc::new(handler))
    }

    /// Like [`Server::add_tool`], for a handler that is already shared.
    pub fn add_tool_arc(&self, tool: Tool, handler: Arc<dyn ToolHandler>) -> Result<()> {
        let registered = RegisteredTool::new(tool, handler)?;
        {
            let mut tools = self.inner.tools.write();
            let name = registered.tool.name.clone();
            if tools.by_name.insert(name.clone(), registered).is_none() {
                tools.order.push(name);
            }
        }
        self.notify_list_changed(methods::TOOLS_LIST_CHANGED);
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
        if removed {
            self.notify_list_changed(methods::TOOLS_LIST_CHANGED);
        }
        removed
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

    /// Serves one client over `transport`. The session runs until the transport closes.
    pub fn serve(&self, transport: impl Transport) -> Session {
        let id = self.inner.next_session.fetch_add(1, Ordering::Relaxed);
        let dispatch = Arc::new(dispatch::ServerDispatch::new(self.inner.clone(), id));
        let session = Session::start(
            transport,
            Role::Server,
            dispatch,
            self.inner.session_config.clone(),
        );
        self.inner.sessions.lock().insert(id, session.clone());
        session
    }

    /// Serves over this process's stdin/stdout until the client hangs up.
    pub async fn serve_stdio(&self) -> Result<()> {
        let session = self.serve(StdioTransport::new());
        match session.closed().await {
            Some(Error::Io(e)) => Err(Error::Io(e)),
            _ => Ok(()),
        }
    }

    /// How many sessions are open.
    pub fn session_count(&self) -> usize {
        self.inner.sessions.lock().len()
    }

    /// Tells every handshake-era session that has finished initializing.
    fn notify_list_changed(&self, method: &str) {
        let sessions: Vec<Session> = self.inner.sessions.lock().values().cloned().collect();
        for session in sessions {
            if session.state().is_initialized() {
                session.notify_nowait(method, None, Route::Unrelated);
            }
        }
    }
}
