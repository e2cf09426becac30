//! Each SDK's HTTP client script (`http_client.py`, `http_client.mjs`) drives oxmcp's
//! conformance server over Streamable HTTP (with sessions, `--stateless`, answering in JSON
//! only) and over the legacy HTTP+SSE transport. The script records its own HTTP exchanges
//! and asserts both the results and the transport.

use crate::http::{App, Flavour, conformance_server, sdk_server};
use crate::proxy::Proxy;
use crate::sdk::{Sdk, skip};
use crate::sdk_clients::{assert_passed, client_for, describe, run};

/// The script in `mode` against `conformance_server --http` (with `--stateless` where
/// `stateless`).
pub async fn drives_oxmcp(sdk: &'static Sdk, mode: &str, stateless: bool) {
    let Some((launcher, mut args)) = client_for(sdk, mode) else {
        return;
    };
    let server = conformance_server(stateless).await;
    let kind = if stateless { "stateless" } else { "stateful" };
    args.extend([kind.into(), server.url.clone().into()]);
    let output = run(launcher.command("http_client", args)).await;
    assert_passed(
        &output,
        &[],
        &format!(
            "http_client {mode} {kind}\n--- server ---\n{}",
            server.output()
        ),
    );
}

/// oxmcp's HTTP server told to answer in JSON only (`HttpServerOptions::json_response`),
/// in-process with the conformance fixture, driven by the script in legacy mode (through the
/// recording proxy). The progress and log messages of a request are dropped (there is no
/// stream to carry them); the tools that ask the client must still get their answer.
pub async fn drives_oxmcp_answering_in_json(sdk: &'static Sdk) {
    if let Some(why) = sdk.gap("http_client_json") {
        return skip(why);
    }
    let Some((launcher, mut args)) = client_for(sdk, "legacy") else {
        return;
    };
    let server =
        crate::common::fixture::build(oxmcp::server::Server::builder("oxmcp-conformance", "0.0.0"))
            .expect("the fixture");
    let http = server
        .serve_http(oxmcp::transport::http::HttpServerOptions {
            json_response: true,
            ..Default::default()
        })
        .await
        .expect("serve HTTP");
    let proxy = Proxy::start(&http.url()).await;
    args.extend(["json".into(), proxy.url_for(&http.url()).into()]);
    let output = run(launcher.command("http_client", args)).await;
    http.shutdown().await;
    assert_passed(
        &output,
        &[],
        &format!("http_client legacy json\n--- HTTP ---\n{}", proxy.log()),
    );
}

/// The SDK's legacy HTTP+SSE client (the 2024-11-05 transport) against oxmcp's server at
/// `/sse`.
pub async fn legacy_sse_drives_oxmcp(sdk: &'static Sdk) {
    let Some((launcher, mut args)) = client_for(sdk, "legacy") else {
        return;
    };
    let server = conformance_server(false).await;
    let url = server.url.replace("/mcp", "/sse");
    args.extend(["sse".into(), url.into()]);
    let output = run(launcher.command("http_client", args)).await;
    assert_passed(
        &output,
        &[],
        &format!(
            "http_client legacy sse\n--- server ---\n{}",
            server.output()
        ),
    );
}

/// The script's checks are real: pointed at a server that is not the conformance server
/// (the SDK's own, over HTTP), it fails and says why.
pub async fn rejects_another_server(sdk: &'static Sdk) {
    let Some((launcher, mut args)) = client_for(sdk, "legacy") else {
        return;
    };
    let server = sdk_server(sdk, &launcher, App::Features, Flavour::Sessions).await;
    args.extend(["stateful".into(), server.url.clone().into()]);
    let output = run(launcher.command("http_client", args)).await;
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    sdk.mismatch.assert_reported(
        &stderr,
        "serverInfo.name",
        "oxmcp-conformance",
        sdk.http.features_name,
    );
}
