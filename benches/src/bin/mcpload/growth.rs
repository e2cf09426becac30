//! How a server's cost grows with the work, for the growth rows of `make bench`: the size of a
//! result (payload), the size of its tool catalogue, and the number of clients calling at once.
//! A flat line (per-byte, per-tool or per-client cost that stays put) is the aim; a curve that
//! bends is a finding for `benches/NOTES.md`.

use std::time::Instant;

use oxmcp_bench::{StopRule, proc_stats::memory_kib};
use serde_json::{Value, json};

use crate::{
    BoxError, HttpSession, StdioPeer, kill, reap, spawn, spawn_with, start_http, stdio_seq,
};

/// The result sizes measured: `echo` returns its argument, so the request carries as much.
const PAYLOADS: [(&str, usize); 3] = [
    ("payload-1k", 1 << 10),
    ("payload-64k", 64 << 10),
    ("payload-1m", 1 << 20),
];

/// stdio: sequential `echo` calls with 1 KiB, 64 KiB and 1 MiB texts, one scenario each.
pub(crate) fn payload(
    command: &[String],
    cpu: Option<usize>,
    rule: StopRule,
) -> Result<(), BoxError> {
    let mut child = spawn(command, cpu, None, true)?;
    let pid = child.id();
    let mut peer = StdioPeer::of(&mut child)?;
    peer.handshake(Instant::now())?;
    let mut next_id = 2u64;
    for (scenario, size) in PAYLOADS {
        let text = "x".repeat(size);
        // A few warm-up calls: at 1 MiB the slowest servers manage tens of calls a second.
        stdio_seq(&mut peer, pid, &text, rule, 10, &mut next_id)?.report(scenario);
    }
    drop(peer);
    reap(child, std::time::Duration::from_secs(10));
    Ok(())
}

/// stdio: the server registers `tools` tools besides `echo` (it reads `BENCH_TOOLS`). Reports
/// the time to list them all (following `nextCursor`), the pages it took, and the RSS they
/// cost: the same server without them is started first as the base.
pub(crate) fn catalogue(
    command: &[String],
    cpu: Option<usize>,
    rule: StopRule,
    tools: usize,
) -> Result<(), BoxError> {
    let base_kib = {
        let mut child = spawn_with(command, cpu, None, true, &[("BENCH_TOOLS", "0".into())])?;
        let mut peer = StdioPeer::of(&mut child)?;
        peer.handshake(Instant::now())?;
        let (rss, _) = memory_kib(child.id());
        drop(peer);
        reap(child, std::time::Duration::from_secs(10));
        rss
    };
    let started = Instant::now();
    let mut child = spawn_with(
        command,
        cpu,
        None,
        true,
        &[("BENCH_TOOLS", tools.to_string())],
    )?;
    let pid = child.id();
    let mut peer = StdioPeer::of(&mut child)?;
    let startup_ms = peer.handshake(started)?;
    let (rss_kib, _) = memory_kib(pid);
    let mut next_id = 2u64;
    let mut list_all = |peer: &mut StdioPeer| -> Result<(usize, usize), BoxError> {
        let (mut listed, mut pages, mut cursor) = (0usize, 0usize, None::<String>);
        loop {
            let mut params = json!({});
            if let Some(c) = &cursor {
                params["cursor"] = json!(c);
            }
            let id = next_id;
            next_id += 1;
            let request =
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
            peer.send(&request.to_string())?;
            let reply = peer.answer()?;
            if reply.id != Some(id) {
                return Err(format!("tools/list answered id {:?}, expected {id}", reply.id).into());
            }
            let result = reply
                .result
                .ok_or_else(|| format!("tools/list failed: {:?}", reply.error))?;
            listed += result["tools"].as_array().map_or(0, Vec::len);
            pages += 1;
            cursor = result
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if cursor.is_none() || pages > tools + 1 {
                return Ok((listed, pages));
            }
        }
    };
    let (listed, pages) = list_all(&mut peer)?;
    if listed != tools + 1 {
        return Err(format!("listed {listed} tools, expected {}", tools + 1).into());
    }
    let t0 = Instant::now();
    let mut listings = 0u64;
    let mut times_ms = Vec::new();
    // A full listing is a large unit of work: at least three, then by the clock.
    while listings < 3 || !rule.done(rule.min_calls, t0.elapsed().as_secs_f64()) {
        let t = Instant::now();
        list_all(&mut peer)?;
        times_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        listings += 1;
    }
    times_ms.sort_by(f64::total_cmp);
    let (_, peak_kib) = memory_kib(pid);
    println!(
        "{}",
        json!({"scenario": format!("catalogue-{tools}"), "tools": listed, "pages": pages,
               "list_ms": times_ms[times_ms.len() / 2], "listings": listings,
               "startup_ms": startup_ms, "rss_kib": rss_kib, "base_kib": base_kib,
               "peak_rss_kib": peak_kib,
               "bytes_per_tool": (rss_kib.saturating_sub(base_kib) * 1024) as f64 / tools as f64})
    );
    drop(peer);
    reap(child, std::time::Duration::from_secs(10));
    Ok(())
}

/// Streamable HTTP: `clients` sessions at a time (each its own keep-alive connection), all
/// calling `echo` at once; one scenario per count, the sessions of a smaller count reused.
pub(crate) async fn concurrency(
    command: &[String],
    cpu: Option<usize>,
    rule: StopRule,
    clients: Vec<usize>,
) -> Result<(), BoxError> {
    let (child, port, _, first) = start_http(command, cpu).await?;
    let pid = child.id();
    let result = async {
        let mut sessions = vec![first];
        for count in clients {
            while sessions.len() < count {
                let mut s = HttpSession::connect(port).await?;
                s.handshake().await?;
                sessions.push(s);
            }
            for s in &mut sessions {
                s.echo(1, crate::SMALL).await?;
            }
            crate::concurrent(&mut sessions[..count], pid, rule)
                .await?
                .report(&format!("conc-{count}"));
        }
        Ok::<_, BoxError>(())
    }
    .await;
    kill(child);
    result
}
