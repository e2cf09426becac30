//! What a client should not send, sent by a raw peer: each gets a clear JSON-RPC error (or
//! the harmless answer the spec asks for), and the server goes on.

use std::time::Duration;

use oxmcp::{
    protocol::TaskStatus,
    server::{Server, TaskOptions},
};
use serde_json::{Value, json};

use crate::{
    common::{RawPeer, fixture, with_meta},
    create_raw, wait_raw, wait_raw_experimental, with_tasks,
};

fn server_with(options: TaskOptions) -> Server {
    fixture::build(
        Server::builder("fixture", "1.0.0")
            .task_options(options)
            .page_size(2),
    )
    .expect("the fixture builds")
}

fn server() -> Server {
    server_with(TaskOptions::default())
}

/// A raw peer on `server` that finished a 2025-11-25 handshake.
async fn session(server: &Server) -> RawPeer {
    let (mut peer, _session) = RawPeer::connect(server);
    peer.initialize("2025-11-25").await;
    peer
}

/// Creates a 2025-11-25 task and returns its id.
async fn create_experimental(
    peer: &mut RawPeer,
    id: &str,
    tool: &str,
    arguments: Value,
    task: Value,
) -> String {
    let created = peer
        .request(
            json!(id),
            "tools/call",
            json!({ "name": tool, "arguments": arguments, "task": task }),
        )
        .await;
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned()
}

/// Creates `n` 2025-11-25 `slow_compute` tasks of `seconds` each; their ids.
async fn create_slow(peer: &mut RawPeer, n: usize, seconds: u64) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let task = create_experimental(
            peer,
            &format!("c{i}"),
            "slow_compute",
            json!({ "seconds": seconds }),
            json!({}),
        )
        .await;
        ids.push(task);
    }
    ids
}

