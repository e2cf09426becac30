//! WebSocket: one socket is one MCP session, one JSON-RPC message per text frame.
//!
//! No MCP revision defines a WebSocket transport; it is a custom transport in the spec's
//! sense, and this is how oxmcp speaks it (the same as the official SDKs that ship one, and
//! stricter where they disagree):
//!
//! - **Upgrade.** An HTTP/1.1 `GET` with `Upgrade: websocket` on the MCP endpoint (the
//!   Streamable HTTP path when both are served). `Host`/`Origin` checks and authentication run
//!   first, so a refusal is a plain `403` or `401` and nothing is upgraded.
//! - **Subprotocol `mcp`.** The client offers exactly `mcp`; the server echoes it only when
//!   it was offered, and otherwise names none (RFC 6455 §4.2.2: a client that offered
//!   nothing fails on any answer). The client accepts an echo of `mcp` or no answer at all.
//! - **Framing.** One compact JSON-RPC message per text frame. A binary frame closes the
//!   connection with 1003; text that is not JSON is answered with a `-32700` error and the
//!   connection stays up; a message over the cap (16 MiB by default) closes with 1009.
//! - **Liveness.** Each side pings every 20 s and closes (1011) a peer silent for the interval
//!   plus 20 s; pings are answered.
//! - **Ending.** A closed socket ends the session, and the handlers of requests still in
//!   flight see their cancellation. A normal close is 1000.
//! - **Eras.** `initialize` runs over the socket as on stdio; 2026-07-28 requests, each
//!   carrying its revision and capabilities in `_meta`, are served over it too, and their
//!   cancellation is `notifications/cancelled`, as on every other transport.
//!
//! The files:
//!
//! | file | problem it solves |
//! |---|---|
//! | `handshake.rs` | the upgrade's rules on both sides: is this an upgrade, which subprotocol, the 101, checking a 101 |
//! | `socket.rs` | an open socket as a transport link: frames in and out, pings, the closing handshake |
//! | `server.rs` | serving: the upgrade behind the HTTP server's checks, [`WsServer`] for WebSocket alone |
//! | `client.rs` | connecting: TCP, TLS for `wss://`, the upgrade request, [`WsClientTransport`] |
//!
//! The framing itself is `tokio-tungstenite`'s; the HTTP upgrade is hyper's on both sides.

mod client;
mod handshake;
mod server;
mod socket;

use std::time::Duration;

pub use client::{WsClientOptions, WsClientTransport};
pub(crate) use handshake::is_upgrade;
pub use server::{WsServer, WsServerOptions};
pub(crate) use server::{WsSessions, accept};

/// The subprotocol offered and echoed.
pub const SUBPROTOCOL: &str = "mcp";

/// How a WebSocket connection behaves, on either side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WsSettings {
    /// Largest inbound message (a larger one closes the connection with 1009, before it is
    /// buffered).
    pub max_message_bytes: usize,
    /// How often we ping (`Duration::ZERO`: never, and never close a silent peer).
    pub ping_interval: Duration,
    /// How long past a ping the peer may stay silent before it is taken for gone and the
    /// connection closed (1011).
    pub ping_timeout: Duration,
}

impl Default for WsSettings {
    fn default() -> Self {
        WsSettings {
            max_message_bytes: 16 << 20,
            ping_interval: Duration::from_secs(20),
            ping_timeout: Duration::from_secs(20),
        }
    }
}

impl WsSettings {
    /// The framing library's settings for these: the frame cap equals the message cap, so an
    /// oversized frame is refused from its header, before its payload is read.
    fn framing(&self) -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
        tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(self.max_message_bytes))
            .max_frame_size(Some(self.max_message_bytes))
    }
}
