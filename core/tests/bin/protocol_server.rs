//! The protocol tests' server as a real stdio process: the same test tools as
//! `tests/common` (echo, sleep, progress, tick, wait_for_cancel, …), with the events the tools
//! observe written to stderr as `probe: <event>` so a test can read them from the child's
//! stderr ring.
//!
//! `protocol_server [--versions 2025-06-18,2026-07-28] [--mutator]`
//!
//! `--mutator` adds the tool `mutate`, which changes the server while a client watches: it
//! registers a new tool, prompt and resource, and updates `test://watched` three times (so a
//! test can make a real process change itself in the middle of a handshake).

#[path = "../common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use oxmcp::{
    ProtocolVersion,
    protocol::{CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool},
    server::Server,
};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> oxmcp::Result<()> {
    let mut builder = Server::builder("protocol-server", "1.0.0").instructions("test instructions");
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--versions") {
        let list = args.get(i + 1).map(String::as_str).unwrap_or_default();
        let versions: Vec<ProtocolVersion> =
            list.split(',').filter_map(ProtocolVersion::parse).collect();
        builder = builder.protocol_versions(versions);
    }
    let probe = common::Probe::to_stderr();
    let server = common::test_server_with(builder, &probe);
    if args.iter().any(|a| a == "--mutator") {
        add_mutator(&server)?;
    }
    server.serve_stdio().await
}

/// The `mutate` tool (see the module doc). It holds the server it changes: this process
/// lives as long as the server does anyway.
fn add_mutator(server: &Server) -> oxmcp::Result<()> {
    static ROUND: AtomicU64 = AtomicU64::new(0);
    let this = server.clone();
    server.add_tool(
        Tool::new("mutate", "Changes the server", json!({"type": "object"})),
        move |_args: Value, _ctx| {
            let server = this.clone();
            async move {
                let n = ROUND.fetch_add(1, Ordering::Relaxed);
                server
                    .add_tool(
                        Tool::new(
                            format!("added_{n}"),
                            "Added by mutate",
                            json!({"type": "object"}),
                        ),
                        |_a: Value, _c| async move { Ok(CallToolResult::text("added")) },
                    )
                    .map_err(|e| oxmcp::server::ToolError::failed(e.to_string()))?;
                server
                    .add_prompt(
                        Prompt::new(format!("added_{n}"), "Added by mutate", vec![]),
                        |_a, _c| async move { Ok(GetPromptResult::default()) },
                    )
                    .map_err(|e| oxmcp::server::ToolError::failed(e.to_string()))?;
                server.add_resource(
                    Resource::new(format!("test://added/{n}"), "added"),
                    |uri: String, _v, _c| async move {
                        Ok(ReadResourceResult::text(uri, None, "added"))
                    },
                );
                for _ in 0..3 {
                    server.notify_resource_updated("test://watched");
                }
                Ok(CallToolResult::text(format!("mutated {n}")))
            }
        },
    )
}
