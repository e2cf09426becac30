//! The conformance fixture server (see `conformance/fixture.rs`), over stdio:
//! `cargo run --release --example conformance_server`.

#[path = "conformance/fixture.rs"]
mod fixture;

use oxmcp::server::Server;

#[tokio::main]
async fn main() -> oxmcp::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let server = fixture::build(Server::builder(
        "oxmcp-conformance",
        env!("CARGO_PKG_VERSION"),
    ))?;
    server.serve_stdio().await
}
