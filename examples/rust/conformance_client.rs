//! The conformance client: what the official suite's client scenarios drive.
//!
//! `conformance_client URL`, with the scenario in `MCP_CONFORMANCE_SCENARIO` (the harness sets
//! it and appends the URL of its mock server). Exits non-zero when the scenario fails on our
//! side.

#[path = "conformance/stderr_log.rs"]
mod stderr_log;

use std::sync::Arc;

use oxmcp::{
    auth::{
        ClientAssertionKey, ClientCredentials, EnterpriseIdentity, Grant, OAuthClient,
        OAuthOptions, TargetPolicy,
    },
    client::{Client, ClientOptions},
    protocol::ElicitResult,
    transport::http::HttpClientOptions,
};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    stderr_log::init();
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: conformance_client URL")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let options = ClientOptions::new("oxmcp-conformance-client", env!("CARGO_PKG_VERSION"))
        // Accept with no values: the client fills in the schema's defaults (SEP-1034).
        .elicitation(|_params, _cancel| async move { Ok(ElicitResult::accept(json!({}))) });
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let mut http = HttpClientOptions::default();
    if scenario.starts_with("auth/") {
        http.auth = Some(Arc::new(OAuthClient::new(oauth_options(&context)?)?));
    }
    let client = Client::connect_http(&url, options, http).await?;
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
        "json-schema-2020-12-preservation" => {
            // Echo the focal tool's schema exactly as this client holds it, so the harness can
            // see that no keyword was lost in parsing.
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("server did not list json_schema_2020_12_tool")?;
            let r = client
                .call_tool(
                    "json_schema_echo",
                    json!({ "schema": focal.input_schema.clone() }),
                )
                .await?;
            eprintln!("json_schema_echo: {}", r.text_content());
        }
        "sse-retry" => {
            let r = client.call_tool("test_reconnection", json!({})).await?;
            eprintln!("reconnection: {}", r.text_content());
        }
        _ => {
            // The harness may say which calls to make (`MCP_CONFORMANCE_CONTEXT.toolCalls`);
            // otherwise call every listed tool without arguments, the most any client can do.
            let planned: Vec<(String, Value)> = match context["toolCalls"].as_array() {
                Some(calls) => calls
                    .iter()
                    .filter_map(|c| Some((c["name"].as_str()?.to_owned(), c["arguments"].clone())))
                    .collect(),
                None => tools.iter().map(|t| (t.name.clone(), json!({}))).collect(),
            };
            for (name, arguments) in planned {
                if !tools.iter().any(|t| t.name == name) {
                    eprintln!("{name}: not offered by the server (or refused), not called");
                    continue;
                }
                let r = client.call_tool(&name, arguments).await?;
                eprintln!("{name}: {}", r.text_content());
            }
        }
    }
    client.close().await;
    Ok(())
}

/// The OAuth settings a scenario's context asks for.
fn oauth_options(context: &Value) -> Result<OAuthOptions, Box<dyn std::error::Error>> {
    let mut o = OAuthOptions::new("oxmcp-conformance-client", "http://localhost:3000/callback");
    o.targets = TargetPolicy::public_only().allow_loopback();
    o.client_metadata_url = Some("https://conformance-test.local/client-metadata.json".into());
    let text = |k: &str| context[k].as_str().map(str::to_owned);
    // 0.1.16 names no context for the SEP-990 scenario; its fields say what it is.
    if let Some(id_token) = text("idp_id_token") {
        o.grant = Grant::EnterpriseManaged(EnterpriseIdentity {
            idp_token_endpoint: text("idp_token_endpoint")
                .ok_or("context: no idp_token_endpoint")?,
            idp_client_id: text("idp_client_id").ok_or("context: no idp_client_id")?,
            id_token,
        });
        let id = text("client_id").ok_or("context: no client_id")?;
        let secret = text("client_secret").ok_or("context: no client_secret")?;
        o.client = Some(ClientCredentials::confidential(id, secret));
        return Ok(o);
    }
    match context["name"].as_str().unwrap_or_default() {
        "auth/pre-registration" => {
            let id = text("client_id").ok_or("context: no client_id")?;
            o.client = Some(match text("client_secret") {
                Some(secret) => ClientCredentials::confidential(id, secret),
                None => ClientCredentials::public(id),
            });
        }
        "auth/client-credentials-basic" => {
            o.grant = Grant::ClientCredentials;
            let id = text("client_id").ok_or("context: no client_id")?;
            let secret = text("client_secret").ok_or("context: no client_secret")?;
            o.client = Some(ClientCredentials::confidential(id, secret));
        }
        "auth/client-credentials-jwt" => {
            o.grant = Grant::ClientCredentials;
            let id = text("client_id").ok_or("context: no client_id")?;
            let pem = text("private_key_pem").ok_or("context: no private_key_pem")?;
            o.signing_key = Some(Arc::new(ClientAssertionKey::es256_from_pem(&pem, None)?));
            o.client = Some(ClientCredentials::public(id));
        }
        _ => {}
    }
    Ok(o)
}
