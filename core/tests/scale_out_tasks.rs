//! Tasks on a scaled-out server (issue 37): three replicas of the fixture server share one
//! private Redis behind the round-robin proxy. A task created through one replica is read,
//! answered, cancelled and collected through the others, in both eras; a task whose replica
//! is SIGKILLed mid-run ends `failed` once its lease runs out, never `working` forever.
//!
//! Needs `redis-server` on PATH (`make scale-out-test` installs Debian's).

mod scale_out;

use std::time::Duration;

use oxmcp::{
    ProtocolVersion,
    client::{Client, ClientOptions, ProtocolMode, TaskCallOptions},
    protocol::{ElicitResult, TaskStatus},
    transport::http::{HttpClientOptions, HttpClientTransport},
};
use scale_out::{Cluster, Mcp, Redis, Replica, STATE_KEY, answer_of, send};
use serde_json::{Value, json};

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const WAIT: Duration = Duration::from_secs(30);

/// An oxmcp client of one replica (its pooled connection stays there), 2026-07-28, whose
/// elicitation handler accepts with `{"confirm": true}`.
async fn client_of(url: &str) -> Client {
    let transport = HttpClientTransport::new(url, HttpClientOptions::default()).unwrap();
    let options = ClientOptions::new("scale-out-tasks", "1")
        .protocol(ProtocolMode::Stateless(ProtocolVersion::V2026_07_28))
        .elicitation(|_params, _cancel| async move {
            Ok(ElicitResult::accept(json!({"confirm": true})))
        });
    Client::connect(transport, options).await.expect("connects")
}

#[tokio::test]
async fn a_task_created_on_one_replica_is_read_answered_cancelled_and_collected_on_the_others() {
    let cluster = Cluster::start(false).await;
    let (a, b, c) = (
        client_of(&cluster.url(A)).await,
        client_of(&cluster.url(B)).await,
        client_of(&cluster.url(C)).await,
    );
    // Created on A, read on B, collected on C.
    let created = a
        .call_tool_as_task(
            "slow_compute",
            json!({"seconds": 0.5, "label": "spread"}),
            TaskCallOptions::default(),
        )
        .await
        .unwrap();
    let id = created.id().unwrap().to_owned();
    let seen = b.task(&id).unwrap().status().await.expect("B reads it");
    assert!(
        matches!(seen.status, TaskStatus::Working | TaskStatus::Completed),
        "{seen:?}"
    );
    let result = tokio::time::timeout(WAIT, c.task(&id).unwrap().result())
        .await
        .expect("in time")
        .expect("C collects it");
    assert_eq!(result.text_content(), "spread: computed after 0.5 s");

    // A question asked by a task running on B, answered through C (tasks/update), and the
    // handler on B goes on.
    let asking = b
        .call_tool_as_task(
            "confirm_delete",
            json!({"filename": "far.txt"}),
            TaskCallOptions::default(),
        )
        .await
        .unwrap();
    let result = tokio::time::timeout(WAIT, c.task(asking.id().unwrap()).unwrap().result())
        .await
        .expect("in time")
        .expect("answered across replicas");
    assert_eq!(result.text_content(), "Deleted far.txt");

    // Running on C, cancelled through A: it ends `cancelled` for everyone.
    let slow = c
        .call_tool_as_task(
            "slow_compute",
            json!({"seconds": 60}),
            TaskCallOptions::default(),
        )
        .await
        .unwrap();
    let id = slow.id().unwrap().to_owned();
    a.task(&id).unwrap().cancel().await.expect("A cancels it");
    for client in [&a, &b, &c] {
        assert_eq!(
            client.task(&id).unwrap().status().await.unwrap().status,
            TaskStatus::Cancelled
        );
    }
    // The bound counts running tasks across replicas: the cancelled one freed its place.
    for client in [a, b, c] {
        client.close().await;
    }
}

/// A 2026-07-28 request through the proxy (each on a new connection: the next replica).
async fn through_proxy(cluster: &Cluster, id: i64, method: &str, params: Value) -> Value {
    let name = params
        .get("taskId")
        .or_else(|| params.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "scale-out-test", "version": "1"}
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let reply = send(
        "POST",
        &cluster.proxy_url(),
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
            ("mcp-name", &name),
        ],
        Some(&body),
    )
    .await
    .expect("POST");
    answer_of(reply, id).await
}

#[tokio::test]
async fn through_the_round_robin_proxy_every_step_lands_elsewhere_and_the_task_holds() {
    let cluster = Cluster::start(false).await;
    let created = through_proxy(
        &cluster,
        1,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 60, "label": "rr"}}),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    // Three reads, one per replica.
    for n in 0..3 {
        let got = through_proxy(&cluster, 10 + n, "tasks/get", json!({"taskId": id})).await;
        assert_eq!(got["result"]["status"], "working", "{got}");
    }
    let ack = through_proxy(&cluster, 20, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    for n in 0..3 {
        let got = through_proxy(&cluster, 30 + n, "tasks/get", json!({"taskId": id})).await;
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
    }
    let unknown = through_proxy(&cluster, 40, "tasks/get", json!({"taskId": "not-a-task"})).await;
    assert_eq!(unknown["error"]["code"], -32602);
    let per_replica = cluster.connections_per_replica();
    assert!(
        per_replica.iter().all(|&n| n >= 2),
        "spread over every replica: {per_replica:?}"
    );
}

