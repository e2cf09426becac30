//! The conformance fixture server (see `conformance/fixture.rs`):
//!
//! - over stdio: `cargo run --release --example conformance_server`
//! - over Streamable HTTP: `cargo run --release --example conformance_server -- --http --port N`
//!   (endpoint `http://127.0.0.1:N/mcp`; `--stateless` serves without sessions)
//! - over WebSocket: `-- --ws --port N` (endpoint `ws://127.0.0.1:N/mcp`); with `--http` too,
//!   both on the one port and path
//! - scaled out over several replicas (built with `--features redis`): add
//!   `--store redis://HOST:PORT/` to share sessions through Redis, and `--state-key HEX`
//!   (64 hex digits) so every replica signs and checks multi round-trip request state alike;
//!   `--json-response` answers POSTs with JSON only (the GET stream then carries the rest)
//! - `--task-lease-ms N`: how long a task's replica is trusted without renewing its lease (the
//!   scale-out tests kill a replica and wait for its tasks to be failed)

#[path = "conformance/fixture.rs"]
mod fixture;
#[path = "conformance/stderr_log.rs"]
mod stderr_log;

use oxmcp::{
    server::Server,
    transport::{
        http::HttpServerOptions,
        ws::{WsServerOptions, WsSettings},
    },
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    stderr_log::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| -> Result<Option<&String>, String> {
        match args.iter().position(|a| a == flag) {
            Some(i) => args
                .get(i + 1)
                .map(Some)
                .ok_or_else(|| format!("{flag} needs a value")),
            None => Ok(None),
        }
    };
    let mut builder = Server::builder("oxmcp-conformance", env!("CARGO_PKG_VERSION"));
    if let Some(hex) = value("--state-key")? {
        builder = builder.request_state_key(parse_key(hex)?);
    }
    if let Some(ms) = value("--task-lease-ms")? {
        builder = builder.task_options(oxmcp::server::TaskOptions {
            lease: std::time::Duration::from_millis(ms.parse()?),
            ..Default::default()
        });
    }
    let server = fixture::build(builder)?;
    if value("--store")?.is_some() {
        add_scale_out_tools(&server)?;
    }
    let http = args.iter().any(|a| a == "--http");
    let ws = args.iter().any(|a| a == "--ws");
    if !http && !ws {
        server.serve_stdio().await?;
        return Ok(());
    }
    let port = match value("--port")? {
        Some(port) => port.parse()?,
        None => 3000,
    };
    if !http {
        let ws = server.serve_ws(WsServerOptions::port(port)).await?;
        eprintln!("conformance server listening on {}", ws.url());
        tokio::signal::ctrl_c().await?;
        ws.shutdown().await;
        return Ok(());
    }
    let mut options = HttpServerOptions::port(port);
    options.websocket = ws.then(WsSettings::default);
    options.stateless = args.iter().any(|a| a == "--stateless");
    options.sse_retry = std::time::Duration::from_millis(500);
    options.json_response = args.iter().any(|a| a == "--json-response");
    if let Some(url) = value("--store")? {
        options.shared_store = Some(oxmcp::transport::http::store::connect(url).await?);
    }
    let http = server.serve_http(options).await?;
    eprintln!("conformance server listening on {}", http.url());
    if ws {
        eprintln!("conformance server listening on {}", http.ws_url());
    }
    tokio::signal::ctrl_c().await?;
    http.shutdown().await;
    Ok(())
}

/// 64 hex digits → the 32-byte request-state key.
fn parse_key(hex: &str) -> Result<[u8; 32], String> {
    let bad = || format!("--state-key needs 64 hex digits (32 bytes), got `{hex}`");
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(key)
}

/// Scale-out only: a change made on one replica that listeners on the others must hear of.
fn add_scale_out_tools(server: &Server) -> oxmcp::Result<()> {
    use oxmcp::{
        protocol::{CallToolResult, Tool},
        server::Context,
    };
    use serde_json::{Value, json};
    let this = server.clone();
    server.add_tool(
        Tool::new(
            "scale_out_touch",
            "Marks a resource as updated (its subscribers, on every replica, are told)",
            json!({"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]}),
        ),
        move |args: Value, _c: Context| {
            let this = this.clone();
            async move {
                let uri = args["uri"].as_str().unwrap_or_default().to_owned();
                this.notify_resource_updated(&uri);
                Ok(CallToolResult::text(format!("touched {uri}")))
            }
        },
    )
}
