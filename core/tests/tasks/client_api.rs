//! oxmcp's client calling the fixture's tasks tools as tasks, in both eras, with every frame
//! of the 2025-11-25 runs checked against the official schema (the 2026-07-28 extension has
//! no schema there; its shapes are checked here and by the conformance scenarios).

use futures::StreamExt;
use oxmcp::{
    Error, ProtocolVersion,
    client::{ProtocolMode, TaskCallOptions},
    protocol::TaskStatus,
};
use serde_json::{Value, json};

use crate::{
    STEP,
    common::{fixture_pair, schema_filling_client},
    task_modes,
};

fn options() -> TaskCallOptions {
    TaskCallOptions::default()
}

#[tokio::test]
async fn a_task_is_created_followed_and_collected_in_both_eras() {
    for mode in task_modes() {
        let (_server, pair) = fixture_pair(schema_filling_client().protocol(mode.clone())).await;
        let task = pair
            .client
            .call_tool_as_task(
                "slow_compute",
                json!({"seconds": 0.3, "label": "sum"}),
                options(),
            )
            .await
            .expect("created");
        let id = task.id().expect("a task id").to_owned();
        assert_eq!(id.len(), 22, "{mode:?}: 128 random bits, base64url");
        let first = task.status().await.expect("status");
        assert_eq!(first.task_id, id);
        assert!(
            matches!(first.status, TaskStatus::Working | TaskStatus::Completed),
            "{mode:?}: {first:?}"
        );
        assert!(first.created_at.ends_with('Z') && first.poll_interval.is_some());
        let seen: Vec<_> = tokio::time::timeout(STEP, task.updates().collect::<Vec<_>>())
            .await
            .expect("the updates end");
        let last = seen
            .last()
            .expect("at least one update")
            .as_ref()
            .expect("ok");
        assert_eq!(last.status, TaskStatus::Completed, "{mode:?}: {seen:?}");
        let result = tokio::time::timeout(STEP, task.result())
            .await
            .expect("in time")
            .expect("a result");
        assert_eq!(
            result.text_content(),
            "sum: computed after 0.3 s",
            "{mode:?}"
        );
        // Collecting twice gives the same result (it is kept for the TTL).
        assert_eq!(task.result().await.unwrap(), result);
        pair.finish().await;
    }
}

#[tokio::test]
async fn tool_errors_protocol_errors_and_questions_end_as_each_era_says() {
    for mode in task_modes() {
        let (_server, pair) = fixture_pair(schema_filling_client().protocol(mode.clone())).await;
        let c = &pair.client;
        let failing = c
            .call_tool_as_task("failing_job", json!({}), options())
            .await
            .unwrap();
        let result = tokio::time::timeout(STEP, failing.result())
            .await
            .unwrap()
            .unwrap();
        assert!(
            result.is_error(),
            "{mode:?}: a tool error is an isError result"
        );
        assert!(result.text_content().contains("the job failed"));
        let status = failing.status().await.unwrap().status;
        // 2025-11-25 counts a tool error as `failed`; 2026-07-28 as `completed` + isError.
        let want = match mode {
            ProtocolMode::Handshake(_) => TaskStatus::Failed,
            _ => TaskStatus::Completed,
        };
        assert_eq!(status, want, "{mode:?}");

        let broken = c
            .call_tool_as_task("protocol_error_job", json!({}), options())
            .await
            .unwrap();
        match tokio::time::timeout(STEP, broken.result()).await.unwrap() {
            Err(Error::Rpc(e)) => {
                assert_eq!(e.code, -32603, "{mode:?}");
                assert!(e.message.contains("the job broke"));
            }
            other => panic!("{mode:?}: {other:?}"),
        }
        assert_eq!(broken.status().await.unwrap().status, TaskStatus::Failed);

        // A task that asks one question, and one that asks two at once: the client's
        // handlers answer (tasks/update, or requests during tasks/result).
        let confirm = c
            .call_tool_as_task("confirm_delete", json!({"filename": "a.txt"}), options())
            .await
            .unwrap();
        let answer = tokio::time::timeout(STEP, confirm.result())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(answer.text_content(), "Deleted a.txt", "{mode:?}");
        let both = c
            .call_tool_as_task("multi_input", json!({}), options())
            .await
            .unwrap();
        let answer = tokio::time::timeout(STEP, both.result())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            answer.text_content(),
            r#"name: "x", confirm: true"#,
            "{mode:?}"
        );

        // Questions asked before the task starts (multi round-trip, or plain requests), then
        // the task.
        let deferred = c
            .call_tool_as_task("test_tool_with_task", json!({}), options())
            .await
            .unwrap();
        assert!(deferred.id().is_some(), "{mode:?}: it became a task");
        let answer = tokio::time::timeout(STEP, deferred.result())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            answer.text_content(),
            "Hello, x! (from the task)",
            "{mode:?}"
        );
        pair.finish().await;
    }
}