#[tokio::test]
async fn a_2025_task_of_a_shared_session_is_served_by_every_replica() {
    let cluster = Cluster::start(false).await;
    let proxy = cluster.proxy_url();
    let mcp = Mcp::initialize(&proxy, &proxy, json!({})).await;
    let created = mcp
        .request(
            &cluster.url(A),
            1,
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0.5, "label": "old"}, "task": {"ttl": 60000}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let got = mcp
        .request(&cluster.url(B), 2, "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");
    // tasks/result on C blocks until the task on A is done, woken across replicas.
    let result = tokio::time::timeout(
        WAIT,
        mcp.request(&cluster.url(C), 3, "tasks/result", json!({"taskId": id})),
    )
    .await
    .expect("tasks/result answers");
    assert_eq!(
        result["result"]["content"][0]["text"], "old: computed after 0.5 s",
        "{result}"
    );
    let listed = mcp
        .request(&cluster.url(B), 4, "tasks/list", json!({}))
        .await;
    assert_eq!(
        listed["result"]["tasks"][0]["taskId"],
        id.as_str(),
        "{listed}"
    );
    // Another session cannot see it on any replica.
    let other = Mcp::initialize(&proxy, &proxy, json!({})).await;
    for (n, replica) in [A, B, C].into_iter().enumerate() {
        let r = other
            .request(
                &cluster.url(replica),
                10 + n as i64,
                "tasks/get",
                json!({"taskId": id}),
            )
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}

#[tokio::test]
async fn a_task_whose_replica_is_killed_mid_run_ends_failed_not_lost() {
    let redis = Redis::start().await;
    let lease = ["--task-lease-ms", "1500"];
    let mut doomed = Replica::start_with(&redis, STATE_KEY, &lease).await;
    let survivor = Replica::start_with(&redis, STATE_KEY, &lease).await;
    let on_doomed = client_of(&doomed.url()).await;
    let task = on_doomed
        .call_tool_as_task(
            "slow_compute",
            json!({"seconds": 600}),
            TaskCallOptions::default(),
        )
        .await
        .unwrap();
    let id = task.id().unwrap().to_owned();
    let elsewhere = client_of(&survivor.url()).await;
    let handle = elsewhere.task(&id).unwrap();
    assert_eq!(handle.status().await.unwrap().status, TaskStatus::Working);
    doomed.kill().await;
    let ended = tokio::time::timeout(WAIT, async {
        loop {
            let t = handle.status().await.expect("the survivor answers");
            if t.status.is_terminal() {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the task ends instead of staying `working`");
    assert_eq!(ended.status, TaskStatus::Failed, "{ended:?}");
    match handle.result().await {
        Err(oxmcp::Error::Rpc(e)) => {
            assert_eq!(e.code, -32603);
            assert!(
                e.message.contains("stopped before it finished"),
                "{}",
                e.message
            );
        }
        other => panic!("{other:?}"),
    }
    elsewhere.close().await;
}

/// The Redis task store by itself (its Lua scripts): the bound on running tasks, the first
/// outcome winning and freeing the place, no write bringing an expired task back, and the
/// oldest finished tasks going once a scope keeps too many.
#[tokio::test]
async fn the_redis_task_store_keeps_its_promises() {
    use oxmcp::{
        task_store::{NewTask, SetOnce, TaskStoreError},
        transport::http::store::{RedisStore, RedisStoreOptions, SharedStore},
    };
    let redis = Redis::start().await;
    let shared = RedisStore::connect(&redis.url(), RedisStoreOptions::default())
        .await
        .unwrap();
    let store = shared.task_store().expect("a task store");
    let new = |id: &str, ttl_ms: u64| NewTask {
        id: id.into(),
        scope: "client:x".into(),
        fields: vec![("meta".into(), "{}".into())],
        ttl: Duration::from_millis(ttl_ms),
        limit: 2,
        keep: 3,
    };
    store.create(new("a", 60_000)).await.unwrap();
    store.create(new("b", 60_000)).await.unwrap();
    assert!(matches!(
        store.create(new("c", 60_000)).await,
        Err(TaskStoreError::TooMany { limit: 2 })
    ));
    assert_eq!(
        store.finish("a", "cancelled".into()).await.unwrap(),
        SetOnce::Written
    );
    assert_eq!(
        store.finish("a", "completed".into()).await.unwrap(),
        SetOnce::AlreadySet
    );
    assert_eq!(
        store.load("a").await.unwrap().unwrap()["final"],
        "cancelled"
    );
    assert_eq!(store.load("a").await.unwrap().unwrap()["scope"], "client:x");
    store.create(new("c", 60_000)).await.unwrap();
    assert_eq!(
        store.set_once("c", "answer:k", "1".into()).await.unwrap(),
        SetOnce::Written
    );
    assert_eq!(
        store.set_once("c", "answer:k", "2".into()).await.unwrap(),
        SetOnce::AlreadySet
    );
    // Past `keep` (3): the oldest finished task (a) goes, the running ones stay.
    store.finish("b", "done".into()).await.unwrap();
    store.create(new("d", 60_000)).await.unwrap();
    assert!(store.load("a").await.unwrap().is_none());
    let (ids, more) = store.list("client:x", 0, 10).await.unwrap();
    assert_eq!(
        (ids, more),
        (vec!["b".into(), "c".into(), "d".into()], false)
    );
    // An expired task is gone, and a late write does not recreate it.
    store
        .create(NewTask {
            scope: "client:y".into(),
            ..new("e", 100)
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(store.load("e").await.unwrap().is_none());
    assert!(
        !store
            .set("e", vec![("lease".into(), "1".into())])
            .await
            .unwrap()
    );
    assert_eq!(
        store.set_once("e", "x", "1".into()).await.unwrap(),
        SetOnce::Missing
    );
    assert_eq!(
        store.finish("e", "x".into()).await.unwrap(),
        SetOnce::Missing
    );
    assert!(
        store.load("e").await.unwrap().is_none(),
        "nothing recreated it"
    );
    store.release("client:y").await.unwrap();
}
