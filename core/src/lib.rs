//! oxmcp: one native Model Context Protocol engine.
//!
//! The crate is layered so that data flows down on send and up on receive, and nothing reaches
//! upward:
//!
//! | module | knows |
//! |---|---|
//! | [`transport`] | bytes and frames: memory duplex, stdio, child processes, WebSocket |
//! | [`jsonrpc`] | the JSON-RPC 2.0 envelope: classification, ids, framing, error codes |
//! | [`protocol`] | typed MCP payloads for every revision, method-name constants |
//! | [`session`] | the engine both roles share: request table, timeouts, cancellation, progress, lifecycle |
//! | [`server`] / [`client`] | the role APIs: runtime registration of handlers, typed requests |
//! | [`schema`] | JSON Schema validation with caps and no network `$ref`; translation of tools to LLM APIs and back |
//! | [`host`] | `mcpServers` configs, many servers at once, the agent loop |
//!
//! Every MCP revision is spoken on both sides: the handshake era (2024-11-05, 2025-03-26,
//! 2025-06-18, 2025-11-25) and the stateless 2026-07-28 era.

pub mod auth;
pub mod cli;
pub mod client;
#[cfg(doctest)]
mod docs;
pub mod embed;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
mod inspect;
pub mod jsonrpc;
pub mod protocol;
mod random;
pub mod sanitize;
pub mod schema;
pub mod server;
pub mod session;
mod sync;
pub mod task_store;
pub mod transport;

pub use error::{Error, ErrorKind, Result};
pub use protocol::ProtocolVersion;
