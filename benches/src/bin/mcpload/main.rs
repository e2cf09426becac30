//! The fixed load driver: raw JSON-RPC, no MCP library, so it is the same for every server and
//! never the bottleneck. It starts the server command, handshakes (2025-11-25), and measures
//! scenarios calling the server's `echo` tool, checking every reply (id, no error, the text).
//!
//! ```text
//! mcpload stdio [--pin same|split|none] -- CMD ARGS...          seq-small, seq-10k, pipe16
//! mcpload http  [--pin same|split|none] -- CMD ARGS... {port}   seq, conc8
//! mcpload sessions --counts 1000,10000 -- CMD ARGS... {port}    RSS per idle session
//! mcpload payload [--pin ..] -- CMD ARGS...                    1 KiB, 64 KiB, 1 MiB echoes
//! mcpload catalogue --tools 10000 -- CMD ARGS...               paged tools/list, RSS per tool
//! mcpload conc --clients 1,8,64,256 -- CMD ARGS... {port}       concurrent HTTP clients
//! ```
//!
//! The last three measure how cost grows with the work (see `growth.rs`).
//!
//! One JSON line per scenario goes to stdout: calls/s, p50/p99 latency, server CPU µs and
//! context switches per call (summed over the server's threads and child processes, from
//! `/proc`), plus a line with startup time (spawn to the first `initialize` answer) and RSS.
//! The stop rule is `BENCH_MIN_CALLS` / `BENCH_MIN_SECS` / `BENCH_MAX_SECS` (10,000 calls and
//! 1 s, at most 3 s), after 200 warm-up calls.

use std::{
    io::{BufRead, BufReader, Write},
    os::unix::process::CommandExt,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, client::conn::http1::SendRequest};
use hyper_util::rt::TokioIo;
use oxmcp_bench::{
    StopRule, pin_to_cpu,
    proc_stats::{Counters, memory_kib},
};
use serde::Deserialize;
use serde_json::{Value, json};

mod growth;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const SMALL: &str = "hello from the benchmark";

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args
        .iter()
        .position(|a| a == "--")
        .ok_or("missing `-- CMD`")?;
    let (opts, command) = (&args[..split], &args[split + 1..]);
    let mode = opts.first().map(String::as_str).unwrap_or("stdio");
    let flag = |name: &str| {
        opts.iter()
            .position(|a| a == name)
            .and_then(|i| opts.get(i + 1))
            .cloned()
    };
    let pin = flag("--pin").unwrap_or_else(|| "same".into());
    let server_cpu = match pin.as_str() {
        "same" => Some(0),
        "split" => Some(1),
        _ => None,
    };
    if server_cpu.is_some() {
        pin_to_cpu(0);
    }
    let rule = StopRule::from_env();
    match mode {
        "stdio" => stdio(command, server_cpu, rule),
        "http" => tokio_main(http(command, server_cpu, rule)),
        "sessions" => {
            let counts: Vec<usize> = flag("--counts")
                .unwrap_or_else(|| "1000".into())
                .split(',')
                .filter_map(|c| c.parse().ok())
                .collect();
            tokio_main(sessions(command, server_cpu, counts))
        }
        "payload" => growth::payload(command, server_cpu, rule),
        "catalogue" => {
            let tools = flag("--tools")
                .and_then(|t| t.parse().ok())
                .unwrap_or(10_000);
            growth::catalogue(command, server_cpu, rule, tools)
        }
        "conc" => {
            let clients: Vec<usize> = flag("--clients")
                .unwrap_or_else(|| "1,8,64,256".into())
                .split(',')
                .filter_map(|c| c.parse().ok())
                .collect();
            tokio_main(growth::concurrency(command, server_cpu, rule, clients))
        }
        other => Err(format!("unknown mode `{other}`").into()),
    }
}

fn tokio_main(
    fut: impl std::future::Future<Output = Result<(), BoxError>>,
) -> Result<(), BoxError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(fut)
}

