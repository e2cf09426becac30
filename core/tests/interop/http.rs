//! The HTTP cells' plumbing: a server process that announces its URL (an SDK's
//! `http_server` script in one of its flavours, or oxmcp's conformance example), and oxmcp's
//! client connected to it through the recording proxy, every JSON-RPC frame tapped for the
//! official-schema check.

use std::{
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use oxmcp::{
    Error,
    client::{Client, ClientOptions, ProtocolMode},
    protocol::{ElicitRequestParams, LoggingLevel},
    transport::{
        Transport,
        http::{HttpClientOptions, HttpClientTransport},
        tap::tap,
    },
};
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
    sync::mpsc,
};

use crate::common::peers::{Asked, Inbox, echo_sampling, elicitation_answer};
use crate::common::{Side, Wire};
use crate::proxy::Proxy;
use crate::sdk::{Launcher, Sdk};

/// How an SDK's HTTP server serves: Streamable HTTP with or without sessions, answering in
/// SSE or (`Json`) in plain JSON, or the legacy HTTP+SSE transport of 2024-11-05.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flavour {
    Sessions,
    Stateless,
    SessionsJson,
    StatelessJson,
    LegacySse,
}

impl Flavour {
    pub fn sessions(self) -> bool {
        matches!(self, Flavour::Sessions | Flavour::SessionsJson)
    }

    /// Whether requests are answered in plain JSON rather than SSE.
    pub fn json(self) -> bool {
        matches!(self, Flavour::SessionsJson | Flavour::StatelessJson)
    }
}

/// Which of an SDK's HTTP apps to serve: its tools server's, or its feature server's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum App {
    Tools,
    Features,
}

/// The SDK's `http_server` script serving `app` in `flavour`.
pub async fn sdk_server(sdk: &Sdk, launcher: &Launcher, app: App, flavour: Flavour) -> Peer {
    Peer::start(launcher.command("http_server", (sdk.http.server_args)(app, flavour))).await
}

/// The conformance fixture server over Streamable HTTP on a free port.
pub async fn conformance_server(stateless: bool) -> Peer {
    let mut command = Command::new(crate::common::example_bin("conformance_server"));
    command
        .args(["--http", "--port", "0"])
        .env("RUST_LOG", "warn");
    if stateless {
        command.arg("--stateless");
    }
    Peer::start(command).await
}

/// A server process that prints `listening on URL` (on stdout or stderr) once it serves.
/// Killed when dropped, so a failing test leaves nothing behind.
pub struct Peer {
    child: Child,
    pub url: String,
    output: Arc<Mutex<String>>,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

impl Peer {
    /// Starts `command` and waits (up to 30 s, a guard against a hang) for its URL.
    pub async fn start(mut command: Command) -> Peer {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("start the peer server");
        let output = Arc::new(Mutex::new(String::new()));
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        for reader in [
            Box::new(stdout) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
            Box::new(stderr),
        ] {
            let output = output.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(reader).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(url) = line.split("listening on ").nth(1) {
                        let _ = tx.send(url.trim().to_owned());
                    }
                    let mut out = output.lock().unwrap();
                    out.push_str(&line);
                    out.push('\n');
                }
            });
        }
        drop(tx);
        let url = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .ok()
            .flatten();
        let Some(url) = url else {
            let _ = child.start_kill();
            panic!(
                "the peer server announced no URL:\n{}",
                output.lock().unwrap()
            );
        };
        Peer { child, url, output }
    }

    /// What the server printed so far (both streams, interleaved by line).
    pub fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Kills the server and waits for it to exit.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// oxmcp's client connected to an SDK's HTTP server through the recording proxy.
pub struct Connected {
    pub client: Client,
    pub wire: Wire,
    pub proxy: Proxy,
    pub inbox: Inbox,
    pub peer: Peer,
}

impl Connected {
    pub async fn start(peer: Peer, options: ClientOptions) -> Connected {
        Connected::start_with(peer, options, HttpClientOptions::default())
            .await
            .unwrap_or_else(|(e, log)| panic!("connect: {e}\n{log}"))
    }

    pub async fn start_with(
        peer: Peer,
        options: ClientOptions,
        http: HttpClientOptions,
    ) -> Result<Connected, (Error, String)> {
        let proxy = Proxy::start(&peer.url).await;
        let transport = HttpClientTransport::new(&proxy.url_for(&peer.url), http).unwrap();
        let wire = Wire::new();
        let link = tap(transport.into_link(), wire.observer(Side::Client));
        let inbox = Inbox::default();
        match Client::connect(link, inbox.install(options)).await {
            Ok(client) => Ok(Connected {
                client,
                wire,
                proxy,
                inbox,
                peer,
            }),
            Err(e) => Err((
                e,
                format!("{}\n--- server ---\n{}", proxy.log(), peer.output()),
            )),
        }
    }

    pub fn log(&self) -> String {
        format!(
            "--- HTTP ---\n{}\n--- server ---\n{}",
            self.proxy.log(),
            self.peer.output()
        )
    }

    pub async fn call(&self, tool: &str, arguments: Value) -> (bool, String) {
        let result = self
            .client
            .call_tool(tool, arguments)
            .await
            .unwrap_or_else(|e| panic!("call {tool}: {e}\n{}", self.log()));
        (result.is_error(), result.text_content())
    }

    /// Closes the client and checks the server did not crash (print its SDK's marker).
    pub async fn finish(self, sdk: &Sdk) {
        self.client.close().await;
        let output = self.peer.output();
        assert!(
            !output.contains(sdk.http.crash_marker),
            "the server crashed:\n{output}"
        );
    }
}

/// A client that samples (echoing the prompt) and elicits (as
/// [`elicitation_answer`] says), and asks for log messages at info and above.
pub fn capable(mode: ProtocolMode, asked: &Asked) -> ClientOptions {
    let b = asked.clone();
    let options = ClientOptions::new("oxmcp-http", "1.0.0")
        .protocol(mode)
        .log_level(LoggingLevel::Info);
    echo_sampling(options, asked).elicitation(move |params: ElicitRequestParams, _cancel| {
        let asked = b.clone();
        async move {
            asked.push("elicitation", &params);
            Ok(elicitation_answer(&params.message))
        }
    })
}

pub fn options(mode: ProtocolMode) -> ClientOptions {
    ClientOptions::new("oxmcp-http", "1.0.0").protocol(mode)
}
