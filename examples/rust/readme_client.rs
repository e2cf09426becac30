//! The README's Rust client: starts the README's server with cargo and calls `get_weather`.
//! tests/docs/snippets.py checks that the README shows this file as it is, and runs it.

use oxmcp::client::{Client, ClientOptions};
use oxmcp::transport::child::ChildCommand;
use serde_json::json;

#[tokio::main]
async fn main() -> oxmcp::Result<()> {
    let server = ChildCommand::new("cargo").args(["run", "-q", "--example", "readme_server"]);
    let client = Client::connect_child(server, ClientOptions::new("readme", "1.0.0")).await?;
    let tools = client.list_all_tools().await?;
    let args = json!({"city": "Paris"});
    let result = client.call_tool("get_weather", args).await?;
    println!("{} tool(s); {}", tools.len(), result.text_content());
    client.close().await;
    Ok(())
}
