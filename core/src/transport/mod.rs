//! Transports move frames; they know nothing of MCP methods.
//!
//! A transport hands the session a [`Link`]: a receiver of inbound frames and a sender of
//! outbound ones. Sending is concurrent (any task may hold a sender); receiving is sequential
//! (the session's driver owns the receiver). The contract, for every transport:
//!
//! - every inbound frame is one complete message, already cut out of the byte stream;
//! - a frame too large for the configured cap is reported as [`Inbound::Oversized`], never
//!   buffered (a message-framed transport, WebSocket, enforces its own cap and closes);
//! - after the session sends [`Outbound::Close`], the transport flushes what was queued,
//!   closes its side and then ends the inbound channel (a child process transport only ends it
//!   once the child has been reaped);
//! - when the peer goes away the inbound channel ends, with [`Inbound::Closed`] carrying the
//!   reason when one is known (a child's exit status and the tail of its stderr);
//! - a transport that can no longer write anything (its closing handshake is over) drops
//!   its outbound receiver before it sends [`Inbound::Closed`]: no answer could reach the
//!   peer, so the session cancels in-flight handlers at once instead of letting them finish.
//!
//! Outbound frames carry a [`Route`] so that transports with per-request streams (Streamable
//! HTTP) can put a response and the notifications about it on the right stream.

pub mod child;
pub mod http;
pub mod memory;
pub mod stdio;
pub mod tap;
pub mod ws;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::{Error, jsonrpc::RequestId};

/// How many outbound frames may queue before senders wait.
pub const OUTBOUND_QUEUE: usize = 4096;

/// Which request, if any, an outbound frame belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// Not tied to any inbound request (list_changed, a request we start ourselves).
    Unrelated,
    /// A message sent while handling the inbound request with this id (progress, logging,
    /// a nested server→client request).
    Related(RequestId),
    /// The final response to the inbound request with this id.
    Response(RequestId),
    /// A JSON-RPC batch response, answering every listed inbound request at once.
    BatchResponse(Vec<RequestId>),
}

/// One serialized message going out.
#[derive(Debug)]
pub struct OutFrame {
    /// Compact JSON without a trailing newline.
    pub bytes: Vec<u8>,
    /// Where the message belongs.
    pub route: Route,
}

/// What the session sends to a transport.
#[derive(Debug)]
pub enum Outbound {
    /// A message to write.
    Frame(OutFrame),
    /// End the response stream of the inbound request with this id, without its answer
    /// (Streamable HTTP: the client resumes it with `Last-Event-ID`). Other transports have
    /// no per-request streams and ignore it.
    CloseStream(RequestId),
    /// Flush, close our side and end the inbound channel once the peer is gone.
    Close,
}

/// What a transport delivers to the session.
#[derive(Debug)]
pub enum Inbound {
    /// One complete message.
    Frame(Bytes),
    /// One complete message with the HTTP headers it arrived with (Streamable HTTP), for
    /// handlers that check header-mirrored values. The HTTP server has already decoded the
    /// body (its POST rules need the ids and methods), so the message comes decoded too and
    /// is not parsed a second time.
    FrameWithHeaders(HttpFrame),
    /// One complete message the peer framed itself (a WebSocket text frame), already held to
    /// the transport's own size cap. Unlike a line of a byte stream, it cannot be stray output
    /// (a log line on stdout) or a fragment of something else: if it is not JSON, the session
    /// answers `-32700` instead of dropping it.
    Message(Bytes),
    /// A message larger than the cap was discarded without being buffered.
    Oversized {
        /// Its size in bytes (at least the cap).
        len: usize,
    },
    /// The connection ended; the reason, when the transport knows one.
    Closed(Option<Error>),
}

/// A Streamable HTTP message as the server received it: the body's bytes (for taps and
/// traces), its headers, and the body decoded under `limits`.
#[derive(Debug)]
pub struct HttpFrame {
    /// The body as it arrived.
    pub bytes: Bytes,
    /// The request's headers.
    pub headers: std::sync::Arc<::http::HeaderMap>,
    /// `bytes`, decoded.
    pub decoded: Box<crate::jsonrpc::Decoded>,
    /// The caps `decoded` was checked against; a session with stricter ones decodes again.
    pub limits: crate::jsonrpc::Limits,
}

/// The two halves a session drives.
#[derive(Debug)]
pub struct Link {
    /// Frames from the peer, in order.
    pub inbound: mpsc::Receiver<Inbound>,
    /// Frames to the peer.
    pub outbound: mpsc::Sender<Outbound>,
}

/// Anything that can be turned into a [`Link`].
pub trait Transport: Send + 'static {
    /// Starts the transport's I/O and returns the link.
    fn into_link(self) -> Link;
}

impl Transport for Link {
    fn into_link(self) -> Link {
        self
    }
}
