//! The `oxmcp` command: list the tools of the servers in an `mcpServers` config, in any LLM
//! provider's format, and call one from the shell.
//!
//! ```text
//! oxmcp tools   [--config mcp.json] [--format openai|responses|anthropic|gemini|gemini-openapi|langchain|mcp|prompt[:FORMAT]]
//! oxmcp call    [--config mcp.json] SERVER TOOL ['{"city":"Beijing"}']
//! oxmcp servers [--config mcp.json]
//! oxmcp login   [--config mcp.json] SERVER
//! ```
//!
//! JSON goes to stdout, everything for the human (failed servers, progress, `--trace`) to
//! stderr, so `oxmcp tools | jq` works while a server is down. Exit codes are documented in
//! `--help`. Arguments are parsed by hand to keep the binary's dependencies those of the core.
//!
//! It lives in the library, not in `src/bin`, so that the Python wheel's console script and
//! the npm package's `bin` run this same code through their native modules: one CLI, three
//! ways to install it.

mod login;

use std::{
    io::{IsTerminal, Write},
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use crate::{
    ErrorKind,
    host::{Config, Host, HostOptions, ServerSpec, TransportSpec},
    schema::{Namespace, Provider, TranslateOptions},
    session::RequestOptions,
    transport::tap::Direction,
};
use serde_json::{Value, json};

const HELP: &str = "\
oxmcp: run the MCP servers of an mcpServers config and use their tools from the shell

USAGE:
  oxmcp tools   [--config FILE] [--format FORMAT] [--no-strict] [--namespace MODE]
  oxmcp call    [--config FILE] SERVER TOOL [ARGUMENTS_JSON]
  oxmcp servers [--config FILE]
  oxmcp login   [--config FILE] SERVER

  tools    print every server's tools as JSON, in FORMAT:
           openai (Chat Completions, default), responses, anthropic, gemini
           (parametersJsonSchema), gemini-openapi (legacy parameters), langchain, mcp;
           or prompt[:hermes|json|react|xml]: the system-prompt text for a model without
           function calling (plain text, not JSON)
  call     call TOOL on SERVER with a JSON object of arguments; print the result as JSON,
           with a progress bar on stderr when the server reports progress
  servers  print each server's state (connected, failed with its stderr tail, disabled)
  login    authorize with an OAuth-protected `url` server: your browser opens its sign-in
           page, the redirect comes back to 127.0.0.1, and the tokens are kept for the other
           commands (which refresh them, and ask you to log in again when they cannot)

OPTIONS:
  --config FILE     the config (Claude Desktop, Cursor, Claude Code .mcp.json or VS Code
                    shape); default: ./mcp.json, else ./.mcp.json
  --format FORMAT   see above
  --no-strict       OpenAI/Responses: do not use strict mode
  --namespace MODE  always (server__tool, default), collision, never
  --timeout SECS    per-server start and handshake timeout (default 30); for login, how
                    long to wait for you in the browser (default 300)
  --auth-dir DIR    where tokens are kept (default $OXMCP_AUTH_DIR, else
                    $XDG_CONFIG_HOME/oxmcp/auth or ~/.config/oxmcp/auth; files are 0600)
  --callback-port N login: the loopback port of the redirect (default 33418)
  --allow-loopback  let authorization endpoints be on this machine (development only)
  --trace           print every JSON-RPC message to stderr
  -h, --help        this help
  -V, --version     the version

EXIT CODES:
  0  success
  1  the tool ran and returned an error result (isError)
  2  bad command line (unknown option, arguments that are not a JSON object)
  3  bad config (the message names the file, server and field)
  4  a server could not be started or reached (named on stderr; `tools` still prints the others)
  5  the request failed (protocol error, timeout, the server crashed during the call)
";

struct Args {
    command: String,
    config: Option<PathBuf>,
    format: String,
    strict: bool,
    namespace: Namespace,
    timeout: Duration,
    timeout_given: bool,
    trace: bool,
    auth_dir: Option<PathBuf>,
    callback_port: Option<u16>,
    allow_loopback: bool,
    positional: Vec<String>,
}

fn usage(message: impl std::fmt::Display) -> u8 {
    eprintln!("oxmcp: {message}\nTry `oxmcp --help`.");
    2
}

fn parse_args(argv: Vec<String>) -> Result<Args, u8> {
    let mut argv = argv.into_iter();
    let mut args = Args {
        command: String::new(),
        config: None,
        format: "openai".into(),
        strict: true,
        namespace: Namespace::Always,
        timeout: Duration::from_secs(30),
        timeout_given: false,
        trace: false,
        auth_dir: None,
        callback_port: None,
        allow_loopback: false,
        positional: Vec::new(),
    };
    while let Some(a) = argv.next() {
        let mut value = |name: &str| {
            argv.next()
                .ok_or_else(|| usage(format!("`{name}` needs a value")))
        };
        match a.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                return Err(0);
            }
            "-V" | "--version" => {
                println!("oxmcp {}", env!("CARGO_PKG_VERSION"));
                return Err(0);
            }
            "--config" => args.config = Some(PathBuf::from(value("--config")?)),
            "--format" => args.format = value("--format")?,
            "--no-strict" => args.strict = false,
            "--allow-loopback" => args.allow_loopback = true,
            "--auth-dir" => args.auth_dir = Some(PathBuf::from(value("--auth-dir")?)),
            "--callback-port" => {
                let v = value("--callback-port")?;
                match v.parse::<u16>() {
                    Ok(p) => args.callback_port = Some(p),
                    Err(_) => return Err(usage(format!("--callback-port `{v}` is not a port"))),
                }
            }
            "--trace" => args.trace = true,
            "--namespace" => {
                args.namespace = value("--namespace")?
                    .parse::<Namespace>()
                    .map_err(|e| usage(format!("--namespace: {e}")))?;
            }
            "--timeout" => {
                let v = value("--timeout")?;
                match v.parse::<f64>() {
                    Ok(s) if s > 0.0 && s < 86_400.0 => {
                        args.timeout = Duration::from_secs_f64(s);
                        args.timeout_given = true;
                    }
                    _ => return Err(usage(format!("--timeout `{v}` is not a number of seconds"))),
                }
            }
            s if s.starts_with("--") => return Err(usage(format!("unknown option `{s}`"))),
            _ if args.command.is_empty() => args.command = a,
            _ => args.positional.push(a),
        }
    }
    if args.command.is_empty() {
        eprint!("{HELP}");
        return Err(2);
    }
    Ok(args)
}

