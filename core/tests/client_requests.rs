//! Sampling, elicitation and roots — the server asking the client — written once in the
//! handler and working in both eras: server→client requests in the handshake era, multi
//! round-trip `InputRequiredResult`s in 2026-07-28. Bad inputs: a client without the
//! capability, a client that refuses, an answer that breaks the requested schema, a tampered
//! or replayed `requestState`.

mod common;

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use common::*;
use oxmcp::{
    ProtocolVersion,
    client::ProtocolMode,
    jsonrpc::{ErrorObject, codes},
    protocol::{CallToolResult, ElicitRequestParams, ElicitResult, Tool},
    server::{Context, Server},
};
use serde_json::{Value, json};

fn both_eras() -> [ProtocolMode; 2] {
    [
        ProtocolMode::Handshake(ProtocolVersion::V2025_11_25),
        ProtocolMode::Auto,
    ]
}

#[tokio::test]
async fn sampling_elicitation_and_roots_in_both_eras() {
    for mode in both_eras() {
        let (_server, pair) = fixture_pair(
            capable_client(json!({"username": "ada", "email": "ada@example.com"}))
                .protocol(mode.clone()),
        )
        .await;
        let r = pair
            .call("test_sampling", json!({"prompt": "What is 2+2?"}))
            .await;
        assert_eq!(
            r.text_content(),
            "LLM response: echo: What is 2+2?",
            "{mode:?}"
        );
        let r = pair
            .call("test_elicitation", json!({"message": "Who are you?"}))
            .await;
        assert_eq!(
            r.text_content(),
            r#"User response: action=accept, content={"username":"ada","email":"ada@example.com"}"#
        );
        pair.finish().await;
    }
}

#[tokio::test]
async fn the_stateless_era_uses_input_required_rounds() {
    let (_server, pair) =
        fixture_pair(capable_client(json!({"username": "u", "email": "e@x"}))).await;
    assert!(pair.client.protocol_version().is_stateless());
    pair.call("test_sampling", json!({"prompt": "hi"})).await;
    let server_sent = pair.wire.sent_by(Side::Server);
    // No request ever went from server to client...
    assert!(
        !server_sent
            .iter()
            .any(|m| m.get("method").is_some() && m.get("id").is_some())
    );
    // ...the question came back as a result, and the client retried with the answer.
    let asked = server_sent
        .iter()
        .find(|m| m["result"]["resultType"] == "input_required")
        .expect("an InputRequiredResult");
    assert_eq!(
        asked["result"]["inputRequests"]["sampling-0"]["method"],
        "sampling/createMessage"
    );
    let retry = pair
        .wire
        .sent_by(Side::Client)
        .into_iter()
        .find(|m| m["params"]["inputResponses"].is_object())
        .expect("a retry with inputResponses");
    assert_eq!(
        retry["params"]["requestState"],
        asked["result"]["requestState"]
    );
    assert_ne!(retry["id"], asked["id"], "a retry is a new request");
    pair.finish().await;
}

#[tokio::test]
async fn roots_and_several_questions_over_several_rounds() {
    let server = Server::builder("multi", "1").build();
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    server
        .add_tool(Tool::new("interview", "Asks three things", json!({"type": "object"})), move |_a: Value, ctx: Context| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                let roots = ctx.list_roots().await?;
                let name = ctx.elicit(ElicitRequestParams::form("Name?", json!({"type": "object", "properties": {"username": {"type": "string"}}}))).await?;
                let city = ctx.elicit(ElicitRequestParams::form("City?", json!({"type": "object", "properties": {"email": {"type": "string"}}}))).await?;
                Ok(CallToolResult::text(format!(
                    "{} / {} / {}",
                    roots.roots[0].uri,
                    Value::Object(name.content.unwrap_or_default()),
                    Value::Object(city.content.unwrap_or_default())
                )))
            }
        })
        .unwrap();
    for mode in both_eras() {
        runs.store(0, Ordering::SeqCst);
        let pair = pair(
            &server,
            capable_client(json!({"username": "x", "email": "y"})).protocol(mode.clone()),
        )
        .await;
        let r = pair.call("interview", json!({})).await;
        assert!(
            r.text_content().starts_with("file:///workspace / "),
            "{}",
            r.text_content()
        );
        // Handshake: one run. Stateless: the handler restarts each round (3 questions → 4 runs).
        let expected = if matches!(mode, ProtocolMode::Auto) {
            4
        } else {
            1
        };
        assert_eq!(runs.load(Ordering::SeqCst), expected, "{mode:?}");
        pair.finish().await;
    }
}

