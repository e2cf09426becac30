//! Typed MCP payloads for every revision, split by area.
//!
//! One set of types covers the union of all five revisions: fields that a revision lacks are
//! optional. Every struct keeps the members it does not know in `extra` and `_meta` in `meta`,
//! so values pass through untouched (a proxy never strips what a newer peer sent). Method names
//! are constants in [`methods`].

mod cancel;
mod content;
mod discover;
mod lifecycle;
pub mod meta;
pub mod methods;
mod progress;
mod tools;
mod version;

pub use cancel::CancelledNotificationParams;
pub use content::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents, ResourceLink,
    TextContent,
};
pub use discover::{CacheScope, DiscoverResult};
pub use lifecycle::{
    ClientCapabilities, Implementation, InitializeRequestParams, InitializeResult,
    ListChangedCapability, ResourcesCapability, RootsCapability, ServerCapabilities,
};
pub use progress::{ProgressNotificationParams, ProgressToken};
pub use tools::{
    CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, Tool,
    ToolAnnotations,
};
pub use version::ProtocolVersion;

/// A JSON object, as used for `_meta`, unknown members and free-form values.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
