//! The CLI and the OAuth client against hostile peers (issue 29), run as a shell user would:
//! `target/debug/oxmcp` as a child process, the peers real processes and sockets on 127.0.0.1.
//!
//! - An MCP server (a Python script on stdio, so it can send any byte) whose server name,
//!   tool description, tool error, log and progress messages, JSON-RPC error messages, stderr
//!   and even a raw non-JSON stdout line carry ESC, BEL, CR, C1 and bidi characters: in every
//!   command (`call --trace`, `servers`, `tools` (JSON and prompt text), `resources`, `read`,
//!   `prompts`, `prompt`, `ping`, a crash with its stderr tail) no such character reaches
//!   stdout or stderr raw, stdout stays exact JSON (or, for `--format prompt`, text with the
//!   peer's characters escaped), and the exit codes are the documented ones.
//! - Authorization servers (hyper, `auth_server`) that put them in `error_description`, the
//!   token endpoint's `error` and the metadata's `resource`; that lie about their issuer on
//!   the 2025-03-26 path (no protected-resource metadata); that send no or another
//!   `token_type`; and that never answer (metadata, token endpoint). Checked: the exit code,
//!   what reached the terminal, what was stored in the token directory, that the browser
//!   opened at most once, and that a login against silent endpoints ends within
//!   `--timeout` + 1 s (the bound issue 29 sets).
//! - The issuer check on each discovery path in-process: RFC 8414 metadata, OpenID
//!   discovery, and the legacy path, each refusing a document naming another issuer with an
//!   error that names both.
//! - A request right after a failed flow (the handshake queued behind a timed-out probe)
//!   shares that failure: the user is asked once.

mod auth_server;
mod common;

use std::{
    net::SocketAddr,
    path::Path,
    process::Output,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use auth_server::{
    AuthServer, Handler, challenge, connect, json_response, oauth, origin, protected, redirect,
    serve,
};
use common::cli::{Scratch, executable, opened, stderr as err, stdout_json};
use http::StatusCode;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Only ever turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(60);

/// What a hostile peer puts in every string: retitle the window, clear the screen, return
/// to the start of the line and print a fake success, reverse the rest, a C1 CSI and a DEL.
const EVIL: &str =
    "\u{1b}]0;pwned\u{7}\u{1b}[2J\r\noxmcp: logged in to `x`\u{202e}gnp.exe\u{9b}\u{7f}";

/// A stdio MCP server that answers the handshake and every list and call with [`EVIL`] in
/// each string it chooses, and writes it to stderr. `crash`: only the stderr, then exit 3.
fn hostile_server(dir: &Path) -> String {
    let script = r#"#!/usr/bin/env python3
import json, sys
EVIL = json.loads(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "serve"
sys.stdout.reconfigure(encoding="utf-8")
sys.stderr.reconfigure(encoding="utf-8")
sys.stderr.write("starting" + EVIL + "\n")
sys.stderr.flush()
if mode == "crash":
    sys.exit(3)

def send(obj):
    # ensure_ascii=False: the bidi, C1 and DEL characters travel raw inside JSON strings.
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()

def result(i, r):
    send({"jsonrpc": "2.0", "id": i, "result": r})

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg or "method" not in msg:
        continue
    i, m, p = msg["id"], msg["method"], msg.get("params") or {}
    if m == "initialize":
        # Not JSON at all, raw ESC bytes: only a trace would show it.
        sys.stdout.write("\x1b[2Jjunk\x07\n")
        result(i, {"protocolVersion": p.get("protocolVersion", "2025-06-18"),
                   "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "logging": {}},
                   "serverInfo": {"name": "evil" + EVIL, "version": "1" + EVIL}})
    elif m == "tools/list":
        result(i, {"tools": [{"name": "boom", "description": "desc" + EVIL,
                              "inputSchema": {"type": "object"}}]})
    elif m == "tools/call":
        token = (p.get("_meta") or {}).get("progressToken")
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "error", "logger": "evil" + EVIL, "data": "log" + EVIL}})
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": 1, "total": 2,
                             "message": "half" + EVIL}})
        result(i, {"content": [{"type": "text", "text": "failed" + EVIL}], "isError": True})
    elif m == "resources/list":
        result(i, {"resources": [{"uri": "evil://x", "name": "r" + EVIL}]})
    elif m == "prompts/list":
        result(i, {"prompts": [{"name": "p", "description": "d" + EVIL}]})
    elif m == "ping":
        result(i, {})
    elif m in ("resources/read", "prompts/get"):
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32602, "message": "refused" + EVIL}})
    else:
        send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no " + m}})
