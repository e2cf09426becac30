//! The POST rule (`core/src/transport/http/post_rule.rs`) as a table, over real sockets on
//! 127.0.0.1, both ways:
//!
//! - server side: every body shape × every revision × every mode (stateful, `json_response`,
//!   `stateless`, the 2026-07-28 stateless era, legacy `/messages`) gets exactly one HTTP
//!   answer within a deadline, with the status and JSON-RPC code the rule gives, nothing
//!   more on the legacy stream, and the session (or server) still serves a valid request
//!   afterwards;
//! - client side: a raw TCP server answering a pending request with each shape (as a JSON
//!   body and as an SSE event on a stream left open) gets the request resolved or failed
//!   within the deadline, never left to its timeout, and the client keeps working.
//!
//! The deadline only turns a hang into a failure (every answer here takes milliseconds); it
//! is not a speed claim.
//!
//! `raw.rs` is the raw HTTP client of the server-side table (`server_side.rs`);
//! `client_side.rs` is the raw server of the client-side one.

#[path = "../common/mod.rs"]
mod common;
mod raw;

mod client_side;
mod server_side;

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

/// Every answer must be complete within this (a client-side deadline that fails the test).
const DEADLINE: Duration = Duration::from_secs(1);

static NEXT_ID: AtomicU64 = AtomicU64::new(1000);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}
