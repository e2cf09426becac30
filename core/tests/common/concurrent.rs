//! Many calls in flight on one client at once: the same load the in-memory and the
//! child-process suites put on a session, so both check the engine the same way.

use std::time::Duration;

use futures::future::join_all;
use oxmcp::{Result, client::Client, protocol::CallToolResult};
use serde_json::json;
use tokio::task::JoinHandle;

/// Calls the test tool `echo` `calls` times at once on `client`, each with its own text, and
/// checks every call got its own text back (answers routed to the right request).
pub async fn echo_concurrently(client: &Client, calls: usize) {
    join_all((0..calls).map(|i| {
        let client = client.clone();
        async move {
            let text = format!("call-{i}");
            let r = client
                .call_tool("echo", json!({ "text": text }))
                .await
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(r.text_content(), text);
        }
    }))
    .await;
}

/// Starts a 5 s `sleep` call on `client`, then `fast` concurrent echoes, which must all come
/// back within 4 s: a slow handler holds up nobody. Returns the slow call, checked to be
/// still running, for the caller to inspect and abort.
pub async fn fast_calls_pass_a_slow_one(
    client: &Client,
    fast: usize,
) -> JoinHandle<Result<CallToolResult>> {
    let slow = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("sleep", json!({"ms": 5_000})).await })
    };
    tokio::time::timeout(Duration::from_secs(4), echo_concurrently(client, fast))
        .await
        .expect("fast calls finish while the slow one runs");
    assert!(!slow.is_finished(), "the slow call should still be running");
    slow
}