/// Spawns the server, pinned to `cpu` when given; `{port}` in its arguments becomes `port`.
fn spawn(
    command: &[String],
    cpu: Option<usize>,
    port: Option<u16>,
    piped: bool,
) -> Result<Child, BoxError> {
    spawn_with(command, cpu, port, piped, &[])
}

/// [`spawn`] with environment variables set for the server (the catalogue's `BENCH_TOOLS`).
fn spawn_with(
    command: &[String],
    cpu: Option<usize>,
    port: Option<u16>,
    piped: bool,
    env: &[(&str, String)],
) -> Result<Child, BoxError> {
    let (program, rest) = command.split_first().ok_or("empty command")?;
    let mut cmd = Command::new(program);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    for a in rest {
        match port {
            Some(p) => cmd.arg(a.replace("{port}", &p.to_string())),
            None => cmd.arg(a),
        };
    }
    if piped {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    } else {
        cmd.stdin(Stdio::null()).stdout(Stdio::null());
    }
    cmd.stderr(Stdio::null());
    if let Some(cpu) = cpu {
        // SAFETY: only async-signal-safe work (sched_setaffinity) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                pin_to_cpu(cpu);
                Ok(())
            });
        }
    }
    Ok(cmd.spawn()?)
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Lets a stdio server exit on the EOF it was just given (so a profiler wrapping it can write
/// its output), killing it after `grace`.
fn reap(mut child: Child, grace: Duration) {
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    kill(child);
}

/// What one scenario measured.
struct Sample {
    calls: u64,
    secs: f64,
    latencies_ns: Vec<u64>,
    server: Counters,
}

impl Sample {
    fn report(mut self, scenario: &str) {
        self.latencies_ns.sort_unstable();
        let pct = |p: f64| {
            let n = self.latencies_ns.len();
            if n == 0 {
                0.0
            } else {
                self.latencies_ns[((n as f64 * p) as usize).min(n - 1)] as f64 / 1000.0
            }
        };
        println!(
            "{}",
            json!({
                "scenario": scenario,
                "calls": self.calls,
                "calls_s": self.calls as f64 / self.secs,
                "p50_us": pct(0.50),
                "p99_us": pct(0.99),
                "cpu_us": self.server.cpu_ns as f64 / 1000.0 / self.calls as f64,
                "ctxsw": self.server.switches as f64 / self.calls as f64,
            })
        );
    }
}

#[derive(Deserialize)]
struct Reply {
    id: Option<u64>,
    result: Option<Value>,
    error: Option<Value>,
}

/// Checks an `echo` answer: the id, no error, the text.
fn check(reply: &Reply, id: u64, text: &str) -> Result<(), BoxError> {
    if reply.id != Some(id) {
        return Err(format!("answer for id {:?}, expected {id}", reply.id).into());
    }
    if let Some(e) = &reply.error {
        return Err(format!("error answer: {e}").into());
    }
    let got = reply
        .result
        .as_ref()
        .and_then(|r| r.pointer("/content/0/text"))
        .and_then(Value::as_str);
    if got != Some(text) {
        return Err(format!("wrong echo for id {id}").into());
    }
    Ok(())
}

fn call(id: u64, text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": text}}})
    .to_string()
}

fn initialize(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mcpload", "version": "1.0"}}})
    .to_string()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

// ---------------------------------------------------------------------------------------
// stdio

struct StdioPeer {
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    line: String,
}

impl StdioPeer {
    /// Takes the child's pipes.
    fn of(child: &mut Child) -> Result<StdioPeer, BoxError> {
        Ok(StdioPeer {
            input: child.stdin.take().ok_or("no stdin")?,
            output: BufReader::with_capacity(256 * 1024, child.stdout.take().ok_or("no stdout")?),
            line: String::new(),
        })
    }

    /// `initialize`, `initialized`, then a `tools/list` with id 1, as a host's first steps
    /// are. Returns the ms from `started` to the `initialize` answer (the startup time).
    fn handshake(&mut self, started: Instant) -> Result<f64, BoxError> {
        self.send(&initialize(0))?;
        self.answer()?;
        let startup_ms = started.elapsed().as_secs_f64() * 1000.0;
        self.send(INITIALIZED)?;
        self.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)?;
        self.answer()?;
        Ok(startup_ms)
    }

    fn send(&mut self, line: &str) -> Result<(), BoxError> {
        self.input.write_all(line.as_bytes())?;
        self.input.write_all(b"\n")?;
        Ok(())
    }

    /// The next answer (notifications and server requests are skipped).
    fn answer(&mut self) -> Result<Reply, BoxError> {
        loop {
            self.line.clear();
            if self.output.read_line(&mut self.line)? == 0 {
                return Err("the server closed stdout".into());
            }
            let reply: Reply = serde_json::from_str(&self.line)?;
            if reply.id.is_some() && (reply.result.is_some() || reply.error.is_some()) {
                return Ok(reply);
            }
        }
    }
}

/// Sequential `echo` calls of `text` after `warmup` unmeasured ones, until the stop rule.
fn stdio_seq(
    peer: &mut StdioPeer,
    pid: u32,
    text: &str,
    rule: StopRule,
    warmup: u32,
    next_id: &mut u64,
) -> Result<Sample, BoxError> {
    for _ in 0..warmup {
        peer.send(&call(*next_id, text))?;
        check(&peer.answer()?, *next_id, text)?;
        *next_id += 1;
    }
    let before = Counters::read_tree(pid);
    let t0 = Instant::now();
    let mut latencies = Vec::with_capacity(rule.min_calls as usize * 2);
    let mut calls = 0;
    while !rule.done(calls, t0.elapsed().as_secs_f64()) {
        let t = Instant::now();
        peer.send(&call(*next_id, text))?;
        check(&peer.answer()?, *next_id, text)?;
        latencies.push(t.elapsed().as_nanos() as u64);
        *next_id += 1;
        calls += 1;
    }
    Ok(Sample {
        calls,
        secs: t0.elapsed().as_secs_f64(),
        latencies_ns: latencies,
        server: Counters::read_tree(pid).since(before),
    })
}

fn stdio(command: &[String], cpu: Option<usize>, rule: StopRule) -> Result<(), BoxError> {
    let started = Instant::now();
    let mut child = spawn(command, cpu, None, true)?;
    let pid = child.id();
    let mut peer = StdioPeer::of(&mut child)?;
    let startup_ms = peer.handshake(started)?;
    let (rss_init, _) = memory_kib(pid);
    let mut next_id = 2u64;
    stdio_seq(&mut peer, pid, SMALL, rule, 200, &mut next_id)?.report("seq-small");
    let big = "x".repeat(10 * 1024);
    stdio_seq(&mut peer, pid, &big, rule, 200, &mut next_id)?.report("seq-10k");
    // 16 in flight: one write of 16 requests, then their 16 answers in any order.
    let before = Counters::read_tree(pid);
    let t0 = Instant::now();
    let mut calls = 0u64;
    let mut latencies = Vec::new();
    while !rule.done(calls, t0.elapsed().as_secs_f64()) {
        let t = Instant::now();
        let first = next_id;
        let mut batch = String::with_capacity(16 * 160);
        for id in first..first + 16 {
            batch.push_str(&call(id, SMALL));
            batch.push('\n');
        }
        peer.input.write_all(batch.as_bytes())?;
        let mut seen = 0u32;
        for _ in 0..16 {
            let reply = peer.answer()?;
            let id = reply.id.ok_or("no id")?;
            if !(first..first + 16).contains(&id) || seen & (1 << (id - first)) != 0 {
                return Err(format!("unexpected answer id {id}").into());
            }
            seen |= 1 << (id - first);
            check(&reply, id, SMALL)?;
        }
        latencies.push(t.elapsed().as_nanos() as u64 / 16);
        next_id += 16;
        calls += 16;
    }
    Sample {
        calls,
        secs: t0.elapsed().as_secs_f64(),
        latencies_ns: latencies,
        server: Counters::read_tree(pid).since(before),
    }
    .report("pipe16-small");
    let (_, hwm) = memory_kib(pid);
    println!(
        "{}",
        json!({"scenario": "process", "startup_ms": startup_ms, "rss_init_kib": rss_init, "peak_rss_kib": hwm})
    );
    drop(peer);
    reap(child, Duration::from_secs(10));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Streamable HTTP

fn free_port() -> Result<u16, BoxError> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// One MCP session on its own keep-alive connection.
struct HttpSession {
    sender: SendRequest<Full<Bytes>>,
    port: u16,
    session: Option<String>,
}

impl HttpSession {
    async fn connect(port: u16) -> Result<HttpSession, BoxError> {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(HttpSession {
            sender,
            port,
            session: None,
        })
    }

    /// POSTs one message; returns the JSON-RPC answer (from JSON or SSE) if there is one.
    async fn post(&mut self, body: String) -> Result<Option<Reply>, BoxError> {
        let mut req = Request::post("/mcp")
            .header("host", format!("127.0.0.1:{}", self.port))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        self.sender.ready().await?;
        let resp = self
            .sender
            .send_request(req.body(Full::new(Bytes::from(body)))?)
            .await?;
        let status = resp.status();
        if let Some(id) = resp.headers().get("mcp-session-id") {
            self.session = Some(id.to_str()?.to_owned());
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = resp.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes)).into());
        }
        if bytes.is_empty() {
            return Ok(None);
        }
        if !sse {
            return Ok(Some(serde_json::from_slice(&bytes)?));
        }
        for line in bytes.split(|b| *b == b'\n') {
            if let Some(data) = line.strip_prefix(b"data:") {
                let data = data.strip_prefix(b" ").unwrap_or(data);
                if data.is_empty() {
                    continue;
                }
                let reply: Reply = serde_json::from_slice(data)?;
                if reply.id.is_some() && (reply.result.is_some() || reply.error.is_some()) {
                    return Ok(Some(reply));
                }
            }
        }
        Err("an SSE answer without the response".into())
    }

    async fn handshake(&mut self) -> Result<(), BoxError> {
        self.post(initialize(0))
            .await?
            .ok_or("no initialize answer")?;
        self.post(INITIALIZED.to_owned()).await?;
        Ok(())
    }

    async fn echo(&mut self, id: u64, text: &str) -> Result<(), BoxError> {
        let reply = self.post(call(id, text)).await?.ok_or("no answer")?;
        check(&reply, id, text)
    }
}

