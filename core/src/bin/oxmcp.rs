//! The `oxmcp` command; the code is `oxmcp::cli`, shared with the bindings' console scripts.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    ExitCode::from(oxmcp::cli::run(std::env::args().skip(1).collect()).await)
}
