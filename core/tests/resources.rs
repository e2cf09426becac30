//! Resources in every revision: listing with pagination, reading text and blobs, templates
//! with RFC 6570 matching, not-found codes per era, subscriptions (handshake era) and the
//! bad inputs: an unknown resource, a bad cursor, a 64 KiB hostile URI.

mod common;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use common::*;
use oxmcp::{
    client::ProtocolMode,
    jsonrpc::codes,
    protocol::{ReadResourceResult, Resource},
    server::Server,
};
use serde_json::{Value, json};

#[tokio::test]
async fn list_and_read_in_every_revision() {
    for mode in all_modes() {
        let (_server, pair) = fixture_pair(client_options().protocol(mode.clone())).await;
        let resources = pair.client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "test://static-text",
                "test://static-binary",
                "test://watched-resource"
            ],
            "{mode:?}"
        );
        assert!(resources.iter().all(|r| r.description.is_some()));
        let text = pair
            .client
            .read_resource("test://static-text")
            .await
            .unwrap();
        assert_eq!(
            text.contents[0].text.as_deref(),
            Some("This is the content of the static text resource.")
        );
        assert_eq!(text.contents[0].mime_type.as_deref(), Some("text/plain"));
        let blob = pair
            .client
            .read_resource("test://static-binary")
            .await
            .unwrap();
        assert_eq!(blob.contents[0].blob.as_deref(), Some(fixture::PNG));
        let templates = pair.client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "test://template/{id}/data");
        let templated = pair
            .client
            .read_resource("test://template/123/data")
            .await
            .unwrap();
        let body: Value =
            serde_json::from_str(templated.contents[0].text.as_deref().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
        );
        pair.finish().await;
    }
}

#[tokio::test]
async fn an_unknown_resource_gets_the_code_of_its_era() {
    for (mode, code) in [
        (
            ProtocolMode::Handshake(oxmcp::ProtocolVersion::V2025_11_25),
            codes::RESOURCE_NOT_FOUND,
        ),
        (
            ProtocolMode::Handshake(oxmcp::ProtocolVersion::V2024_11_05),
            codes::RESOURCE_NOT_FOUND,
        ),
        (ProtocolMode::Auto, codes::INVALID_PARAMS),
    ] {
        let (_server, pair) = fixture_pair(client_options().protocol(mode)).await;
        for uri in [
            "test://nonexistent-resource-for-conformance-testing",
            "test://template/1/data/extra",
            "other:x",
        ] {
            let e = pair.client.read_resource(uri).await.unwrap_err();
            match &e {
                oxmcp::Error::Rpc(err) => {
                    assert_eq!(err.code, code, "{uri}");
                    assert_eq!(err.data.as_ref().unwrap()["uri"], uri);
                }
                other => panic!("{other:?}"),
            }
        }
        pair.finish().await;
    }
}

#[tokio::test]
async fn a_hostile_uri_is_refused_without_backtracking() {
    let server = Server::builder("hostile", "1").build();
    for template in [
        "x://h{/id*}",
        "x://s{?tags*}",
        "x://s{?q}{&x*}",
        "x://{a}{b}{c}/z",
    ] {
        server
            .add_resource_template(oxmcp::protocol::ResourceTemplate::new(template, template), |uri: String, _v, _c| async move {
                Ok(ReadResourceResult::text(uri, None, "matched"))
            })
            .unwrap();
    }
    let pair = pair(&server, client_options()).await;
    let hostile = [
        format!("x://h/{}!", "a,".repeat(32_000)),
        format!("x://s?{}!", "tags=a&".repeat(9_000)),
        format!("x://{}", "a".repeat(65_000)),
    ];
    for uri in &hostile {
        assert!(uri.len() >= 60_000);
        // A backtracking matcher would take minutes here; the timeout turns a hang into a failure.
        let e = tokio::time::timeout(Duration::from_secs(5), pair.client.read_resource(uri))
            .await
            .expect("no hang")
            .unwrap_err();
        assert_eq!(e.code(), Some(codes::INVALID_PARAMS));
    }
    // A legitimate exploded path still matches.
    let ok = pair.client.read_resource("x://h/a/b/c").await.unwrap();
    assert_eq!(ok.contents[0].text.as_deref(), Some("matched"));
    pair.finish().await;
}

