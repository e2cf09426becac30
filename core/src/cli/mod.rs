//! The `oxmcp` command: list the tools of the servers in an `mcpServers` config, in any LLM
//! provider's format, and call one from the shell.
//!
//! ```text
//! oxmcp tools   [--config mcp.json] [--format openai|responses|anthropic|gemini|gemini-openapi|langchain|mcp|prompt[:FORMAT]]
//! oxmcp call    [--config mcp.json] SERVER TOOL ['{"city":"Beijing"}']
//! oxmcp servers [--config mcp.json]
//! oxmcp login   [--config mcp.json] SERVER
//! oxmcp inspect [--config mcp.json] [--port N] [--no-open]
//! oxmcp resources | read SERVER URI | prompts | prompt SERVER NAME [ARGS] | ping [SERVER]
//! ```
//!
//! JSON goes to stdout, everything for the human (failed servers, progress, `--trace`) to
//! stderr, so `oxmcp tools | jq` works while a server is down. Exit codes are documented in
//! `--help`. Arguments are parsed by hand to keep the binary's dependencies those of the core.
//! Whatever a peer chose (names, error texts, stderr tails, progress messages, trace lines)
//! goes through [`crate::sanitize`] before it reaches the terminal, and the JSON on stdout
//! through its [`crate::sanitize::json_writer`]: no peer writes escape sequences to the user's
//! terminal. With `--timeout`, one deadline bounds the whole command.
//!
//! It lives in the library, not in `src/bin`, so that the Python wheel's console script and
//! the npm package's `bin` run this same code through their native modules: one CLI, three
//! ways to install it.

mod confirm;
mod features;
mod help;
mod inspect;
mod login;
mod ping;
mod prompts;
mod resources;

use std::{
    io::{IsTerminal, Write},
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use crate::{
    Error, ErrorKind,
    host::{Config, Host, HostOptions, ServerSpec, TransportSpec},
    sanitize,
    schema::{Namespace, Provider, TranslateOptions},
    session::RequestOptions,
    transport::tap::Direction,
};
use serde_json::{Value, json};

const HELP: &str = "\
oxmcp: run the MCP servers of an mcpServers config and use their tools from the shell

USAGE:
  oxmcp tools   [--config FILE] [--format FORMAT] [--no-strict] [--namespace MODE]
  oxmcp call    [--config FILE] [--yes] SERVER TOOL [ARGUMENTS_JSON]
  oxmcp servers [--config FILE]
  oxmcp login   [--config FILE] SERVER
  oxmcp resources [--config FILE]
  oxmcp read    [--config FILE] SERVER URI
  oxmcp prompts [--config FILE]
  oxmcp prompt  [--config FILE] SERVER NAME [ARGUMENTS_JSON]
  oxmcp ping    [--config FILE] [SERVER]
  oxmcp inspect [--config FILE] [--port N] [--no-open]

  tools    print every server's tools as JSON, in FORMAT:
           openai (Chat Completions, default), responses, anthropic, gemini
           (parametersJsonSchema), gemini-openapi (legacy parameters), langchain, mcp;
           or prompt[:hermes|json|react|xml]: the system-prompt text for a model without
           function calling (plain text, not JSON)
  call     call TOOL on SERVER with a JSON object of arguments; print the result as JSON,
           with a progress bar on stderr when the server reports progress; a tool marked
           destructive asks first on a terminal and is refused without one, unless --yes
  servers  print each server's state (connected, failed with its stderr tail, disabled)
  login    authorize with an OAuth-protected `url` server: your browser opens its sign-in
           page, the redirect comes back to 127.0.0.1, and the tokens are kept for the other
           commands (which refresh them, and ask you to log in again when they cannot)
  resources
           print every server's resources as JSON
  read     print one resource's contents (resources/read) as JSON
  prompts  print every server's prompts as JSON
  prompt   get one prompt (prompts/get), its arguments a JSON object of strings
  ping     ping every server (or SERVER) and print each round trip in milliseconds
  inspect  a web page on 127.0.0.1 to try the servers by hand: tools as forms, results,
           progress, resources, prompts, the server's questions, the trace; the URL (with
           its token) is the first line on stdout
  `oxmcp COMMAND --help` says more about one command.

OPTIONS:
  --config FILE     the config (Claude Desktop, Cursor, Claude Code .mcp.json or VS Code
                    shape); default: ./mcp.json, else ./.mcp.json
  --format FORMAT   see above
  --no-strict       OpenAI/Responses: do not use strict mode
  --namespace MODE  always (server__tool, default), collision, never
  --timeout SECS    the whole command's deadline: starting the servers, the handshake,
                    the request, and for login discovery, registration, the browser and
                    the token exchange (default: 30 per server start and the request's
                    own 60, and 300 for a login)
  --auth-dir DIR    where tokens are kept (default $OXMCP_AUTH_DIR, else
                    $XDG_CONFIG_HOME/oxmcp/auth or ~/.config/oxmcp/auth; files are 0600)
  --callback-port N login: the loopback port of the redirect (default 33418)
  --allow-loopback  let authorization endpoints be on this machine (development only)
  --trace           print every JSON-RPC message to stderr
  -y, --yes         call: run a tool marked destructive without asking
  -h, --help        this help
  -V, --version     the version

