//! What a server remembers about one handshake-era session: its log level, the resources it
//! subscribed to, and the changes it has yet to hear of once its handshake completes.
//! Stateless requests never read or write it.

use std::collections::HashSet;

use crate::{protocol::LoggingLevel, sync::Mutex};

/// Per-session server state.
#[derive(Debug, Default)]
pub(crate) struct SessionData {
    /// Set by `logging/setLevel`; until then every level is sent.
    pub(crate) log_level: Mutex<Option<LoggingLevel>>,
    /// URIs subscribed to with `resources/subscribe`.
    pub(crate) subscriptions: Mutex<HashSet<String>>,
    /// Changes made while the handshake is open, sent once `initialized` arrives.
    pub(crate) held: Mutex<super::handshake::HeldBack>,
}

impl SessionData {
    /// The lowest level a handshake-era request may log at.
    pub(crate) fn handshake_log_level(&self) -> LoggingLevel {
        self.log_level.lock().unwrap_or(LoggingLevel::Debug)
    }
}
