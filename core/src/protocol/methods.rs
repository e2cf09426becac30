//! Method names, as constants so no string is spelled twice.

/// `initialize` (handshake era).
pub const INITIALIZE: &str = "initialize";
/// `notifications/initialized` (handshake era).
pub const INITIALIZED: &str = "notifications/initialized";
/// `ping` (removed in 2026-07-28).
pub const PING: &str = "ping";
/// `server/discover` (2026-07-28).
pub const DISCOVER: &str = "server/discover";
/// `notifications/cancelled`.
pub const CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress`.
pub const PROGRESS: &str = "notifications/progress";

/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `notifications/tools/list_changed`.
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe` (removed in 2026-07-28).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (removed in 2026-07-28).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `notifications/resources/updated`.
pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/resources/list_changed`.
pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";

/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `notifications/prompts/list_changed`.
pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";

/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `logging/setLevel` (removed in 2026-07-28).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `notifications/message`.
pub const LOGGING_MESSAGE: &str = "notifications/message";

/// `sampling/createMessage` (server → client).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `elicitation/create` (server → client).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `notifications/elicitation/complete` (2025-11-25 only).
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `roots/list` (server → client).
pub const ROOTS_LIST: &str = "roots/list";
/// `notifications/roots/list_changed` (removed in 2026-07-28).
pub const ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";

/// `subscriptions/listen` (2026-07-28).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `notifications/subscriptions/acknowledged` (2026-07-28).
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
