//! Reserved `_meta` keys.

/// The caller wants `notifications/progress` for this request.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// 2026-07-28: the protocol version of this request.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// 2026-07-28: the client's capabilities for this request.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// 2026-07-28: the client's identity.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// 2026-07-28: the log level this request opts in to.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// 2026-07-28: the server's identity, on every result.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// 2026-07-28: which `subscriptions/listen` stream a notification belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
