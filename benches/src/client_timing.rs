//! The measurement every Rust client benchmark makes, so that their rows compare like with
//! like (and with the Python and Node clients, which do the same): 200 warm-up calls, then
//! sequential calls, then batches of 16 concurrent calls, each phase until the [`StopRule`];
//! then one JSON line on stdout with calls/s and this process's CPU per call for each.

use std::{future::Future, time::Instant};

use serde_json::json;

use crate::{StopRule, self_cpu_us};

/// How many calls a concurrent batch makes at once.
const BATCH: u64 = 16;

/// Times `call` (one `echo` call) and prints the rates; the first failing call ends it.
pub async fn time_calls<F, Fut, T, E>(call: F) -> Result<(), E>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let rule = StopRule::from_env();
    for _ in 0..200 {
        call().await?;
    }
    let (cpu0, t0) = (self_cpu_us(), Instant::now());
    let mut seq = 0u64;
    while !rule.done(seq, t0.elapsed().as_secs_f64()) {
        call().await?;
        seq += 1;
    }
    let (seq_secs, seq_cpu) = (t0.elapsed().as_secs_f64(), self_cpu_us() - cpu0);
    let (cpu1, t1) = (self_cpu_us(), Instant::now());
    let mut conc = 0u64;
    while !rule.done(conc, t1.elapsed().as_secs_f64()) {
        for r in futures::future::join_all((0..BATCH).map(|_| call())).await {
            r?;
        }
        conc += BATCH;
    }
    let (conc_secs, conc_cpu) = (t1.elapsed().as_secs_f64(), self_cpu_us() - cpu1);
    println!(
        "{}",
        json!({
            "seq_calls_s": seq as f64 / seq_secs, "seq_cpu_us": seq_cpu as f64 / seq as f64,
            "conc16_calls_s": conc as f64 / conc_secs, "conc16_cpu_us": conc_cpu as f64 / conc as f64,
        })
    );
    Ok(())
}
