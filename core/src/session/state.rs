//! The lifecycle state of one session, the transitions the handshake era allows, and what a
//! server may ask its client before the handshake is complete.
//!
//! The stateless 2026-07-28 era has no session state at all: each request carries its own
//! version and capabilities. A dual-era peer keeps this state only for the handshake era and
//! answers modern requests from their `_meta` alone.
//!
//! A server "SHOULD NOT send requests other than pings and logging before receiving the
//! `initialized` notification" (every handshake revision's lifecycle). Requests the client
//! sends meanwhile are still served (a client may list, or even call, between `initialize`
//! and `initialized`), so a handler can run in that gap and ask its client something: that
//! request waits here for `initialized`, within [`SessionConfig::initialized_wait`].
//!
//! [`SessionConfig::initialized_wait`]: super::SessionConfig::initialized_wait

use serde_json::Value;

use super::{Role, Session, cancelled};
use crate::{
    Error, Result,
    protocol::{Implementation, ProtocolVersion, methods},
};

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
    /// Whether `initialize` is answered (the server records it just before its answer goes
    /// out): requests of the handshake era may flow. The handshake may still be open; see
    /// [`SessionState::is_ready`].
    pub fn is_initialized(&self) -> bool {
        matches!(self.phase, Phase::Initializing | Phase::Ready)
    }

    /// Whether the handshake is complete: the client's `notifications/initialized` was sent
    /// (client) or received (server). Only then may a server tell its client of changes or
    /// ask it anything but `ping`.
    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }
}

impl Session {
    /// Holds a server's request to its client until the client's `notifications/initialized`
    /// (`ping` goes at once: the lifecycle allows it). Gives up with
    /// [`Error::HandshakeIncomplete`] after [`SessionConfig::initialized_wait`], and returns
    /// at once when the session is closed (the request then fails as on any closed session)
    /// or `cancel` fires.
    ///
    /// Waiting, rather than failing at once: over Streamable HTTP `initialized` and the next
    /// request are separate POSTs, and some clients send them concurrently, so a `tools/call`
    /// may overtake the `initialized` sent just before it by a few milliseconds (rust-sdk
    /// #783). Failing then would break a correct client's elicitation at random. Bounded,
    /// because a client that never sends `initialized` must not hold the handler (and the
    /// client's own call) until the request timeout.
    ///
    /// [`SessionConfig::initialized_wait`]: super::SessionConfig::initialized_wait
    pub(super) async fn until_client_initialized(
        &self,
        method: &str,
        cancel: Option<&tokio_util::sync::CancellationToken>,
    ) -> Result<()> {
        debug_assert_eq!(self.inner.role, Role::Server);
        let settled = |s: &SessionState| s.phase == Phase::Ready || s.phase == Phase::Closed;
        if method == methods::PING || self.with_state(settled) {
            return Ok(());
        }
        let waited = self.inner.config.initialized_wait;
        let wait = async {
            loop {
                // Registered before the check, so a change between the two is not missed.
                let changed = self.inner.state_changed.notified();
                let mut changed = std::pin::pin!(changed);
                changed.as_mut().enable();
                if self.with_state(settled) {
                    return;
                }
                changed.await;
            }
        };
        let incomplete = || Error::HandshakeIncomplete {
            method: method.to_owned(),
            waited,
        };
        tokio::select! {
            ready = tokio::time::timeout(waited, wait) => ready.map_err(|_| incomplete()),
            _ = cancelled(cancel) => Err(Error::Cancelled),
        }
    }
}