fn error_of(response: &Value) -> (i64, String) {
    (
        response["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("an error: {response}")),
        response["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[tokio::test]
async fn unknown_foreign_and_malformed_task_ids_all_look_unknown() {
    let server = server();
    let mut a = session(&server).await;
    let mut b = session(&server).await;
    let id = create_experimental(
        &mut a,
        "c",
        "slow_compute",
        json!({"seconds": 60}),
        json!({}),
    )
    .await;
    let unknown = b
        .request(json!(1), "tasks/get", json!({"taskId": "nope"}))
        .await;
    let foreign = b
        .request(json!(2), "tasks/get", json!({"taskId": id}))
        .await;
    let long = b
        .request(json!(3), "tasks/get", json!({"taskId": "x".repeat(10_000)}))
        .await;
    assert_eq!(error_of(&unknown).0, -32602);
    assert_eq!(
        error_of(&foreign),
        error_of(&unknown),
        "another session's task is unknown"
    );
    assert_eq!(error_of(&long), error_of(&unknown));
    for (n, method) in ["tasks/result", "tasks/cancel"].iter().enumerate() {
        let r = b
            .request(json!(10 + n), method, json!({"taskId": id}))
            .await;
        assert_eq!(error_of(&r), error_of(&unknown), "{method}");
    }
    // A 2026-07-28 request cannot see a 2025-11-25 task either.
    let (mut stateless, _s) = RawPeer::connect(&server);
    let other_era = stateless
        .request(json!(4), "tasks/get", with_tasks(json!({"taskId": id})))
        .await;
    assert_eq!(error_of(&other_era), error_of(&unknown));
    // Ids that are not strings are malformed params.
    let bad = b.request(json!(5), "tasks/get", json!({"taskId": 7})).await;
    assert_eq!(error_of(&bad).0, -32602);
    assert!(error_of(&bad).1.contains("tasks/get"), "{bad}");
    let none = b.request(json!(6), "tasks/get", json!({})).await;
    assert_eq!(error_of(&none).0, -32602);
    // The owner still sees it, and the server still serves everyone.
    let mine = a
        .request(json!(7), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(mine["result"]["status"], "working", "{mine}");
    a.request(json!(8), "tasks/cancel", json!({"taskId": id}))
        .await;
    a.wire.assert_valid();
    b.wire.assert_valid();
}

#[tokio::test]
async fn tasks_result_answers_what_the_call_would_have() {
    let server = server();
    let mut peer = session(&server).await;
    // A tool error: the result, tagged with the task.
    let failing = create_experimental(&mut peer, "f", "failing_job", json!({}), json!({})).await;
    let result = peer
        .request(json!(1), "tasks/result", json!({"taskId": failing}))
        .await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        failing.as_str()
    );
    // A protocol error: that error.
    let broken =
        create_experimental(&mut peer, "p", "protocol_error_job", json!({}), json!({})).await;
    let result = peer
        .request(json!(2), "tasks/result", json!({"taskId": broken}))
        .await;
    let (code, message) = error_of(&result);
    assert_eq!(code, -32603);
    assert!(message.contains("the job broke"), "{message}");
    // A cancelled task has no result: a clear error, at once rather than never.
    let slow = create_experimental(
        &mut peer,
        "s",
        "slow_compute",
        json!({"seconds": 60}),
        json!({}),
    )
    .await;
    let cancelled = peer
        .request(json!(3), "tasks/cancel", json!({"taskId": slow}))
        .await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let result = peer
        .request(json!(4), "tasks/result", json!({"taskId": slow}))
        .await;
    let (code, message) = error_of(&result);
    assert_eq!(code, -32603);
    assert!(message.contains("cancelled"), "{message}");
    // 2025-11-25 refuses to cancel a finished task, and keeps its outcome.
    let again = peer
        .request(json!(5), "tasks/cancel", json!({"taskId": failing}))
        .await;
    let (code, message) = error_of(&again);
    assert_eq!(code, -32602);
    assert!(message.contains("already failed"), "{message}");
    let still = peer
        .request(json!(6), "tasks/result", json!({"taskId": failing}))
        .await;
    assert_eq!(still["result"]["isError"], true, "the result is kept");
    peer.wire.assert_valid();
}

#[tokio::test]
async fn answers_to_unknown_keys_are_ignored_and_malformed_ones_refused() {
    let server = server();
    let (mut peer, _s) = RawPeer::connect(&server);
    let id = create_raw(&mut peer, "c", "confirm_delete", json!({"filename": "x"})).await;
    let waiting = wait_raw(&mut peer, &id, &[TaskStatus::InputRequired]).await;
    let keys: Vec<String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 1, "{waiting}");
    assert_eq!(
        waiting["inputRequests"][&keys[0]]["method"],
        "elicitation/create"
    );
    let ack = peer
        .request(
            json!(1),
            "tasks/update",
            with_tasks(json!({"taskId": id, "inputResponses": {"unknown-key": {"ignored": true}}})),
        )
        .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(ack["result"].get("status").is_none() && ack["result"].get("taskId").is_none());
    let still = wait_raw(&mut peer, &id, &[TaskStatus::InputRequired]).await;
    assert_eq!(still["inputRequests"].as_object().unwrap().len(), 1);
    let bad = peer
        .request(
            json!(2),
            "tasks/update",
            with_tasks(json!({"taskId": id, "inputResponses": {&keys[0]: "yes"}})),
        )
        .await;
    assert_eq!(error_of(&bad).0, -32602, "{bad}");
    let missing = peer
        .request(json!(3), "tasks/update", with_tasks(json!({"taskId": id})))
        .await;
    assert_eq!(error_of(&missing).0, -32602, "{missing}");
    let answered = peer
        .request(
            json!(4),
            "tasks/update",
            with_tasks(json!({"taskId": id, "inputResponses": {&keys[0]: {"action": "accept", "content": {"confirm": true}}}})),
        )
        .await;
    assert_eq!(answered["result"]["resultType"], "complete");
    let done = wait_raw(&mut peer, &id, &[TaskStatus::Completed]).await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted x");
    // The same key again, after the fact: ignored.
    let late = peer
        .request(
            json!(5),
            "tasks/update",
            with_tasks(json!({"taskId": id, "inputResponses": {&keys[0]: {"action": "decline"}}})),
        )
        .await;
    assert_eq!(late["result"]["resultType"], "complete");
    let unchanged = wait_raw(&mut peer, &id, &[TaskStatus::Completed]).await;
    assert_eq!(unchanged["result"], done["result"]);
}

#[tokio::test]
async fn a_ttl_of_zero_or_a_huge_one_is_clamped_not_trusted() {
    let server = server();
    let mut peer = session(&server).await;
    let defaults = TaskOptions::default();
    let cases = [
        (json!({"ttl": 0}), defaults.min_ttl),
        (json!({"ttl": 1_000_000_000_000_000u64}), defaults.max_ttl),
        (json!({"ttl": -5}), defaults.default_ttl),
        (json!({"ttl": 1.5}), defaults.default_ttl),
        (json!({"ttl": "soon"}), defaults.default_ttl),
        (json!({}), defaults.default_ttl),
        (json!({"ttl": 120_000}), Duration::from_secs(120)),
    ];
    for (n, (task, granted)) in cases.into_iter().enumerate() {
        let created = peer
            .request(
                json!(n),
                "tools/call",
                json!({"name": "slow_compute", "arguments": {"seconds": 0}, "task": task}),
            )
            .await;
        assert_eq!(
            created["result"]["task"]["ttl"],
            granted.as_millis() as u64,
            "{task}: {created}"
        );
    }
    let not_an_object = peer
        .request(
            json!(99),
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0}, "task": "please"}),
        )
        .await;
    assert_eq!(error_of(&not_an_object).0, -32602);
    peer.wire.assert_valid();
}

