//! Loading `mcpServers` configs, in every shape hosts write them.
//!
//! - Claude Desktop and Cursor: `{"mcpServers": {"name": {"command", "args", "env"}}}`, remote
//!   entries as `{"url", "headers"}`;
//! - Claude Code `.mcp.json`: the same with `"type": "stdio" | "http" | "sse"`, and oxmcp's
//!   `"type": "ws"` for a WebSocket server;
//! - VS Code `mcp.json`: `{"servers": {...}}` with `type`, `${env:VAR}` and `${workspaceFolder}`;
//! - FastMCP and LangChain: `transport` instead of `type`.
//!
//! The transport is inferred when not stated (`command` → a stdio child, a `ws://` or `wss://`
//! `url` → WebSocket, any other `url` → Streamable HTTP falling back to legacy SSE). `${VAR}`, `${env:VAR}` and `${VAR:-default}` expand in
//! every string; an unset variable is an error, not an empty string, because an empty API key
//! fails much later and much less clearly. Every error names the file, the server and the
//! field. Unknown fields are other hosts' business and are ignored; a `disabled` server is
//! skipped without being checked.
//!
//! What limits a server (least privilege), read in the other hosts' spellings:
//! `includeTools` (only these), `excludeTools` and `disabledTools` (never these; they win
//! over `includeTools`) decide which tools the host shows and calls; `alwaysAllow` (Roo,
//! Kilo) and `autoApprove` (Cline) name tools that skip the approval callback of an agent
//! run; `protocolVersion` (a revision) or `era` (`handshake` / `stateless`) pins the revision
//! and skips the `server/discover` probe.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use serde_json::{Map, Value};

use crate::Error;

/// How to reach one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportSpec {
    /// A child process speaking stdio.
    Stdio {
        /// The program (resolved against the current directory when it is a relative path).
        command: String,
        /// Its arguments, verbatim.
        args: Vec<String>,
        /// Variables set on top of the inherited allowlist.
        env: Vec<(String, String)>,
        /// Its working directory (relative paths are relative to the config file).
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (with the legacy HTTP+SSE fallback).
    Http {
        /// The endpoint.
        url: String,
        /// Extra headers on every request.
        headers: Vec<(String, String)>,
        /// `type: "sse"`: the server is known to speak the legacy transport.
        legacy_sse: bool,
    },
    /// WebSocket (`ws://` or `wss://`), one socket for the session.
    Ws {
        /// The endpoint.
        url: String,
        /// Extra headers on the upgrade request.
        headers: Vec<(String, String)>,
    },
}

/// One server entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    /// Its name in the config.
    pub name: String,
    /// How to reach it.
    pub transport: TransportSpec,
    /// A per-server connect timeout (`timeout`, seconds or milliseconds as `timeoutMs`).
    pub timeout: Option<Duration>,
    /// Which of its tools the host shows and calls.
    pub tools: ToolFilter,
    /// Tools whose calls skip approval (`alwaysAllow`, `autoApprove`).
    pub always_allow: Vec<String>,
    /// A pinned revision (`protocolVersion` or `era`): no `server/discover` probe.
    pub protocol: Option<crate::client::ProtocolMode>,
    /// What is unwise in the entry but not an error (a `docker run` without `--rm`), said
    /// once when the config is read; the CLI prints these.
    pub warnings: Vec<String>,
}

/// Which tools of a server the host shows and calls (`includeTools`, `excludeTools`,
/// `disabledTools`). A hidden tool is neither listed nor callable through the host: a call
/// that names one gets the unknown-tool error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// Only these (`includeTools`); `None`: every tool.
    pub include: Option<Vec<String>>,
    /// Never these (`excludeTools`, `disabledTools`); they win over `include`.
    pub exclude: Vec<String>,
}

impl ToolFilter {
    /// Whether the host shows and calls `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        !self.exclude.iter().any(|t| t == tool)
            && self
                .include
                .as_ref()
                .is_none_or(|only| only.iter().any(|t| t == tool))
    }
}

/// A loaded config.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Enabled servers, in the config's order.
    pub servers: Vec<ServerSpec>,
    /// Names of servers marked `disabled`.
    pub disabled: Vec<String>,
}