fn config_path(args: &Args) -> PathBuf {
    if let Some(p) = &args.config {
        return p.clone();
    }
    ["mcp.json", ".mcp.json"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("mcp.json"))
}

/// Runs the command line `argv` (without the program name) and returns the exit code.
/// Must be called inside a tokio runtime; prints to this process's stdout and stderr.
pub async fn run(argv: Vec<String>) -> u8 {
    let args = match parse_args(argv) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if !["tools", "call", "servers", "login"].contains(&args.command.as_str()) {
        return usage(format!(
            "unknown command `{}` (tools, call, servers, login)",
            args.command
        ));
    }
    let format = args.format.clone();
    let provider = match format.as_str() {
        "mcp" => None,
        f => match Provider::parse(f) {
            Some(p) => Some(p),
            None => return usage(format!("unknown --format `{f}`")),
        },
    };
    // Arguments are checked before any server starts.
    let call_args = if args.command == "call" {
        match args.positional.as_slice() {
            [_, _] => Some(json!({})),
            [_, _, raw] => match serde_json::from_str::<Value>(raw) {
                Ok(v @ Value::Object(_)) => Some(v),
                Ok(_) => {
                    return usage(
                        "the tool arguments must be a JSON object, like '{\"city\":\"Beijing\"}'",
                    );
                }
                Err(e) => return usage(format!("the tool arguments are not valid JSON: {e}")),
            },
            _ => return usage("`call` takes SERVER TOOL [ARGUMENTS_JSON]"),
        }
    } else {
        if !args.positional.is_empty() && args.command != "login" {
            return usage(format!("unexpected argument `{}`", args.positional[0]));
        }
        None
    };
    let path = config_path(&args);
    let config = match Config::from_file(&path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("oxmcp: {e}");
            return 3;
        }
    };
    let mut options = HostOptions {
        connect_timeout: args.timeout,
        ..HostOptions::default()
    };
    if args.trace {
        options.trace = Some(Arc::new(|server: &str, dir: Direction, bytes: &[u8]| {
            let arrow = match dir {
                Direction::Outbound => "→",
                Direction::Inbound => "←",
            };
            let mut err = std::io::stderr().lock();
            let _ = writeln!(
                err,
                "[trace {server}] {arrow} {}",
                String::from_utf8_lossy(bytes)
            );
        }));
    }
    if args.command == "login" {
        return login::login(&args, &path, config, options).await;
    }
    // Tokens from an earlier `oxmcp login` are used (and refreshed) for `url` servers.
    if config
        .servers
        .iter()
        .any(|s| matches!(s.transport, TransportSpec::Http { .. }))
    {
        options.auth = Some(login::factory(&args, None));
    }
    if args.command == "call" {
        // Only the named server is started: calling one tool should not wait for the others.
        let server = &args.positional[0];
        let spec = match one_server(&config, &path, server) {
            Ok(spec) => spec,
            Err(code) => return code,
        };
        let host = Host::start(
            Config {
                servers: vec![spec],
                disabled: vec![],
            },
            options,
        )
        .await;
        let code = call(
            &host,
            server,
            &args.positional[1],
            call_args.unwrap_or_default(),
        )
        .await;
        host.close().await;
        return code;
    }
    let host = Host::start(config, options).await;
    let failed = report_failures(&host).await;
    let code = match args.command.as_str() {
        "servers" => {
            print_json(&json!(host.status().await));
            0
        }
        _ => {
            match provider {
                None => {
                    let mut out = serde_json::Map::new();
                    for (server, tools) in host.tools().await {
                        out.insert(server, json!(*tools));
                    }
                    print_json(&Value::Object(out));
                }
                Some(p) => {
                    let t = host
                        .translate(
                            p,
                            &TranslateOptions {
                                strict: args.strict,
                                namespace: args.namespace,
                            },
                        )
                        .await;
                    for r in &t.reports {
                        if let Some(e) = &r.error {
                            eprintln!(
                                "oxmcp: tool `{}` of server `{}` left out: {e}",
                                r.tool, r.server
                            );
                        }
                        if let Some(why) = &r.fallback_reason {
                            eprintln!("oxmcp: `{}`: sent with strict: false because {why}", r.name);
                        }
                    }
                    match t.system_text() {
                        // The prompt provider's text is printed as is, to paste or pipe.
                        Some(text) => println!("{text}"),
                        None => print_json(&t.request_tools()),
                    }
                }
            }
            0
        }
    };
    host.close().await;
    if failed && code == 0 { 4 } else { code }
}

