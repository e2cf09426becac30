//! The `echo` tool served by oxmcp as a user would write it: stdio by default,
//! `--http PORT [--json]` for Streamable HTTP (SSE answers, or JSON with `--json`), and
//! `--store redis://HOST:PORT/` to keep sessions in Redis (the scale-out rows). With
//! `BENCH_TOOLS=N` it registers N more tools (the catalogue rows).

use oxmcp::{
    protocol::{CallToolResult, Tool},
    server::Server,
    transport::http::HttpServerOptions,
};
use serde_json::{Value, json};

fn main() -> oxmcp::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let http_port = args
        .iter()
        .position(|a| a == "--http")
        .and_then(|i| args.get(i + 1))
        .and_then(|p| p.parse::<u16>().ok());
    let json_response = args.iter().any(|a| a == "--json");
    let store = args
        .iter()
        .position(|a| a == "--store")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let server = Server::builder("echo", "1.0.0").build();
        server.add_tool(
            Tool::new(
                "echo",
                "Echo the text",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            ),
            |args: Value, _ctx| async move {
                Ok(CallToolResult::text(
                    args.get("text").and_then(Value::as_str).unwrap_or_default(),
                ))
            },
        )?;
        let extra: usize = std::env::var("BENCH_TOOLS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        for i in 0..extra {
            server.add_tool(
                Tool::new(
                    format!("tool_{i}"),
                    format!("Tool number {i} of the catalogue"),
                    json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
                ),
                move |_args: Value, _ctx| async move { Ok(CallToolResult::text(i.to_string())) },
            )?;
        }
        match http_port {
            None => server.serve_stdio().await,
            Some(port) => {
                let mut options = HttpServerOptions::port(port);
                options.json_response = json_response;
                // The idle-session benchmark opens 10,000 sessions besides its own.
                options.max_sessions = 20_000;
                if let Some(url) = &store {
                    options.shared_store = Some(oxmcp::transport::http::store::connect(url).await?);
                }
                let http = server.serve_http(options).await?;
                eprintln!("listening on {}", http.url());
                std::future::pending::<()>().await;
                Ok(())
            }
        }
    })
}
