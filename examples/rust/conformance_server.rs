//! The conformance fixture server (see `conformance/fixture.rs`):
//!
//! - over stdio: `cargo run --release --example conformance_server`
//! - over Streamable HTTP: `cargo run --release --example conformance_server -- --http --port N`
//!   (endpoint `http://127.0.0.1:N/mcp`; `--stateless` serves without sessions)

#[path = "conformance/fixture.rs"]
mod fixture;

use oxmcp::{server::Server, transport::http::HttpServerOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--http") {
        server.serve_stdio().await?;
        return Ok(());
    }
    let port = match args.iter().position(|a| a == "--port") {
        Some(i) => args.get(i + 1).ok_or("--port needs a value")?.parse()?,
        None => 3000,
    };
    let mut options = HttpServerOptions::port(port);
    options.stateless = args.iter().any(|a| a == "--stateless");
    options.sse_retry = std::time::Duration::from_millis(500);
    let http = server.serve_http(options).await?;
    eprintln!("conformance server listening on {}", http.url());
    tokio::signal::ctrl_c().await?;
    http.shutdown().await;
    Ok(())
}