/// Starts an HTTP server and waits for its first `initialize` answer.
async fn start_http(
    command: &[String],
    cpu: Option<usize>,
) -> Result<(Child, u16, f64, HttpSession), BoxError> {
    let port = free_port()?;
    let started = Instant::now();
    let child = spawn(command, cpu, Some(port), false)?;
    loop {
        if started.elapsed() > Duration::from_secs(60) {
            kill(child);
            return Err("the server did not answer within 60 s".into());
        }
        if let Ok(mut s) = HttpSession::connect(port).await {
            if s.handshake().await.is_ok() {
                return Ok((child, port, started.elapsed().as_secs_f64() * 1000.0, s));
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Every session calls `echo` in a loop, all at once, until the stop rule (on the total).
async fn concurrent(
    sessions: &mut [HttpSession],
    pid: u32,
    rule: StopRule,
) -> Result<Sample, BoxError> {
    let before = Counters::read_tree(pid);
    let t0 = Instant::now();
    let n = sessions.len() as u64;
    let runs = sessions.iter_mut().map(|s| async move {
        let (mut calls, mut latencies) = (0u64, Vec::new());
        // Each session stops by the shared clock; calls are counted per session.
        while !rule.done(calls * n, t0.elapsed().as_secs_f64()) {
            let t = Instant::now();
            s.echo(1000 + calls, SMALL).await?;
            latencies.push(t.elapsed().as_nanos() as u64);
            calls += 1;
        }
        Ok::<_, BoxError>((calls, latencies))
    });
    let (mut calls, mut latencies) = (0u64, Vec::new());
    for r in futures::future::join_all(runs).await {
        let (c, l) = r?;
        calls += c;
        latencies.extend(l);
    }
    Ok(Sample {
        calls,
        secs: t0.elapsed().as_secs_f64(),
        latencies_ns: latencies,
        server: Counters::read_tree(pid).since(before),
    })
}

async fn http(command: &[String], cpu: Option<usize>, rule: StopRule) -> Result<(), BoxError> {
    let (child, port, startup_ms, mut first) = start_http(command, cpu).await?;
    let pid = child.id();
    let (rss_init, _) = memory_kib(pid);
    let result = async {
        for id in 1..=200 {
            first.echo(id, SMALL).await?;
        }
        let before = Counters::read_tree(pid);
        let t0 = Instant::now();
        let (mut calls, mut latencies) = (0u64, Vec::new());
        while !rule.done(calls, t0.elapsed().as_secs_f64()) {
            let t = Instant::now();
            first.echo(1000 + calls, SMALL).await?;
            latencies.push(t.elapsed().as_nanos() as u64);
            calls += 1;
        }
        Sample { calls, secs: t0.elapsed().as_secs_f64(), latencies_ns: latencies, server: Counters::read_tree(pid).since(before) }
            .report("http-seq");

        let mut sessions = Vec::new();
        for _ in 0..8 {
            let mut s = HttpSession::connect(port).await?;
            s.handshake().await?;
            for id in 1..=25 {
                s.echo(id, SMALL).await?;
            }
            sessions.push(s);
        }
        concurrent(&mut sessions, pid, rule).await?
            .report("http-conc8");
        let (_, hwm) = memory_kib(pid);
        println!("{}", json!({"scenario": "process-http", "startup_ms": startup_ms, "rss_init_kib": rss_init, "peak_rss_kib": hwm}));
        Ok::<_, BoxError>(())
    }
    .await;
    kill(child);
    result
}

/// RSS growth per idle Streamable HTTP session: open sessions (handshake, then nothing) up to
/// each count and read the server's RSS.
async fn sessions(
    command: &[String],
    cpu: Option<usize>,
    counts: Vec<usize>,
) -> Result<(), BoxError> {
    let (child, port, _, mut first) = start_http(command, cpu).await?;
    let pid = child.id();
    let result = async {
        for id in 1..=50 {
            first.echo(id, SMALL).await?;
        }
        // Warm the allocator and the server's tables with a few sessions first.
        let mut open = 1usize;
        let mut conn = HttpSession::connect(port).await?;
        for _ in 0..20 {
            conn.session = None;
            conn.handshake().await?;
            open += 1;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (base, _) = memory_kib(pid);
        // The count is the total open, warm-up included, so that 10,000 stays within a
        // server's default cap of 10,000; the growth is divided by the sessions added.
        let base_open = open;
        for &count in &counts {
            while open < count {
                conn.session = None;
                if let Err(e) = conn.handshake().await {
                    return Err(format!("session {open}: {e}").into());
                }
                open += 1;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let (rss, _) = memory_kib(pid);
            println!(
                "{}",
                json!({"scenario": format!("idle-sessions-{count}"), "sessions": count,
                       "rss_kib": rss, "base_kib": base,
                       "bytes_per_session": (rss.saturating_sub(base) * 1024) as f64 / (count - base_open) as f64})
            );
        }
        Ok::<_, BoxError>(())
    }
    .await;
    kill(child);
    result
}
