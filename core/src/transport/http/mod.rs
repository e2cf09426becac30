//! Streamable HTTP (2025-03-26 onwards, both eras) and the legacy HTTP+SSE transport
//! (2024-11-05), server and client.

mod answer;
mod body;
pub mod client;
mod event_store;
pub(crate) mod fuzz_request;
mod get;
mod legacy;
mod post;
mod post_rule;
pub mod security;
mod server;
mod shared;
pub mod sse;
mod stateless;
pub mod store;
mod streams;
pub(crate) mod tls;

pub use client::{HttpClientOptions, HttpClientTransport};
pub use event_store::{EventStore, InMemoryEventStore};
use server::InMemoryServer;
pub use server::{AuthHook, HttpServer, HttpServerOptions, SessionFactory};
pub(crate) use streams::is_stranded;

/// Header names, lower-case as HTTP/2 and the `http` crate want them.
pub mod headers {
    use http::HeaderName;

    /// The session of a handshake-era connection.
    pub const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
    /// The protocol revision of the request.
    pub const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
    /// 2026-07-28: the JSON-RPC method, mirrored from the body.
    pub const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
    /// 2026-07-28: the tool, prompt or resource named in the body.
    pub const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
    /// Resumption point of an SSE stream.
    pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
    /// Asks reverse proxies not to buffer SSE.
    pub const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");
}