#[tokio::test]
async fn resource_pages_and_a_bad_cursor() {
    let server = Server::builder("paged", "1").page_size(2).build();
    for i in 0..5 {
        server.add_resource(
            Resource::new(format!("mem://{i}"), format!("r{i}")),
            |uri: String, _v, _c| async move { Ok(ReadResourceResult::text(uri, None, "x")) },
        );
    }
    let pair = pair(&server, client_options()).await;
    let first = pair.client.list_resources(None).await.unwrap();
    assert_eq!(first.resources.len(), 2);
    assert_eq!(pair.client.list_all_resources().await.unwrap().len(), 5);
    let e = pair
        .client
        .list_resources(Some("garbage"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(codes::INVALID_PARAMS));
    let e = pair
        .client
        .list_resource_templates(Some(first.next_cursor.as_deref().unwrap()))
        .await
        .unwrap_err();
    assert_eq!(
        e.code(),
        Some(codes::INVALID_PARAMS),
        "a resources/list cursor is not a templates cursor"
    );
    pair.finish().await;
}

#[tokio::test]
async fn subscriptions_deliver_updates_until_unsubscribed() {
    let server = fixture_server();
    let seen = Arc::new(Mutex::new(Vec::<(String, Option<Value>)>::new()));
    let sink = seen.clone();
    let options = client_options()
        .protocol(ProtocolMode::Handshake(oxmcp::ProtocolVersion::V2025_11_25))
        .on_notification(move |m, p| sink.lock().unwrap().push((m.to_owned(), p)));
    let pair = pair(&server, options).await;
    pair.client
        .subscribe_resource("test://watched-resource")
        .await
        .unwrap();
    server.notify_resource_updated("test://watched-resource");
    server.notify_resource_updated("test://static-text");
    wait_until(|| !seen.lock().unwrap().is_empty()).await;
    pair.client
        .unsubscribe_resource("test://watched-resource")
        .await
        .unwrap();
    server.notify_resource_updated("test://watched-resource");
    // A round trip after the last notify: anything it sent would have arrived by now.
    pair.client.ping().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![(
            "notifications/resources/updated".to_owned(),
            Some(json!({"uri": "test://watched-resource"}))
        )]
    );
    pair.finish().await;
}

#[tokio::test]
async fn adding_a_resource_tells_clients_the_list_changed() {
    let server = fixture_server();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    let options = client_options()
        .protocol(ProtocolMode::Handshake(oxmcp::ProtocolVersion::V2025_06_18))
        .on_notification(move |m, _| sink.lock().unwrap().push(m.to_owned()));
    let pair = pair(&server, options).await;
    server.add_resource(
        Resource::new("mem://new", "new"),
        |uri: String, _v, _c| async move { Ok(ReadResourceResult::text(uri, None, "fresh")) },
    );
    wait_until(|| !seen.lock().unwrap().is_empty()).await;
    assert_eq!(
        seen.lock().unwrap()[0],
        "notifications/resources/list_changed"
    );
    assert_eq!(
        pair.client
            .read_resource("mem://new")
            .await
            .unwrap()
            .contents[0]
            .text
            .as_deref(),
        Some("fresh")
    );
    assert!(server.remove_resource("mem://new"));
    assert_eq!(
        pair.client
            .read_resource("mem://new")
            .await
            .unwrap_err()
            .code(),
        Some(codes::RESOURCE_NOT_FOUND)
    );
    pair.finish().await;
}

#[tokio::test]
async fn stateless_reads_carry_cache_hints() {
    let server = fixture_server();
    let (mut peer, _s) = RawPeer::connect(&server);
    let r = peer
        .stateless_request(
            json!(1),
            "resources/read",
            json!({"uri": "test://static-text"}),
        )
        .await;
    assert_complete_uncached(&r);
    // subscribe/unsubscribe do not exist statelessly.
    let r = peer
        .stateless_request(json!(2), "resources/subscribe", json!({"uri": "test://x"}))
        .await;
    assert_eq!(r["error"]["code"], -32601);
    peer.wire.assert_valid();
}

pub async fn wait_until(cond: impl Fn() -> bool) {
    for _ in 0..300 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not met in 3 s");
}
