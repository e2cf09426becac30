//! The one error type of the core, with a stable [`ErrorKind`] the bindings map to their own
//! exception hierarchies.
//!
//! Tool failures are not errors here: a tool that fails produces a `CallToolResult` with
//! `isError: true`. This type is for protocol and transport failures.
//!
//! Messages often quote what a peer sent (an authorization server's `error_description`, a
//! child's stderr, a JSON-RPC error message), so `Display` passes every such field through
//! [`crate::sanitize`]: a message printed by the CLI or raised by a binding never carries a
//! raw control or bidi character. The fields themselves keep the exact text.

use std::{fmt, io, sync::Arc, time::Duration};

use crate::{
    jsonrpc::ErrorObject,
    sanitize::{block, line},
};

/// Result alias for the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong below the tool level.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered with a JSON-RPC error.
    #[error("peer returned an error: {}", line(&.0.to_string()))]
    Rpc(ErrorObject),
    /// No response arrived in time; `notifications/cancelled` was sent.
    #[error("request `{}` timed out after {after:?}", line(.method))]
    Timeout {
        /// The method of the request.
        method: String,
        /// How long was waited.
        after: Duration,
    },
    /// The request was cancelled by the caller or the peer.
    #[error("request cancelled")]
    Cancelled,
    /// The connection ended while the request was pending or before it could be sent.
    #[error("connection closed: {}{}", line(.reason), stderr_suffix(.stderr))]
    ConnectionClosed {
        /// Why, as far as is known.
        reason: String,
        /// The last lines the server wrote to stderr, when it is a child process.
        stderr: Option<String>,
    },
    /// A child process could not be started.
    #[error("failed to start `{}`: {source}", line(.command))]
    Spawn {
        /// The program that was run.
        command: String,
        /// The operating-system error.
        #[source]
        source: Arc<io::Error>,
    },
    /// An I/O error on the transport.
    #[error("I/O error: {0}")]
    Io(#[source] Arc<io::Error>),
    /// The peer sent something the protocol does not allow.
    #[error("protocol violation: {}", line(.0))]
    Protocol(String),
    /// No protocol version both sides support.
    #[error("unsupported protocol version `{}` (supported: {})", line(.requested), line(&.supported.join(", ")))]
    UnsupportedProtocolVersion {
        /// The version that was asked for or answered.
        requested: String,
        /// The versions the refusing side supports.
        supported: Vec<String>,
    },
    /// A schema given to us (a tool's `inputSchema`, say) is not a valid JSON Schema.
    #[error("invalid schema: {}", line(.0))]
    InvalidSchema(String),
    /// The caller used the API in a way it does not allow.
    #[error("invalid argument: {}", line(.0))]
    InvalidArgument(String),
    /// An `mcpServers` config is unusable. The message names the file, the server and the
    /// field, so the user knows what to fix.
    #[error("{}", line(&config_message(.file, .server, .field, .message)))]
    Config {
        /// The config file, when it came from one.
        file: Option<String>,
        /// The server entry at fault.
        server: Option<String>,
        /// The field at fault (`command`, `args[2]`, `env.API_KEY`, …).
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// Authorization failed: discovery, registration, the user's consent or a token request
    /// (the OAuth 2.1 flow of `crate::auth`), or a server refused every token offered.
    #[error("authorization failed: {}", line(.0))]
    Auth(String),
    /// The tool only runs as a task and was called plainly: call it as a task instead
    /// (`Client::call_tool_as_task`).
    #[error("tool `{}` must be called as a task (its taskSupport is `required`): use call_tool_as_task", line(.tool))]
    TaskRequired {
        /// The tool.
        tool: String,
    },
    /// A server's request to its client (sampling, elicitation, roots) was not sent: the
    /// client had not finished its handshake (`notifications/initialized`) within
    /// [`SessionConfig::initialized_wait`](crate::session::SessionConfig::initialized_wait).
    /// Until then a server asks its client nothing but `ping`.
    #[error(
        "`{}` was not sent: the client has not finished the handshake (no `notifications/initialized` after {waited:?}), and until it does a server may send it no request but ping",
        line(.method)
    )]
    HandshakeIncomplete {
        /// The request that was not sent.
        method: String,
        /// How long it waited for `notifications/initialized`.
        waited: Duration,
    },
}

fn config_message(
    file: &Option<String>,
    server: &Option<String>,
    field: &Option<String>,
    message: &str,
) -> String {
    let mut s = String::new();
    if let Some(f) = file {
        s.push_str(f);
        s.push_str(": ");
    }
    if let Some(name) = server {
        s.push_str(&format!("server `{name}`"));
        if let Some(field) = field {
            s.push_str(&format!(", field `{field}`"));
        }
        s.push_str(": ");
    } else if let Some(field) = field {
        s.push_str(&format!("field `{field}`: "));
    }
    s.push_str(message);
    s
}

