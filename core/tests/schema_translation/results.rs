//! The way back: results mapped to each provider's messages (golden vectors and the
//! OpenAI text-and-images rule), tool calls read from every provider's shape, bad arguments
//! and unknown names turned into text for the model, strict nulls stripped, and names
//! sanitised, namespaced and reversible.

use std::collections::BTreeMap;

use oxmcp::{
    protocol::{CallToolResult, Tool},
    schema::{
        NameMap, NameRules, Namespace, Provider, ServerTools, ToolCall, ToolOutcome,
        TranslateOptions, result_messages, tool_calls, translate,
    },
};
use serde_json::{Value, json};

use crate::{fixtures, golden, inputs, run};

#[test]
fn golden_result_vectors() {
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("results/input.json")).unwrap(),
    )
    .unwrap();
    let results: BTreeMap<String, CallToolResult> =
        serde_json::from_value(input["results"].clone()).unwrap();
    assert_eq!(results.len(), 8);
    for provider in Provider::ALL {
        let mut all = serde_json::Map::new();
        for (name, result) in &results {
            let outcome = ToolOutcome {
                call: ToolCall {
                    id: Some(format!("call_{name}")),
                    name: format!("srv__{name}"),
                    arguments: Ok(Default::default()),
                },
                result: result.clone(),
            };
            all.insert(
                name.clone(),
                Value::Array(result_messages(provider, &[outcome])),
            );
        }
        let actual = Value::Object(all);
        // What every provider's mapping must do, blessed or not.
        let text = actual.to_string();
        assert!(text.contains("Beijing"), "{provider}");
        assert!(text.contains("Unknown city: Atlantis"), "{provider}");
        assert!(
            text.contains("file:///tmp/report.pdf"),
            "{provider}: resource links degrade to text"
        );
        assert!(text.contains("Remember the milk."), "{provider}");
        assert!(
            text.contains("sum"),
            "{provider}: structured-only results reach the model"
        );
        golden(
            &fixtures().join(format!("results/expected.{}.json", provider.as_str())),
            &actual,
        );
    }
}

#[test]
fn openai_tool_messages_are_text_and_images_follow_as_user_content() {
    let image: CallToolResult = serde_json::from_value(json!({"content": [
        {"type": "text", "text": "see"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}))
    .unwrap();
    let call = |id: &str| ToolCall {
        id: Some(id.into()),
        name: "s__t".into(),
        arguments: Ok(Default::default()),
    };
    let msgs = result_messages(
        Provider::OpenAi,
        &[
            ToolOutcome {
                call: call("a"),
                result: image.clone(),
            },
            ToolOutcome {
                call: call("b"),
                result: CallToolResult::error("bad"),
            },
        ],
    );
    assert_eq!(msgs.len(), 3, "{msgs:#?}");
    assert_eq!(msgs[0]["role"], "tool");
    assert!(msgs[0]["content"].is_string());
    assert_eq!(msgs[1]["content"], "Error: bad");
    assert_eq!(msgs[2]["role"], "user");
    assert_eq!(
        msgs[2]["content"][1]["image_url"]["url"],
        "data:image/png;base64,AAAA"
    );
    let anthropic = result_messages(
        Provider::Anthropic,
        &[ToolOutcome {
            call: call("b"),
            result: CallToolResult::error("bad"),
        }],
    );
    assert_eq!(anthropic[0]["content"][0]["is_error"], true);
    let gemini = result_messages(
        Provider::Gemini,
        &[ToolOutcome {
            call: call("b"),
            result: CallToolResult::error("bad"),
        }],
    );
    assert_eq!(
        gemini[0]["parts"][0]["functionResponse"]["response"]["error"],
        "bad"
    );
}

// --- The way back ---------------------------------------------------------------------------

fn book_trip() -> Vec<Tool> {
    let (_, tools) = inputs().into_iter().find(|(s, _)| s == "pydantic").unwrap();
    tools
}

#[test]
fn tool_calls_are_read_from_every_provider_shape() {
    let args = json!({"city": "Beijing"});
    let cases = [
        (
            Provider::OpenAi,
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w__get_weather", "arguments": args.to_string()}}]}}]}),
        ),
        (
            Provider::Responses,
            json!({"output": [{"type": "reasoning"}, {"type": "function_call", "call_id": "c1", "name": "w__get_weather", "arguments": args.to_string()}]}),
        ),
        (
            Provider::Anthropic,
            json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "checking"}, {"type": "tool_use", "id": "c1", "name": "w__get_weather", "input": args}]}),
        ),
        (
            Provider::Gemini,
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "w__get_weather", "args": args}}]}}]}),
        ),
        (
            Provider::LangChain,
            json!({"type": "ai", "content": "", "tool_calls": [{"id": "c1", "name": "w__get_weather", "args": args}]}),
        ),
    ];
    for (provider, turn) in cases {
        let calls = tool_calls(provider, &turn);
        assert_eq!(calls.len(), 1, "{provider}");
        assert_eq!(calls[0].id.as_deref(), Some("c1"));
        assert_eq!(calls[0].name, "w__get_weather");
        assert_eq!(calls[0].arguments.as_ref().unwrap()["city"], "Beijing");
    }
}

