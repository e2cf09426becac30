//! The `oxmcp` command for the npm package's `bin`: `oxmcp::cli::run` on the addon's runtime,
//! so `npx oxmcp tools --config mcp.json` is the very CLI the Rust binary and the wheel ship.
//!
//! It runs as a native async task, off the JavaScript thread; it writes to the process's own
//! stdout and stderr (JSON on stdout, everything for the human on stderr) and resolves with the
//! exit code, which `lib/cli.cjs` passes to `process.exitCode`.

use napi_derive::napi;

/// Runs the command line `argv` (without the program name); resolves with the exit code.
#[napi]
pub async fn run_cli(argv: Vec<String>) -> u32 {
    let code = oxmcp::cli::run(argv).await;
    // Rust's stdout buffers up to a newline and an addon has no exit hook that flushes it.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    u32::from(code)
}
