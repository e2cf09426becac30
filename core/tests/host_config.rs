//! `mcpServers` configs: every host's shape, variable expansion, transport inference, and bad
//! configs whose errors name the file, the server and the field.

use std::{path::Path, time::Duration};

use oxmcp::{
    Error, ErrorKind,
    host::{Config, TransportSpec},
};

fn vars(name: &str) -> Option<String> {
    match name {
        "API_KEY" => Some("sk-123".into()),
        "HOME" => Some("/home/ada".into()),
        "BIN" => Some("/opt/bin".into()),
        _ => None,
    }
}

fn parse(text: &str) -> Result<Config, Error> {
    Config::parse(text, Some(Path::new("/work/proj/.vscode/mcp.json")), &vars)
}

fn stdio(c: &Config, i: usize) -> (&str, &[String], &[(String, String)]) {
    match &c.servers[i].transport {
        TransportSpec::Stdio {
            command, args, env, ..
        } => (command, args, env),
        other => panic!("not stdio: {other:?}"),
    }
}

#[test]
fn claude_desktop_and_cursor_shape() {
    let c = parse(r#"{"mcpServers": {
        "weather": {"command": "${BIN}/weather", "args": ["--units", "metric", 3], "env": {"KEY": "${API_KEY}", "N": 1}},
        "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${env:API_KEY}"}},
        "off": {"command": "", "disabled": true, "env": {"X": "${UNSET_BUT_DISABLED}"}}
    }}"#)
    .unwrap();
    assert_eq!(c.servers.len(), 2);
    assert_eq!(c.disabled, vec!["off".to_owned()]);
    let (cmd, args, env) = stdio(&c, 0);
    assert_eq!(cmd, "/opt/bin/weather");
    assert_eq!(args, ["--units", "metric", "3"]);
    assert_eq!(
        env,
        [("KEY".into(), "sk-123".into()), ("N".into(), "1".into())]
    );
    assert_eq!(
        c.servers[1].transport,
        TransportSpec::Http {
            url: "https://example.com/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer sk-123".into())],
            legacy_sse: false
        }
    );
}

#[test]
fn claude_code_and_vscode_shapes() {
    let c = parse(r#"{"mcpServers": {
        "a": {"type": "stdio", "command": "npx", "args": ["-y", "pkg"], "cwd": "sub", "timeout": 2.5},
        "b": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "c": {"type": "http", "url": "http://127.0.0.1:9/mcp", "timeoutMs": 700}
    }}"#)
    .unwrap();
    match &c.servers[0].transport {
        TransportSpec::Stdio { cwd, .. } => {
            assert_eq!(cwd.as_deref(), Some(Path::new("/work/proj/.vscode/sub")))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.servers[0].timeout, Some(Duration::from_millis(2500)));
    assert_eq!(c.servers[2].timeout, Some(Duration::from_millis(700)));
    assert!(matches!(
        c.servers[1].transport,
        TransportSpec::Http {
            legacy_sse: true,
            ..
        }
    ));

    let v = parse(r#"{"inputs": [], "servers": {
        "fs": {"type": "stdio", "command": "mcp-fs", "args": ["${workspaceFolder}", "${userHome}/notes", "${NOPE:-fallback}"]},
        "gh": {"transport": "streamable-http", "url": "https://api.example.com/mcp"}
    }}"#)
    .unwrap();
    let (_, args, _) = stdio(&v, 0);
    assert_eq!(args, ["/work/proj", "/home/ada/notes", "fallback"]);
    assert!(matches!(v.servers[1].transport, TransportSpec::Http { .. }));
    // Config order is kept: tools and names follow it.
    assert_eq!(
        v.servers
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["fs", "gh"]
    );
}

