//! Reliability of the Streamable HTTP transport, over real sockets on 127.0.0.1:
//!
//! - 1,000 oxmcp clients hold 1,000 concurrent sessions on one server, each making calls
//!   with arguments of its own (plain JSON answers and SSE answers with progress), while a
//!   hostile neighbour floods forged session ids and half-sent requests: every answer and
//!   every progress notification reaches the client it belongs to, none is lost.
//! - SSE streams cut at seeded random byte offsets (POST streams and the GET streams that
//!   resume them, cut again and again), resumed with `Last-Event-ID`: every event arrives
//!   exactly once across the cuts, in order, and the final answer arrives; other sessions
//!   never see those events. The server cutting its own stream (SEP-1699, the fixture's
//!   `test_reconnection`) is resumed the same way, by a raw client and by the oxmcp client.
//! - A client whose server restarts on the same port gets a new session transparently (the
//!   404 → re-initialize path) and its calls go on.
//! - A server killed mid-call (SIGKILL of a server process, or an in-process shutdown) fails
//!   the pending call with an error long before the 60 s request timeout.

mod common;

use std::{
    collections::HashSet,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use common::*;
use http::{HeaderMap, StatusCode};
use oxmcp::{
    Error,
    client::Client,
    protocol::ProgressNotificationParams,
    server::Server,
    session::RequestOptions,
    transport::{
        Transport,
        http::{HttpClientOptions, HttpClientTransport, HttpServer, HttpServerOptions},
        tap::tap,
    },
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// Only ever turns a hang into a failure (debug build, 2 cores, other builds running).
const PATIENCE: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// Helpers: a seeded generator, a raw HTTP/1.1 client with an incremental chunked and SSE
// decoder (independent of the crate's own SSE code), and oxmcp clients with a wire tap.
// ---------------------------------------------------------------------------------------------

/// splitmix64: a small seeded generator, so a failing trial can be replayed from its seed.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn session_id(&mut self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next().to_le_bytes());
        bytes[8..].copy_from_slice(&self.next().to_le_bytes());
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The head of a response, and the bytes read past it.
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
    rest: Vec<u8>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Writes `request` and reads the response head.
async fn send_head(stream: &mut TcpStream, request: &[u8]) -> Head {
    stream.write_all(request).await.expect("write the request");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let end = loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut chunk).await.expect("read the head");
        assert!(n > 0, "connection closed before a response head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Head {
        status,
        headers,
        rest: buf[end + 4..].to_vec(),
    }
}

/// Reads a Content-Length body after `head`.
async fn read_sized_body(stream: &mut TcpStream, head: Head) -> Vec<u8> {
    let len: usize = head
        .header("content-length")
        .expect("a sized body")
        .parse()
        .unwrap();
    let mut body = head.rest;
    let mut chunk = [0u8; 8192];
    while body.len() < len {
        let n = stream.read(&mut chunk).await.expect("read the body");
        assert!(n > 0, "body cut short");
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(len);
    body
}

/// Incremental `Transfer-Encoding: chunked` decoder.
#[derive(Default)]
struct Dechunk {
    pending: Vec<u8>,
    /// Bytes left in the current chunk, then its CRLF.
    in_chunk: usize,
    crlf: bool,
    done: bool,
}

impl Dechunk {
    fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        self.pending.extend_from_slice(input);
        loop {
            if self.done {
                return;
            }
            if self.in_chunk > 0 {
                let n = self.in_chunk.min(self.pending.len());
                if n == 0 {
                    return;
                }
                out.extend(self.pending.drain(..n));
                self.in_chunk -= n;
                if self.in_chunk == 0 {
                    self.crlf = true;
                }
                continue;
            }
            if self.crlf {
                if self.pending.len() < 2 {
                    return;
                }
                assert_eq!(&self.pending[..2], b"\r\n", "chunk framing");
                self.pending.drain(..2);
                self.crlf = false;
                continue;
            }
            let Some(end) = find(&self.pending, b"\r\n") else {
                return;
            };
            let size = String::from_utf8_lossy(&self.pending[..end]).into_owned();
            let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
            self.pending.drain(..end + 2);
            if size == 0 {
                self.done = true;
                return;
            }
            self.in_chunk = size;
        }
    }
}

/// One SSE event as a client sees it.
#[derive(Clone, Debug, Default)]
struct Event {
    id: Option<String>,
    event: Option<String>,
    data: String,
    retry: Option<u64>,
}

/// Incremental SSE parser for `\n` line ends (what this server writes); an event ends at a
/// blank line.
#[derive(Default)]
struct Sse {
    buf: Vec<u8>,
}

impl Sse {
    fn push(&mut self, input: &[u8]) -> Vec<Event> {
        self.buf.extend_from_slice(input);
        let mut events = Vec::new();
        while let Some(end) = find(&self.buf, b"\n\n") {
            let block: Vec<u8> = self.buf.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&block);
            let mut e = Event::default();
            let mut data = Vec::new();
            for line in text.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => e.id = Some(value.to_owned()),
                    "event" => e.event = Some(value.to_owned()),
                    "data" => data.push(value.to_owned()),
                    "retry" => e.retry = value.parse().ok(),
                    _ => {}
                }
            }
            e.data = data.join("\n");
            events.push(e);
        }
        events
    }
}

