//! `oxmcp call` before a destructive tool: on a terminal it asks (a pseudo-terminal made by
//! util-linux `script`, answered `y` or `n`), without one it refuses, and `--yes` or the
//! config's `alwaysAllow` runs it. `oxmcp tools` and `oxmcp servers` name the list entries
//! they left out. The configs pin the revision: the CLI has no probe timeout to shorten, and an
//! old server that ignores the probe would cost 10 s a run.

use std::{
    io::Write,
    process::{Command, Output, Stdio},
};

use serde_json::{Value, json};

use super::{
    OldServer,
    common::cli::{code, stderr, stdout_json},
};

const OXMCP: &str = env!("CARGO_BIN_EXE_oxmcp");

/// Runs `oxmcp ARGS` with stdin from /dev/null (no terminal).
fn oxmcp(args: &[&str]) -> Output {
    Command::new(OXMCP)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_destructive_tool_is_refused_without_a_terminal_unless_yes() {
    let old = OldServer::new("cli-refuse");
    let cfg = old.config_file(json!({"protocolVersion": "2025-11-25"}));
    let cfg = cfg.to_str().unwrap();
    let o = oxmcp(&["call", "--config", cfg, "old", "wipe", r#"{"path":"/"}"#]);
    assert_eq!(code(&o), 6, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`wipe` on server `old` is marked destructive")
            && stderr(&o).contains("--yes"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    assert!(old.calls().is_empty(), "the server never got the call");

    // A tool that is not marked destructive runs as before.
    let o = oxmcp(&["call", "--config", cfg, "old", "write", "{}"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    let o = oxmcp(&[
        "call",
        "--config",
        cfg,
        "--yes",
        "old",
        "wipe",
        r#"{"path":"/"}"#,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout_json(&o)["content"][0]["text"],
        r#"wipe ran with {"path": "/"}"#
    );

    // Always allowed in the config: no question.
    let cfg = old.config_file(json!({"alwaysAllow": ["wipe"], "era": "handshake"}));
    let o = oxmcp(&[
        "call",
        "--config",
        cfg.to_str().unwrap(),
        "old",
        "wipe",
        "{}",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let called: Vec<String> = old.calls().into_iter().map(|(n, _)| n).collect();
    assert_eq!(called, ["write", "wipe", "wipe"]);
}

/// Runs `oxmcp ARGS` on a pseudo-terminal (util-linux `script`), typing `answer`; `None` when
/// `script` is not installed.
fn on_a_terminal(args: &[&str], answer: &str) -> Option<Output> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipping the terminal case: util-linux `script` is not installed");
        return None;
    }
    let line: Vec<String> = std::iter::once(OXMCP)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &line.join(" "), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    Some(child.wait_with_output().unwrap())
}

#[test]
fn on_a_terminal_it_asks_and_runs_only_on_yes() {
    let old = OldServer::new("cli-ask");
    let cfg = old.config_file(json!({"protocolVersion": "2025-11-25"}));
    let cfg = cfg.to_str().unwrap();
    let Some(no) = on_a_terminal(
        &["call", "--config", cfg, "old", "wipe", r#"{"path":"/x"}"#],
        "n\n",
    ) else {
        return;
    };
    // `script` merges the terminal's output into its stdout.
    let shown = String::from_utf8_lossy(&no.stdout).into_owned();
    assert_eq!(no.status.code(), Some(6), "{shown}");
    assert!(
        shown.contains("marked destructive") && shown.contains("Run it? [y/N]"),
        "{shown}"
    );
    assert!(
        shown.contains(r#"{"path":"/x"}"#),
        "the arguments are shown: {shown}"
    );
    assert!(old.calls().is_empty());

    let yes = on_a_terminal(
        &["call", "--config", cfg, "old", "wipe", r#"{"path":"/x"}"#],
        "y\n",
    )
    .unwrap();
    let shown = String::from_utf8_lossy(&yes.stdout).into_owned();
    assert_eq!(yes.status.code(), Some(0), "{shown}");
    assert!(shown.contains("wipe ran with"), "{shown}");
    assert_eq!(old.calls().len(), 1);
}

#[test]
fn tools_and_servers_name_the_entries_they_left_out() {
    let old = OldServer::new("cli-lenient");
    let cfg = old.config_file(json!({"protocolVersion": "2025-11-25"}));
    let cfg = cfg.to_str().unwrap();
    let o = oxmcp(&["tools", "--config", cfg, "--format", "mcp"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let listed = stdout_json(&o);
    let names: Vec<&str> = listed["old"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"snake") && !names.contains(&"broken"),
        "{names:?}"
    );
    let err = stderr(&o);
    assert!(
        err.contains("server `old`: left out tool `broken` (field `inputSchema`)"),
        "{err}"
    );
    assert!(
        err.contains("repaired tool `snake` (field `input_schema`)"),
        "{err}"
    );

    let o = oxmcp(&["servers", "--config", cfg]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let status: Value = stdout_json(&o);
    let fields: Vec<&str> = status[0]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["inputSchema", "name", "arguments"]);
}

#[test]
fn a_docker_entry_without_rm_is_warned_about_once_on_stderr() {
    let old = OldServer::new("cli-docker");
    // Recognised by the command's file name; it does not exist, so the start fails (exit 4),
    // after the warning.
    let cfg = old.dir.0.join("docker.json");
    let config = json!({"mcpServers": {"box": {"command": "/nonexistent/docker", "args": ["run", "-i", "img"]}}});
    std::fs::write(&cfg, config.to_string()).unwrap();
    let o = oxmcp(&["servers", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.matches("oxmcp: warning: server `box`: `docker run` without `--rm`")
            .count(),
        1,
        "{err}"
    );
    // Without `-i` it is a config error naming the field, before anything starts.
    let config =
        json!({"mcpServers": {"box": {"command": "docker", "args": ["run", "--rm", "img"]}}});
    std::fs::write(&cfg, config.to_string()).unwrap();
    let o = oxmcp(&["servers", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("box") && stderr(&o).contains("args"),
        "{}",
        stderr(&o)
    );
}
