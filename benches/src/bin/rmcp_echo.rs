//! The `echo` tool served by rmcp 3.11 (the official Rust SDK) as its examples show:
//! `stdio` (its documented default transport), `pipes` (`stdio_pipes()`, opt-in), or
//! `http PORT` (`StreamableHttpService` on hyper, with TCP_NODELAY set: without it every call
//! stalls 44 ms on Nagle, see research/bench.md).

use rmcp::{
    ServiceExt,
    handler::server::wrapper::Parameters,
    schemars, tool, tool_router,
    transport::streamable_http_server::{
        StreamableHttpService, session::local::LocalSessionManager,
    },
};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Debug, Clone)]
struct Echo;

#[tool_router(server_handler)]
impl Echo {
    #[tool(description = "Echo the text")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("pipes") => {
            let service = Echo.serve(rmcp::transport::stdio_pipes()).await?;
            service.waiting().await?;
        }
        Some("http") => {
            let port: u16 = args.get(2).and_then(|p| p.parse().ok()).unwrap_or(0);
            let service =
                hyper_util::service::TowerToHyperService::new(StreamableHttpService::new(
                    || Ok(Echo),
                    LocalSessionManager::default().into(),
                    Default::default(),
                ));
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            loop {
                let (stream, _) = listener.accept().await?;
                stream.set_nodelay(true)?;
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        }
        _ => {
            let service = Echo.serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
        }
    }
    Ok(())
}
