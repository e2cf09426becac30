//! The agent loop with the prompt provider (a model without function calling) against our
//! Rust weather server as a real stdio child: the tools reach the model as system text only,
//! the calls it writes as text are parsed, checked and routed, the results come back as text,
//! an earlier function-calling conversation is rewritten, and a model that keeps writing
//! malformed calls is stopped after three replies in a row with the reason in the transcript.

mod common;

use std::{sync::Arc, sync::Mutex};

use common::example_bin as example;
use oxmcp::{
    host::{AgentOptions, Config, Host, HostOptions, MAX_FORMAT_ERRORS, ModelRequest, StopReason},
    schema::{PromptFormat, Provider},
};
use serde_json::{Value, json};

async fn weather_host() -> Host {
    let weather = example("weather_server").display().to_string();
    let config = Config::from_value(
        &json!({"mcpServers": {"weather": {"command": weather}}}),
        &|k| std::env::var(k).ok(),
    )
    .unwrap();
    Host::start(config, HostOptions::default()).await
}

fn text(m: &Value) -> String {
    m["content"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_model_answers_through_the_weather_server() {
    let host = weather_host().await;
    let seen: Arc<Mutex<Vec<ModelRequest>>> = Arc::default();
    let log = seen.clone();
    // SCRIPTED MODEL (not an LLM) without function calling: text in, text out.
    let model = move |req: ModelRequest| {
        log.lock().unwrap().push(req.clone());
        async move {
            Ok(match req.step {
                1 => {
                    json!({"role": "assistant", "content": "Let me look.\n<tool_call>\n{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"北京\"}}\n</tool_call>\n<tool_call>{\"name\": \"weather__forecast\", \"arguments\": {}}</tool_call>"})
                }
                // A whole Chat Completions response is read as well as a message.
                _ => {
                    json!({"choices": [{"message": {"role": "assistant", "content": format!("Answer: {}", text(req.messages.last().unwrap()))}}]})
                }
            })
        }
    };
    let history = vec![
        json!({"role": "system", "content": "Be brief."}),
        json!({"role": "user", "content": "北京今天天气怎么样?"}),
    ];
    let t = host
        .run_agent(
            &model,
            history,
            &AgentOptions::new(Provider::Prompt(PromptFormat::Hermes)),
        )
        .await
        .unwrap();
    assert_eq!((t.stop, t.steps), (StopReason::Final, 2), "{t:#?}");
    assert_eq!(t.reason, None);
    assert_eq!(t.calls.len(), 2, "{:#?}", t.calls);
    assert_eq!(t.calls[0].server.as_deref(), Some("weather"));
    assert_eq!(t.calls[0].arguments, json!({"city": "北京"}));
    assert!(!t.calls[0].is_error, "{:?}", t.calls[0]);
    assert!(t.calls[1].is_error && t.calls[1].server.is_none());
    assert!(
        t.calls[1]
            .text
            .contains("weather__forecast is not a valid tool, try one of [weather__get_weather]"),
        "{:?}",
        t.calls[1]
    );

    let seen = seen.lock().unwrap().clone();
    // The tools reach the model as text only, appended to its own system message.
    let system = seen[0].tools.as_str().unwrap().to_owned();
    assert!(system.contains("<tools>") && system.contains("weather__get_weather"));
    assert_eq!(text(&seen[0].messages[0]), format!("Be brief.\n\n{system}"));
    assert_eq!(seen[0].messages.len(), 2);
    // The results come back as one user message of <tool_response> text, in call order.
    let results = text(seen[1].messages.last().unwrap());
    assert_eq!(seen[1].messages.last().unwrap()["role"], "user");
    let first = results.find("\"name\": \"weather__get_weather\"").unwrap();
    let second = results
        .find("Error: weather__forecast is not a valid tool")
        .unwrap();
    assert!(first < second, "{results}");
    assert!(
        t.final_text.starts_with("Answer: <tool_response>"),
        "{}",
        t.final_text
    );
    // The transcript keeps the conversation without the tools' text.
    assert_eq!(text(&t.messages[0]), "Be brief.");
    assert_eq!(t.messages[2]["role"], "assistant");
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_earlier_function_calling_conversation_is_rewritten_as_text() {
    let host = weather_host().await;
    let history = vec![
        json!({"role": "user", "content": "Oslo?"}),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather__get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": "cold"}),
        json!({"role": "user", "content": "and now?"}),
    ];
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let log = seen.clone();
    let model = move |req: ModelRequest| {
        *log.lock().unwrap() = req.messages.clone();
        async { Ok(json!("Final Answer: still cold")) }
    };
    let t = host
        .run_agent(
            &model,
            history,
            &AgentOptions::new(Provider::Prompt(PromptFormat::React)),
        )
        .await
        .unwrap();
    assert_eq!(t.stop, StopReason::Final);
    assert_eq!(t.final_text, "still cold");
    let sent = seen.lock().unwrap().clone();
    // A system message was added first; no `tool` role or `tool_calls` reach the model.
    assert_eq!(sent[0]["role"], "system");
    assert!(
        text(&sent[0])
            .contains("Action: the action to take, should be one of [weather__get_weather]")
    );
    assert_eq!(
        text(&sent[2]),
        "Action: weather__get_weather\nAction Input: {\"city\":\"Oslo\"}"
    );
    assert_eq!(
        sent[3],
        json!({"role": "user", "content": "Observation: cold"})
    );
    assert!(
        sent.iter()
            .all(|m| m["role"] != "tool" && m.get("tool_calls").is_none())
    );
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_malformed_replies_in_a_row_stop_the_run_with_a_reason() {
    let host = weather_host().await;
    let broken = |_req: ModelRequest| async {
        Ok(json!(
            "<tool_call>{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": </tool_call>"
        ))
    };
    let mut opts = AgentOptions::new(Provider::Prompt(PromptFormat::Hermes));
    opts.max_steps = 10;
    let t = host
        .run_agent(
            &broken,
            vec![json!({"role": "user", "content": "go"})],
            &opts,
        )
        .await
        .unwrap();
    assert_eq!(
        (t.stop, t.steps),
        (StopReason::FormatErrors, MAX_FORMAT_ERRORS)
    );
    let reason = t.reason.clone().unwrap();
    assert!(
        reason.contains("3 replies in a row") && reason.contains("not valid JSON"),
        "{reason}"
    );
    assert!(t.calls.iter().all(|c| c.is_error && c.server.is_none()));
    // Each error went back to the model, which is how it could have fixed the call.
    let last = t.messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(
        text(last).contains("Error: Tool call 1 is not valid JSON"),
        "{last}"
    );

    // A good reply in between resets the count: bad, bad, good, bad, bad, answer.
    let script = |req: ModelRequest| async move {
        let bad = json!("<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>");
        let good = json!(
            "<tool_call>{\"name\": \"weather__get_weather\", \"arguments\": {\"city\": \"Beijing\"}}</tool_call>"
        );
        Ok(match req.step {
            1 | 2 | 4 | 5 => bad,
            3 => good,
            _ => json!("done"),
        })
    };
    let t = host.run_agent(&script, vec![], &opts).await.unwrap();
    assert_eq!(
        (t.stop, t.steps, t.final_text.as_str()),
        (StopReason::Final, 6, "done")
    );
    assert_eq!(t.calls.iter().filter(|c| !c.is_error).count(), 1);
    host.close().await;
}