#[tokio::test]
async fn a_cancelled_task_stays_cancelled_and_cancelling_again_is_harmless() {
    for mode in task_modes() {
        let (_server, pair) = fixture_pair(schema_filling_client().protocol(mode.clone())).await;
        let task = pair
            .client
            .call_tool_as_task("slow_compute", json!({"seconds": 60}), options())
            .await
            .unwrap();
        task.cancel().await.expect("cancelled");
        assert_eq!(task.status().await.unwrap().status, TaskStatus::Cancelled);
        assert!(
            matches!(task.result().await, Err(Error::Cancelled)),
            "{mode:?}"
        );
        task.cancel()
            .await
            .expect("a second cancel is not an error");
        // A finished task: cancel changes nothing, the result is kept.
        let done = pair
            .client
            .call_tool_as_task("slow_compute", json!({"seconds": 0}), options())
            .await
            .unwrap();
        let result = tokio::time::timeout(STEP, done.result())
            .await
            .unwrap()
            .unwrap();
        done.cancel().await.expect("cancel after completion");
        assert_eq!(done.status().await.unwrap().status, TaskStatus::Completed);
        assert_eq!(
            done.result().await.unwrap(),
            result,
            "{mode:?}: result kept"
        );
        pair.finish().await;
    }
}

#[tokio::test]
async fn a_required_tool_called_plainly_is_a_typed_error_in_every_revision() {
    for version in ProtocolVersion::ALL {
        let mode = if version.is_stateless() {
            ProtocolMode::Stateless(version)
        } else {
            ProtocolMode::Handshake(version)
        };
        let (_server, pair) = fixture_pair(schema_filling_client().protocol(mode.clone())).await;
        match pair.client.call_tool("failing_job", json!({})).await {
            Err(e @ Error::TaskRequired { .. }) => {
                assert_eq!(e.kind().as_str(), "task_required");
                assert!(e.to_string().contains("call_tool_as_task"), "{e}");
            }
            other => panic!("{version}: {other:?}"),
        }
        // The same through the JSON road the bindings take.
        match pair
            .client
            .call_tool_json("failing_job", None, Default::default())
            .await
        {
            Err(Error::TaskRequired { tool }) => assert_eq!(tool, "failing_job"),
            other => panic!("{version}: {other:?}"),
        }
        pair.finish().await;
    }
}

#[tokio::test]
async fn a_server_or_revision_without_tasks_gets_a_plain_call() {
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
    ] {
        let (_server, pair) =
            fixture_pair(schema_filling_client().protocol(ProtocolMode::Handshake(version))).await;
        assert!(
            pair.client.server().capabilities.tasks.is_none(),
            "{version}"
        );
        let task = pair
            .client
            .call_tool_as_task(
                "slow_compute",
                json!({"seconds": 0, "label": "old"}),
                options(),
            )
            .await
            .expect("a plain call");
        assert_eq!(task.id(), None, "{version}: no task");
        assert_eq!(task.status().await.unwrap().status, TaskStatus::Completed);
        let result = task.result().await.unwrap();
        assert_eq!(result.text_content(), "old: computed after 0 s");
        assert!(pair.client.task("anything").is_err(), "{version}");
        pair.finish().await;
    }
}

#[tokio::test]
async fn the_listing_and_capabilities_say_what_each_era_offers() {
    for mode in task_modes() {
        let (_server, pair) = fixture_pair(schema_filling_client().protocol(mode.clone())).await;
        let caps = &pair.client.server().capabilities;
        match mode {
            ProtocolMode::Handshake(_) => {
                let tasks = caps.tasks.as_ref().expect("capabilities.tasks");
                assert_eq!(tasks["requests"], json!({"tools": {"call": {}}}));
                assert!(tasks.contains_key("list") && tasks.contains_key("cancel"));
                assert!(caps.extensions.is_none());
            }
            _ => {
                assert!(
                    caps.tasks.is_none(),
                    "no legacy slot where the extension is"
                );
                assert_eq!(
                    caps.extensions.as_ref().unwrap()["io.modelcontextprotocol/tasks"],
                    json!({})
                );
            }
        }
        let tools = pair.client.list_all_tools().await.unwrap();
        let support = |name: &str| {
            tools
                .iter()
                .find(|t| t.name == name)
                .map(|t| t.extra.get("execution").cloned().unwrap_or(Value::Null))
                .unwrap()
        };
        assert_eq!(support("greet"), Value::Null, "forbidden is the default");
        assert_eq!(support("slow_compute"), json!({"taskSupport": "optional"}));
        assert_eq!(support("failing_job"), json!({"taskSupport": "required"}));
        pair.finish().await;
    }
}

