//! Each SDK's feature server asks oxmcp's client: sampling, elicitation (accept, decline,
//! SEP-1034 defaults, an answer that breaks the schema) and roots, the tool results echoing
//! the answers. In the handshake era the questions are server-to-client requests; in
//! 2026-07-28 they come as `InputRequiredResult`s and the client retries. Then clients that
//! cannot answer: one that refuses to sample, one that declared no capabilities.

use oxmcp::{
    Error, ProtocolVersion,
    jsonrpc::{ErrorObject, codes},
    protocol::CreateMessageResult,
};
use serde_json::{Value, json};

use crate::common::peers::{Asked, capable};
use crate::features::{
    answers, client_options, finish, input_required, rpc, server_requests, start,
};
use crate::sdk::{SamplingRefusal, Sdk, Undeclared, assert_text, json as parse};
use crate::stdio::StdioServer;

/// The questions the first calls ask, one call each, in order.
const ASKS: [&str; 5] = [
    "sampling/createMessage",
    "elicitation/create",
    "elicitation/create",
    "elicitation/create",
    "roots/list",
];

/// The three questions `ask_everything` asks in one call, sorted.
const EVERYTHING: [&str; 3] = ["elicitation/create", "roots/list", "sampling/createMessage"];

pub async fn server_asks_the_client(sdk: &'static Sdk, version: ProtocolVersion) {
    let asked = Asked::default();
    let Some(server) = start(sdk, version, capable(client_options(), &asked)).await else {
        return;
    };
    let quirks = &sdk.features;
    let q = quirks.quote;

    // Sampling.
    let (is_error, text) = server
        .call("ask_model", json!({"prompt": "What is 2+2?"}))
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        text,
        format!("model oxmcp-test-model said {q}echo: What is 2+2?{q} (stopReason endTurn)")
    );
    let [(kind, params)]: [_; 1] = asked.take().try_into().unwrap();
    assert_eq!(kind, "sampling");
    assert_eq!(
        params,
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
               "systemPrompt": "Answer briefly.", "maxTokens": 64})
    );

    // Elicitation, accepted and declined.
    let (is_error, text) = server
        .call("ask_user", json!({"message": "Who are you?"}))
        .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        text,
        r#"accept: {"username":"ada","email":"ada@example.com"}"#
    );
    let [(kind, params)]: [_; 1] = asked.take().try_into().unwrap();
    assert_eq!(kind, "elicitation");
    let mut schema = parse(quirks.contact_schema);
    if !server.stateless() {
        for (member, value) in quirks.contact_schema_handshake_members {
            schema[*member] = json!(value);
        }
    }
    assert_eq!(
        params,
        json!({"mode": "form", "message": "Who are you?", "requestedSchema": schema})
    );
    let (is_error, text) = server
        .call("ask_user", json!({"message": "decline, please"}))
        .await;
    assert_eq!((is_error, text.as_str()), (false, "decline"));

    // SEP-1034: the user only gave a name; the client fills every other default in, and the
    // server (which echoes the raw answer) sees a complete form.
    let (is_error, text) = server.call("ask_with_defaults", json!({})).await;
    assert!(!is_error, "{text}");
    let round = if server.stateless() {
        "retry after round-1"
    } else {
        "request"
    };
    let (head, content) = text.split_once(", content=").unwrap();
    assert_eq!(head, format!("{round}: action=accept"));
    assert_eq!(
        serde_json::from_str::<Value>(content).unwrap(),
        json!({"name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": true})
    );
    asked.take();

    // Roots.
    let (is_error, text) = server.call("list_client_roots", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!([{"uri": "file:///workspace", "name": "workspace"},
               {"uri": "file:///tmp/scratch", "name": null}])
    );
    assert_eq!(asked.take().len(), 1);
    // The client may say its roots changed; the server takes it quietly.
    server
        .client
        .notify_roots_changed()
        .await
        .expect("roots/list_changed");

    // Three questions in one call: in 2026-07-28 they come in one round, answered together.
    if quirks.asks_everything_at_once {
        let (is_error, text) = server
            .call(
                "ask_everything",
                json!({"prompt": "Hello?", "message": "Who are you?"}),
            )
            .await;
        assert!(!is_error, "{text}");
        assert_eq!(text, "model said 'echo: Hello?'; user ada; 2 root(s)");
        let mut kinds: Vec<&str> = asked.take().into_iter().map(|(kind, _)| kind).collect();
        kinds.sort_unstable();
        assert_eq!(kinds, ["elicitation", "roots", "sampling"]);
    }

    // How the questions travelled.
    if server.stateless() {
        asked_in_rounds(&server);
    } else {
        let requests = server_requests(&server);
        assert_eq!(requests[..5], ASKS);
        let mut everything = requests[5..].to_vec();
        everything.sort_unstable();
        let expected: &[&str] = if quirks.asks_everything_at_once {
            &EVERYTHING
        } else {
            &[]
        };
        assert_eq!(everything, expected);
        assert!(input_required(&server).is_empty());
        assert!(answers(&server).iter().all(|a| a.get("result").is_some()));
    }
    server.wire.assert_valid();

    // Bad input: an elicitation answer that breaks the requested schema is refused by the
    // SDK, and the tool fails.
    let (is_error, text) = server.call("ask_user", json!({"message": "sloppy"})).await;
    assert!(is_error, "{text}");
    assert_text(&text, quirks.sloppy_answer);
    server.wire.assert_valid();
    finish(server).await;
}