#[tokio::test]
async fn a_client_without_the_capability() {
    // Handshake era: the handler gets an error and reports it as a tool failure.
    let (server, pair) = fixture_pair(
        client_options().protocol(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25)),
    )
    .await;
    let r = pair.call("test_sampling", json!({"prompt": "x"})).await;
    assert!(
        r.is_error() && r.text_content().contains("sampling"),
        "{}",
        r.text_content()
    );
    pair.finish().await;
    // Stateless era: the request fails with -32021 naming the capability.
    let pair = common::pair(&server, client_options()).await;
    let e = pair
        .client
        .call_tool("test_missing_capability", json!({}))
        .await
        .unwrap_err();
    match e {
        oxmcp::Error::Rpc(err) => {
            assert_eq!(err.code, codes::MISSING_REQUIRED_CLIENT_CAPABILITY);
            assert_eq!(
                err.data.unwrap()["requiredCapabilities"],
                json!({"sampling": {}})
            );
        }
        other => panic!("{other:?}"),
    }
    pair.finish().await;
}

#[tokio::test]
async fn a_client_that_refuses_or_answers_badly() {
    for mode in both_eras() {
        let server = fixture_server();
        // Sampling refused by the host.
        let refusing = client_options()
            .protocol(mode.clone())
            .sampling(|_p, _c| async move {
                Err::<oxmcp::protocol::CreateMessageResult, _>(ErrorObject::new(
                    -1,
                    "User rejected sampling",
                ))
            });
        let pair = pair(&server, refusing).await;
        match pair
            .client
            .call_tool("test_sampling", json!({"prompt": "x"}))
            .await
        {
            // Handshake: the server's handler sees the refusal and fails the tool.
            Ok(r) => assert!(
                r.is_error() && r.text_content().contains("User rejected sampling"),
                "{}",
                r.text_content()
            ),
            // Stateless: the client could not answer the round, and says so.
            Err(e) => assert!(e.to_string().contains("User rejected sampling"), "{e}"),
        }
        pair.finish().await;
        // An elicitation answer that breaks the requested schema never reaches the handler.
        let sloppy = client_options()
            .protocol(mode.clone())
            .elicitation(|_p, _c| async move {
                Ok(ElicitResult::accept(
                    json!({"username": 42, "email": ["not", "a", "string"]}),
                ))
            });
        let pair = common::pair(&server, sloppy).await;
        let r = pair.call("test_elicitation", json!({"message": "m"})).await;
        assert!(
            r.is_error()
                && r.text_content()
                    .contains("does not match the requested schema"),
            "{}",
            r.text_content()
        );
        pair.finish().await;
    }
}

#[tokio::test]
async fn sep1034_defaults_are_filled_by_the_client() {
    for mode in both_eras() {
        let (_server, pair) = fixture_pair(capable_client(json!({})).protocol(mode)).await;
        let r = pair
            .call("test_elicitation_sep1034_defaults", json!({}))
            .await;
        let text = r.text_content();
        let content: Value = serde_json::from_str(text.split("content=").nth(1).unwrap()).unwrap();
        assert_eq!(
            content,
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
        );
        pair.finish().await;
    }
}

#[tokio::test]
async fn tampered_and_replayed_request_state_is_refused() {
    let server = fixture_server();
    let (mut peer, _s) = RawPeer::connect(&server);
    let caps = stateless_meta_with("clientCapabilities", json!({"elicitation": {}}));
    let call = |id: i64, extra: Value| {
        let mut params = json!({"name": "test_elicitation", "arguments": {"message": "m"}, "_meta": caps.clone()});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        (json!(id), params)
    };
    let (id, params) = call(1, json!({}));
    let first = peer.request(id, "tools/call", params).await;
    assert_eq!(first["result"]["resultType"], "input_required");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answer =
        json!({"elicitation-0": {"action": "accept", "content": {"username": "u", "email": "e"}}});
    // Genuine state: the call completes.
    let (id, params) = call(2, json!({"inputResponses": answer, "requestState": state}));
    assert_eq!(
        peer.request(id, "tools/call", params).await["result"]["resultType"],
        "complete"
    );
    // Tampered state, or the state of another request: invalid params.
    let mut tampered = state.clone().into_bytes();
    tampered[5] ^= 1;
    for bad in [
        String::from_utf8(tampered).unwrap(),
        "garbage".into(),
        format!("{state}x"),
    ] {
        let (id, params) = call(3, json!({"inputResponses": answer, "requestState": bad}));
        assert_eq!(
            peer.request(id, "tools/call", params).await["error"]["code"],
            -32602
        );
    }
    let mut other = call(4, json!({"inputResponses": answer, "requestState": state})).1;
    other["arguments"]["message"] = json!("a different request");
    assert_eq!(
        peer.request(json!(4), "tools/call", other).await["error"]["code"],
        -32602
    );
    // Non-object answers are invalid params too.
    let (id, params) = call(5, json!({"inputResponses": {"elicitation-0": "yes"}}));
    assert_eq!(
        peer.request(id, "tools/call", params).await["error"]["code"],
        -32602
    );
    peer.wire.assert_valid();
}

