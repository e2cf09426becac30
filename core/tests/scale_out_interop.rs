//! The official SDK clients against three replicas behind the round-robin proxy (issue 12):
//! the same HTTP interop scripts that run against one conformance server
//! (`tests/interop/python/http_client.py`, `tests/interop/node/http_client.mjs`) must pass
//! unchanged when every connection they open may land on another replica. Each script checks
//! the transport as well as the results: session id, protocol version header, JSON or SSE,
//! progress, logs, sampling, elicitation, stream resumption, and the session's end.
//!
//! Needs `redis-server` and the SDKs (`make scale-out-test` installs both).

mod scale_out;

#[allow(dead_code)]
#[path = "common/peers.rs"]
mod peers;

use std::{path::PathBuf, process::Stdio, time::Duration};

use scale_out::Cluster;
use tokio::process::Command;

fn interop_dir(language: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/interop")
        .join(language)
}

/// Runs a client script to completion (a guard against a hang, not a timed assertion) and
/// checks it said so.
async fn run(mut command: Command, what: &str) {
    command.stdin(Stdio::null()).kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .expect("the client script finished within 120 s")
        .expect("run the client script");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.ends_with("all checks passed\n"),
        "{what} through the proxy failed: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every replica served some of the SDK's connections (the SDKs pool and keep connections
/// alive, so the spread is per connection, not per request).
fn spread_over_replicas(cluster: &Cluster) {
    let per_replica = cluster.connections_per_replica();
    eprintln!("connections per replica: {per_replica:?}");
    assert!(
        per_replica.iter().all(|n| *n > 0),
        "some replica got no connection: {per_replica:?}"
    );
}

async fn python_client(mode: &str) {
    let Some(python) = peers::venv_python() else {
        return;
    };
    let cluster = Cluster::start(false).await;
    let mut command = Command::new(python);
    command
        .arg(interop_dir("python").join("http_client.py"))
        .args([mode, "stateful", &cluster.proxy_url()])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    run(command, &format!("http_client.py {mode} stateful")).await;
    spread_over_replicas(&cluster);
}

#[tokio::test]
async fn the_python_sdk_client_with_a_session_across_three_replicas() {
    python_client("legacy").await;
}

#[tokio::test]
async fn the_python_sdk_client_in_auto_mode_across_three_replicas() {
    python_client("auto").await;
}

#[tokio::test]
async fn the_typescript_sdk_client_with_a_session_across_three_replicas() {
    let Some(dir) = peers::node_dir() else {
        return;
    };
    let cluster = Cluster::start(false).await;
    let mut command = Command::new("node");
    command
        .arg(dir.join("http_client.mjs"))
        .args(["stateful", &cluster.proxy_url()])
        .current_dir(&dir);
    run(command, "http_client.mjs stateful").await;
    spread_over_replicas(&cluster);
}