#[tokio::test]
async fn a_flood_of_tasks_past_the_bound_is_refused_clearly_and_a_place_frees_up() {
    let server = server_with(TaskOptions {
        max_running_per_client: 3,
        max_running_anonymous: 3,
        ..Default::default()
    });
    // The handshake era: per session.
    let mut peer = session(&server).await;
    let ids = create_slow(&mut peer, 3, 60).await;
    let refused = peer
        .request(
            json!("over"),
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 60}, "task": {}}),
        )
        .await;
    let (code, message) = error_of(&refused);
    assert_eq!(code, -32600);
    assert!(message.contains("Too many running tasks"), "{message}");
    assert_eq!(refused["error"]["data"]["limit"], 3);
    // Another session has its own bound.
    let mut other = session(&server).await;
    create_experimental(
        &mut other,
        "o",
        "slow_compute",
        json!({"seconds": 60}),
        json!({}),
    )
    .await;
    // A cancel frees a place.
    peer.request(json!("x"), "tasks/cancel", json!({"taskId": ids[0]}))
        .await;
    create_experimental(
        &mut peer,
        "again",
        "slow_compute",
        json!({"seconds": 60}),
        json!({}),
    )
    .await;
    // A plain call is not a task and is never refused for this.
    let plain = peer
        .request(
            json!("plain"),
            "tools/call",
            json!({"name": "greet", "arguments": {}}),
        )
        .await;
    assert_eq!(plain["result"]["content"][0]["text"], "Hello, World!");

    // The stateless era: anonymous clients share one bound.
    let (mut raw, _s) = RawPeer::connect(&server);
    for n in 0..3 {
        create_raw(
            &mut raw,
            &format!("s{n}"),
            "slow_compute",
            json!({"seconds": 60}),
        )
        .await;
    }
    let refused = raw
        .request(
            json!("over"),
            "tools/call",
            with_tasks(json!({"name": "slow_compute", "arguments": {"seconds": 60}})),
        )
        .await;
    assert_eq!(error_of(&refused).0, -32600, "{refused}");
    peer.wire.assert_valid();
}

#[tokio::test]
async fn cancelling_a_finished_task_keeps_its_result() {
    let server = server();
    let (mut peer, _s) = RawPeer::connect(&server);
    let id = create_raw(
        &mut peer,
        "c",
        "slow_compute",
        json!({"seconds": 0, "label": "kept"}),
    )
    .await;
    let done = wait_raw(&mut peer, &id, &[TaskStatus::Completed]).await;
    for n in 0..2 {
        let ack = peer
            .request(json!(n), "tasks/cancel", with_tasks(json!({"taskId": id})))
            .await;
        assert_eq!(ack["result"]["resultType"], "complete", "idempotent: {ack}");
    }
    let after = wait_raw(&mut peer, &id, &[TaskStatus::Completed]).await;
    assert_eq!(after["result"], done["result"]);
    assert_eq!(
        after["result"]["content"][0]["text"],
        "kept: computed after 0 s"
    );
}