/// Reads SSE events from `stream` until the stream ends, `stop` says so, or `budget` raw body
/// bytes have been taken (then the rest is never looked at: the connection is cut there).
/// With `budget_after_id`, the budget only starts counting once an event carrying an id has
/// arrived (before that a client has nothing to resume from). Returns the events and whether
/// the stream ended on its own.
async fn read_events(
    stream: &mut TcpStream,
    rest: Vec<u8>,
    budget: Option<usize>,
    budget_after_id: bool,
    mut stop: impl FnMut(&Event) -> bool,
) -> (Vec<Event>, bool) {
    let mut dechunk = Dechunk::default();
    let mut sse = Sse::default();
    let mut events = Vec::new();
    let mut counting = !budget_after_id;
    let mut taken = 0usize;
    let mut incoming = rest;
    let mut chunk = vec![0u8; 4096];
    loop {
        let mut at = 0;
        while at < incoming.len() {
            // Until counting starts, one byte at a time, so it starts at the exact byte.
            let piece = match (counting, budget) {
                (false, _) => 1,
                (true, Some(b)) => (incoming.len() - at).min(b - taken),
                (true, None) => incoming.len() - at,
            };
            if piece == 0 {
                break;
            }
            let mut body = Vec::new();
            dechunk.push(&incoming[at..at + piece], &mut body);
            at += piece;
            if counting {
                taken += piece;
            }
            for e in sse.push(&body) {
                counting |= e.id.is_some();
                let done = stop(&e);
                events.push(e);
                if done {
                    return (events, false);
                }
            }
            if dechunk.done {
                return (events, true);
            }
        }
        if counting && budget.is_some_and(|b| taken >= b) {
            return (events, false);
        }
        let n = stream.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return (events, true);
        }
        incoming = chunk[..n].to_vec();
    }
}

fn raw_request(request_line: &str, lines: &[String], body: &str) -> Vec<u8> {
    let mut out = format!("{request_line}\r\n");
    for l in lines {
        out.push_str(l);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.push_str(body);
    out.into_bytes()
}

fn post(session: Option<&str>, body: &str) -> Vec<u8> {
    let mut lines = vec![
        "Host: localhost".to_owned(),
        "Accept: application/json, text/event-stream".to_owned(),
        "Content-Type: application/json".to_owned(),
        format!("Content-Length: {}", body.len()),
    ];
    if let Some(s) = session {
        lines.push(format!("Mcp-Session-Id: {s}"));
        lines.push("MCP-Protocol-Version: 2025-11-25".to_owned());
    }
    raw_request("POST /mcp HTTP/1.1", &lines, body)
}

fn resume(session: &str, last_event_id: &str) -> Vec<u8> {
    raw_request(
        "GET /mcp HTTP/1.1",
        &[
            "Host: localhost".to_owned(),
            "Accept: text/event-stream".to_owned(),
            format!("Mcp-Session-Id: {session}"),
            "MCP-Protocol-Version: 2025-11-25".to_owned(),
            format!("Last-Event-ID: {last_event_id}"),
        ],
        "",
    )
}

/// A 2025-11-25 session (the revision whose streams carry priming events) over raw HTTP.
async fn raw_session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = send_head(&mut s, &post(None, &init)).await;
    assert_eq!(head.status, 200);
    let id = head
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let body = read_sized_body(&mut s, head).await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let head = send_head(&mut s, &post(Some(&id), note)).await;
    assert_eq!(head.status, 202);
    id
}

/// Client options pinned to the newest handshake revision: a session per client (the default
/// `Auto` mode would probe the stateless era first and hold no session at all).
fn session_options() -> oxmcp::client::ClientOptions {
    client_options().protocol(oxmcp::client::ProtocolMode::Handshake(
        oxmcp::ProtocolVersion::V2025_11_25,
    ))
}

/// An oxmcp client over HTTP; its traffic recorded on `wire` when given.
async fn http_client(
    url: &str,
    options: oxmcp::client::ClientOptions,
    wire: Option<&Wire>,
) -> oxmcp::Result<Client> {
    let transport = HttpClientTransport::new(url, HttpClientOptions::default())?;
    match wire {
        Some(w) => {
            Client::connect(
                tap(transport.into_link(), w.observer(Side::Client)),
                options,
            )
            .await
        }
        None => Client::connect(transport, options).await,
    }
}

async fn wait_sessions(http: &HttpServer, n: usize) {
    tokio::time::timeout(PATIENCE, async {
        while http.session_count() != n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} sessions, expected {n}", http.session_count()));
}

fn progress_counter() -> (Arc<Mutex<Vec<f64>>>, RequestOptions) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let options = RequestOptions {
        on_progress: Some(Box::new(move |p: ProgressNotificationParams| {
            s.lock().unwrap().push(p.progress);
        })),
        ..Default::default()
    };
    (seen, options)
}

