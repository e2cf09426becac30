//! The protocol tests' server as a real stdio process: the same test tools as
//! `tests/common` (echo, sleep, progress, tick, wait_for_cancel, …), with the events the tools
//! observe written to stderr as `probe: <event>` so a test can read them from the child's
//! stderr ring.
//!
//! `protocol_server [--versions 2025-06-18,2026-07-28]`

#[path = "../common/mod.rs"]
mod common;

use oxmcp::{ProtocolVersion, server::Server};

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
    server.serve_stdio().await
}
