//! Prompts and completion in every revision: listing, rendering with arguments, embedded
//! resources and images, argument completion with context, and the bad inputs: a missing
//! required argument, an unknown prompt, an unknown completion reference.

mod common;

use std::collections::BTreeMap;

use common::*;
use oxmcp::{
    ProtocolVersion,
    client::ProtocolMode,
    jsonrpc::codes,
    protocol::{CompletionReference, ContentBlock, GetPromptResult, Role},
};

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Renders the prompt `name` with `arguments`; a failed request fails the test.
async fn prompt(pair: &Pair, name: &str, arguments: &[(&str, &str)]) -> GetPromptResult {
    pair.client
        .get_prompt(name, args(arguments))
        .await
        .unwrap_or_else(|e| panic!("getting the prompt `{name}`: {e}"))
}

/// Checks a request failed with invalid params, and returns the error for a closer look.
fn invalid_params<T: std::fmt::Debug>(result: oxmcp::Result<T>) -> oxmcp::Error {
    let e = result.expect_err("invalid params");
    assert_eq!(e.code(), Some(codes::INVALID_PARAMS), "{e}");
    e
}

#[tokio::test]
async fn prompts_render_in_every_revision() {
    for mode in all_modes() {
        let (_server, pair) = fixture_pair(client_options().protocol(mode.clone())).await;
        let prompts = pair.client.list_all_prompts().await.unwrap();
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "test_simple_prompt",
                "test_prompt_with_arguments",
                "test_prompt_with_embedded_resource",
                "test_prompt_with_image",
                "test_input_required_result_prompt"
            ]
        );
        let simple = prompt(&pair, "test_simple_prompt", &[]).await;
        assert_eq!(simple.messages[0].role, Role::User);
        assert_eq!(
            simple.messages[0].content.as_text(),
            Some("This is a simple prompt for testing.")
        );
        let with_args = prompt(
            &pair,
            "test_prompt_with_arguments",
            &[("arg1", "hello"), ("arg2", "world")],
        )
        .await;
        assert_eq!(
            with_args.messages[0].content.as_text(),
            Some("Prompt with arguments: arg1='hello', arg2='world'")
        );
        let embedded = prompt(
            &pair,
            "test_prompt_with_embedded_resource",
            &[("resourceUri", "test://r")],
        )
        .await;
        match &embedded.messages[0].content {
            ContentBlock::Resource(r) => assert_eq!(r.resource.uri, "test://r"),
            other => panic!("{other:?}"),
        }
        let image = prompt(&pair, "test_prompt_with_image", &[]).await;
        assert_eq!(image.messages[0].content.kind(), "image");
        pair.finish().await;
    }
}

#[tokio::test]
async fn missing_arguments_and_unknown_prompts_are_invalid_params() {
    for mode in [
        ProtocolMode::Auto,
        ProtocolMode::Handshake(ProtocolVersion::V2025_03_26),
    ] {
        let (_server, pair) = fixture_pair(client_options().protocol(mode)).await;
        let e = invalid_params(
            pair.client
                .get_prompt("test_prompt_with_arguments", args(&[("arg1", "only one")]))
                .await,
        );
        assert!(e.to_string().contains("arg2"), "{e}");
        invalid_params(
            pair.client
                .get_prompt("no_such_prompt", BTreeMap::new())
                .await,
        );
        invalid_params(pair.client.list_prompts(Some("bogus-cursor")).await);
        pair.finish().await;
    }
}

#[tokio::test]
async fn completion_for_prompt_arguments_and_template_variables() {
    for mode in [
        ProtocolMode::Auto,
        ProtocolMode::Handshake(ProtocolVersion::V2025_11_25),
        ProtocolMode::Handshake(ProtocolVersion::V2025_03_26),
    ] {
        let (_server, pair) = fixture_pair(client_options().protocol(mode.clone())).await;
        let prompt = CompletionReference::Prompt {
            name: "test_prompt_with_arguments".into(),
        };
        let r = pair
            .client
            .complete(prompt.clone(), "arg1", "par", BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(r.completion.values, ["paris", "park", "party"], "{mode:?}");
        assert_eq!(r.completion.has_more, Some(false));
        // Context (2025-06-18+) is passed along; an argument without a handler completes to nothing.
        if !matches!(mode, ProtocolMode::Handshake(ProtocolVersion::V2025_03_26)) {
            let r = pair
                .client
                .complete(prompt.clone(), "arg2", "x", args(&[("arg1", "paris")]))
                .await
                .unwrap();
            assert!(r.completion.values.is_empty());
        }
        let template = CompletionReference::ResourceTemplate {
            uri: "test://template/{id}/data".into(),
        };
        let r = pair
            .client
            .complete(template, "id", "1", BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(r.completion.values, ["1", "123"]);
        let unknown = CompletionReference::Prompt {
            name: "nope".into(),
        };
        invalid_params(
            pair.client
                .complete(unknown, "a", "", BTreeMap::new())
                .await,
        );
        pair.finish().await;
    }
}

#[tokio::test]
async fn every_fixture_tool_answers_in_every_revision() {
    // Every content kind crosses every revision; blocks a revision cannot represent are
    // rendered as text for it (the wire is schema-checked per revision).
    for mode in all_modes() {
        let (_server, pair) = fixture_pair(schema_filling_client().protocol(mode.clone())).await;
        for tool in pair.client.list_all_tools().await.unwrap() {
            // The tasks fixture's tools have their own suite (core/tests/tasks).
            if oxmcp::protocol::TaskSupport::of_tool(&tool)
                != oxmcp::protocol::TaskSupport::Forbidden
            {
                continue;
            }
            let args = match tool.name.as_str() {
                "test_sampling" => serde_json::json!({"prompt": "hi"}),
                "test_elicitation" => serde_json::json!({"message": "who?"}),
                "json_schema_2020_12_tool" => {
                    serde_json::json!({"name": "n", "contactMethod": "email", "email": "n@x"})
                }
                "test_custom_header_tool" => serde_json::json!({"region": "eu", "priority": 2}),
                _ => serde_json::json!({}),
            };
            let r = pair.call(&tool.name, args).await;
            let version = pair.client.protocol_version();
            // What a revision cannot carry fails the tool with a reason, never the wire.
            let expect_error = match tool.name.as_str() {
                "test_error_handling" => true,
                "test_elicitation"
                | "test_elicitation_sep1034_defaults"
                | "test_input_required_result_elicitation"
                | "test_input_required_result_request_state"
                | "test_input_required_result_tampered_state"
                | "test_input_required_result_multiple_inputs"
                | "test_input_required_result_multi_round"
                | "test_streaming_elicitation" => version < ProtocolVersion::V2025_06_18,
                "test_elicitation_sep1330_enums" => version < ProtocolVersion::V2025_11_25,
                _ => false,
            };
            assert_eq!(
                r.is_error(),
                expect_error,
                "{mode:?} {}: {}",
                tool.name,
                r.text_content()
            );
            if expect_error && tool.name != "test_error_handling" {
                assert!(
                    r.text_content().contains("needs protocol version"),
                    "{}",
                    r.text_content()
                );
            }
        }
        pair.finish().await;
    }
}