/// A server whose `pair` tool asks two questions side by side in the way `how` names: a
/// native join, a question from a task the handler spawned, or a batch handed over from
/// another thread (what the bindings do for `Promise.all` / `asyncio.gather`).
fn side_by_side_server(how: &'static str) -> Server {
    let server = Server::builder("pairs", "1").build();
    let form = |message: &str| {
        ElicitRequestParams::form(
            message,
            json!({"type": "object", "properties": {"username": {"type": "string"}}}),
        )
    };
    server
        .add_tool(
            Tool::new("pair", "Asks two things at once", json!({"type": "object"})),
            move |_a: Value, ctx: Context| async move {
                let (a, b) = match how {
                    "join" => {
                        let (a, b) = tokio::join!(
                            ctx.elicit_keyed("a", form("A?")),
                            ctx.elicit_keyed("b", form("B?"))
                        );
                        (json!(a?), json!(b?))
                    }
                    "spawned" => {
                        let other = ctx.clone();
                        let b = tokio::spawn(async move { other.elicit_keyed("b", form("B?")).await });
                        let a = ctx.elicit_keyed("a", form("A?")).await?;
                        let b = b.await.map_err(|e| oxmcp::Error::Protocol(e.to_string()))??;
                        (json!(a), json!(b))
                    }
                    _ => {
                        // A foreign runtime: the handler only waits for a channel, and the
                        // questions arrive later from another thread, as one batch.
                        let (tx, rx) = tokio::sync::oneshot::channel();
                        let handle = tokio::runtime::Handle::current();
                        let other = ctx.clone();
                        std::thread::spawn(move || {
                            std::thread::sleep(std::time::Duration::from_millis(30));
                            let questions = serde_json::from_value(json!([
                                {"kind": "elicit", "key": "a", "params": form("A?")},
                                {"kind": "elicit", "key": "b", "params": form("B?")},
                                {"kind": "sample", "key": "bad", "params": {"not": "a sampling request"}},
                            ]))
                            .unwrap();
                            let _ = tx.send(handle.block_on(other.ask_all(questions)));
                        });
                        let mut answers = rx.await.map_err(|e| oxmcp::Error::Protocol(e.to_string()))?;
                        let bad = answers.pop().unwrap();
                        assert_eq!(bad.unwrap_err().kind(), oxmcp::ErrorKind::InvalidArgument);
                        let b = answers.pop().unwrap()?;
                        (answers.pop().unwrap()?, b)
                    }
                };
                Ok(CallToolResult::text(format!("{} {}", a["content"]["username"], b["content"]["username"])))
            },
        )
        .unwrap();
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_asked_side_by_side_go_out_in_one_round() {
    let meta = stateless_meta_with(
        "clientCapabilities",
        json!({"elicitation": {}, "sampling": {}}),
    );
    let params = json!({"name": "pair", "arguments": {}, "_meta": meta});
    let answer = |key: &str| match key {
        "a" => json!({"action": "accept", "content": {"username": "ada"}}),
        _ => json!({"action": "accept", "content": {"username": "bob"}}),
    };
    for how in ["join", "spawned", "foreign"] {
        let server = side_by_side_server(how);
        let (mut peer, _s) = RawPeer::connect(&server);
        let mut retry = params.clone();
        let mut responses = serde_json::Map::new();
        let mut rounds = Vec::new();
        let done = loop {
            let id = json!(rounds.len() + 1);
            let reply = peer.request(id, "tools/call", retry.clone()).await;
            if reply["result"]["resultType"] != "input_required" || rounds.len() == 3 {
                break reply;
            }
            let mut keys: Vec<String> = reply["result"]["inputRequests"]
                .as_object()
                .map(|asked| asked.keys().cloned().collect())
                .unwrap_or_default();
            keys.sort();
            for key in &keys {
                responses.insert(key.clone(), answer(key));
            }
            rounds.push(keys);
            retry["inputResponses"] = json!(responses);
            retry["requestState"] = reply["result"]["requestState"].clone();
        };
        assert_eq!(done["result"]["resultType"], "complete", "{how}: {done}");
        assert_eq!(
            done["result"]["content"][0]["text"], "\"ada\" \"bob\"",
            "{how}"
        );
        if how == "spawned" {
            // A spawned task runs when the runtime schedules it, possibly on another thread
            // the OS has not run yet: its question joins this round when it is asked in time,
            // else the next one. Either way each question is asked once, and the call ends.
            let mut asked: Vec<&String> = rounds.iter().flatten().collect();
            asked.sort();
            assert_eq!(asked, ["a", "b"], "{how}: {rounds:?}");
        } else {
            assert_eq!(
                rounds,
                [["a", "b"]],
                "{how}: both questions in the first round"
            );
        }
    }
}
