//! The README's Rust server: one tool, `get_weather(city)`, over stdio.
//! tests/docs/snippets.py checks that the README shows this file as it is.

use oxmcp::protocol::{CallToolResult, Tool};
use oxmcp::server::Server;
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> oxmcp::Result<()> {
    let server = Server::builder("weather", "1.0.0").build();
    let city = json!({"type": "string"});
    let input = json!({"type": "object", "properties": {"city": city}, "required": ["city"]});
    let tool = Tool::new("get_weather", "Current weather for a city", input);
    server.add_tool(tool, |args: Value, _ctx| async move {
        let city = args["city"].as_str().unwrap_or_default().to_owned();
        Ok(CallToolResult::text(format!("{city}: clear, 21 °C")))
    })?;
    server.serve_stdio().await
}