fn config_error(text: &str) -> (Option<String>, Option<String>, String) {
    let e = parse(text).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with("/work/proj/.vscode/mcp.json: "),
        "{shown}"
    );
    match e {
        Error::Config { server, field, .. } => (server, field, shown),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_configs_name_the_server_and_field() {
    let cases: &[(&str, Option<&str>, Option<&str>, &str)] = &[
        (
            r#"{"mcpServers": {"w": {"args": ["x"]}}}"#,
            Some("w"),
            Some("command"),
            "needs `command`",
        ),
        (
            r#"{"mcpServers": {"w": {"type": "stdio", "command": "  "}}}"#,
            Some("w"),
            Some("command"),
            "empty",
        ),
        (
            r#"{"mcpServers": {"w": {"type": "socket", "url": "ws://x"}}}"#,
            Some("w"),
            Some("type"),
            "unknown transport `socket` (expected `stdio`, `http`, `sse` or `ws`)",
        ),
        (
            r#"{"mcpServers": {"w": {"type": "ws", "url": "http://x/mcp"}}}"#,
            Some("w"),
            Some("url"),
            "only ws:// and wss:// are supported",
        ),
        (
            r#"{"mcpServers": {"w": {"type": "http", "url": "wss://x/mcp"}}}"#,
            Some("w"),
            Some("url"),
            "set `type` to `ws` or leave it out",
        ),
        (
            r#"{"mcpServers": {"w": {"transport": "grpc", "url": "http://x"}}}"#,
            Some("w"),
            Some("transport"),
            "unknown transport",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "env": {"K": "${MISSING_VAR}"}}}}"#,
            Some("w"),
            Some("env.K"),
            "`${MISSING_VAR}` is not set",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "${MISSING_VAR}/bin"}}}"#,
            Some("w"),
            Some("command"),
            "is not set",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "args": ["${input:token}"]}}}"#,
            Some("w"),
            Some("args[0]"),
            "VS Code input",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "args": ["${unterminated"]}}}"#,
            Some("w"),
            Some("args[0]"),
            "unterminated",
        ),
        (
            r#"{"mcpServers": {"w": {"url": "ftp://example.com/mcp"}}}"#,
            Some("w"),
            Some("url"),
            "scheme `ftp`",
        ),
        (
            r#"{"mcpServers": {"w": {"url": "file:///etc/passwd"}}}"#,
            Some("w"),
            Some("url"),
            "scheme `file`",
        ),
        (
            r#"{"mcpServers": {"w": {"url": "example.com/mcp"}}}"#,
            Some("w"),
            Some("url"),
            "not a URL",
        ),
        (
            r#"{"mcpServers": {"w": {"url": "http:///mcp"}}}"#,
            Some("w"),
            Some("url"),
            "no host",
        ),
        (
            r#"{"mcpServers": {"w": {"type": "http"}}}"#,
            Some("w"),
            Some("url"),
            "missing",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "url": "http://h/"}}}"#,
            Some("w"),
            Some("type"),
            "both",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "args": "--flag"}}}"#,
            Some("w"),
            Some("args"),
            "array",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "args": [{}]}}}"#,
            Some("w"),
            Some("args[0]"),
            "string",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "env": ["K=V"]}}}"#,
            Some("w"),
            Some("env"),
            "object",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "timeout": -1}}}"#,
            Some("w"),
            Some("timeout"),
            "positive",
        ),
        (
            r#"{"mcpServers": {"w": {"command": "x", "disabled": "yes"}}}"#,
            Some("w"),
            Some("disabled"),
            "true or false",
        ),
        (
            r#"{"mcpServers": {"w": "npx server"}}"#,
            Some("w"),
            None,
            "must be an object",
        ),
        (
            r#"{"mcpServers": []}"#,
            None,
            Some("mcpServers"),
            "must be an object",
        ),
        (r#"{"tools": {}}"#, None, Some("mcpServers"), "missing"),
        (
            r#"{"mcpServers": {"w": {"command": "x",}}}"#,
            None,
            None,
            "not valid JSON",
        ),
        (r#"[1, 2]"#, None, None, "must be a JSON object"),
        ("", None, None, "not valid JSON"),
    ];
    for (text, server, field, message) in cases {
        let (s, f, shown) = config_error(text);
        assert_eq!(s.as_deref(), *server, "{text}: {shown}");
        assert_eq!(f.as_deref(), *field, "{text}: {shown}");
        assert!(shown.contains(message), "{text}: {shown}");
        if let Some(server) = server {
            assert!(shown.contains(&format!("server `{server}`")), "{shown}");
        }
    }
}

#[test]
fn a_missing_file_is_a_config_error_naming_it() {
    let e = Config::from_file("/nonexistent/dir/mcp.json").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(
        e.to_string()
            .starts_with("/nonexistent/dir/mcp.json: cannot read"),
        "{e}"
    );
}