/// The config entry of `server`, or exit code 3 with a message saying why there is none.
fn one_server(config: &Config, path: &std::path::Path, server: &str) -> Result<ServerSpec, u8> {
    if let Some(spec) = config.servers.iter().find(|s| s.name == server) {
        return Ok(spec.clone());
    }
    let known: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    let why = if config.disabled.iter().any(|d| d == server) {
        "is disabled in the config".to_owned()
    } else {
        format!("is not in the config (servers: {})", known.join(", "))
    };
    eprintln!("oxmcp: {}: server `{server}` {why}", path.display());
    Err(3)
}

async fn report_failures(host: &Host) -> bool {
    let mut failed = false;
    for s in host.status().await {
        if s.state == "failed" {
            failed = true;
            eprintln!(
                "oxmcp: server `{}` failed: {}",
                s.name,
                s.error.unwrap_or_default()
            );
            if let Some(tail) = s.stderr {
                eprintln!("--- `{}` stderr (tail) ---\n{}", s.name, tail.trim_end());
            }
        }
    }
    failed
}

async fn call(host: &Host, server: &str, tool: &str, arguments: Value) -> u8 {
    if report_failures(host).await {
        return 4;
    }
    let bar = Arc::new(Mutex::new(Progress::default()));
    let seen = bar.clone();
    let options = RequestOptions {
        on_progress: Some(Box::new(move |p| {
            if let Ok(mut b) = seen.lock() {
                b.draw(p.progress, p.total, p.message.as_deref());
            }
        })),
        ..RequestOptions::default()
    };
    let result = host.call_tool_with(server, tool, arguments, options).await;
    if let Ok(b) = bar.lock() {
        b.finish();
    }
    match result {
        Ok(r) => {
            print_json(&json!(r));
            if r.is_error() {
                eprintln!("oxmcp: `{tool}` returned an error: {}", r.text_content());
                1
            } else {
                0
            }
        }
        Err(e) => {
            eprintln!("oxmcp: calling `{tool}` on `{server}` failed: {e}");
            match e.kind() {
                ErrorKind::Spawn | ErrorKind::ConnectionClosed => 4,
                ErrorKind::InvalidArgument => 2,
                _ => 5,
            }
        }
    }
}

fn print_json(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, v);
    let _ = writeln!(out);
}

/// A progress bar on stderr: redrawn in place on a terminal, one line per update otherwise.
#[derive(Default)]
struct Progress {
    drawn: bool,
}

impl Progress {
    fn draw(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let tty = std::io::stderr().is_terminal();
        let line = match total.filter(|t| *t > 0.0) {
            Some(total) => {
                let frac = (progress / total).clamp(0.0, 1.0);
                let filled = (frac * 30.0).round() as usize;
                format!(
                    "[{}{}] {:>3.0}% ({progress}/{total}){}",
                    "#".repeat(filled),
                    "-".repeat(30 - filled),
                    frac * 100.0,
                    message.map(|m| format!(" {m}")).unwrap_or_default()
                )
            }
            None => format!(
                "progress {progress}{}",
                message.map(|m| format!(" {m}")).unwrap_or_default()
            ),
        };
        let mut err = std::io::stderr().lock();
        let _ = if tty {
            write!(err, "\r\x1b[2K{line}")
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
        self.drawn = true;
    }

    fn finish(&self) {
        if self.drawn && std::io::stderr().is_terminal() {
            eprintln!();
        }
    }
}
