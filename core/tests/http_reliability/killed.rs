//! A server killed mid-call (SIGKILL of a server process, or an in-process shutdown) fails
//! the pending calls with a transport error long before the 60 s request timeout.

use std::time::{Duration, Instant};

use oxmcp::Error;
use serde_json::json;
use tokio::net::TcpStream;

use crate::{
    PATIENCE,
    common::{
        example_bin,
        http_harness::{http_client, session_options},
    },
    progress_counter, start,
};

/// The call failed because the transport did: a connection error, or the HTTP transport's
/// local JSON-RPC error (tagged `data.transport = "http"`), never a timeout.
fn assert_transport_failure(what: &str, result: &oxmcp::Result<impl std::fmt::Debug>) {
    match result {
        Err(Error::ConnectionClosed { .. }) => {}
        Err(Error::Rpc(e)) if e.data.as_ref().is_some_and(|d| d["transport"] == "http") => {}
        other => panic!("{what}: expected a transport failure, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_server_process_fails_the_pending_call_promptly() {
    // A free port for the child (bound and released; the child binds it right after).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(example_bin("conformance_server"))
        .args(["--http", "--port", &port.to_string()])
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the conformance server");
    let url = format!("http://127.0.0.1:{port}/mcp");
    tokio::time::timeout(PATIENCE, async {
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server listens");

    // The call blocks in the server until our sampling handler answers, which it never does:
    // the server is killed while the call is pending on its SSE stream.
    let (in_handler, mut entered) = tokio::sync::mpsc::unbounded_channel();
    let options = session_options().sampling(
        move |_params: oxmcp::protocol::CreateMessageRequestParams, _cancel| {
            let _ = in_handler.send(());
            futures::future::pending::<
                Result<oxmcp::protocol::CreateMessageResult, oxmcp::jsonrpc::ErrorObject>,
            >()
        },
    );
    let client = http_client(&url, options, None).await.unwrap();
    let other = http_client(&url, session_options(), None).await.unwrap();
    let pending = {
        let c = client.clone();
        tokio::spawn(async move {
            c.call_tool("test_sampling", json!({"prompt": "never answered"}))
                .await
        })
    };
    // And a plain call on another session, in flight at the same moment.
    tokio::time::timeout(PATIENCE, entered.recv())
        .await
        .expect("the server asked for sampling");
    let r = other
        .call_tool("test_simple_text", json!({}))
        .await
        .unwrap();
    assert!(r.content[0].as_text().is_some());

    child.start_kill().expect("SIGKILL");
    child.wait().await.unwrap();
    let killed = Instant::now();
    let result = tokio::time::timeout(PATIENCE, pending)
        .await
        .expect("the pending call failed before the test's patience ran out")
        .unwrap();
    println!(
        "killed server: pending call failed after {:?} with {result:?}",
        killed.elapsed()
    );
    assert_transport_failure("the pending call", &result);
    // A call made after the kill fails at once too (no server to re-initialize with).
    let after = tokio::time::timeout(PATIENCE, other.call_tool("test_simple_text", json!({})))
        .await
        .expect("a call to a dead server fails before the test's patience ran out");
    println!("call after the kill: {after:?}");
    assert_transport_failure("a call after the kill", &after);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_shut_down_mid_call_fails_pending_calls_promptly() {
    let (_server, http) = start().await;
    let client = http_client(&http.url(), session_options(), None)
        .await
        .unwrap();
    // One call waiting for a JSON answer (no response head sent yet), one in the middle of an
    // SSE stream of progress notifications.
    let (seen, options) = progress_counter();
    let silent = {
        let c = client.clone();
        tokio::spawn(async move { c.call_tool("sleep", json!({"ms": 600_000})).await })
    };
    let streaming = {
        let c = client.clone();
        tokio::spawn(async move {
            c.call_tool_with("tick", json!({"interval_ms": 100, "steps": 6000}), options)
                .await
        })
    };
    tokio::time::timeout(PATIENCE, async {
        while seen.lock().unwrap().len() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the streaming call reports progress");
    http.shutdown().await;
    drop(http);
    let stopped = Instant::now();
    for (what, call) in [("silent call", silent), ("streaming call", streaming)] {
        let result = tokio::time::timeout(PATIENCE, call)
            .await
            .unwrap_or_else(|_| panic!("the {what} still pending {PATIENCE:?} after shutdown"))
            .unwrap();
        println!(
            "shutdown: {what} failed after {:?}: {result:?}",
            stopped.elapsed()
        );
        assert_transport_failure(what, &result);
    }
}