// ---------------------------------------------------------------------------------------------
// 1,000 concurrent sessions.
// ---------------------------------------------------------------------------------------------

/// Open file descriptors of this process (the test's clients and the server together).
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_concurrent_sessions_each_get_their_own_answers() {
    const SESSIONS: usize = 1000;
    let server = test_server(&Probe::default());
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let url = http.url();
    let addr = http.local_addr();

    // Hostile neighbours: forged session ids, and requests abandoned half-way.
    let stop = Arc::new(AtomicBool::new(false));
    let hostile: Vec<_> = (0..2)
        .map(|h| {
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut rng = SplitMix(1000 + h);
                let mut refused = 0usize;
                let body = concat!(
                    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
                    r#""params":{"name":"echo","arguments":{"text":"forged"}}}"#
                );
                while !stop.load(Ordering::Relaxed) {
                    let mut s = TcpStream::connect(addr).await.unwrap();
                    let request = post(Some(&rng.session_id()), body);
                    if rng.below(2) == 0 {
                        let head = send_head(&mut s, &request).await;
                        assert_eq!(head.status, 404);
                        refused += 1;
                    } else {
                        let cut = rng.below(request.len() as u64) as usize;
                        let _ = s.write_all(&request[..cut]).await;
                    }
                    tokio::task::yield_now().await;
                }
                refused
            })
        })
        .collect();

    let started = Instant::now();
    // All clients connect, then all call at once, then all close: the 1,000 sessions are
    // open together while the calls run.
    let connected = Arc::new(tokio::sync::Barrier::new(SESSIONS + 1));
    let called = Arc::new(tokio::sync::Barrier::new(SESSIONS + 1));
    // Held until the test has counted the sessions after the calls.
    let counted = Arc::new(tokio::sync::Barrier::new(SESSIONS + 1));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let progress_total = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(SESSIONS);
    for i in 0..SESSIONS {
        let url = url.clone();
        let (failures, progress_total) = (failures.clone(), progress_total.clone());
        let (connected, called, counted) = (connected.clone(), called.clone(), counted.clone());
        tasks.push(tokio::spawn(async move {
            // Every 50th client's whole exchange is checked against the official schemas.
            let wire = (i % 50 == 0).then(Wire::new);
            let client = http_client(&url, session_options(), wire.as_ref()).await;
            connected.wait().await;
            let client = match client {
                Ok(c) => c,
                Err(e) => {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("client {i}: connect: {e}"));
                    called.wait().await;
                    counted.wait().await;
                    return;
                }
            };
            let text = format!("client {i} says {}", i * 7919 % 10007);
            let steps = (i % 4 + 1) as u64;
            let (seen, options) = progress_counter();
            // Three calls in flight at once on one session: a JSON answer, a structured
            // one, and an SSE stream with `steps` progress notifications before its answer.
            let (echo, add, tick) = tokio::join!(
                client.call_tool("echo", json!({ "text": text })),
                client.call_tool("add", json!({ "a": i, "b": 1_000_000 + i })),
                client.call_tool_with("tick", json!({ "interval_ms": 1, "steps": steps }), options),
            );
            let mut bad = Vec::new();
            match echo {
                Ok(r) if r.content[0].as_text() == Some(text.as_str()) => {}
                other => bad.push(format!("echo: {other:?}")),
            }
            match add {
                Ok(r)
                    if r.structured_content
                        == Some(json!({ "sum": (1_000_000 + 2 * i) as f64 })) => {}
                other => bad.push(format!("add: {other:?}")),
            }
            match tick {
                Ok(r) if r.content[0].as_text() == Some(&*format!("ticked {steps}")) => {}
                other => bad.push(format!("tick: {other:?}")),
            }
            let progress = seen.lock().unwrap().clone();
            let expected: Vec<f64> = (1..=steps).map(|s| s as f64).collect();
            if progress != expected {
                bad.push(format!("progress {progress:?}, expected {expected:?}"));
            }
            progress_total.fetch_add(progress.len(), Ordering::Relaxed);
            if !bad.is_empty() {
                failures
                    .lock()
                    .unwrap()
                    .push(format!("client {i}: {}", bad.join("; ")));
            }
            called.wait().await;
            counted.wait().await;
            client.close().await;
            if let Some(w) = wire {
                w.assert_valid();
            }
        }));
    }
    let limit = Duration::from_secs(180);
    tokio::time::timeout(limit, connected.wait())
        .await
        .expect("1,000 clients connect");
    let connect_time = started.elapsed();
    let open_at_once = http.session_count();
    tokio::time::timeout(limit, called.wait())
        .await
        .expect("1,000 sessions' calls finish");
    let call_time = started.elapsed() - connect_time;
    let fds = open_fds();
    let still_open = http.session_count();
    counted.wait().await;
    tokio::time::timeout(limit, async {
        for t in tasks {
            t.await.expect("a client task panicked");
        }
    })
    .await
    .expect("1,000 clients close");
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let mut refused = 0;
    for h in hostile {
        refused += h.await.unwrap();
    }
    let failures = failures.lock().unwrap().clone();
    println!(
        "{SESSIONS} sessions: connected in {connect_time:?}, 3 concurrent calls each in \
         {call_time:?}, {elapsed:?} in all; {open_at_once} sessions open at once; {fds} fds \
         open at the peak; {} progress notifications routed; {refused} forged requests \
         refused; {} failures",
        progress_total.load(Ordering::Relaxed),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(20)].join("\n")
    );
    assert_eq!(open_at_once, SESSIONS);
    assert_eq!(still_open, SESSIONS);
    // Every client said goodbye with DELETE: nothing is left behind.
    wait_sessions(&http, 0).await;
    http.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// Cut and resumed streams.
