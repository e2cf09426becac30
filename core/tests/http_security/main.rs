//! Security of the Streamable HTTP server, proved over real sockets on 127.0.0.1 with a raw
//! TCP client that writes every header byte itself (hyper's client would normalise or refuse
//! some of them):
//!
//! - DNS-rebinding protection: every hostile `Host`/`Origin` vector is answered 403 (or 400
//!   when malformed), and that answer is decided before the body is read — the requests
//!   declare `Content-Length: 1000000` and send no body at all, so a server that read the
//!   body first would hang (the test's timeout turns that into a failure). Accepted names stay
//!   accepted.
//! - The body cap: 413 for a declared length over the cap (body never sent) and for a chunked
//!   body streaming past it; a body at or just under the cap is served; the 4 MiB default.
//! - Sessions: a flood of random session ids gets 404 and allocates nothing; initialize
//!   cannot adopt a client-chosen id; ids are 22-char random base64url; the session cap
//!   answers 503 and DELETE frees a slot; idle sessions are reaped.
//! - Binding: a non-loopback address needs an allowlist or an auth hook; a refusing auth hook
//!   answers with its status before the body is read.
//! - Methods and headers: 405/406/415/400/404/202 as the transport specification says; a
//!   client that never finishes its headers is cut off.
//!
//! Hostile traffic runs next to a well-behaved neighbour (an oxmcp client calling in a loop, or
//! legitimate raw sessions) that must keep working, and accepted requests are interleaved with
//! refused ones: a refusal neither disturbs real sessions nor leaves state behind.
//!
//! One file a concern: `raw.rs` is the raw client, `host_origin.rs`, `body_cap.rs`,
//! `sessions.rs`, `binding.rs` and `methods.rs` the tests; this file holds the servers and the
//! neighbour they share.

#[path = "../common/mod.rs"]
mod common;
mod raw;

mod binding;
mod body_cap;
mod host_origin;
mod methods;
mod sessions;

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use common::{
    Probe, Wire,
    http_harness::{http_client, session_options},
    test_server,
};
use oxmcp::{
    client::Client,
    server::Server,
    transport::http::{HttpServer, HttpServerOptions},
};
use serde_json::json;
use tokio::task::JoinHandle;

use crate::raw::PATIENCE;

/// The test server on 127.0.0.1 with `options`.
async fn start(options: HttpServerOptions) -> (Server, HttpServer) {
    let server = test_server(&Probe::default());
    let http = server.serve_http(options).await.expect("the server binds");
    (server, http)
}

/// A legitimate client calling `echo` in a loop until stopped; every answer must be its own.
/// Its traffic is recorded for schema validation.
struct Neighbour {
    client: Client,
    wire: Wire,
    stop: Arc<AtomicBool>,
    task: JoinHandle<usize>,
}

impl Neighbour {
    async fn start(url: &str) -> Neighbour {
        let wire = Wire::new();
        let client = http_client(url, session_options(), Some(&wire))
            .await
            .expect("the neighbour connects");
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (client.clone(), stop.clone());
        let task = tokio::spawn(async move {
            let mut calls = 0;
            while !s.load(Ordering::Relaxed) {
                let text = format!("neighbour call {calls}");
                let r = c
                    .call_tool("echo", json!({ "text": text }))
                    .await
                    .expect("the neighbour's call succeeds");
                assert_eq!(r.content[0].as_text(), Some(text.as_str()));
                calls += 1;
            }
            calls
        });
        Neighbour {
            client,
            wire,
            stop,
            task,
        }
    }

    /// Stops the loop, checks it made progress, closes the client and validates its wire.
    async fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let calls = tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("the neighbour stops")
            .expect("the neighbour did not panic");
        assert!(calls > 0, "the neighbour made no call");
        let r = self
            .client
            .call_tool("echo", json!({"text": "last"}))
            .await
            .expect("the neighbour still works");
        assert_eq!(r.content[0].as_text(), Some("last"));
        self.client.close().await;
        self.wire.assert_valid();
    }
}

/// Waits until the server holds `n` sessions.
async fn wait_sessions(http: &HttpServer, n: usize) {
    common::http_harness::wait_sessions(http, n, PATIENCE).await;
}
