//! The MCP server processes behind `core/tests/child_lifecycle.rs`: one binary, a mode per
//! way a child process can behave (or misbehave) at the end of a session.
//!
//! `mcp_fixture MODE [ARGS]`, where MODE is one of:
//!
//! | mode | behaviour |
//! |---|---|
//! | `server` | a real oxmcp server on stdio; exits with code 0 on stdin EOF |
//! | `server --ws --port N` | the same server on `ws://127.0.0.1:N/mcp` (port 0: a free one), its URL the first line on stdout; runs until killed |
//! | `ignore-eof` | `server`, but stays up after stdin EOF (SIGTERM ends it) |
//! | `ignore-sigterm` | `ignore-eof`, and logs then ignores SIGTERM (only SIGKILL ends it) |
//! | `grandchild` | `server` that first starts a `sleeper` sharing its stdout and stderr |
//! | `grandchild-ignore-eof` | `grandchild`, but the server stays up after stdin EOF |
//! | `escaped-grandchild` | `grandchild` whose sleeper leaves the process group (`setsid`) |
//! | `never-answers` | answers `initialize`, then never reads or writes again |
//! | `flood-stderr BYTES` | writes BYTES of numbered lines to stderr, then runs `server` |
//! | `host MODE` | runs `mcp_fixture MODE` through `ChildTransport`, prints its pid, blocks |
//! | `sleeper [--setsid]` | (the grandchild) logs and ignores SIGTERM, sleeps forever |
//!
//! The server modes offer three tools: `echo {text}`; `die {code, message}`, which writes
//! `message` to stderr and exits with `code` in the middle of the call; and `hang`, which
//! logs `hang: started` to stderr and never answers.
//!
//! The test marks every process of a run with `MCP_TEST_RUN` (found through `/proc`); `host`
//! passes it on to its server explicitly, as the default environment policy would drop it.

mod flood;

use std::{
    io::{BufRead, Write},
    process::Stdio,
    time::Duration,
};

use oxmcp::{
    client::{Client, ClientOptions},
    protocol::{CallToolResult, Tool},
    server::Server,
    transport::child::{ChildCommand, ChildTransport},
};
use serde_json::{Value, json};

use crate::flood::flood_bytes;

/// The environment variable that marks every process of one test run.
const MARKER: &str = "MCP_TEST_RUN";

/// `eprintln!` without its panic when stderr is gone (a dead host's pipe): a fixture must
/// only ever die the way its mode says.
macro_rules! log {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    match mode.as_str() {
        "server" if args.next().as_deref() == Some("--ws") => {
            serve_ws(args.next().as_deref(), args.next().as_deref())
        }
        "server" => serve(AfterEof::Exit),
        "ignore-eof" => serve(AfterEof::Linger),
        "ignore-sigterm" => {
            note_and_ignore_sigterm(c"ignore-sigterm: SIGTERM received, ignoring\n");
            serve(AfterEof::Linger)
        }
        "grandchild" => {
            start_sleeper(false);
            serve(AfterEof::Exit)
        }
        "grandchild-ignore-eof" => {
            start_sleeper(false);
            serve(AfterEof::Linger)
        }
        "escaped-grandchild" => {
            start_sleeper(true);
            serve(AfterEof::Exit)
        }
        "never-answers" => never_answers(),
        "flood-stderr" => {
            let bytes = args.next().and_then(|n| n.parse().ok()).unwrap_or(8 << 20);
            flood_stderr(bytes);
            serve(AfterEof::Exit)
        }
        "host" => host(&args.next().unwrap_or_else(|| "server".to_owned())),
        "sleeper" => sleeper(args.next().as_deref() == Some("--setsid")),
        other => {
            log!("mcp_fixture: unknown mode `{other}`");
            std::process::exit(2);
        }
    }
}

/// What a server does once its client has closed stdin.
#[derive(Clone, Copy)]
enum AfterEof {
    /// Exit with code 0, as a well-behaved server does.
    Exit,
    /// Keep running until a signal ends the process.
    Linger,
}

/// The input schema of an object with these properties.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
    })
}

fn fixture_server() -> Server {
    let server = Server::builder("mcp-fixture", "1.0.0").build();
    let added = [
        server.add_tool(
            Tool::new(
                "echo",
                "Echo the text back",
                object(json!({"text": {"type": "string"}}), &["text"]),
            ),
            |args: Value, _ctx| async move {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        ),
        server.add_tool(
            Tool::new(
                "die",
                "Write a message to stderr and exit with a code, mid-call",
                object(
                    json!({"code": {"type": "integer"}, "message": {"type": "string"}}),
                    &["code", "message"],
                ),
            ),
            |args: Value, _ctx| async move {
                log!("{}", args["message"].as_str().unwrap_or_default());
                let code = args["code"]
                    .as_i64()
                    .and_then(|c| i32::try_from(c).ok())
                    .unwrap_or(1);
                std::process::exit(code)
            },
        ),
        server.add_tool(
            Tool::new("hang", "Never answer", object(json!({}), &[])),
            |_args, _ctx| async {
                log!("hang: started");
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("unreachable"))
            },
        ),
    ];
    for result in added {
        if let Err(e) = result {
            log!("mcp_fixture: bad tool: {e}");
            std::process::exit(1);
        }
    }
    server
}

fn serve(after_eof: AfterEof) -> ! {
    let runtime = runtime_or_exit(tokio::runtime::Builder::new_current_thread(), "mcp_fixture");
    let served = runtime.block_on(fixture_server().serve_stdio());
    drop(runtime);
    if let Err(e) = &served {
        log!("mcp_fixture: serve failed: {e}");
    }
    match after_eof {
        AfterEof::Exit => std::process::exit(if served.is_ok() { 0 } else { 1 }),
        // Lingering servers outlive any failure of their pipes: only a signal ends them.
        AfterEof::Linger => {
            log!("fixture: stdin closed, staying up");
            sleep_forever()
        }
    }
}