#[tokio::test]
async fn a_declared_task_support_is_honoured_and_status_messages_reach_the_client() {
    use oxmcp::{
        protocol::{CallToolResult, Tool},
        server::{Context, Server},
    };
    let server = Server::builder("status", "1.0.0").build();
    // A plain `add_tool` whose definition declares its task support is served as it says.
    let mut tool = Tool::new("stepper", "Reports where it is", json!({"type": "object"}));
    tool.extra
        .insert("execution".into(), json!({"taskSupport": "required"}));
    server
        .add_tool(tool, |_a: Value, ctx: Context| async move {
            ctx.report_status("halfway").await?;
            // Longer than a poll interval (500 ms), so a poll sees the message.
            tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
            Ok(CallToolResult::text("stepped"))
        })
        .unwrap();
    for mode in task_modes() {
        let pair =
            crate::common::pair(&server, schema_filling_client().protocol(mode.clone())).await;
        assert!(matches!(
            pair.client.call_tool("stepper", json!({})).await,
            Err(Error::TaskRequired { .. })
        ));
        let task = pair
            .client
            .call_tool_as_task("stepper", json!({}), options())
            .await
            .unwrap();
        let mut updates = task.watch();
        let mut messages = Vec::new();
        while let Some(update) = tokio::time::timeout(STEP, updates.next()).await.unwrap() {
            let update = update.unwrap();
            messages.push((update.status, update.status_message.clone()));
        }
        assert!(
            messages.contains(&(TaskStatus::Working, Some("halfway".into()))),
            "{mode:?}: {messages:?}"
        );
        assert_eq!(
            messages.last().unwrap().0,
            TaskStatus::Completed,
            "{mode:?}"
        );
        pair.finish().await;
    }
}

#[tokio::test]
async fn the_host_calls_a_tool_as_a_task() {
    use oxmcp::host::{Config, Host, HostOptions};
    let fixture = crate::common::example_bin("conformance_server");
    let config = Config::from_value(
        &json!({"mcpServers": {"fixture": {"command": fixture}}}),
        &|_| None,
    )
    .expect("a config");
    let host = Host::start(config, HostOptions::default()).await;
    let task = host
        .call_tool_as_task(
            "fixture",
            "slow_compute",
            json!({"seconds": 0.2, "label": "hosted"}),
            options(),
        )
        .await
        .expect("a task");
    assert!(task.id().is_some());
    let result = tokio::time::timeout(STEP, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.text_content(), "hosted: computed after 0.2 s");
    assert!(
        host.call_tool_as_task("nope", "slow_compute", json!({}), options())
            .await
            .is_err()
    );
    host.close().await;
}

#[tokio::test]
async fn tasks_list_pages_in_2025_and_is_refused_where_it_does_not_exist() {
    let server = crate::common::fixture::build(
        oxmcp::server::Server::builder("fixture", "1.0.0").page_size(2),
    )
    .unwrap();
    let pair = crate::common::pair(
        &server,
        schema_filling_client().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
    )
    .await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let task = pair
            .client
            .call_tool_as_task(
                "slow_compute",
                json!({"seconds": 0, "label": format!("l{n}")}),
                options(),
            )
            .await
            .unwrap();
        ids.push(task.id().unwrap().to_owned());
    }
    let first = pair.client.list_tasks(None).await.unwrap();
    let mut listed: Vec<String> = first.tasks.iter().map(|t| t.task_id.clone()).collect();
    let next = first.next_cursor.expect("a second page");
    let second = pair.client.list_tasks(Some(&next)).await.unwrap();
    listed.extend(second.tasks.iter().map(|t| t.task_id.clone()));
    assert_eq!(listed, ids);
    assert!(matches!(
        pair.client.list_tasks(Some("not-a-cursor")).await,
        Err(Error::Rpc(e)) if e.code == -32602
    ));
    pair.finish().await;
    let (_server, stateless) = crate::common::fixture_pair(
        schema_filling_client().protocol(ProtocolMode::Stateless(ProtocolVersion::V2026_07_28)),
    )
    .await;
    assert!(matches!(
        stateless.client.list_tasks(None).await,
        Err(Error::InvalidArgument(_))
    ));
    stateless.finish().await;
}
