//! The config's servers as the inspector runs them: one [`Host`] per server, so a server can
//! be connected again without touching the others, each with the inspector's hooks (trace
//! frames and notifications to the event log, questions to the person).
//!
//! A server is "connecting" until its first connection attempt ends; the page shows it, and
//! the URL is printed before any server has started.

use std::{collections::HashMap, sync::Arc};

use serde_json::{Value, json};
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

use super::{events::Events, questions::Questions};
use crate::{
    host::{Config, Host, HostOptions, ServerSpec},
    transport::tap::Direction,
};

/// One server of the config.
struct Entry {
    spec: ServerSpec,
    /// `None` while connecting.
    host: RwLock<Option<Arc<Host>>>,
}

/// Every server of the config, the event log and the open questions.
pub(crate) struct Servers {
    entries: Vec<Arc<Entry>>,
    disabled: Vec<String>,
    options: HostOptions,
    /// The config file, for the page's copy-as-`oxmcp call`.
    config_path: String,
    pub(crate) events: Arc<Events>,
    pub(crate) questions: Arc<Questions>,
    /// Running tool calls by the page's call id, to cancel them.
    pub(crate) calls: std::sync::Mutex<HashMap<String, CancellationToken>>,
}

impl Servers {
    /// The servers of `config` (none started yet), with `options` (the CLI's, for auth and
    /// timeouts) given the inspector's trace and client hooks.
    pub(crate) fn new(
        config: Config,
        config_path: &std::path::Path,
        mut options: HostOptions,
    ) -> Arc<Servers> {
        let events = Arc::new(Events::default());
        let questions = Arc::new(Questions::default());
        let frames = events.clone();
        options.trace = Some(Arc::new(
            move |server: &str, dir: Direction, bytes: &[u8]| {
                frames.frame(server, matches!(dir, Direction::Outbound), bytes);
            },
        ));
        let (q, e) = (questions.clone(), events.clone());
        options.client_hook = Some(Arc::new(move |spec: &ServerSpec, client| {
            let server = spec.name.clone();
            let log = e.clone();
            q.attach(&e, &spec.name, client)
                .on_notification(move |method, params| notification(&log, &server, method, params))
        }));
        Arc::new(Servers {
            entries: config
                .servers
                .into_iter()
                .map(|spec| {
                    Arc::new(Entry {
                        spec,
                        host: RwLock::new(None),
                    })
                })
                .collect(),
            disabled: config.disabled,
            options,
            config_path: config_path.display().to_string(),
            events,
            questions,
            calls: std::sync::Mutex::default(),
        })
    }

    /// Starts every server, concurrently, in the background.
    pub(crate) fn start_all(self: &Arc<Self>) {
        for entry in &self.entries {
            let (me, entry) = (self.clone(), entry.clone());
            tokio::spawn(async move { me.connect_entry(&entry).await });
        }
    }

    async fn connect_entry(&self, entry: &Entry) {
        let mut slot = entry.host.write().await;
        if let Some(old) = slot.take() {
            old.close().await;
        }
        self.events.push(
            "state",
            json!({"server": entry.spec.name, "state": "connecting"}),
        );
        let host = Host::start(
            Config {
                servers: vec![entry.spec.clone()],
                disabled: vec![],
            },
            self.options.clone(),
        )
        .await;
        let state = host
            .status()
            .await
            .first()
            .map(|s| s.state)
            .unwrap_or("failed");
        *slot = Some(Arc::new(host));
        self.events
            .push("state", json!({"server": entry.spec.name, "state": state}));
    }

    fn entry(&self, server: &str) -> Result<&Arc<Entry>, String> {
        self.entries
            .iter()
            .find(|e| e.spec.name == server)
            .ok_or_else(|| format!("no server named `{server}` in the config"))
    }

    /// Closes a server's session and starts it again; waits for the outcome.
    pub(crate) async fn reconnect(&self, server: &str) -> Result<Value, String> {
        let entry = self.entry(server)?.clone();
        self.connect_entry(&entry).await;
        Ok(self.describe(&entry).await)
    }

    /// The host of a connected server (never starts one: failed servers are connected again
    /// only by [`Servers::reconnect`], the person's explicit ask).
    pub(crate) async fn host(&self, server: &str) -> Result<Arc<Host>, String> {
        let entry = self.entry(server)?;
        let host = entry.host.read().await.clone();
        match host {
            Some(h) => Ok(h),
            None => Err(format!("server `{server}` is still connecting")),
        }
    }

    /// Every server: state, error and stderr tail, revision, capabilities, and its lists.
    pub(crate) async fn describe_all(&self) -> Value {
        let described =
            futures::future::join_all(self.entries.iter().map(|e| self.describe(e))).await;
        let mut servers: Vec<Value> = described;
        for name in &self.disabled {
            servers.push(json!({"name": name, "state": "disabled"}));
        }
        json!({
            "servers": servers,
            "roots": self.questions.roots(),
            "config": self.config_path,
        })
    }

    async fn describe(&self, entry: &Entry) -> Value {
        let name = &entry.spec.name;
        let Some(host) = entry.host.read().await.clone() else {
            return json!({"name": name, "state": "connecting"});
        };
        let Some(status) = host.status().await.into_iter().next() else {
            return json!({"name": name, "state": "failed", "error": "no status"});
        };
        let mut out = json!(status);
        if status.state != "connected" {
            return out;
        }
        let Ok(client) = host.server_client(name).await else {
            return out;
        };
        let details = client.server();
        out["capabilities"] = json!(details.capabilities);
        out["instructions"] = json!(details.instructions);
        out["tools"] = json!(
            host.tools()
                .await
                .into_iter()
                .flat_map(|(_, t)| (*t).clone())
                .collect::<Vec<_>>()
        );
        out["resources"] = json!(
            host.resources()
                .await
                .into_iter()
                .flat_map(|(_, r)| (*r).clone())
                .collect::<Vec<_>>()
        );
        out["prompts"] = json!(
            host.prompts()
                .await
                .into_iter()
                .flat_map(|(_, p)| (*p).clone())
                .collect::<Vec<_>>()
        );
        if details.capabilities.resources.is_some() {
            out["templates"] = match client.list_all_resource_templates().await {
                Ok(t) => json!(t),
                Err(e) => json!({"error": e.to_string()}),
            };
        }
        out
    }

    /// Every connected server's hosts, in config order.
    pub(crate) async fn hosts(&self) -> Vec<Arc<Host>> {
        let mut out = Vec::new();
        for e in &self.entries {
            if let Some(h) = e.host.read().await.clone() {
                out.push(h);
            }
        }
        out
    }

    /// Closes every server.
    pub(crate) async fn close(&self) {
        for host in self.hosts().await {
            host.close().await;
        }
    }
}

/// A server's notification into the event log: log messages as `log`, the rest as
/// `notification` (progress arrives with its call instead).
fn notification(events: &Events, server: &str, method: &str, params: Option<Value>) {
    if method == crate::protocol::methods::LOGGING_MESSAGE {
        let p = params.unwrap_or_default();
        events.push(
            "log",
            json!({
                "server": server,
                "level": p.get("level"),
                "logger": p.get("logger"),
                "data": p.get("data"),
            }),
        );
    } else if method != crate::protocol::methods::PROGRESS {
        events.push(
            "notification",
            json!({"server": server, "method": method, "params": params}),
        );
    }
}