/// The line that opens a child's stderr tail inside an error message; the CLI cuts a
/// message there when it prints the tail itself, so the tail is not shown twice.
pub(crate) const STDERR_TAIL_HEADING: &str = "\n--- server stderr (tail) ---\n";

fn stderr_suffix(stderr: &Option<String>) -> String {
    match stderr {
        Some(s) if !s.trim().is_empty() => {
            format!("{STDERR_TAIL_HEADING}{}", block(s.trim_end()))
        }
        _ => String::new(),
    }
}

/// A stable, matchable name for each [`Error`] variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`Error::Rpc`]
    Rpc,
    /// [`Error::Timeout`]
    Timeout,
    /// [`Error::Cancelled`]
    Cancelled,
    /// [`Error::ConnectionClosed`]
    ConnectionClosed,
    /// [`Error::Spawn`]
    Spawn,
    /// [`Error::Io`]
    Io,
    /// [`Error::Protocol`]
    Protocol,
    /// [`Error::UnsupportedProtocolVersion`]
    UnsupportedProtocolVersion,
    /// [`Error::InvalidSchema`]
    InvalidSchema,
    /// [`Error::InvalidArgument`]
    InvalidArgument,
    /// [`Error::Config`]
    Config,
    /// [`Error::Auth`]
    Auth,
    /// [`Error::TaskRequired`]
    TaskRequired,
    /// [`Error::HandshakeIncomplete`]
    HandshakeIncomplete,
}

impl ErrorKind {
    /// The kind as a stable snake_case string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Rpc => "rpc",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::ConnectionClosed => "connection_closed",
            ErrorKind::Spawn => "spawn",
            ErrorKind::Io => "io",
            ErrorKind::Protocol => "protocol",
            ErrorKind::UnsupportedProtocolVersion => "unsupported_protocol_version",
            ErrorKind::InvalidSchema => "invalid_schema",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Config => "config",
            ErrorKind::Auth => "auth",
            ErrorKind::TaskRequired => "task_required",
            ErrorKind::HandshakeIncomplete => "handshake_incomplete",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// The stable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Rpc(_) => ErrorKind::Rpc,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::Cancelled => ErrorKind::Cancelled,
            Error::ConnectionClosed { .. } => ErrorKind::ConnectionClosed,
            Error::Spawn { .. } => ErrorKind::Spawn,
            Error::Io(_) => ErrorKind::Io,
            Error::Protocol(_) => ErrorKind::Protocol,
            Error::UnsupportedProtocolVersion { .. } => ErrorKind::UnsupportedProtocolVersion,
            Error::InvalidSchema(_) => ErrorKind::InvalidSchema,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::Config { .. } => ErrorKind::Config,
            Error::Auth(_) => ErrorKind::Auth,
            Error::TaskRequired { .. } => ErrorKind::TaskRequired,
            Error::HandshakeIncomplete { .. } => ErrorKind::HandshakeIncomplete,
        }
    }

    /// The JSON-RPC error code, for [`Error::Rpc`].
    pub fn code(&self) -> Option<i64> {
        match self {
            Error::Rpc(e) => Some(e.code),
            _ => None,
        }
    }

    /// A closed-connection error with a reason.
    pub fn closed(reason: impl Into<String>) -> Self {
        Error::ConnectionClosed {
            reason: reason.into(),
            stderr: None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(Arc::new(e))
    }
}

impl From<ErrorObject> for Error {
    fn from(e: ErrorObject) -> Self {
        Error::Rpc(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_never_carry_a_peers_raw_control_characters() {
        let evil = "x\u{1b}]0;pwned\u{7}\r\noxmcp: logged in\u{202e}";
        let raw = |s: &str| {
            s.chars()
                .any(|c| (c.is_control() && c != '\n') || crate::sanitize::is_invisible_format(c))
        };
        let errors = [
            Error::Rpc(ErrorObject::new(-32000, evil)),
            Error::Auth(format!("the authorization server refused: {evil}")),
            Error::Protocol(evil.into()),
            Error::closed(evil),
            Error::ConnectionClosed {
                reason: "exited".into(),
                stderr: Some(format!("first\n{evil}\n")),
            },
            Error::Timeout {
                method: evil.into(),
                after: Duration::from_secs(1),
            },
            Error::HandshakeIncomplete {
                method: evil.into(),
                waited: Duration::from_secs(1),
            },
        ];
        for e in errors {
            let shown = e.to_string();
            assert!(!raw(&shown), "{shown:?}");
            assert!(shown.contains("\\x1b]0;pwned"), "{shown:?}");
            // Only a stderr tail keeps its lines, each quoted: no line can pass for ours.
            assert!(!shown.lines().any(|l| l.starts_with("oxmcp:")), "{shown:?}");
        }
        // Clean text is shown as it was.
        assert_eq!(
            Error::Auth("`a` did not answer".into()).to_string(),
            "authorization failed: `a` did not answer"
        );
    }
}
