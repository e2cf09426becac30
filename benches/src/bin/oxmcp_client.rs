//! oxmcp's client as a user would write it, calling `echo` on the server command given as
//! arguments: 200 warm-up calls, then sequential calls, then batches of 16 concurrent calls.
//! Prints one JSON line with calls/s and this process's CPU per call for each.

use std::time::Instant;

use oxmcp::{
    client::{Client, ClientOptions},
    transport::child::ChildCommand,
};
use oxmcp_bench::{StopRule, self_cpu_us};
use serde_json::json;

fn main() -> oxmcp::Result<()> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let rule = StopRule::from_env();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let mut command = ChildCommand::new(&argv[0]);
        command = command.args(&argv[1..]);
        let client = Client::connect_child(command, ClientOptions::new("bench", "1.0")).await?;
        let args = json!({"text": "hello from the benchmark"});
        for _ in 0..200 {
            client.call_tool("echo", args.clone()).await?;
        }
        let (cpu0, t0) = (self_cpu_us(), Instant::now());
        let mut seq = 0u64;
        while !rule.done(seq, t0.elapsed().as_secs_f64()) {
            client.call_tool("echo", args.clone()).await?;
            seq += 1;
        }
        let (seq_secs, seq_cpu) = (t0.elapsed().as_secs_f64(), self_cpu_us() - cpu0);
        let (cpu1, t1) = (self_cpu_us(), Instant::now());
        let mut conc = 0u64;
        while !rule.done(conc, t1.elapsed().as_secs_f64()) {
            let batch = (0..16).map(|_| client.call_tool("echo", args.clone()));
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
        client.close().await;
        Ok(())
    })
}