struct Ctx<'a> {
    file: Option<String>,
    dir: Option<PathBuf>,
    lookup: &'a dyn Fn(&str) -> Option<String>,
}

impl Ctx<'_> {
    fn err(&self, server: Option<&str>, field: Option<&str>, message: impl Into<String>) -> Error {
        Error::Config {
            file: self.file.clone(),
            server: server.map(String::from),
            field: field.map(String::from),
            message: message.into(),
        }
    }
}

impl Config {
    /// Reads a config file (variables from the process environment).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Config, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
            file: Some(path.display().to_string()),
            server: None,
            field: None,
            message: format!("cannot read the config: {e}"),
        })?;
        let lookup = |k: &str| std::env::var(k).ok();
        Config::parse(&text, Some(path), &lookup)
    }

    /// Parses config text. `path` (the file it came from) is used in messages and to resolve
    /// relative `cwd`s and `${workspaceFolder}`; `lookup` answers `${VAR}`.
    pub fn parse(
        text: &str,
        path: Option<&Path>,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, Error> {
        let ctx = Ctx {
            file: path.map(|p| p.display().to_string()),
            dir: path.and_then(|p| {
                let p = std::path::absolute(p).ok()?;
                p.parent().map(Path::to_path_buf)
            }),
            lookup,
        };
        let value: Value = serde_json::from_str(text)
            .map_err(|e| ctx.err(None, None, format!("not valid JSON: {e}")))?;
        Config::from_ctx(&value, &ctx)
    }

    /// Reads an already parsed config value.
    pub fn from_value(
        value: &Value,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, Error> {
        let ctx = Ctx {
            file: None,
            dir: None,
            lookup,
        };
        Config::from_ctx(value, &ctx)
    }

    fn from_ctx(value: &Value, ctx: &Ctx<'_>) -> Result<Config, Error> {
        let Value::Object(root) = value else {
            return Err(ctx.err(None, None, "the config must be a JSON object"));
        };
        let (key, servers) = match (root.get("mcpServers"), root.get("servers")) {
            (Some(s), _) => ("mcpServers", s),
            (None, Some(s)) => ("servers", s),
            (None, None) => {
                return Err(ctx.err(
                    None,
                    Some("mcpServers"),
                    "missing: expected `mcpServers` (Claude Desktop, Cursor, Claude Code) or \
                     `servers` (VS Code)",
                ));
            }
        };
        let Value::Object(servers) = servers else {
            return Err(ctx.err(None, Some(key), "must be an object of name → server"));
        };
        let mut config = Config::default();
        for (name, entry) in servers {
            let Value::Object(entry) = entry else {
                return Err(ctx.err(Some(name), None, "must be an object"));
            };
            match entry.get("disabled") {
                None | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => {
                    config.disabled.push(name.clone());
                    continue;
                }
                Some(_) => {
                    return Err(ctx.err(Some(name), Some("disabled"), "must be true or false"));
                }
            }
            config.servers.push(server(name, entry, ctx)?);
        }
        Ok(config)
    }
}

fn server(name: &str, entry: &Map<String, Value>, ctx: &Ctx<'_>) -> Result<ServerSpec, Error> {
    let err = |field: &str, message: String| ctx.err(Some(name), Some(field), message);
    let mut warnings = Vec::new();
    let string = |field: &str| -> Result<Option<String>, Error> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => expand(s, ctx).map(Some).map_err(|m| err(field, m)),
            Some(other) => Err(err(field, format!("must be a string, not `{other}`"))),
        }
    };
    let kind_field = if entry.contains_key("type") {
        "type"
    } else {
        "transport"
    };
    let kind = string(kind_field)?;
    let command = string("command")?;
    let url = string("url")?.or(string("serverUrl")?);
    let kind = match kind.as_deref() {
        Some("stdio") => Kind::Stdio,
        Some("http" | "streamable-http" | "streamable_http" | "streamableHttp") => Kind::Http,
        Some("sse") => Kind::Sse,
        Some("ws" | "websocket") => Kind::Ws,
        Some(other) => {
            return Err(err(
                kind_field,
                format!("unknown transport `{other}` (expected `stdio`, `http`, `sse` or `ws`)"),
            ));
        }
        None => match (&command, &url) {
            (Some(_), None) => Kind::Stdio,
            (None, Some(url)) if is_ws_url(url) => Kind::Ws,
            (None, Some(_)) => Kind::Http,
            (Some(_), Some(_)) => {
                return Err(err(
                    "type",
                    "has both `command` and `url`; set `type` to `stdio` or `http`".into(),
                ));
            }
            (None, None) => {
                return Err(err(
                    "command",
                    "missing: a server needs `command` (a stdio server) or `url` (an HTTP server)"
                        .into(),
                ));
            }
        },
    };
    let timeout = match (entry.get("timeout"), entry.get("timeoutMs")) {
        (Some(v), _) => Some(
            duration(v, 1000.0)
                .ok_or_else(|| err("timeout", "must be a positive number of seconds".into()))?,
        ),
        (None, Some(v)) => Some(duration(v, 1.0).ok_or_else(|| {
            err(
                "timeoutMs",
                "must be a positive number of milliseconds".into(),
            )
        })?),
        _ => None,
    };
    let transport = match kind {
        Kind::Stdio => {
            let command = command.filter(|c| !c.trim().is_empty()).ok_or_else(|| {
                err(
                    "command",
                    "missing or empty: a stdio server needs the program to run".into(),
                )
            })?;
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, a)| match a {
                        Value::String(s) => {
                            expand(s, ctx).map_err(|m| err(&format!("args[{i}]"), m))
                        }
                        Value::Number(n) => Ok(n.to_string()),
                        other => Err(err(
                            &format!("args[{i}]"),
                            format!("must be a string, not `{other}`"),
                        )),
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(err(
                        "args",
                        format!("must be an array of strings, not `{other}`"),
                    ));
                }
            };
            // `docker run` / `podman run`: an argv the server can talk through (see `docker`).
            warnings = super::docker::check(name, &command, &args).map_err(|m| err("args", m))?;
            let env = pairs(entry, "env", name, ctx)?;
            let cwd = string("cwd")?.map(|c| {
                let p = PathBuf::from(c);
                match (&ctx.dir, p.is_relative()) {
                    (Some(dir), true) => dir.join(p),
                    _ => p,
                }
            });
            TransportSpec::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        Kind::Http | Kind::Sse | Kind::Ws => {
            let what = if kind == Kind::Ws {
                "a WebSocket"
            } else {
                "an HTTP"
            };
            let url =
                url.ok_or_else(|| err("url", format!("missing: {what} server needs `url`")))?;
            check_url(&url, kind).map_err(|m| err("url", m))?;
            let headers = pairs(entry, "headers", name, ctx)?;
            match kind {
                Kind::Ws => TransportSpec::Ws { url, headers },
                _ => TransportSpec::Http {
                    url,
                    headers,
                    legacy_sse: kind == Kind::Sse,
                },
            }
        }
    };
    let names = |field: &str| -> Result<Option<Vec<String>>, Error> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(err(
                        &format!("{field}[{i}]"),
                        format!("must be a tool name (a string), not `{other}`"),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(err(
                field,
                format!("must be an array of tool names, not `{other}`"),
            )),
        }
    };
    let mut exclude = names("excludeTools")?.unwrap_or_default();
    exclude.extend(names("disabledTools")?.unwrap_or_default());
    let tools = ToolFilter {
        include: names("includeTools")?,
        exclude,
    };
    let mut always_allow = names("alwaysAllow")?.unwrap_or_default();
    always_allow.extend(names("autoApprove")?.unwrap_or_default());
    let protocol = pinned_protocol(entry).map_err(|(field, m)| err(field, m))?;
    Ok(ServerSpec {
        warnings,
        name: name.to_owned(),
        transport,
        timeout,
        tools,
        always_allow,
        protocol,
    })
}