EXIT CODES:
  0  success
  1  the tool ran and returned an error result (isError)
  2  bad command line (unknown option, arguments that are not a JSON object)
  3  bad config (the message names the file, server and field)
  4  a server could not be started or reached (named on stderr; `tools` still prints the others)
  5  the request failed (protocol error, timeout, the server crashed during the call)
  6  call: a tool marked destructive was not confirmed (answered no, or no terminal and no
     --yes)
";

struct Args {
    command: String,
    config: Option<PathBuf>,
    format: String,
    strict: bool,
    namespace: Namespace,
    timeout: Duration,
    trace: bool,
    /// The whole command ends by then (`--timeout`); `None`: each step's own default.
    deadline: Option<Instant>,
    auth_dir: Option<PathBuf>,
    callback_port: Option<u16>,
    allow_loopback: bool,
    /// `inspect --port` (`None`: a free port).
    port: Option<u16>,
    /// `inspect --no-open`: print the URL, do not start the browser.
    no_open: bool,
    /// `call --yes`: run a destructive tool without asking.
    yes: bool,
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
        trace: false,
        deadline: None,
        auth_dir: None,
        callback_port: None,
        port: None,
        no_open: false,
        yes: false,
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
                print!("{}", help::command(&args.command).unwrap_or(HELP));
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
            "--no-open" => args.no_open = true,
            "--yes" | "-y" => args.yes = true,
            "--port" => {
                let v = value("--port")?;
                match v.parse::<u16>() {
                    Ok(p) => args.port = Some(p),
                    Err(_) => return Err(usage(format!("--port `{v}` is not a port"))),
                }
            }
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
                        args.deadline = Some(Instant::now() + args.timeout);
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
    if help::command(&args.command).is_none() {
        return usage(format!(
            "unknown command `{}` (tools, call, servers, login, resources, read, prompts, \
             prompt, ping, inspect)",
            args.command
        ));
    }
    let feature = match features::FeatureCommand::parse(&args) {
        Ok(i) => i,
        Err(code) => return code,
    };
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
        if !args.positional.is_empty()
            && args.command != "login"
            && args.command != "inspect"
            && feature.is_none()
        {
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
    // What is unwise in an entry (a `docker run` without `--rm`) is said once, here: the CLI
    // has no log for the host's warnings to go to.
    let named = (args.command == "call")
        .then(|| args.positional.first())
        .flatten();
    for spec in config
        .servers
        .iter()
        .filter(|s| named.is_none_or(|n| *n == s.name))
    {
        for warning in &spec.warnings {
            eprintln!(
                "oxmcp: warning: server `{}`: {}",
                sanitize::line(&spec.name),
                sanitize::line(warning)
            );
        }
    }
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
                "[trace {}] {arrow} {}",
                sanitize::line(server),
                sanitize::clean(&String::from_utf8_lossy(bytes), false, TRACE_CAP)
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
        options.auth = Some(login::factory(&args, None, args.deadline));
    }
    if let Some(command) = feature {
        return command.run(&args, &path, config, options).await;
    }
    if args.command == "inspect" {
        return inspect::inspect(&args, &path, config, options).await;
    }
    if args.command == "call" {
        // Only the named server is started: calling one tool should not wait for the others.
        options.connect_timeout = remaining(&args, options.connect_timeout);
        let server = &args.positional[0];
        let spec = match one_server(&config, &path, server) {
            Ok(spec) => spec,
            Err(code) => return code,
        };
        let host = start_one(spec, options).await;
        let code = call(
            &host,
            server,
            &args.positional[1],
            call_args.unwrap_or_default(),
            &args,
        )
        .await;
        host.close().await;
        return code;
    }
    options.connect_timeout = remaining(&args, options.connect_timeout);
    let host = Host::start(config, options).await;
    let failed = report_failures(&host).await;
    let code = match args.command.as_str() {
        "servers" => {
            // The lists are fetched so that the entries they leave out show in the status.
            host.tools().await;
            host.resources().await;
            host.prompts().await;
            report_entry_issues(&host).await;
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
                    report_entry_issues(&host).await;
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
                                sanitize::line(&r.tool),
                                sanitize::line(&r.server)
                            );
                        }
                        if let Some(why) = &r.fallback_reason {
                            eprintln!(
                                "oxmcp: `{}`: sent with strict: false because {}",
                                sanitize::line(&r.name),
                                sanitize::line(why)
                            );
                        }
                    }
                    report_entry_issues(&host).await;
                    match t.system_text() {
                        // The prompt provider's text is printed to paste or pipe. It quotes
                        // the servers' names and descriptions, so, being text and not JSON,
                        // it goes through the sanitizer; its newlines are the format's own.
                        Some(text) => println!("{}", sanitize::clean(&text, true, usize::MAX)),
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

/// A host of the one server a command names (the others in the config stay down).
async fn start_one(spec: ServerSpec, options: HostOptions) -> Host {
    let config = Config {
        servers: vec![spec],
        disabled: vec![],
    };
    Host::start(config, options).await
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
    eprintln!(
        "oxmcp: {}: server `{}` {}",
        path.display(),
        sanitize::line(server),
        sanitize::line(&why)
    );
    Err(3)
}

/// The longest `--trace` line shown; a longer frame is cut with `…`.
const TRACE_CAP: usize = 64 * 1024;

/// What is left of the command's deadline, or `default` without `--timeout`.
fn remaining(args: &Args, default: Duration) -> Duration {
    match args.deadline {
        Some(d) => d.saturating_duration_since(Instant::now()),
        None => default,
    }
}

/// Runs one request of the command within what is left of its deadline.
async fn within<T>(
    args: &Args,
    what: &str,
    request: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let Some(deadline) = args.deadline else {
        return request.await;
    };
    let left = deadline.saturating_duration_since(Instant::now());
    tokio::time::timeout(left, request)
        .await
        .unwrap_or_else(|_| {
            Err(Error::Timeout {
                method: what.to_owned(),
                after: args.timeout,
            })
        })
}

/// The exit code of a request that failed with `e` (see `--help`).
fn exit_code(e: &Error) -> u8 {
    match e.kind() {
        ErrorKind::Spawn | ErrorKind::ConnectionClosed => 4,
        ErrorKind::InvalidArgument => 2,
        _ => 5,
    }
}

/// Names on stderr the list entries each server's lists left out (they do not parse) or
/// repaired, so a tool missing from the output is explained.
async fn report_entry_issues(host: &Host) {
    for s in host.status().await {
        let server = sanitize::line(&s.name);
        for (issue, what) in s
            .skipped
            .iter()
            .map(|i| (i, "left out"))
            .chain(s.repaired.iter().map(|i| (i, "repaired")))
        {
            let list = issue.list.trim_end_matches('s');
            let name = issue.name.as_deref().map_or_else(
                || "(unnamed)".to_owned(),
                |n| format!("`{}`", sanitize::line(n)),
            );
            eprintln!(
                "oxmcp: server `{server}`: {what} {list} {name} (field `{}`): {}",
                sanitize::line(&issue.field),
                sanitize::line(&issue.reason)
            );
        }
    }
}

async fn report_failures(host: &Host) -> bool {
    let mut failed = false;
    for s in host.status().await {
        if s.state == "failed" {
            failed = true;
            let name = sanitize::line(&s.name);
            let error = s.error.as_deref().unwrap_or_default();
            // A closed child's error already ends with its stderr tail; the tail printed
            // below is the fuller one, so the message stops before its copy.
            let error = match s.stderr {
                Some(_) => error
                    .split(crate::error::STDERR_TAIL_HEADING)
                    .next()
                    .unwrap_or_default(),
                None => error,
            };
            eprintln!(
                "oxmcp: server `{name}` failed: {}",
                sanitize::clean(error, true, sanitize::BLOCK_CAP)
            );
            if let Some(tail) = s.stderr {
                eprintln!(
                    "--- `{name}` stderr (tail) ---\n{}",
                    sanitize::block(tail.trim_end())
                );
            }
        }
    }
    failed
}

async fn call(host: &Host, server: &str, tool: &str, arguments: Value, args: &Args) -> u8 {
    if report_failures(host).await {
        return 4;
    }
    if let Err(code) = confirm::destructive_call(host, server, tool, &arguments, args.yes).await {
        return code;
    }
    let deadline = args.deadline;
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
    // With `--timeout`, the call gets what is left of it, progress or not.
    let options = match deadline {
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            RequestOptions {
                timeout: Some(left),
                max_total_timeout: Some(left),
                ..options
            }
        }
        None => options,
    };
    let result = host.call_tool_with(server, tool, arguments, options).await;
    if let Ok(b) = bar.lock() {
        b.finish();
    }
    match result {
        Ok(r) => {
            print_json(&json!(r));
            if r.is_error() {
                eprintln!(
                    "oxmcp: `{}` returned an error: {}",
                    sanitize::line(tool),
                    sanitize::line(&r.text_content())
                );
                1
            } else {
                0
            }
        }
        Err(e) => {
            eprintln!(
                "oxmcp: calling `{}` on `{}` failed: {e}",
                sanitize::line(tool),
                sanitize::line(server)
            );
            exit_code(&e)
        }
    }
}

/// Pretty JSON on stdout, exact, with what JSON leaves raw but a terminal acts on (DEL, C1,
/// bidi) escaped too.
fn print_json(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = sanitize::json_writer(&mut out, v);
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
        // The server's message: one line, short, nothing that moves the cursor.
        let shown = message
            .map(|m| format!(" {}", sanitize::clean(m, false, 200)))
            .unwrap_or_default();
        let line = match total.filter(|t| *t > 0.0) {
            Some(total) => {
                let frac = (progress / total).clamp(0.0, 1.0);
                let filled = (frac * 30.0).round() as usize;
                format!(
                    "[{}{}] {:>3.0}% ({progress}/{total}){}",
                    "#".repeat(filled),
                    "-".repeat(30 - filled),
                    frac * 100.0,
                    shown
                )
            }
            None => format!("progress {progress}{shown}"),
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