"#;
    executable(&dir.join("hostile.py"), script)
}

/// Every character of `bytes` that must never reach a terminal raw (newlines excepted).
fn raw_controls(bytes: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(bytes)
        .chars()
        .filter(|&c| (c.is_control() && c != '\n') || oxmcp::sanitize::is_invisible_format(c))
        .collect()
}

fn assert_clean(what: &str, o: &Output) {
    for (stream, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        let raw = raw_controls(bytes);
        assert!(
            raw.is_empty(),
            "{what}: raw {raw:?} on {stream}:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.lines().any(|l| l.starts_with("oxmcp: logged in")),
        "{what}: a peer printed a line of its own:\n{err}"
    );
}

async fn oxmcp(dir: &Path, browser: &str, args: &[&str]) -> (Output, Duration) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_oxmcp"));
    cmd.args(args)
        .args(["--config", &dir.join("mcp.json").display().to_string()])
        .args(["--auth-dir", &dir.join("auth").display().to_string()])
        .env("BROWSER", browser)
        .kill_on_drop(true);
    let started = Instant::now();
    let out = tokio::time::timeout(PATIENCE, cmd.output())
        .await
        .expect("the CLI does not hang")
        .expect("the CLI runs");
    (out, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_a_server_sends_reaches_the_terminal_raw() {
    let scratch = Scratch::new("hostile", "mcp");
    let dir = &scratch.0;
    let script = hostile_server(dir);
    let evil = serde_json::to_string(EVIL).unwrap();
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {
            "evil": {"command": script, "args": [evil]},
        }})
        .to_string(),
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["call", "--trace", "evil", "boom"], 1),
        (vec!["servers", "--trace"], 0),
        (vec!["tools"], 0),
        (vec!["tools", "--format", "mcp"], 0),
        (vec!["tools", "--format", "prompt:react"], 0),
        (vec!["resources"], 0),
        (vec!["read", "--trace", "evil", "evil://x"], 5),
        (vec!["prompts"], 0),
        (vec!["prompt", "evil", "p"], 5),
        (vec!["ping", "--trace"], 0),
        (vec!["ping", "evil", "--trace"], 0),
    ];
    for (args, want) in cases {
        let (o, _) = oxmcp(dir, "false", &args).await;
        assert_eq!(o.status.code(), Some(want), "{args:?}: {}", err(&o));
        assert_clean(&format!("{args:?}"), &o);
        // The escapes are visible, so the user still sees what the server sent.
        let shown = format!("{}{}", err(&o), String::from_utf8_lossy(&o.stdout));
        assert!(
            shown.contains("\\x1b") || shown.contains("\\u001b"),
            "{args:?}: the hostile text vanished instead of being shown:\n{shown}"
        );
        if args.contains(&"prompt:react") {
            // Text for a model, not JSON: the description is in it, escaped.
            assert!(
                String::from_utf8_lossy(&o.stdout).contains("desc"),
                "{args:?}"
            );
        } else if want <= 1 {
            stdout_json(&o);
        } else {
            assert!(o.stdout.is_empty(), "{args:?}: a failure printed on stdout");
        }
    }

    // The JSON on stdout is exact: the tool's error text parses back to what was sent.
    let (o, _) = oxmcp(dir, "false", &["call", "evil", "boom"]).await;
    assert_eq!(
        stdout_json(&o)["content"][0]["text"],
        format!("failed{EVIL}")
    );
    assert!(
        err(&o).contains("half\\x1b]0;pwned"),
        "progress: {}",
        err(&o)
    );
    let (o, _) = oxmcp(dir, "false", &["servers"]).await;
    let status = stdout_json(&o);
    assert!(
        status[0]["server_info"]
            .as_str()
            .is_some_and(|s| s.contains(EVIL)),
        "{status}"
    );

    // A crash: the stderr tail is shown, escaped, with its exit code.
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {
            "evil": {"command": hostile_server(dir), "args": [serde_json::to_string(EVIL).unwrap(), "crash"]},
        }})
        .to_string(),
    )
    .unwrap();
    for args in [vec!["tools"], vec!["call", "evil", "boom"], vec!["ping"]] {
        let (o, _) = oxmcp(dir, "false", &args).await;
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", err(&o));
        assert_clean(&format!("crash {args:?}"), &o);
        assert!(err(&o).contains("starting\\x1b]0;pwned"), "{}", err(&o));
    }
}