/// `protocolVersion` (one revision) or `era` (`handshake` / `stateless`), as the client mode
/// that skips the probe.
fn pinned_protocol(
    entry: &Map<String, Value>,
) -> Result<Option<crate::client::ProtocolMode>, (&'static str, String)> {
    let text = |field: &'static str| match entry.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err((field, format!("must be a string, not `{other}`"))),
    };
    let (version, era) = (text("protocolVersion")?, text("era")?);
    crate::client::ProtocolMode::pinned(version, era).map_err(|m| {
        (
            if era.is_some() && version.is_none() {
                "era"
            } else {
                "protocolVersion"
            },
            m,
        )
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    Http,
    Sse,
    Ws,
}

fn duration(v: &Value, ms_per_unit: f64) -> Option<Duration> {
    let n = v.as_f64()?;
    (n > 0.0 && n.is_finite() && n * ms_per_unit < 86_400_000.0)
        .then(|| Duration::from_millis((n * ms_per_unit) as u64))
}

fn pairs(
    entry: &Map<String, Value>,
    field: &str,
    name: &str,
    ctx: &Ctx<'_>,
) -> Result<Vec<(String, String)>, Error> {
    match entry.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                let at = format!("{field}.{k}");
                let value = match v {
                    Value::String(s) => {
                        expand(s, ctx).map_err(|m| ctx.err(Some(name), Some(&at), m))?
                    }
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        return Err(ctx.err(
                            Some(name),
                            Some(&at),
                            format!("must be a string, not `{other}`"),
                        ));
                    }
                };
                Ok((k.clone(), value))
            })
            .collect(),
        Some(other) => Err(ctx.err(
            Some(name),
            Some(field),
            format!("must be an object of name → string, not `{other}`"),
        )),
    }
}

