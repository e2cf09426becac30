//! oxmcp's client as a user would write it, calling `echo` on the server command given as
//! arguments: 200 warm-up calls, then sequential calls, then batches of 16 concurrent calls.
//! Prints one JSON line with calls/s and this process's CPU per call for each.

use oxmcp::{
    client::{Client, ClientOptions},
    transport::child::ChildCommand,
};
use oxmcp_bench::client_timing::time_calls;
use serde_json::json;

fn main() -> oxmcp::Result<()> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let mut command = ChildCommand::new(&argv[0]);
        command = command.args(&argv[1..]);
        let client = Client::connect_child(command, ClientOptions::new("bench", "1.0")).await?;
        let args = json!({"text": "hello from the benchmark"});
        time_calls(|| client.call_tool("echo", args.clone())).await?;
        client.close().await;
        Ok(())
    })
}