// ---------------------------------------------------------------------------------------------
// Authorization servers.
// ---------------------------------------------------------------------------------------------

/// A "browser" that follows the authorization URL (the redirect reaches the CLI's listener)
/// and counts how often it was started.
fn browser(dir: &Path) -> String {
    let script = format!(
        r#"#!/usr/bin/env python3
import sys, urllib.request
open({mark:?}, "a").write("opened\n")
try:
    urllib.request.urlopen(sys.argv[1], timeout=30).read()
except Exception as e:
    sys.stderr.write("browser: %s\n" % e)
"#,
        mark = dir.join("opened").display().to_string(),
    );
    executable(&dir.join("browser.py"), &script)
}

/// Every file in the token directory, as text.
fn stored(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir.join("auth")) else {
        return String::new();
    };
    entries
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect::<Vec<_>>()
        .join("\n")
}

/// How the hostile authorization server behaves.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Trick {
    /// The authorization endpoint redirects with `error=access_denied` and an EVIL
    /// description.
    EvilDescription,
    /// The token endpoint refuses with an EVIL `error`.
    EvilTokenError,
    /// The token response has no `token_type`.
    NoTokenType,
    /// The token response's type is `mac`.
    MacToken,
    /// The token endpoint never answers.
    SilentToken,
}

/// A listener that accepts connections and never answers: a stalled endpoint.
async fn silent() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    addr
}

/// An authorization server playing `trick`, behind a real protected oxmcp MCP server.
async fn hostile_login(trick: Trick) -> (AuthServer, oxmcp::transport::http::HttpServer, String) {
    let state = Arc::new(std::sync::Mutex::new(auth_server::AsState::default()));
    let slot: Arc<std::sync::Mutex<String>> = Arc::default();
    let issuer_slot = slot.clone();
    let st = state.clone();
    let handler: Handler = Arc::new(move |req| {
        let issuer = issuer_slot.lock().unwrap().clone();
        let st = st.clone();
        Box::pin(async move {
            let q = auth_server::form(req.uri().query().unwrap_or_default().as_bytes());
            match req.uri().path() {
                "/.well-known/oauth-authorization-server" => json_response(
                    StatusCode::OK,
                    json!({
                        "issuer": issuer,
                        "authorization_endpoint": format!("{issuer}/authorize"),
                        "token_endpoint": format!("{issuer}/token"),
                        "registration_endpoint": format!("{issuer}/register"),
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["none"],
                    }),
                ),
                "/register" => {
                    st.lock().unwrap().registrations += 1;
                    json_response(StatusCode::CREATED, json!({"client_id": "client-1"}))
                }
                "/authorize" => {
                    st.lock().unwrap().authorizations += 1;
                    let back = q.get("redirect_uri").cloned().unwrap_or_default();
                    let state = q.get("state").cloned().unwrap_or_default();
                    let enc = |s: &str| {
                        percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                            .to_string()
                    };
                    let location = if trick == Trick::EvilDescription {
                        format!(
                            "{back}?error=access_denied&error_description={}&state={state}",
                            enc(EVIL)
                        )
                    } else {
                        format!("{back}?code=c1&state={state}")
                    };
                    redirect(StatusCode::FOUND, &location)
                }
                "/token" => match trick {
                    Trick::EvilTokenError => json_response(
                        StatusCode::BAD_REQUEST,
                        json!({"error": format!("invalid_grant{EVIL}"), "error_description": EVIL}),
                    ),
                    Trick::NoTokenType => json_response(
                        StatusCode::OK,
                        json!({"access_token": "at-untyped", "expires_in": 3600}),
                    ),
                    Trick::MacToken => json_response(
                        StatusCode::OK,
                        json!({"access_token": "at-mac", "token_type": "mac"}),
                    ),
                    Trick::SilentToken => {
                        // Answers long after any --timeout a test gives.
                        tokio::time::sleep(Duration::from_secs(120)).await;
                        json_response(StatusCode::OK, json!({}))
                    }
                    Trick::EvilDescription => {
                        json_response(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}))
                    }
                },
                _ => json_response(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
            }
        })
    });
    let addr = serve(handler).await;
    *slot.lock().unwrap() = format!("http://{addr}");
    let auth = AuthServer { addr, state };
    let (_server, http, url) = protected(&auth, &[], None).await;
    (auth, http, url)
}

