//! Tasks (issue 37), server and client, in both forms: the 2026-07-28 extension and the
//! 2025-11-25 experimental tasks.
//!
//! - `client_api`: oxmcp's client against the conformance fixture's tasks tools, in both eras
//!   (and the plain-call fallback, and the typed error for a `required` tool);
//! - `bad_input`: a raw peer sends what a client should not (unknown and foreign ids, a TTL
//!   of 0, a flood past the bound, unknown answer keys, malformed params, the wrong era);
//! - `lifetime`: a task outlives its request and its client, expires, survives its handler
//!   panicking, loses its replica (a lease that runs out), and its cancel reaches the handler.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod client_api;
mod lifetime;

use std::time::Duration;

use common::{RawPeer, with_meta};
use oxmcp::{
    client::ProtocolMode,
    protocol::{TaskStatus, tasks::EXTENSION},
};
use serde_json::{Value, json};

/// How long any one step may take before the test fails (a guard against hangs, not a timed
/// assertion).
pub const STEP: Duration = Duration::from_secs(15);

/// The two eras a client can call tasks in.
pub fn task_modes() -> [ProtocolMode; 2] {
    [
        ProtocolMode::Handshake(oxmcp::ProtocolVersion::V2025_11_25),
        ProtocolMode::Stateless(oxmcp::ProtocolVersion::V2026_07_28),
    ]
}

/// `params` of a 2026-07-28 request that declares the tasks extension.
pub fn with_tasks(mut params: Value) -> Value {
    params = with_meta(params);
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({ "elicitation": {}, "extensions": { EXTENSION: {} } });
    params
}

/// Polls `tasks/get` (2026-07-28, raw) until the task's status is one of `wanted`.
pub async fn wait_raw(peer: &mut RawPeer, id: &str, wanted: &[TaskStatus]) -> Value {
    poll_raw(peer, with_tasks(json!({ "taskId": id })), wanted).await
}

/// Polls `tasks/get` (2025-11-25, raw) until the task's status is one of `wanted`.
pub async fn wait_raw_experimental(peer: &mut RawPeer, id: &str, wanted: &[TaskStatus]) -> Value {
    poll_raw(peer, json!({ "taskId": id }), wanted).await
}

async fn poll_raw(peer: &mut RawPeer, params: Value, wanted: &[TaskStatus]) -> Value {
    let names: Vec<&str> = wanted.iter().map(|s| s.as_str()).collect();
    tokio::time::timeout(STEP, async {
        for n in 0.. {
            let got = peer
                .request(json!(format!("poll-{n}")), "tasks/get", params.clone())
                .await;
            let status = got["result"]["status"].as_str().unwrap_or_default();
            if names.contains(&status) {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        unreachable!()
    })
    .await
    .unwrap_or_else(|_| panic!("{params} never reached {names:?}"))
}

/// Creates a 2026-07-28 task of `tool` through a raw peer and returns its id.
pub async fn create_raw(peer: &mut RawPeer, id: &str, tool: &str, arguments: Value) -> String {
    let created = peer
        .request(
            json!(id),
            "tools/call",
            with_tasks(json!({ "name": tool, "arguments": arguments })),
        )
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned()
}
