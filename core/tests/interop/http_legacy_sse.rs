//! oxmcp's HTTP client against each SDK's legacy HTTP+SSE server (the 2024-11-05 transport):
//! the Streamable HTTP POST is refused with 405, so the client falls back to `GET /sse`,
//! waits for the `endpoint` event and posts its messages there, and everything works as
//! usual. With the fallback turned off the 405 is a typed error.

use oxmcp::{
    ProtocolVersion,
    client::{Client, ProtocolMode},
    transport::http::HttpClientOptions,
};
use serde_json::json;

use crate::features::rpc;
use crate::http::{App, Connected, Flavour, options, sdk_server};
use crate::http_server::exercise;
use crate::sdk::Sdk;

/// In `mode`, reaching `expected`.
pub async fn fallback(sdk: &'static Sdk, mode: ProtocolMode, expected: ProtocolVersion) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let peer = sdk_server(sdk, &launcher, App::Tools, Flavour::LegacySse).await;
    let auto = mode == ProtocolMode::Auto;
    let c = Connected::start(peer, options(mode)).await;
    assert_eq!(c.client.protocol_version(), expected);
    exercise(&c, sdk).await;

    let exchanges = c.proxy.exchanges();
    let log = c.proxy.log();
    let refused: Vec<_> = exchanges
        .iter()
        .take_while(|e| e.path == "/sse" && e.method == "POST")
        .map(|e| (e.rpc_method().unwrap_or_default(), e.status))
        .collect();
    let mut expected_refusals = vec![("initialize".to_owned(), 405)];
    if auto {
        // Auto mode probes first; the refusal of the probe is not a fallback signal.
        expected_refusals.insert(0, ("server/discover".to_owned(), 405));
    }
    assert_eq!(refused, expected_refusals, "{log}");
    let stream = &exchanges[refused.len()];
    assert_eq!(
        (stream.method.as_str(), stream.path.as_str(), stream.status),
        ("GET", "/sse", 200),
        "{log}"
    );
    assert!(stream.is_sse(), "{log}");
    let endpoint = sdk.http.legacy_endpoint;
    let session = stream
        .response_body()
        .lines()
        .find_map(|l| {
            l.strip_prefix("data: ")
                .and_then(|path| path.strip_prefix(endpoint))
                .map(str::to_owned)
        })
        .expect("an endpoint event");
    for e in &exchanges[refused.len() + 1..] {
        assert_eq!(
            (e.method.as_str(), e.path.clone(), e.status),
            ("POST", format!("{endpoint}{session}"), 202),
            "{log}"
        );
    }
    // Every answer came on the one SSE stream.
    let answers = stream.response_body().matches("event: message").count();
    let requests = exchanges.iter().filter(|e| e.is_rpc_request()).count() - refused.len();
    assert_eq!(answers, requests, "{log}");
    c.finish(sdk).await;
}

/// Bad input for the fallback: with it turned off, the 405 is a typed error; a URL that is
/// neither transport (404 to the POST and to the GET) fails the same way.
pub async fn refused_without_the_fallback(sdk: &'static Sdk) {
    let Some(launcher) = sdk.launcher() else {
        return;
    };
    let handshake = || options(ProtocolMode::Handshake(ProtocolVersion::V2025_11_25));
    let peer = sdk_server(sdk, &launcher, App::Tools, Flavour::LegacySse).await;
    let no_fallback = HttpClientOptions {
        legacy_fallback: false,
        ..Default::default()
    };
    let (e, log) = Connected::start_with(peer, handshake(), no_fallback)
        .await
        .err()
        .expect("no connection without the fallback");
    let e = rpc(e);
    assert_eq!(
        e.data.as_ref().map(|d| d["status"].clone()),
        Some(json!(405)),
        "{log}"
    );

    let peer = sdk_server(sdk, &launcher, App::Tools, Flavour::LegacySse).await;
    let url = peer.url.replace("/sse", "/nothing");
    let err = Client::connect_http(&url, handshake(), HttpClientOptions::default())
        .await
        .expect_err("no MCP server at /nothing");
    let e = rpc(err);
    assert_eq!(
        e.data.as_ref().map(|d| d["status"].clone()),
        Some(json!(404))
    );
}
