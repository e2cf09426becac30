//! Spawns the weather server as a child process and walks through a session: the era probe
//! and handshake, `tools/list`, a `tools/call` and its result.
//!
//! `cargo run --release --example weather_client [-- SERVER_COMMAND [ARGS...]]`
//! Without arguments it runs the `weather_server` example built next to it.

use oxmcp::{
    client::{Client, ClientOptions},
    transport::child::ChildCommand,
};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args_os().skip(1);
    let command = match argv.next() {
        Some(program) => ChildCommand::new(program).args(argv),
        None => {
            let exe = std::env::current_exe()?;
            let dir = exe.parent().ok_or("the client has no directory")?;
            ChildCommand::new(dir.join("weather_server"))
        }
    };
    println!("$ {}", command.display());

    let client = Client::connect_child(
        command,
        ClientOptions::new("weather-client", env!("CARGO_PKG_VERSION")),
    )
    .await?;
    let server = client.server();
    println!("\n== handshake");
    println!("protocol version: {}", server.protocol_version);
    println!(
        "era:              {}",
        if server.protocol_version.is_stateless() {
            "stateless (server/discover)"
        } else {
            "handshake (initialize)"
        }
    );
    println!(
        "server:           {} {}",
        server.info.name, server.info.version
    );
    println!(
        "capabilities:     {}",
        serde_json::to_string(&server.capabilities)?
    );
    if let Some(instructions) = &server.instructions {
        println!("instructions:     {instructions}");
    }

    println!("\n== tools/list");
    let tools = client.list_all_tools().await?;
    for tool in &tools {
        println!(
            "- {}: {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
        println!(
            "  inputSchema: {}",
            serde_json::to_string(&tool.input_schema)?
        );
    }

    println!("\n== tools/call get_weather {{\"city\": \"Oslo\"}}");
    let result = client
        .call_tool("get_weather", json!({"city": "Oslo"}))
        .await?;
    println!("isError: {}", result.is_error());
    println!("text: {}", result.text_content());
    if let Some(structured) = &result.structured_content {
        println!("structuredContent: {structured}");
    }

    println!(
        "\n== tools/call get_weather {{\"city\": \"Atlantis\"}} (a tool failure, not a protocol error)"
    );
    let result = client
        .call_tool("get_weather", json!({"city": "Atlantis"}))
        .await?;
    println!("isError: {}", result.is_error());
    println!("text: {}", result.text_content());

    client.close().await;
    println!("\nserver shut down cleanly");
    Ok(())
}
