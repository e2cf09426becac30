//! Embedding the engine in a host language's event loop.
//!
//! The bindings' handlers and callers live on the host's own thread (Node's main thread, an
//! asyncio loop). A session run by tokio's threads reaches them by hopping threads twice per
//! message, and on a loaded machine those hops, not the protocol work, are most of the cost.
//! This module lets the host thread run a session itself:
//!
//! - [`HostLoop`] polls the session's futures on the host thread when the host's loop says so;
//! - [`Spawner`] tells a session and its transport where to put the tasks they spawn;
//! - [`Feeder`] takes the bytes the host's loop read (a pipe it watches) and cuts them into
//!   frames for the session, with the same caps as the transports' own readers.
//!
//! Hosted stdio transports ([`crate::transport::stdio::StdioTransport::hosted`],
//! [`crate::transport::child::ChildTransport::hosted`]) put their writer on the loop and take
//! their input from a feeder; everything else (timers, child supervision, stderr) stays on
//! tokio.

mod feed;
mod host_loop;
mod spawner;

pub(crate) use feed::EndAction;
pub use feed::{Feeder, ReadOutcome};
pub use host_loop::HostLoop;
pub use spawner::{Join, Spawner};