/// 2026-07-28: no server-to-client requests, one `InputRequiredResult` round per question
/// (and one for `ask_everything`'s three), each retry answering every key of its round.
fn asked_in_rounds(server: &StdioServer) {
    assert!(
        server_requests(server).is_empty(),
        "{:?}",
        server_requests(server)
    );
    let mut rounds = input_required(server);
    let everything = rounds.pop().expect("the round of ask_everything");
    let methods: Vec<&str> = rounds
        .iter()
        .map(|r| {
            let requests = r["inputRequests"].as_object().unwrap();
            assert_eq!(requests.len(), 1, "{r}");
            assert!(r["requestState"].is_string(), "{r}");
            requests.values().next().unwrap()["method"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(methods, ASKS);
    let requests = everything["inputRequests"].as_object().unwrap();
    let mut methods: Vec<&str> = requests
        .values()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    methods.sort_unstable();
    assert_eq!(methods, EVERYTHING);
    // The retry answered every key of that round.
    let retry = server.sent("tools/call").pop().unwrap();
    let answered = retry["params"]["inputResponses"].as_object().unwrap();
    let mut keys: Vec<&String> = answered.keys().collect();
    keys.sort_unstable();
    let mut asked_keys: Vec<&String> = requests.keys().collect();
    asked_keys.sort_unstable();
    assert_eq!(keys, asked_keys);
    // The hand-written round uses its own key; the retry answered it under that key and
    // echoed the (sealed) state.
    let defaults = &rounds[3];
    assert!(
        defaults["inputRequests"].get("prefs").is_some(),
        "{defaults}"
    );
    let retry = server
        .sent("tools/call")
        .into_iter()
        .find(|r| r["params"]["inputResponses"].get("prefs").is_some())
        .expect("the retry of ask_with_defaults");
    assert_eq!(retry["params"]["requestState"], defaults["requestState"]);
    assert_eq!(
        retry["params"]["inputResponses"]["prefs"]["content"]["age"],
        30
    );
    assert!(server.sent("notifications/roots/list_changed").is_empty());
}

/// A client that refuses to sample, and one that declared no capabilities at all.
pub async fn a_client_that_cannot_answer(sdk: &'static Sdk, version: ProtocolVersion) {
    let refusing = client_options().sampling(|_p, _c| async move {
        Err::<CreateMessageResult, _>(ErrorObject::new(-1, "User rejected sampling"))
    });
    let Some(server) = start(sdk, version, refusing).await else {
        return;
    };
    let outcome = server
        .client
        .call_tool("ask_model", json!({"prompt": "hi"}))
        .await;
    if server.stateless() {
        // The client could not answer the round: it gives up and says why.
        let Err(Error::Protocol(why)) = &outcome else {
            panic!("{outcome:?}")
        };
        assert!(
            why.contains("sampling/createMessage") && why.contains("User rejected sampling"),
            "{why}"
        );
    } else {
        match sdk.features.sampling_refusal {
            // The refusal reached the server, which passes the error on as the call's error.
            SamplingRefusal::CallError => {
                let e = rpc(outcome.unwrap_err());
                assert_eq!((e.code, e.message.as_str()), (-1, "User rejected sampling"));
            }
            SamplingRefusal::ToolError(text) => {
                let result = outcome.expect("an error result");
                assert_eq!(
                    (result.is_error(), result.text_content().as_str()),
                    (true, text)
                );
            }
        }
        let [refusal]: [_; 1] = answers(&server).try_into().unwrap();
        assert_eq!(
            refusal["error"],
            json!({"code": -1, "message": "User rejected sampling"})
        );
    }
    server.wire.assert_valid();
    finish(server).await;

    let Some(server) = start(sdk, version, client_options()).await else {
        return;
    };
    let mut asked = Vec::new();
    for (tool, arguments, method, undeclared) in [
        (
            "ask_model",
            json!({"prompt": "hi"}),
            "sampling/createMessage",
            sdk.features.without_sampling,
        ),
        (
            "ask_user",
            json!({"message": "hi"}),
            "elicitation/create",
            sdk.features.without_elicitation,
        ),
        (
            "list_client_roots",
            json!({}),
            "roots/list",
            sdk.features.without_roots,
        ),
    ] {
        let outcome = server.client.call_tool(tool, arguments).await;
        match undeclared {
            // The SDK checks before asking, in both eras, with the 2026-07-28 code.
            Undeclared::Refused(capability) => {
                let e = rpc(outcome.unwrap_err());
                assert_eq!(
                    e.code,
                    codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    "{tool}: {e:?}"
                );
                assert_eq!(
                    e.data,
                    Some(json!({"requiredCapabilities": parse(capability)})),
                    "{tool}"
                );
            }
            Undeclared::ToolError { text, asks } => {
                let result = outcome.expect("an error result");
                assert_eq!(
                    (result.is_error(), result.text_content().as_str()),
                    (true, text),
                    "{tool}"
                );
                if asks {
                    asked.push(method);
                }
            }
        }
    }
    // Asked anyway, our client answers -32601 for a feature it did not declare.
    assert_eq!(server_requests(&server), asked);
    for answer in answers(&server) {
        assert_eq!(answer["error"]["code"], codes::METHOD_NOT_FOUND, "{answer}");
    }
    server.wire.assert_valid();
    finish(server).await;
}
