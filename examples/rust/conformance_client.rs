//! The conformance client: what the official suite's client scenarios drive.
//!
//! `conformance_client URL`, with the scenario in `MCP_CONFORMANCE_SCENARIO` (the harness sets
//! it and appends the URL of its mock server). Exits non-zero when the scenario fails on our
//! side.

use oxmcp::{
    client::{Client, ClientOptions},
    protocol::ElicitResult,
    transport::http::HttpClientOptions,
};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: conformance_client URL")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let options = ClientOptions::new("oxmcp-conformance-client", env!("CARGO_PKG_VERSION"))
        // Accept with no values: the client fills in the schema's defaults (SEP-1034).
        .elicitation(|_params, _cancel| async move { Ok(ElicitResult::accept(json!({}))) });
    let client = Client::connect_http(&url, options, HttpClientOptions::default()).await?;
    eprintln!(
        "connected: protocol {}, server {:?}",
        client.protocol_version(),
        client.server().info.name
    );
    let tools = client.list_all_tools().await?;
    match scenario.as_str() {
        "initialize" => {}
        "tools_call" => {
            let r = client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await?;
            eprintln!("add_numbers: {}", r.text_content());
        }
        "elicitation-sep1034-client-defaults" => {
            let r = client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
            eprintln!("elicitation: {}", r.text_content());
        }
        "sse-retry" => {
            let r = client.call_tool("test_reconnection", json!({})).await?;
            eprintln!("reconnection: {}", r.text_content());
        }
        _ => {
            // Unknown scenarios: call every tool without arguments, the most any client can do.
            for tool in &tools {
                let r = client.call_tool(&tool.name, json!({})).await?;
                eprintln!("{}: {}", tool.name, r.text_content());
            }
        }
    }
    client.close().await;
    Ok(())
}