#[test]
fn bad_arguments_and_unknown_names_become_text_for_the_model() {
    let tools = book_trip();
    let t = run(Provider::OpenAi, "trips", &tools);
    for raw in ["{not json", "[1,2]", "\"str\"", "{\"a\": 1"] {
        let turn = json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "trips__book_trip", "arguments": raw}}]});
        let call = &tool_calls(Provider::OpenAi, &turn)[0];
        let err = t.route(call).unwrap_err();
        assert!(
            !err.starts_with("Error") && err.contains("trips__book_trip"),
            "{raw}: {err}"
        );
        // The provider's formatter marks the error once: "Error: Error: …" reads as noise
        // to a model.
        let sent = result_messages(
            Provider::OpenAi,
            &[ToolOutcome {
                call: call.clone(),
                result: CallToolResult::error(err.clone()),
            }],
        );
        assert_eq!(sent[0]["content"], format!("Error: {err}"), "{raw}");
    }
    let call = ToolCall {
        id: None,
        name: "trips__nope".into(),
        arguments: Ok(Default::default()),
    };
    let err = t.route(&call).unwrap_err();
    assert!(
        err.contains("no tool named `trips__nope`") && err.contains("trips__book_trip"),
        "{err}"
    );
}

#[test]
fn strict_nulls_are_stripped_so_server_defaults_apply() {
    let tools = book_trip();
    let t = run(Provider::OpenAi, "trips", &tools);
    assert_eq!(t.reports[0].strict, Some(true), "{:?}", t.reports[0]);
    // What a strict model sends: every property, optional ones null.
    let args = json!({
        "traveller": "Ada", "when": "2026-12-01T10:00:00Z",
        "home": {"street": "1 Main St", "city": "Oslo", "zip": null},
        "color": null, "nights": null, "tags": null, "site": null, "mode": null, "config": null,
        "itinerary": {"label": "root", "children": [{"label": "leaf", "children": null}]}
    });
    let call = ToolCall {
        id: Some("c".into()),
        name: "trips__book_trip".into(),
        arguments: Ok(args.as_object().unwrap().clone()),
    };
    let (target, sent) = t.route(&call).unwrap();
    assert_eq!(
        (target.server.as_str(), target.tool.as_str()),
        ("trips", "book_trip")
    );
    assert_eq!(
        Value::Object(sent),
        json!({
            "traveller": "Ada", "when": "2026-12-01T10:00:00Z",
            // `zip` accepted null in the source (Optional[str]): it stays.
            "home": {"street": "1 Main St", "city": "Oslo", "zip": null},
            "site": null,
            "itinerary": {"label": "root", "children": [{"label": "leaf"}]}
        })
    );
    // Without strict mode nothing is touched.
    let loose = translate(
        Provider::OpenAi,
        &[ServerTools {
            server: "trips",
            tools: &tools,
        }],
        &TranslateOptions {
            strict: false,
            ..Default::default()
        },
    );
    let (_, sent) = loose.route(&call).unwrap();
    assert_eq!(sent["nights"], Value::Null);
}

#[test]
fn names_are_sanitised_namespaced_and_reversible() {
    let long = "x".repeat(100);
    let entries: Vec<(String, String)> = [
        ("weather", "get_weather"),
        ("weather-py", "get_weather"),
        ("fs", "read.file"),
        ("fs", "read_file"),
        ("一", "工具"),
        ("s", long.as_str()),
        ("s", &format!("{long}y")),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    for rules in [NameRules::Strict, NameRules::Gemini] {
        for ns in [Namespace::Always, Namespace::OnCollision, Namespace::Never] {
            let map = NameMap::assign(&entries, rules, ns);
            let names: Vec<&str> = entries
                .iter()
                .map(|(s, t)| map.name_of(s, t).unwrap())
                .collect();
            let unique: std::collections::HashSet<&&str> = names.iter().collect();
            assert_eq!(unique.len(), entries.len(), "{rules:?} {ns:?}: {names:?}");
            for (name, (s, t)) in names.iter().zip(&entries) {
                assert!(name.len() <= 64 && !name.is_empty(), "{name}");
                let ok = name.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || c == '_'
                        || c == '-'
                        || (rules == NameRules::Gemini && (c == '.' || c == ':'))
                });
                assert!(ok, "{name}");
                if rules == NameRules::Gemini {
                    assert!(
                        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'),
                        "{name}"
                    );
                }
                let back = map.resolve(name).unwrap();
                assert_eq!((&back.server, &back.tool), (s, t));
            }
        }
    }
    let map = NameMap::assign(&entries, NameRules::Strict, Namespace::OnCollision);
    assert_eq!(map.name_of("fs", "read_file"), Some("read_file"));
    assert_eq!(
        map.name_of("weather", "get_weather"),
        Some("weather__get_weather")
    );
}