// ---------------------------------------------------------------------------------------------

/// What one call's events looked like across all the connections that carried them.
struct Trial {
    seed: u64,
    cuts: usize,
    connections: usize,
}

/// Calls `tick` over raw HTTP, cutting each connection after a random number of bytes and
/// resuming with `Last-Event-ID` until the answer arrives; checks every event exactly once.
async fn cut_and_resume(addr: SocketAddr, session: &str, tag: &str, n: u64, seed: u64) -> Trial {
    let mut rng = SplitMix(seed);
    let steps = 10 + rng.below(40);
    let interval = [0, 0, 1, 3][rng.below(4) as usize];
    let id = format!("{tag}-{n}");
    let token = format!("{tag}-token-{n}");
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "tick", "arguments": {"interval_ms": interval, "steps": steps},
        "_meta": {"progressToken": token}}})
    .to_string();
    // About 140 bytes per event on the wire (chunk framing included): cut anywhere in the
    // whole stream.
    let span = (steps as usize + 1) * 140;
    let mut all: Vec<Event> = Vec::new();
    let mut cuts = 0;
    let mut connections = 0;
    let mut last_id: Option<String> = None;
    let answered = |e: &Event| e.data.contains(&format!("\"id\":\"{id}\""));
    loop {
        connections += 1;
        assert!(connections < 200, "seed {seed}: no end in sight");
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = match &last_id {
            None => send_head(&mut s, &post(Some(session), &call)).await,
            Some(from) => send_head(&mut s, &resume(session, from)).await,
        };
        assert_eq!(head.status, 200, "seed {seed}: resume from {last_id:?}");
        assert_eq!(head.header("content-type"), Some("text/event-stream"));
        // One time in five the connection is read to its end; otherwise cut at random.
        let budget = (rng.below(5) != 0).then(|| rng.below(span as u64) as usize);
        let (events, ended) =
            read_events(&mut s, head.rest, budget, last_id.is_none(), answered).await;
        let got_answer = events.iter().any(answered);
        if let Some(e) = events.iter().rev().find_map(|e| e.id.clone()) {
            last_id = Some(e);
        }
        all.extend(events);
        if got_answer {
            break;
        }
        if !ended {
            cuts += 1;
        }
        // Dropping the socket with unread bytes resets the connection: a real cut.
        drop(s);
        assert!(last_id.is_some(), "seed {seed}: cut before any event id");
    }
    // Priming events (no data) carry `<stream>-0`; messages `<stream>-1` … `<stream>-n`.
    let messages: Vec<&Event> = all.iter().filter(|e| !e.data.is_empty()).collect();
    let ids: Vec<&str> = messages.iter().map(|e| e.id.as_deref().unwrap()).collect();
    let unique: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(
        unique.len(),
        ids.len(),
        "seed {seed}: duplicated events {ids:?}"
    );
    let stream = ids[0].split_once('-').unwrap().0;
    let expected: Vec<String> = (1..=steps + 1).map(|k| format!("{stream}-{k}")).collect();
    assert_eq!(ids, expected, "seed {seed}: lost or reordered events");
    let mut progress = Vec::new();
    for e in &messages[..messages.len() - 1] {
        assert_eq!(e.event.as_deref(), Some("message"));
        let v: Value = serde_json::from_str(&e.data).unwrap();
        assert_eq!(v["method"], "notifications/progress", "seed {seed}: {v}");
        assert_eq!(
            v["params"]["progressToken"], token,
            "seed {seed}: another call's event"
        );
        progress.push(v["params"]["progress"].as_f64().unwrap());
    }
    let expected: Vec<f64> = (1..=steps).map(|s| s as f64).collect();
    assert_eq!(progress, expected, "seed {seed}");
    let answer: Value = serde_json::from_str(&messages.last().unwrap().data).unwrap();
    assert_eq!(answer["id"], id);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("ticked {steps}"),
        "seed {seed}"
    );
    Trial {
        seed,
        cuts,
        connections,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sse_streams_cut_at_random_points_resume_without_loss_or_duplication() {
    const TRIALS: u64 = 200;
    let server = test_server(&Probe::default());
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let addr = http.local_addr();
    let a = raw_session(addr).await;
    let b = raw_session(addr).await;
    // Two sessions cut and resume side by side; each must only ever see its own events.
    let run = |session: String, tag: &'static str, base: u64| {
        tokio::spawn(async move {
            let mut trials = Vec::new();
            for n in 0..TRIALS {
                trials.push(cut_and_resume(addr, &session, tag, n, base + n).await);
            }
            trials
        })
    };
    let stop = Arc::new(AtomicBool::new(false));
    // A third session replays event ids the other two use: it gets its own streams or 404,
    // never their events.
    let snoop = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let c = raw_session(addr).await;
            let mut rng = SplitMix(77);
            let mut probes = 0;
            while !stop.load(Ordering::Relaxed) {
                let from = format!("{}-0", 1 + rng.below(40));
                let session = if rng.below(2) == 0 {
                    c.clone()
                } else {
                    rng.session_id()
                };
                let mut s = TcpStream::connect(addr).await.unwrap();
                let head = send_head(&mut s, &resume(&session, &from)).await;
                if head.status == 200 {
                    let (events, _) = tokio::time::timeout(
                        Duration::from_millis(200),
                        read_events(&mut s, head.rest, None, false, |_| false),
                    )
                    .await
                    .unwrap_or_default();
                    for e in events {
                        assert!(
                            !e.data.contains("\"A-") && !e.data.contains("\"B-"),
                            "session C received another session's event: {}",
                            e.data
                        );
                    }
                } else {
                    assert_eq!(head.status, 404);
                }
                probes += 1;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            probes
        })
    };
    let started = Instant::now();
    let ta = run(a, "A", 1_000);
    let tb = run(b, "B", 2_000);
    let (ta, tb) = tokio::time::timeout(Duration::from_secs(240), async {
        (ta.await.unwrap(), tb.await.unwrap())
    })
    .await
    .expect("the trials finish");
    stop.store(true, Ordering::Relaxed);
    let probes = snoop.await.unwrap();
    let trials: Vec<Trial> = ta.into_iter().chain(tb).collect();
    let cuts: usize = trials.iter().map(|t| t.cuts).sum();
    let connections: usize = trials.iter().map(|t| t.connections).sum();
    let most = trials.iter().max_by_key(|t| t.cuts).unwrap();
    println!(
        "{} trials in {:?}: {cuts} cuts, {connections} connections, at most {} cuts in one \
         call (seed {}); {probes} snooping resumes refused or isolated",
        trials.len(),
        started.elapsed(),
        most.cuts,
        most.seed
    );
    // The seeds are fixed: this only guards against the test silently cutting nothing.
    assert!(
        cuts >= trials.len(),
        "{cuts} cuts in {} calls",
        trials.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn server_cut_stream_is_resumed_sep_1699_raw() {
    let server = fixture_server();
    let http = server
        .serve_http(HttpServerOptions {
            sse_retry: Duration::from_millis(100),
            ..Default::default()
        })
        .await
        .unwrap();
    let addr = http.local_addr();
    let session = raw_session(addr).await;
    let mut rng = SplitMix(1699);
    for n in 0..20 {
        let call = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                          "params": {"name": "test_reconnection", "arguments": {}}})
        .to_string();
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = send_head(&mut s, &post(Some(&session), &call)).await;
        assert_eq!(head.status, 200);
        assert_eq!(head.header("content-type"), Some("text/event-stream"));
        // The server ends the stream itself, after a priming event and before the answer.
        let (events, ended) = read_events(&mut s, head.rest, None, false, |_| false).await;
        assert!(ended);
        assert_eq!(events.len(), 1, "{events:?}");
        let priming = &events[0];
        assert!(priming.data.is_empty());
        assert_eq!(priming.retry, Some(100));
        let from = priming
            .id
            .clone()
            .expect("the priming event names the resume point");
        assert!(from.ends_with("-0"), "{from}");
        // Resume before the answer exists (live) or after (replayed), and sometimes cut the
        // resumed stream too and resume again.
        if n % 2 == 1 {
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
        let mut last = from.clone();
        let mut seen = Vec::new();
        loop {
            let mut s = TcpStream::connect(addr).await.unwrap();
            let head = send_head(&mut s, &resume(&session, &last)).await;
            assert_eq!(head.status, 200);
            let budget = (rng.below(3) == 0).then(|| rng.below(200) as usize);
            let (events, _) = read_events(&mut s, head.rest, budget, false, |_| false).await;
            if let Some(id) = events.iter().rev().find_map(|e| e.id.clone()) {
                last = id;
            }
            seen.extend(events);
            if seen.iter().any(|e| !e.data.is_empty()) {
                break;
            }
        }
        assert_eq!(seen.len(), 1, "{seen:?}");
        let answer: Value = serde_json::from_str(&seen[0].data).unwrap();
        assert_eq!(answer["id"], n);
        assert_eq!(
            answer["result"]["content"][0]["text"],
            "Reconnection test completed"
        );
        let stream = from.split_once('-').unwrap().0;
        assert_eq!(seen[0].id.as_deref(), Some(&*format!("{stream}-1")));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn server_cut_stream_is_resumed_sep_1699_by_the_client() {
    let server = fixture_server();
    let http = server
        .serve_http(HttpServerOptions {
            sse_retry: Duration::from_millis(100),
            ..Default::default()
        })
        .await
        .unwrap();
    let wire = Wire::new();
    let client = http_client(&http.url(), session_options(), Some(&wire))
        .await
        .unwrap();
    // Several at once on one session, next to plain calls.
    let calls = (0..5).map(|_| client.call_tool("test_reconnection", json!({})));
    let plain = (0..5).map(|_| client.call_tool("test_simple_text", json!({})));
    let (cut, plain) = tokio::time::timeout(PATIENCE, async {
        futures::join!(
            futures::future::join_all(calls),
            futures::future::join_all(plain)
        )
    })
    .await
    .expect("the calls finish");
    for r in cut {
        assert_eq!(
            r.unwrap().content[0].as_text(),
            Some("Reconnection test completed")
        );
    }
    for r in plain {
        assert_eq!(
            r.unwrap().content[0].as_text(),
            Some("This is a simple text response for testing.")
        );
    }
    client.close().await;
    wire.assert_valid();
}

// ---------------------------------------------------------------------------------------------
// Server restart.
// ---------------------------------------------------------------------------------------------

/// What a server saw of one request (an auth hook that lets everything through records it).
#[derive(Clone, Debug)]
struct Seen {
    /// `GET` (Accept: text/event-stream only) or `POST`/`DELETE` (anything else).
    get: bool,
    session: Option<String>,
    last_event_id: Option<String>,
}

/// The requests a server saw, in order: the tests' view of which session a client used.
#[derive(Clone, Default)]
struct RequestLog(Arc<Mutex<Vec<Seen>>>);

impl RequestLog {
    fn options(&self) -> HttpServerOptions {
        let log = self.0.clone();
        HttpServerOptions {
            auth: Some(Arc::new(move |h: &HeaderMap| {
                let get = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
                log.lock().unwrap().push(Seen {
                    get: get("accept").as_deref() == Some("text/event-stream"),
                    session: get("mcp-session-id"),
                    last_event_id: get("last-event-id"),
                });
                Ok::<(), (StatusCode, String)>(())
            })),
            ..Default::default()
        }
    }

    fn all(&self) -> Vec<Seen> {
        self.0.lock().unwrap().clone()
    }

    /// Session ids presented, first appearance order.
    fn ids(&self) -> Vec<String> {
        let mut seen = Vec::new();
        for id in self.all().into_iter().filter_map(|s| s.session) {
            if !seen.contains(&id) {
                seen.push(id);
            }
        }
        seen
    }
}

/// Binds `port` again, retrying while the old listener is still being torn down.
async fn rebind(server: &Server, port: u16, mut options: HttpServerOptions) -> HttpServer {
    options.bind = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + PATIENCE;
    loop {
        match server.serve_http(options.clone()).await {
            Ok(h) => return h,
            Err(e) if Instant::now() < deadline => {
                tracing::debug!("rebind: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("port {port} not free again: {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_whose_server_restarts_gets_a_new_session_and_goes_on() {
    let server = test_server(&Probe::default());
    let before = RequestLog::default();
    let first = server.serve_http(before.options()).await.unwrap();
    let port = first.local_addr().port();
    let url = first.url();
    // Two clients: each must come back on a session of its own.
    let (wa, wb) = (Wire::new(), Wire::new());
    let a = http_client(&url, session_options(), Some(&wa))
        .await
        .unwrap();
    let b = http_client(&url, session_options(), Some(&wb))
        .await
        .unwrap();
    for (c, name) in [(&a, "a"), (&b, "b")] {
        let r = c.call_tool("echo", json!({"text": name})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some(name));
    }
    let old = before.ids();
    assert_eq!(old.len(), 2, "{old:?}");

    first.shutdown().await;
    drop(first);
    // Restarted at once: a call that goes out on a keep-alive connection the old server
    // closed is retried on a new one (`every_call_right_after_a_restart_succeeds` hammers that).
    let after = RequestLog::default();
    let second = rebind(&server, port, after.options()).await;
    assert_eq!(second.session_count(), 0);

    for round in 0..3 {
        let (ra, rb) = tokio::time::timeout(PATIENCE, async {
            tokio::join!(
                a.call_tool("echo", json!({"text": format!("a again {round}")})),
                b.call_tool("echo", json!({"text": format!("b again {round}")})),
            )
        })
        .await
        .expect("calls after the restart finish");
        assert_eq!(
            ra.expect("a's call after the restart").content[0].as_text(),
            Some(&*format!("a again {round}"))
        );
        assert_eq!(
            rb.expect("b's call after the restart").content[0].as_text(),
            Some(&*format!("b again {round}"))
        );
    }
    assert_eq!(second.session_count(), 2);
    let seen = after.ids();
    let new: Vec<&String> = seen.iter().filter(|id| !old.contains(id)).collect();
    println!("sessions before the restart {old:?}; ids presented after it {seen:?}");
    // The clients presented their old ids (answered 404), then each used one new id.
    assert!(old.iter().all(|id| seen.contains(id)), "{seen:?}");
    assert_eq!(new.len(), 2, "one new session per client: {seen:?}");
    assert_ne!(new[0], new[1]);
    a.close().await;
    b.close().await;
    wa.assert_valid();
    wb.assert_valid();
    wait_sessions(&second, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_call_right_after_a_restart_succeeds() {
    // About one restart in 40 loses the race on an idle machine: enough rounds to see it.
    const RESTARTS: usize = 150;
    let server = test_server(&Probe::default());
    let mut http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let port = http.local_addr().port();
    let client = http_client(&http.url(), session_options(), None)
        .await
        .unwrap();
    let mut failures = Vec::new();
    for n in 0..RESTARTS {
        let text = format!("after restart {n}");
        // A pooled connection to the current server, idle when the restart comes.
        client
            .call_tool("echo", json!({"text": "warm"}))
            .await
            .unwrap();
        http.shutdown().await;
        drop(http);
        http = rebind(&server, port, HttpServerOptions::default()).await;
        match client.call_tool("echo", json!({ "text": text })).await {
            Ok(r) => assert_eq!(r.content[0].as_text(), Some(text.as_str())),
            Err(e) => failures.push(format!("restart {n}: {e}")),
        }
    }
    println!("{} of {RESTARTS} first calls failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_restart_server_initiated_messages_still_arrive() {
    let server = test_server(&Probe::default());
    // A short retry hint: the client's GET loop comes back quickly after the restart.
    let quick = |log: &RequestLog| HttpServerOptions {
        sse_retry: Duration::from_millis(50),
        ..log.options()
    };
    let (before, after) = (RequestLog::default(), RequestLog::default());
    let first = server.serve_http(quick(&before)).await.unwrap();
    let port = first.local_addr().port();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = session_options().on_notification(move |method, _| {
        let _ = tx.send(method.to_owned());
    });
    let client = http_client(&first.url(), options, None).await.unwrap();
    client
        .call_tool("echo", json!({"text": "1"}))
        .await
        .unwrap();
    let add = |name: &str| {
        server
            .add_tool(
                oxmcp::protocol::Tool::new(name, "added", json!({"type": "object"})),
                |_a: Value, _c| async move { Ok(oxmcp::protocol::CallToolResult::text("new")) },
            )
            .unwrap();
    };
    // Before the restart, a list change reaches the client on its GET stream.
    add("before");
    let got = tokio::time::timeout(PATIENCE, rx.recv())
        .await
        .expect("a notification");
    assert_eq!(got.as_deref(), Some("notifications/tools/list_changed"));

    first.shutdown().await;
    drop(first);
    let second = rebind(&server, port, quick(&after)).await;
    let r = client
        .call_tool("echo", json!({"text": "2"}))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("2"));
    // Wait until the new session has its GET stream: a GET without Last-Event-ID (the bound
    // only turns a hang into a failure whose message shows the requests the server saw).
    let new_id = after.ids().last().cloned().unwrap();
    let reopened =
        tokio::time::timeout(Duration::from_secs(5), async {
            while !after.all().iter().any(|s| {
                s.get && s.session.as_deref() == Some(&new_id) && s.last_event_id.is_none()
            }) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    assert!(
        reopened.is_ok(),
        "no GET on the new session {new_id}; the second server saw {:#?}",
        after.all()
    );
    add("after");
    let got = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("tools/list_changed after the restart never arrived");
    assert_eq!(got.as_deref(), Some("notifications/tools/list_changed"));
    client.close().await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_restart_no_event_id_of_the_old_session_is_replayed() {
    let server = test_server(&Probe::default());
    let (before, after) = (RequestLog::default(), RequestLog::default());
    // The default 1 s retry hint: the GET loop comes back after the call below has started.
    let first = server.serve_http(before.options()).await.unwrap();
    let port = first.local_addr().port();
    let client = http_client(&first.url(), session_options(), None)
        .await
        .unwrap();
    client
        .call_tool("echo", json!({"text": "1"}))
        .await
        .unwrap();
    let old_id = before.ids()[0].clone();
    // The GET stream of the old session got its priming event id.
    tokio::time::timeout(PATIENCE, async {
        while !before.all().iter().any(|s| s.get) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the client opens its GET stream");

    first.shutdown().await;
    drop(first);
    let second = rebind(&server, port, after.options()).await;
    // A long call right after the restart: re-initialize (stream 1 of the new session), then
    // this call on stream 2 — the number the old session's GET stream had.
    let (seen, options) = progress_counter();
    let r = tokio::time::timeout(
        PATIENCE,
        client.call_tool_with("tick", json!({"interval_ms": 50, "steps": 50}), options),
    )
    .await
    .expect("the call finishes")
    .expect("the call succeeds");
    assert_eq!(r.content[0].as_text(), Some("ticked 50"));
    let log = after.all();
    let new_id = after
        .ids()
        .into_iter()
        .find(|id| *id != old_id)
        .expect("a new session");
    // The old session's GET stream had id 2 ("2-0" its priming event); that id means nothing
    // in the new session, where stream 2 is this call's.
    let stale: Vec<&Seen> = log
        .iter()
        .filter(|s| s.session.as_deref() == Some(&new_id) && s.last_event_id.is_some())
        .collect();
    let progress = seen.lock().unwrap().clone();
    let expected: Vec<f64> = (1..=50).map(f64::from).collect();
    println!("second server saw {log:#?}\nprogress {progress:?}");
    assert_eq!(progress, expected, "duplicated or lost progress");
    assert!(
        stale
            .iter()
            .all(|s| s.last_event_id.as_deref() != Some("2-0")),
        "the old session's GET stream id resumed on the new session: {stale:#?}"
    );
    client.close().await;
    second.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// A server killed mid-call.
// ---------------------------------------------------------------------------------------------

/// The call failed because the transport did: a connection error, or the HTTP transport's
/// local JSON-RPC error (tagged `data.transport = "http"`), never a timeout.
fn assert_transport_failure(what: &str, result: &oxmcp::Result<impl std::fmt::Debug>) {
    match result {
        Err(Error::ConnectionClosed { .. }) => {}
        Err(Error::Rpc(e)) if e.data.as_ref().is_some_and(|d| d["transport"] == "http") => {}
        other => panic!("{what}: expected a transport failure, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_server_process_fails_the_pending_call_promptly() {
    // A free port for the child (bound and released; the child binds it right after).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(example_bin("conformance_server"))
        .args(["--http", "--port", &port.to_string()])
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the conformance server");
    let url = format!("http://127.0.0.1:{port}/mcp");
    tokio::time::timeout(PATIENCE, async {
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server listens");

    // The call blocks in the server until our sampling handler answers, which it never does:
    // the server is killed while the call is pending on its SSE stream.
    let (in_handler, mut entered) = tokio::sync::mpsc::unbounded_channel();
    let options = session_options().sampling(
        move |_params: oxmcp::protocol::CreateMessageRequestParams, _cancel| {
            let _ = in_handler.send(());
            futures::future::pending::<
                Result<oxmcp::protocol::CreateMessageResult, oxmcp::jsonrpc::ErrorObject>,
            >()
        },
    );
    let client = http_client(&url, options, None).await.unwrap();
    let other = http_client(&url, session_options(), None).await.unwrap();
    let pending = {
        let c = client.clone();
        tokio::spawn(async move {
            c.call_tool("test_sampling", json!({"prompt": "never answered"}))
                .await
        })
    };
    // And a plain call on another session, in flight at the same moment.
    tokio::time::timeout(PATIENCE, entered.recv())
        .await
        .expect("the server asked for sampling");
    let r = other
        .call_tool("test_simple_text", json!({}))
        .await
        .unwrap();
    assert!(r.content[0].as_text().is_some());

    child.start_kill().expect("SIGKILL");
    child.wait().await.unwrap();
    let killed = Instant::now();
    let result = tokio::time::timeout(PATIENCE, pending)
        .await
        .expect("the pending call failed before the test's patience ran out")
        .unwrap();
    println!(
        "killed server: pending call failed after {:?} with {result:?}",
        killed.elapsed()
    );
    assert_transport_failure("the pending call", &result);
    // A call made after the kill fails at once too (no server to re-initialize with).
    let after = tokio::time::timeout(PATIENCE, other.call_tool("test_simple_text", json!({})))
        .await
        .expect("a call to a dead server fails before the test's patience ran out");
    println!("call after the kill: {after:?}");
    assert_transport_failure("a call after the kill", &after);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_shut_down_mid_call_fails_pending_calls_promptly() {
    let server = test_server(&Probe::default());
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let client = http_client(&http.url(), session_options(), None)
        .await
        .unwrap();
    // One call waiting for a JSON answer (no response head sent yet), one in the middle of an
    // SSE stream of progress notifications.
    let (seen, options) = progress_counter();
    let silent = {
        let c = client.clone();
        tokio::spawn(async move { c.call_tool("sleep", json!({"ms": 600_000})).await })
    };
    let streaming = {
        let c = client.clone();
        tokio::spawn(async move {
            c.call_tool_with("tick", json!({"interval_ms": 100, "steps": 6000}), options)
                .await
        })
    };
    tokio::time::timeout(PATIENCE, async {
        while seen.lock().unwrap().len() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the streaming call reports progress");
    http.shutdown().await;
    drop(http);
    let stopped = Instant::now();
    for (what, call) in [("silent call", silent), ("streaming call", streaming)] {
        let result = tokio::time::timeout(PATIENCE, call)
            .await
            .unwrap_or_else(|_| panic!("the {what} still pending {PATIENCE:?} after shutdown"))
            .unwrap();
        println!(
            "shutdown: {what} failed after {:?}: {result:?}",
            stopped.elapsed()
        );
        assert_transport_failure(what, &result);
    }
}
