//! rmcp 3.11's client (the official Rust SDK) calling `echo` on the server command given as
//! arguments, exactly as `oxmcp_client` does: warm-up, sequential, batches of 16 concurrent.

use oxmcp_bench::client_timing::time_calls;
use rmcp::{ServiceExt, model::CallToolRequestParams, transport::TokioChildProcess};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut command = tokio::process::Command::new(&argv[0]);
    command.args(&argv[1..]);
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let mut arguments = serde_json::Map::new();
    arguments.insert("text".into(), json!("hello from the benchmark"));
    let params = || CallToolRequestParams::new("echo").with_arguments(arguments.clone());
    time_calls(|| client.call_tool(params())).await?;
    client.cancel().await?;
    Ok(())
}
