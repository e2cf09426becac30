//! The lifecycle state of one session, and the transitions the handshake era allows.
//!
//! The stateless 2026-07-28 era has no session state at all: each request carries its own
//! version and capabilities. A dual-era peer keeps this state only for the handshake era and
//! answers modern requests from their `_meta` alone.

use serde_json::Value;

use crate::protocol::{Implementation, ProtocolVersion};

/// Where a session is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No handshake yet. A modern (2026-07-28) peer never leaves this phase, and needs not.
    Fresh,
    /// `initialize` has been answered (server) or sent (client); `initialized` not yet seen.
    Initializing,
    /// The handshake is complete.
    Ready,
    /// The transport has closed.
    Closed,
}

/// A snapshot of a session's handshake-era state.
#[derive(Clone, Debug)]
pub struct SessionState {
    /// The lifecycle phase.
    pub phase: Phase,
    /// The negotiated handshake-era revision, once `initialize` has been answered.
    pub protocol_version: Option<ProtocolVersion>,
    /// The peer's identity from the handshake.
    pub peer_info: Option<Implementation>,
    /// The peer's capabilities from the handshake, as sent.
    pub peer_capabilities: Option<Value>,
}

impl Default for SessionState {
    fn default() -> Self {
        SessionState {
            phase: Phase::Fresh,
            protocol_version: None,
            peer_info: None,
            peer_capabilities: None,
        }
    }
}

impl SessionState {
    /// Whether `initialize` has been answered (requests of the handshake era may flow).
    pub fn is_initialized(&self) -> bool {
        matches!(self.phase, Phase::Initializing | Phase::Ready)
    }
}