fn login_config(dir: &Path, url: &str) {
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {"secure": {"url": url}}}).to_string(),
    )
    .unwrap();
}

async fn login(dir: &Path, timeout: &str) -> (Output, Duration) {
    let browser = browser(dir);
    oxmcp(
        dir,
        &browser,
        &[
            "login",
            "secure",
            "--allow-loopback",
            "--callback-port",
            "0",
            "--timeout",
            timeout,
        ],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_authorization_servers_cannot_write_to_the_terminal_or_the_store() {
    for (trick, message) in [
        (Trick::EvilDescription, "access_denied"),
        (Trick::EvilTokenError, "invalid_grant\\x1b]0;pwned"),
        (Trick::NoTokenType, "no `token_type`"),
        (Trick::MacToken, "of type `mac`"),
    ] {
        let scratch = Scratch::new("hostile", &format!("{trick:?}"));
        let dir = &scratch.0;
        let (_auth, http, url) = hostile_login(trick).await;
        login_config(dir, &url);
        let (o, _) = login(dir, "20").await;
        let what = format!("{trick:?}");
        assert_eq!(o.status.code(), Some(4), "{what}: {}", err(&o));
        assert_clean(&what, &o);
        assert!(err(&o).contains(message), "{what}: {}", err(&o));
        assert!(o.stdout.is_empty(), "{what}: login printed on stdout");
        assert_eq!(opened(dir), 1, "{what}: the browser opens once");
        let kept = stored(dir);
        assert!(
            !kept.contains("access_token") && !kept.contains("at-"),
            "{what}: tokens were stored: {kept}"
        );
        http.shutdown().await;
    }

    // Protected-resource metadata whose `resource` (quoted in the refusal) is EVIL.
    let scratch = Scratch::new("hostile", "resource");
    let dir = &scratch.0;
    let handler: Handler = Arc::new(move |req| {
        Box::pin(async move {
            if req.uri().path() == "/prm" {
                json_response(
                    StatusCode::OK,
                    json!({"resource": format!("https://evil.example/{EVIL}"),
                           "authorization_servers": ["https://evil.example"]}),
                )
            } else {
                challenge("Bearer resource_metadata=\"/prm\"")
            }
        })
    });
    let url = format!("http://{}/mcp", serve(handler).await);
    login_config(dir, &url);
    let (o, _) = login(dir, "20").await;
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert_clean("evil resource", &o);
    assert!(
        err(&o).contains("names `https://evil.example/\\x1b]0;pwned"),
        "{}",
        err(&o)
    );
    assert_eq!(opened(dir), 0);
    assert!(stored(dir).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_against_silent_endpoints_ends_within_its_timeout() {
    // The token endpoint never answers: one browser window, a clear message, on time.
    let scratch = Scratch::new("hostile", "silent-token");
    let dir = &scratch.0;
    let (_auth, http, url) = hostile_login(Trick::SilentToken).await;
    login_config(dir, &url);
    let (o, took) = login(dir, "3").await;
    eprintln!(
        "silent token endpoint: `login --timeout 3` took {took:?}:\n{}",
        err(&o)
    );
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(took < Duration::from_secs(4), "took {took:?}: {}", err(&o));
    assert!(err(&o).contains("did not answer"), "{}", err(&o));
    assert!(err(&o).contains("/token"), "{}", err(&o));
    assert_eq!(opened(dir), 1, "one login, one browser window");
    assert!(!stored(dir).contains("access_token"));
    http.shutdown().await;

    // The metadata endpoints never answer (a server that stalls its 401's discovery).
    let scratch = Scratch::new("hostile", "silent-metadata");
    let dir = &scratch.0;
    let stalled = silent().await;
    let prm = format!("http://{stalled}/prm");
    let handler: Handler = Arc::new(move |_req| {
        let prm = prm.clone();
        Box::pin(async move { challenge(&format!("Bearer resource_metadata=\"{prm}\"")) })
    });
    let url = format!("http://{}/mcp", serve(handler).await);
    login_config(dir, &url);
    let (o, took) = login(dir, "2").await;
    eprintln!("silent metadata: `login --timeout 2` took {took:?}");
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(took < Duration::from_secs(3), "took {took:?}: {}", err(&o));
    assert_clean("silent metadata", &o);
    assert_eq!(opened(dir), 0, "no browser before discovery ends");
}

/// An MCP "server" of the 2025-03-26 kind: 401 without `resource_metadata`, no
/// protected-resource metadata, and authorization-server metadata at its origin naming
/// `issuer` (its own origin when `None`). Counts the registrations it is sent.
async fn legacy_server(issuer: Option<Value>) -> (String, Arc<AtomicUsize>) {
    let registrations = Arc::new(AtomicUsize::new(0));
    let seen = registrations.clone();
    let slot: Arc<std::sync::Mutex<String>> = Arc::default();
    let origin_slot = slot.clone();
    let handler: Handler = Arc::new(move |req| {
        let seen = seen.clone();
        let origin = origin_slot.lock().unwrap().clone();
        let issuer = issuer.clone().unwrap_or_else(|| json!(origin));
        Box::pin(async move {
            match req.uri().path() {
                "/.well-known/oauth-authorization-server" => json_response(
                    StatusCode::OK,
                    json!({
                        "issuer": issuer,
                        "authorization_endpoint": format!("{origin}/authorize"),
                        "token_endpoint": format!("{origin}/token"),
                        "registration_endpoint": format!("{origin}/register"),
                    }),
                ),
                "/register" => {
                    seen.fetch_add(1, Ordering::SeqCst);
                    json_response(StatusCode::CREATED, json!({"client_id": "c"}))
                }
                "/mcp" => challenge("Bearer"),
                _ => json_response(StatusCode::NOT_FOUND, json!({})),
            }
        })
    });
    let addr = serve(handler).await;
    *slot.lock().unwrap() = format!("http://{addr}");
    (format!("http://{addr}/mcp"), registrations)
}

/// A legacy server whose metadata names another issuer.
async fn legacy_liar(issuer: Value) -> (String, Arc<AtomicUsize>) {
    legacy_server(Some(issuer)).await
}

/// A legacy server whose metadata names its own origin as the issuer.
async fn legacy_honest() -> (String, Arc<AtomicUsize>) {
    legacy_server(None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_legacy_path_refuses_a_lying_issuer_from_the_cli() {
    let scratch = Scratch::new("hostile", "legacy");
    let dir = &scratch.0;
    let evil_issuer = format!("https://evil.example{EVIL}");
    let (url, registrations) = legacy_liar(json!(evil_issuer)).await;
    login_config(dir, &url);
    let (o, _) = login(dir, "20").await;
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert_clean("legacy issuer", &o);
    let e = err(&o);
    assert!(
        e.contains("https://evil.example\\x1b") && e.contains(&origin(&url)),
        "the error names both issuers: {e}"
    );
    assert_eq!(
        registrations.load(Ordering::SeqCst),
        0,
        "registered with a liar"
    );
    assert_eq!(opened(dir), 0);
    assert!(stored(dir).is_empty(), "{}", stored(dir));
}

#[tokio::test]
async fn every_discovery_path_checks_the_issuer() {
    // The legacy path (no protected-resource metadata): the origin is the issuer.
    let (url, registrations) = legacy_liar(json!("https://evil.example")).await;
    let e = connect(&url, oauth(&[origin(&url)]))
        .await
        .expect_err("refused");
    assert_eq!(e.kind(), oxmcp::ErrorKind::Auth, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("`https://evil.example`") && text.contains(&format!("`{}`", origin(&url))),
        "{text}"
    );
    assert_eq!(registrations.load(Ordering::SeqCst), 0);
    // An honest legacy server is still used (its metadata names its origin, exactly): the
    // flow goes on to register there.
    let (url, registrations) = legacy_honest().await;
    let e = connect(&url, oauth(&[origin(&url)]))
        .await
        .expect_err("the stub has no authorization endpoint");
    assert!(
        !e.to_string().contains("RFC 8414"),
        "an honest issuer was refused: {e}"
    );
    assert_eq!(registrations.load(Ordering::SeqCst), 1);

    // RFC 8414 metadata reached through protected-resource metadata, and OpenID discovery
    // (the AS publishes only openid-configuration): another issuer is refused on both.
    for well_known in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let liar = lying_as(well_known).await;
        let auth = AuthServer {
            addr: liar,
            state: Arc::default(),
        };
        let (_server, http, url) = protected(&auth, &[], None).await;
        let e = connect(&url, oauth(&[auth.issuer(), origin(&url)]))
            .await
            .expect_err("refused");
        let text = e.to_string();
        assert_eq!(e.kind(), oxmcp::ErrorKind::Auth, "{well_known}: {e}");
        assert!(
            text.contains("`https://evil.example`") && text.contains(&auth.issuer()),
            "{well_known}: {text}"
        );
        assert!(text.contains("RFC 8414"), "{well_known}: {text}");
        http.shutdown().await;
    }
}

/// An authorization server publishing metadata only at `well_known`, naming
/// `https://evil.example` as its issuer.
async fn lying_as(well_known: &'static str) -> SocketAddr {
    let handler: Handler = Arc::new(move |req| {
        Box::pin(async move {
            if req.uri().path() == well_known {
                json_response(
                    StatusCode::OK,
                    json!({
                        "issuer": "https://evil.example",
                        "authorization_endpoint": "https://evil.example/authorize",
                        "token_endpoint": "https://evil.example/token",
                    }),
                )
            } else {
                json_response(StatusCode::NOT_FOUND, json!({}))
            }
        })
    });
    serve(handler).await
}

/// A user step that counts its calls and fails each (the user closed the window).
struct Declining(Arc<AtomicUsize>);

impl oxmcp::auth::Authorizer for Declining {
    fn authorize(
        &self,
        _url: String,
    ) -> futures::future::BoxFuture<'_, Result<String, oxmcp::Error>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(oxmcp::Error::Auth("the user closed the window".into())) })
    }
}

#[tokio::test]
async fn a_request_right_after_a_failed_flow_shares_its_failure() {
    use oxmcp::auth::{AuthProvider, Challenge, OAuthClient};
    let auth = AuthServer::start(json!({})).await;
    let (_server, http, url) = protected(&auth, &[], None).await;
    let asked = Arc::new(AtomicUsize::new(0));
    let mut options = oauth(&[auth.issuer(), origin(&url)]);
    options.authorizer = Some(Arc::new(Declining(asked.clone())));
    let client = OAuthClient::new(options).unwrap();
    let challenge = Challenge {
        status: 401,
        www_authenticate: Some("Bearer".into()),
        server: url.parse().unwrap(),
        token: None,
    };
    let first = client.challenged(&challenge).await.unwrap_err();
    // The handshake queued behind a timed-out probe is sent the moment the flow ends: it
    // gets the same failure, and the user is not asked a second time.
    let second = client.challenged(&challenge).await.unwrap_err();
    assert_eq!(asked.load(Ordering::SeqCst), 1, "the user was asked twice");
    assert_eq!(first.to_string(), second.to_string());
    assert!(first.to_string().contains("closed the window"), "{first}");
    http.shutdown().await;
}
