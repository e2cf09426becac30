//! Reliability of the Streamable HTTP transport, over real sockets on 127.0.0.1:
//!
//! - 1,000 oxmcp clients hold 1,000 concurrent sessions on one server, each making calls
//!   with arguments of its own (plain JSON answers and SSE answers with progress), while a
//!   hostile neighbour floods forged session ids and half-sent requests: every answer and
//!   every progress notification reaches the client it belongs to, none is lost.
//! - SSE streams cut at seeded random byte offsets (POST streams and the GET streams that
//!   resume them, cut again and again), resumed with `Last-Event-ID`: every event arrives
//!   exactly once across the cuts, in order, and the final answer arrives; other sessions
//!   never see those events. The server cutting its own stream (SEP-1699, the fixture's
//!   `test_reconnection`) is resumed the same way, by a raw client and by the oxmcp client.
//! - A client whose server restarts on the same port gets a new session transparently (the
//!   404 → re-initialize path) and its calls go on.
//! - A server killed mid-call (SIGKILL of a server process, or an in-process shutdown) fails
//!   the pending call with an error long before the 60 s request timeout.
//!
//! `sse.rs` is the raw client; `concurrent.rs`, `resume.rs`, `restart.rs` and `killed.rs`
//! hold the tests, one concern each; this file holds what they share.

#[path = "../common/mod.rs"]
mod common;
mod sse;

mod concurrent;
mod killed;
mod restart;
mod resume;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use common::{Probe, test_server};
use oxmcp::{
    protocol::ProgressNotificationParams,
    server::Server,
    session::RequestOptions,
    transport::http::{HttpServer, HttpServerOptions},
};

/// Only ever turns a hang into a failure (debug build, 2 cores, other builds running).
const PATIENCE: Duration = Duration::from_secs(30);

/// The test server on 127.0.0.1 with the default options.
async fn start() -> (Server, HttpServer) {
    let server = test_server(&Probe::default());
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .expect("the server binds");
    (server, http)
}

/// Waits until the server holds `n` sessions.
async fn wait_sessions(http: &HttpServer, n: usize) {
    common::http_harness::wait_sessions(http, n, PATIENCE).await;
}

/// Request options recording the progress values a call reports.
fn progress_counter() -> (Arc<Mutex<Vec<f64>>>, RequestOptions) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let options = RequestOptions {
        on_progress: Some(Box::new(move |p: ProgressNotificationParams| {
            s.lock().unwrap().push(p.progress);
        })),
        ..Default::default()
    };
    (seen, options)
}