/// Whether `url` names a WebSocket endpoint (`ws://`, `wss://`).
fn is_ws_url(url: &str) -> bool {
    url.split_once("://").is_some_and(|(scheme, _)| {
        scheme.eq_ignore_ascii_case("ws") || scheme.eq_ignore_ascii_case("wss")
    })
}

/// Checks `url` has a scheme the transport speaks and a host.
fn check_url(url: &str, kind: Kind) -> Result<(), String> {
    let (schemes, example) = match kind {
        Kind::Ws => (["ws", "wss"], "ws://host/path"),
        _ => (["http", "https"], "http://host/path"),
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!("`{url}` is not a URL (expected {example})"));
    };
    if !schemes.iter().any(|s| scheme.eq_ignore_ascii_case(s)) {
        let hint = match kind {
            Kind::Ws => "",
            _ if is_ws_url(url) => " (for a WebSocket server, set `type` to `ws` or leave it out)",
            _ => "",
        };
        return Err(format!(
            "`{url}` has scheme `{scheme}`; only {}:// and {}:// are supported{hint}",
            schemes[0], schemes[1]
        ));
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() {
        return Err(format!("`{url}` has no host"));
    }
    Ok(())
}

/// Expands `${VAR}`, `${env:VAR}`, `${VAR:-default}`, `${workspaceFolder}`, `${userHome}`.
fn expand(s: &str, ctx: &Ctx<'_>) -> Result<String, String> {
    if !s.contains("${") {
        return Ok(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unterminated `${{` in `{s}`"));
        };
        let inner = &after[..end];
        out.push_str(&variable(inner, ctx)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn variable(inner: &str, ctx: &Ctx<'_>) -> Result<String, String> {
    if inner == "workspaceFolder" {
        // VS Code keeps mcp.json in `.vscode/`; the workspace is the folder above it.
        let dir = ctx
            .dir
            .clone()
            .ok_or("`${workspaceFolder}` needs a config file")?;
        let ws = if dir.file_name().is_some_and(|n| n == ".vscode") {
            dir.parent().map(Path::to_path_buf).unwrap_or(dir)
        } else {
            dir
        };
        return Ok(ws.display().to_string());
    }
    if inner == "userHome" {
        return (ctx.lookup)("HOME").ok_or_else(|| "`${userHome}`: HOME is not set".into());
    }
    if inner.starts_with("input:") {
        return Err(format!(
            "`${{{inner}}}` is a VS Code input prompt, which oxmcp cannot show; use an \
             environment variable (`${{env:NAME}}`) instead"
        ));
    }
    let inner = inner.strip_prefix("env:").unwrap_or(inner);
    let (name, default) = match inner.split_once(":-") {
        Some((n, d)) => (n, Some(d)),
        None => (inner, None),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("`${{{inner}}}` is not a variable name"));
    }
    match ((ctx.lookup)(name), default) {
        (Some(v), _) => Ok(v),
        (None, Some(d)) => Ok(d.to_owned()),
        (None, None) => Err(format!(
            "`${{{name}}}` is not set (export {name}=..., or write `${{{name}:-default}}`)"
        )),
    }
}
