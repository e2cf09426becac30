//! A host that is safe by default (issue 41), against real server processes:
//!
//! - `least_privilege`: `includeTools` / `excludeTools` / `disabledTools` hide tools from the
//!   model and from calls (a hidden tool gets the unknown-tool error);
//! - `approval`: an agent run with an approval callback (allow, deny with and without a
//!   reason, edited arguments, a failing callback; `readOnlyHint` and `alwaysAllow` skip it);
//! - `pinned`: `protocolVersion` / `era` skip the `server/discover` probe, and a restarted
//!   server is not probed again;
//! - `lenient`: entries that do not parse are left out and reported, the rest still work;
//! - `cli`: `oxmcp call` asks before a destructive tool on a terminal and refuses without one,
//!   unless `--yes`; `oxmcp tools` and `servers` name the entries left out.
//!
//! The server is `old_server.py`, a hand-written server of the 2025 era that ignores the probe
//! and logs every message it gets (see its docstring).

#[path = "../common/mod.rs"]
mod common;

mod approval;
mod cli;
mod least_privilege;
mod lenient;
mod pinned;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use common::cli::Scratch;
use oxmcp::host::{Config, Host, HostOptions};
use serde_json::{Value, json};

/// One test's old server: its scratch directory and the log it writes.
pub struct OldServer {
    dir: Scratch,
}

impl OldServer {
    pub fn new(tag: &str) -> OldServer {
        OldServer {
            dir: Scratch::new("host-safety", tag),
        }
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.0.join("messages.log")
    }

    /// The config entry that starts it, with `extra` fields merged in.
    pub fn entry(&self, extra: Value) -> Value {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host_safety/old_server.py");
        let mut entry = json!({
            "command": "python3",
            "args": [script.display().to_string(), self.log_path().display().to_string()],
        });
        if let (Some(e), Value::Object(x)) = (entry.as_object_mut(), extra) {
            e.extend(x);
        }
        entry
    }

    /// A config with this server as `old`.
    pub fn config(&self, extra: Value) -> Value {
        json!({"mcpServers": {"old": self.entry(extra)}})
    }

    /// A config file with this server as `old` (for the CLI).
    pub fn config_file(&self, extra: Value) -> PathBuf {
        let path = self.dir.0.join("mcp.json");
        std::fs::write(&path, self.config(extra).to_string()).unwrap();
        path
    }

    /// Every message the server got, in order: (its pid, the method, the params).
    pub fn messages(&self) -> Vec<(u32, String, Value)> {
        std::fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let mut parts = line.splitn(3, ' ');
                let pid = parts.next().unwrap().parse().unwrap();
                let method = parts.next().unwrap().to_owned();
                let params = serde_json::from_str(parts.next().unwrap()).unwrap();
                (pid, method, params)
            })
            .collect()
    }

    /// The methods the server got, in order.
    pub fn methods(&self) -> Vec<String> {
        self.messages().into_iter().map(|(_, m, _)| m).collect()
    }

    /// The names of the tools it was asked to call, in order.
    pub fn calls(&self) -> Vec<(String, Value)> {
        self.messages()
            .into_iter()
            .filter(|(_, m, _)| m == "tools/call")
            .map(|(_, _, p)| {
                (
                    p["name"].as_str().unwrap().to_owned(),
                    p["arguments"].clone(),
                )
            })
            .collect()
    }

    /// A host of this server alone, whose `server/discover` probe gives up after 300 ms
    /// (the old server ignores it; the default 10 s would slow every test down).
    pub async fn host(&self, extra: Value) -> Host {
        self.host_with(extra, short_probe()).await
    }

    /// A host of this server alone.
    pub async fn host_with(&self, extra: Value, options: HostOptions) -> Host {
        let config = Config::from_value(&self.config(extra), &|_| None).unwrap();
        Host::start(config, options).await
    }
}

/// Host options whose probe gives up quickly.
pub fn short_probe() -> HostOptions {
    HostOptions {
        client_hook: Some(Arc::new(|_spec, mut options| {
            options.probe_timeout = Duration::from_millis(300);
            options
        })),
        ..HostOptions::default()
    }
}
