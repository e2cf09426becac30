//! Resources, the resource template, prompts and completion against each SDK's feature
//! server over stdio, at a given revision: the same answers in every era, each happy path with
//! a bad-input neighbour whose error the peer table words per SDK (and, for the Python SDK,
//! per era).

use std::collections::BTreeMap;

use oxmcp::{ProtocolVersion, protocol::CompletionReference};
use serde_json::{Value, json};

use crate::features::{PNG, args, client_options, finish, plain, start};
use crate::sdk::Sdk;
use crate::tools::assert_rpc;

pub async fn resources_prompts_and_completion(sdk: &'static Sdk, version: ProtocolVersion) {
    let Some(server) = start(sdk, version, client_options()).await else {
        return;
    };
    let quirks = &sdk.features;
    let who = quirks.who;
    let client = &server.client;
    let caps = &client.server().capabilities;
    assert!(caps.resources.is_some() && caps.prompts.is_some() && caps.completions.is_some());

    // resources/list, exactly as the SDK lists what was registered.
    let resources = client.list_all_resources().await.expect("resources/list");
    assert_eq!(
        plain(&server, &resources),
        json!([
            {"uri": "test://static-text", "name": "static-text",
             "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary",
             "description": "A static binary resource (a PNG)", "mimeType": "image/png"},
            {"uri": "test://watched", "name": "watched",
             "description": "A resource clients may subscribe to", "mimeType": "text/plain"}
        ])
    );

    // A text resource and a binary one (bytes come back as a base64 blob).
    let text = client
        .read_resource("test://static-text")
        .await
        .expect("read text");
    assert_eq!(
        plain(&server, &text),
        json!({"contents": [{"uri": "test://static-text", "mimeType": "text/plain",
                             "text": format!("Static text from the {who} SDK.")}]})
    );
    if server.stateless() {
        // 2026-07-28 results carry the revision's own members.
        assert_eq!(text.extra["resultType"], "complete");
        assert_eq!(text.extra["ttlMs"], 0);
        assert_eq!(
            text.meta.as_ref().unwrap()["io.modelcontextprotocol/serverInfo"]["name"],
            sdk.names.features
        );
    }
    let blob = client
        .read_resource("test://static-binary")
        .await
        .expect("read blob");
    assert_eq!(
        plain(&server, &blob),
        json!({"contents": [{"uri": "test://static-binary", "mimeType": "image/png",
                             "blob": PNG}]})
    );

    // The template, listed and read through.
    let templates = client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    assert_eq!(
        plain(&server, &templates),
        json!([{"uriTemplate": "test://template/{id}/data", "name": "template",
                "description": "A templated resource", "mimeType": "application/json"}])
    );
    let item = client
        .read_resource("test://template/42/data")
        .await
        .expect("read through the template");
    assert_eq!(
        plain(&server, &item),
        json!({"contents": [{"uri": "test://template/42/data", "mimeType": "application/json",
                             "text": quirks.template_text}]})
    );

    // Prompts: listed with their arguments, rendered with arguments, an embedded resource and
    // an image.
    let no_arguments = |name: &str, description: &str| {
        let mut prompt = json!({"name": name, "description": description});
        if quirks.lists_empty_prompt_arguments {
            prompt["arguments"] = json!([]);
        }
        prompt
    };
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    assert_eq!(
        plain(&server, &prompts),
        json!([
            no_arguments("simple_prompt", "A prompt without arguments"),
            {"name": "greeting",
             "description": "A greeting with a required name and an optional style",
             "arguments": [{"name": "name", "required": true},
                           {"name": "style", "required": false}]},
            {"name": "embedded_resource", "description": "A prompt that embeds a resource",
             "arguments": [{"name": "resourceUri", "required": true}]},
            no_arguments("image_prompt", "A prompt with an image")
        ])
    );
    // Each rendering is its messages, with the prompt's description where the SDK adds it.
    let assert_rendered = |rendered: Value, description: &str, messages: Value| {
        let mut expected = json!({"messages": messages});
        if quirks.renders_prompt_description {
            expected["description"] = json!(description);
        }
        assert_eq!(rendered, expected);
    };
    let simple = client
        .get_prompt("simple_prompt", BTreeMap::new())
        .await
        .expect("simple_prompt");
    assert_rendered(
        plain(&server, &simple),
        "A prompt without arguments",
        json!([{"role": "user", "content": {"type": "text",
                 "text": format!("A simple prompt from the {who} SDK.")}}]),
    );
    let greeting = client
        .get_prompt("greeting", args(&[("name", "Ada")]))
        .await
        .expect("greeting");
    assert_rendered(
        plain(&server, &greeting),
        "A greeting with a required name and an optional style",
        json!([{"role": "user", "content": {"type": "text",
                 "text": "Write a friendly greeting for Ada."}}]),
    );
    let greeting = client
        .get_prompt("greeting", args(&[("name", "Ada"), ("style", "formal")]))
        .await
        .expect("greeting with both arguments");
    assert_eq!(
        greeting.messages[0].content,
        oxmcp::protocol::ContentBlock::text("Write a formal greeting for Ada.")
    );
    let embedded = client
        .get_prompt(
            "embedded_resource",
            args(&[("resourceUri", "test://static-text")]),
        )
        .await
        .expect("embedded_resource");
    assert_rendered(
        plain(&server, &embedded),
        "A prompt that embeds a resource",
        json!([
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "test://static-text", "mimeType": "text/plain",
                "text": "Embedded resource text."}}},
            {"role": "user", "content": {"type": "text",
                                         "text": "Please summarise the resource above."}}
        ]),
    );
    let image = client
        .get_prompt("image_prompt", BTreeMap::new())
        .await
        .expect("image_prompt");
    assert_rendered(
        plain(&server, &image),
        "A prompt with an image",
        json!([
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "Describe the image above."}}
        ]),
    );

    // Completion of a prompt argument and of a template variable.
    let names = client
        .complete(prompt("greeting"), "name", "al", BTreeMap::new())
        .await
        .expect("complete a prompt argument");
    assert_eq!(
        plain(&server, &names),
        json!({"completion": {"values": ["Alan", "Alonzo"], "total": 2, "hasMore": false}})
    );
    let ids = client
        .complete(
            template("test://template/{id}/data"),
            "id",
            "4",
            args(&[("unused", "context")]),
        )
        .await
        .expect("complete a template variable");
    assert_eq!(
        plain(&server, &ids),
        json!({"completion": {"values": ["42"], "total": 1, "hasMore": false}})
    );
    // The context went over the wire as the schema wants it.
    let sent = server.sent("completion/complete");
    assert_eq!(
        sent[1]["params"]["context"],
        json!({"arguments": {"unused": "context"}})
    );

    // Every frame so far, both ways, against the official schema.
    server.wire.assert_valid();

    // The bad-input neighbours: an unknown resource, and a URI the template does not match
    // (just as unknown).
    let errors = &quirks.errors;
    assert_rpc(
        client.read_resource("test://nope").await.unwrap_err(),
        &errors.unknown_resource,
    );
    assert_rpc(
        client
            .read_resource("test://template/42")
            .await
            .unwrap_err(),
        &errors.unmatched_template,
    );

    // A missing required prompt argument and an unknown prompt.
    let missing = client
        .get_prompt("greeting", args(&[("style", "formal")]))
        .await
        .unwrap_err();
    let unknown = client
        .get_prompt("nope", BTreeMap::new())
        .await
        .unwrap_err();
    match errors.prompt_errors_over_2026_07_28 {
        Some(both) if server.stateless() => {
            assert_rpc(missing, &both);
            assert_rpc(unknown, &both);
        }
        _ => {
            assert_rpc(missing, &errors.missing_prompt_argument);
            assert_rpc(unknown, &errors.unknown_prompt);
        }
    }

    // Completion against an unknown prompt and an unknown template.
    let e = client
        .complete(prompt("nope"), "name", "", BTreeMap::new())
        .await
        .unwrap_err();
    assert_rpc(e, &errors.complete_unknown_prompt);
    let e = client
        .complete(template("test://other/{id}"), "id", "", BTreeMap::new())
        .await
        .unwrap_err();
    assert_rpc(e, &errors.complete_unknown_template);
    // An argument the completer does not know: an empty completion, not an error.
    let none = client
        .complete(prompt("greeting"), "style", "f", BTreeMap::new())
        .await
        .expect("complete an argument without suggestions");
    assert!(none.completion.values.is_empty(), "{none:?}");

    server.wire.assert_valid();
    finish(server).await;
}

/// A prompt, as what completion completes.
fn prompt(name: &str) -> CompletionReference {
    CompletionReference::Prompt { name: name.into() }
}

/// A resource template, as what completion completes.
fn template(uri: &str) -> CompletionReference {
    CompletionReference::ResourceTemplate { uri: uri.into() }
}
