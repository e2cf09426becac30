//! Tasks (2025-11-25 experimental tasks, the form the TypeScript SDK 1.x speaks) both ways:
//! the SDK's tasks client (`callToolStream`, `getTask`, `cancelTask`, `listTasks`) drives the
//! Rust conformance fixture over stdio and HTTP (`tests/interop/node/tasks_client.mjs`), and
//! oxmcp's client drives the SDK's task server (`registerToolTask` with an in-memory task
//! store, `tests/interop/node/tasks_server.mjs`) over stdio and HTTP.

use std::{process::Stdio, time::Duration};

use oxmcp::{
    Error, ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode, TaskCallOptions},
    protocol::TaskStatus,
    transport::http::{HttpClientOptions, HttpClientTransport},
};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{
    sdk::{Sdk, skip},
    sdk_clients::{assert_passed, run},
};

/// How long any one step may take (a guard against hangs, not a timed assertion).
const STEP: Duration = Duration::from_secs(30);

/// Starts `command` and returns it with the `http://…` URL it announces on stderr.
async fn announcing(mut command: tokio::process::Command) -> (tokio::process::Child, String) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("start the server");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(STEP, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(at) = line.find("http://") {
                return line[at..].trim().to_owned();
            }
        }
        panic!("the server exited without listening")
    })
    .await
    .expect("the server announces its URL");
    (child, url)
}

/// The SDK's tasks client drives oxmcp's conformance fixture over `transport` (`stdio` or
/// `http`).
pub async fn sdk_client_drives_oxmcp(sdk: &'static Sdk, transport: &str) {
    if let Some(why) = sdk.gap("tasks") {
        return skip(why);
    }
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let fixture = crate::common::example_bin("conformance_server");
    let (output, _server) = match transport {
        "stdio" => (
            run(launcher.command(
                "tasks_client",
                [std::ffi::OsString::from("stdio"), fixture.into()],
            ))
            .await,
            None,
        ),
        _ => {
            let mut server = tokio::process::Command::new(&fixture);
            server.args(["--http", "--port", "0"]);
            let (child, url) = announcing(server).await;
            (
                run(launcher.command("tasks_client", ["http", url.as_str()])).await,
                Some(child),
            )
        }
    };
    assert_passed(
        &output,
        &[
            format!("ok: connected on 2025-11-25 over {transport}\n"),
            "ok: confirm_delete: the elicitation is tagged with the task, the task completes\n"
                .to_owned(),
            "ok: tasks/cancel: status cancelled; cancelling a finished task is JSON-RPC -32602\n"
                .to_owned(),
        ],
        &format!("tasks_client over {transport}"),
    );
}

/// oxmcp's client drives the SDK's task server over `transport` (`stdio` or `http`).
pub async fn oxmcp_drives_sdk_server(sdk: &'static Sdk, transport: &str) {
    if let Some(why) = sdk.gap("tasks") {
        return skip(why);
    }
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let options = ClientOptions::new("oxmcp-interop", "1.0.0")
        .protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25));
    let (client, _server) = match transport {
        "stdio" => (
            Client::connect_child(launcher.child("tasks_server"), options)
                .await
                .expect("connects over stdio"),
            None,
        ),
        _ => {
            let (child, url) = announcing(launcher.command("tasks_server", ["http", "0"])).await;
            let transport = HttpClientTransport::new(&url, HttpClientOptions::default()).unwrap();
            (
                Client::connect(transport, options)
                    .await
                    .expect("connects over HTTP"),
                Some(child),
            )
        }
    };
    assert_eq!(client.server().info.name, "ts-tasks-server");
    assert!(client.server().capabilities.tasks.is_some());
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "ts_required"));

    // A task that completes: created at once, followed, collected (tasks/result).
    let slow = client
        .call_tool_as_task(
            "ts_slow",
            json!({"seconds": 0.3}),
            TaskCallOptions {
                ttl: Some(Duration::from_secs(60)),
            },
        )
        .await
        .expect("created");
    assert!(slow.id().is_some(), "a task on the SDK's server");
    assert!(matches!(
        slow.status().await.unwrap().status,
        TaskStatus::Working | TaskStatus::Completed
    ));
    let result = tokio::time::timeout(STEP, slow.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.text_content(), "slow done after 0.3");
    assert_eq!(slow.status().await.unwrap().status, TaskStatus::Completed);

    // A tool error: `failed` in 2025-11-25, and the isError result is still collected.
    let failing = client
        .call_tool_as_task("ts_fail", json!({}), TaskCallOptions::default())
        .await
        .unwrap();
    let result = tokio::time::timeout(STEP, failing.result())
        .await
        .unwrap()
        .unwrap();
    assert!(result.is_error() && result.text_content().contains("ts_fail failed"));
    assert_eq!(failing.status().await.unwrap().status, TaskStatus::Failed);

    // Cancelled: stays cancelled; a second cancel is harmless; the result says so.
    let long = client
        .call_tool_as_task(
            "ts_slow",
            json!({"seconds": 60}),
            TaskCallOptions::default(),
        )
        .await
        .unwrap();
    long.cancel().await.expect("cancelled");
    assert_eq!(long.status().await.unwrap().status, TaskStatus::Cancelled);
    long.cancel()
        .await
        .expect("cancelling again is not an error");
    assert!(matches!(long.result().await, Err(Error::Cancelled)));

    // A task-only tool called plainly: the typed error, before anything is sent.
    match client.call_tool("ts_required", json!({})).await {
        Err(Error::TaskRequired { tool }) => assert_eq!(tool, "ts_required"),
        other => panic!("{other:?}"),
    }
    let required = client
        .call_tool_as_task("ts_required", json!({}), TaskCallOptions::default())
        .await
        .unwrap();
    let result = tokio::time::timeout(STEP, required.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.text_content(), "required done");

    // An id the SDK does not know.
    match client.task("no-such-task").unwrap().status().await {
        Err(Error::Rpc(e)) => assert_eq!(e.code, -32602),
        other => panic!("{other:?}"),
    }
    client.close().await;
}