/// `server --ws --port N`: the fixture server over WebSocket until the process is killed.
fn serve_ws(flag: Option<&str>, port: Option<&str>) -> ! {
    let port = match (flag, port.map(str::parse::<u16>)) {
        (Some("--port"), Some(Ok(port))) => port,
        _ => {
            log!("mcp_fixture: usage: server --ws --port N");
            std::process::exit(2);
        }
    };
    let runtime = runtime_or_exit(tokio::runtime::Builder::new_current_thread(), "mcp_fixture");
    let served = runtime.block_on(async {
        let options = oxmcp::transport::ws::WsServerOptions::port(port);
        let ws = fixture_server().serve_ws(options).await?;
        let mut stdout = std::io::stdout();
        if writeln!(stdout, "{}", ws.url())
            .and_then(|()| stdout.flush())
            .is_err()
        {
            std::process::exit(1);
        }
        std::future::pending::<()>().await;
        Ok::<(), oxmcp::Error>(())
    });
    if let Err(e) = served {
        log!("mcp_fixture: serve failed: {e}");
    }
    std::process::exit(1)
}

/// The runtime `builder` makes, or exit 1 saying why (`who` names the mode in the log).
fn runtime_or_exit(mut builder: tokio::runtime::Builder, who: &str) -> tokio::runtime::Runtime {
    match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            log!("{who}: no runtime: {e}");
            std::process::exit(1);
        }
    }
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Installs a SIGTERM handler that writes `note` to stderr and otherwise does nothing, so the
/// test can see that SIGTERM was delivered even though it did not end the process.
fn note_and_ignore_sigterm(note: &'static std::ffi::CStr) {
    static NOTE: std::sync::OnceLock<&'static std::ffi::CStr> = std::sync::OnceLock::new();
    let _ = NOTE.set(note);
    extern "C" fn on_sigterm(_: libc::c_int) {
        if let Some(note) = NOTE.get() {
            let bytes = note.to_bytes();
            // SAFETY: write(2) is async-signal-safe; the buffer is a 'static string.
            unsafe {
                libc::write(2, bytes.as_ptr().cast(), bytes.len());
            }
        }
    }
    // SAFETY: a zeroed sigaction is a valid starting point; the handler only calls write(2)
    // and reads a OnceLock that was set before the handler was installed.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigterm as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut()) != 0 {
            log!("mcp_fixture: sigaction failed");
            std::process::exit(1);
        }
    }
}

/// Starts `mcp_fixture sleeper` sharing this process's stdout and stderr (the protocol pipe
/// and the log), as a server's helper process or a forgotten `&` in a wrapper script would.
fn start_sleeper(escape: bool) {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            log!("mcp_fixture: no current exe: {e}");
            std::process::exit(1);
        }
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("sleeper")
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    if escape {
        cmd.arg("--setsid");
    }
    // The child handle is dropped on purpose: the server never waits for its helper.
    if let Err(e) = cmd.spawn() {
        log!("mcp_fixture: cannot start the sleeper: {e}");
        std::process::exit(1);
    }
}

fn sleeper(escape: bool) -> ! {
    note_and_ignore_sigterm(c"sleeper: SIGTERM received, ignoring\n");
    if escape {
        // SAFETY: setsid has no memory-safety preconditions.
        unsafe {
            libc::setsid();
        }
    }
    // The test waits for this line before it starts closing, so the handler is in place.
    log!("sleeper: ready pid={}", std::process::id());
    sleep_forever()
}

/// Answers `initialize`, then neither reads nor writes again: requests go unanswered, stdin
/// fills up, and EOF is never seen.
fn never_answers() -> ! {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match message["method"].as_str() {
            Some("initialize") => {
                let reply = json!({
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "never-answers", "version": "0"}
                    }
                });
                let written = writeln!(stdout, "{reply}").and_then(|()| stdout.flush());
                if written.is_err() {
                    std::process::exit(1);
                }
            }
            Some("notifications/initialized") => break,
            _ => {}
        }
    }
    log!("never-answers: initialized, going silent");
    sleep_forever()
}

fn flood_stderr(bytes: usize) {
    // One blocking write of several MiB: it only completes if the parent keeps reading.
    let flood = flood_bytes(bytes);
    if std::io::stderr().lock().write_all(&flood).is_err() {
        std::process::exit(1);
    }
}

/// A host process: starts a server through oxmcp, checks it answers, reports its pid and
/// blocks until killed. The test kills this host and expects the server to die with it.
fn host(server_mode: &str) -> ! {
    let runtime = runtime_or_exit(tokio::runtime::Builder::new_multi_thread(), "host");
    let started = runtime.block_on(async {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut command = ChildCommand::new(exe).arg(server_mode);
        if let Some(marker) = std::env::var_os(MARKER) {
            command = command.env(MARKER, marker);
        }
        let child = ChildTransport::spawn(command)
            .await
            .map_err(|e| e.to_string())?;
        let pid = child.pid();
        let client = Client::connect(child, ClientOptions::new("fixture-host", "0"))
            .await
            .map_err(|e| e.to_string())?;
        client.ping().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((pid, client))
    });
    let (pid, _client) = match started {
        Ok(started) => started,
        Err(e) => {
            log!("host: cannot start the server: {e}");
            std::process::exit(1);
        }
    };
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "{pid}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        std::process::exit(1);
    }
    match runtime.block_on(std::future::pending::<std::convert::Infallible>()) {}
}
