//! rmcp 3.11's client (the official Rust SDK) calling `echo` on the server command given as
//! arguments, exactly as `oxmcp_client` does: warm-up, sequential, batches of 16 concurrent.

use std::time::Instant;

use oxmcp_bench::{StopRule, self_cpu_us};
use rmcp::{ServiceExt, model::CallToolRequestParams, transport::TokioChildProcess};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let rule = StopRule::from_env();
    let mut command = tokio::process::Command::new(&argv[0]);
    command.args(&argv[1..]);
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let mut arguments = serde_json::Map::new();
    arguments.insert("text".into(), json!("hello from the benchmark"));
    let params = || CallToolRequestParams::new("echo").with_arguments(arguments.clone());
    for _ in 0..200 {
        client.call_tool(params()).await?;
    }
    let (cpu0, t0) = (self_cpu_us(), Instant::now());
    let mut seq = 0u64;
    while !rule.done(seq, t0.elapsed().as_secs_f64()) {
        client.call_tool(params()).await?;
        seq += 1;
    }
    let (seq_secs, seq_cpu) = (t0.elapsed().as_secs_f64(), self_cpu_us() - cpu0);
    let (cpu1, t1) = (self_cpu_us(), Instant::now());
    let mut conc = 0u64;
    while !rule.done(conc, t1.elapsed().as_secs_f64()) {
        let batch = (0..16).map(|_| client.call_tool(params()));
        for r in futures::future::join_all(batch).await {
            r?;
        }
        conc += 16;
    }
    let (conc_secs, conc_cpu) = (t1.elapsed().as_secs_f64(), self_cpu_us() - cpu1);
    println!(
        "{}",
        json!({
            "seq_calls_s": seq as f64 / seq_secs, "seq_cpu_us": seq_cpu as f64 / seq as f64,
            "conc16_calls_s": conc as f64 / conc_secs, "conc16_cpu_us": conc_cpu as f64 / conc as f64,
        })
    );
    client.cancel().await?;
    Ok(())
}
