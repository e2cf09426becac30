//! Typed MCP payloads for every revision, split by area.
//!
//! One set of types covers the union of all five revisions: fields that a revision lacks are
//! optional. Every struct keeps the members it does not know in `extra` and `_meta` in `meta`,
//! so values pass through untouched (a proxy never strips what a newer peer sent). Method names
//! are constants in [`methods`].
//!
//! Two conventions keep the structs close to the schema they mirror: members are named in
//! camelCase (`#[serde(rename_all = "camelCase")]` where a Rust name has an underscore), and an
//! optional member that is unset is left out rather than written as `null`
//! (`#[skip_serializing_none]`). Only `_meta` and the flattened `extra` need a word per field.

mod cancel;
mod client_features;
mod completion;
mod content;
mod discover;
mod lifecycle;
mod logging;
pub mod meta;
pub mod methods;
pub mod param_headers;
mod progress;
mod prompts;
mod resources;
mod stateless;
pub mod tasks;
mod tools;
mod version;

pub use cancel::CancelledNotificationParams;
pub use client_features::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, ListRootsResult, Root, SamplingMessage,
};
pub use completion::{
    CompleteRequestParams, CompleteResult, Completion, CompletionArgument, CompletionContext,
    CompletionReference,
};
pub use content::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents, ResourceLink,
    TextContent,
};
pub use discover::{CacheScope, DiscoverResult};
pub use lifecycle::{
    ClientCapabilities, Implementation, InitializeRequestParams, InitializeResult,
    ListChangedCapability, ResourcesCapability, RootsCapability, ServerCapabilities,
};
pub use logging::{LoggingLevel, LoggingMessageNotificationParams, SetLevelRequestParams};
pub use progress::{ProgressNotificationParams, ProgressToken};
pub use prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage, Role,
};
pub use resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate, ResourceUriParams,
};
pub use stateless::{
    InputRequest, InputRequiredResult, SubscriptionFilter, SubscriptionsListenRequestParams,
};
pub use tasks::{
    ListTasksResult, Task, TaskIdParams, TaskMetadata, TaskStatus, TaskSupport, UpdateTaskParams,
};
pub use tools::{
    CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, Tool,
    ToolAnnotations,
};
pub use version::ProtocolVersion;

/// A JSON object, as used for `_meta`, unknown members and free-form values.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