#[tokio::test]
async fn tasks_methods_outside_their_era_or_without_the_extension_are_refused() {
    let server = server();
    let (mut raw, _s) = RawPeer::connect(&server);
    // 2026-07-28 without the extension: -32021, saying which.
    let id = create_raw(&mut raw, "c", "slow_compute", json!({"seconds": 60})).await;
    for (n, method) in ["tasks/get", "tasks/update", "tasks/cancel"]
        .iter()
        .enumerate()
    {
        let r = raw
            .request(
                json!(n),
                method,
                with_meta(json!({"taskId": id, "inputResponses": {}})),
            )
            .await;
        assert_eq!(error_of(&r).0, -32021, "{method}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
            json!({})
        );
    }
    // Methods 2026-07-28 removed.
    for (n, method) in ["tasks/result", "tasks/list"].iter().enumerate() {
        let r = raw
            .request(json!(10 + n), method, with_tasks(json!({"taskId": id})))
            .await;
        assert_eq!(error_of(&r).0, -32601, "{method}");
    }
    // A required tool without the extension: -32021 too; a legacy `task` param does not
    // opt in, nor promote a plain tool.
    let required = raw
        .request(
            json!(20),
            "tools/call",
            with_meta(json!({"name": "failing_job", "arguments": {}, "task": {}})),
        )
        .await;
    assert_eq!(error_of(&required).0, -32021);
    let legacy = raw
        .request(
            json!(21),
            "tools/call",
            with_tasks(json!({"name": "greet", "arguments": {"name": "l"}, "task": {"ttl": 1}})),
        )
        .await;
    assert_eq!(legacy["result"]["resultType"], "complete");
    assert_eq!(legacy["result"]["content"][0]["text"], "Hello, l!");
    raw.request(json!(22), "tasks/cancel", with_tasks(json!({"taskId": id})))
        .await;

    // 2025-11-25: no tasks/update; a `task` param on a tool that forbids tasks is refused.
    let mut peer = session(&server).await;
    let r = peer
        .request(
            json!(1),
            "tasks/update",
            json!({"taskId": "x", "inputResponses": {}}),
        )
        .await;
    assert_eq!(error_of(&r).0, -32601);
    let r = peer
        .request(
            json!(2),
            "tools/call",
            json!({"name": "greet", "arguments": {}, "task": {}}),
        )
        .await;
    assert_eq!(error_of(&r).0, -32601);
    peer.wire.assert_valid();
    // An older revision has no tasks at all.
    let (mut old, _s) = RawPeer::connect(&server);
    old.initialize("2025-06-18").await;
    let r = old
        .request(json!(1), "tasks/get", json!({"taskId": "x"}))
        .await;
    assert_eq!(error_of(&r).0, -32601);
    let r = old
        .request(
            json!(2),
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}}),
        )
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "compute: computed after 0 s",
        "ignored: {r}"
    );
}

#[tokio::test]
async fn tasks_list_pages_through_a_sessions_own_tasks() {
    let server = server();
    let mut peer = session(&server).await;
    let mut other = session(&server).await;
    create_experimental(
        &mut other,
        "o",
        "slow_compute",
        json!({"seconds": 0}),
        json!({}),
    )
    .await;
    let ids = create_slow(&mut peer, 3, 0).await;
    for id in &ids {
        wait_raw_experimental(&mut peer, id, &[TaskStatus::Completed]).await;
    }
    let first = peer.request(json!(1), "tasks/list", json!({})).await;
    let listed: Vec<&str> = first["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        [ids[0].as_str(), ids[1].as_str()],
        "page of two: {first}"
    );
    let cursor = first["result"]["nextCursor"].as_str().expect("more");
    let second = peer
        .request(json!(2), "tasks/list", json!({"cursor": cursor}))
        .await;
    assert_eq!(second["result"]["tasks"][0]["taskId"], ids[2].as_str());
    assert!(second["result"].get("nextCursor").is_none());
    let bad = peer
        .request(json!(3), "tasks/list", json!({"cursor": "tasks-x"}))
        .await;
    assert_eq!(error_of(&bad).0, -32602);
    peer.wire.assert_valid();
}
