//! oxmcp's client connected to an SDK server script over stdio (a real child process), with
//! every frame recorded for the official-schema check, every notification kept, and the
//! server's stderr at hand for the crash check at the end.

use oxmcp::{
    Error,
    client::{Client, ClientOptions},
    transport::{Transport, child::StderrHandle, tap::tap},
};
use serde_json::Value;

use crate::common::peers::Inbox;
use crate::common::{Side, Wire};
use crate::sdk::{Launcher, Sdk};

pub struct StdioServer {
    pub sdk: &'static Sdk,
    pub client: Client,
    pub wire: Wire,
    pub inbox: Inbox,
    stderr: StderrHandle,
}

impl StdioServer {
    /// Starts the script `stem` and connects with `options` (their protocol mode included).
    pub async fn start(
        sdk: &'static Sdk,
        launcher: &Launcher,
        stem: &str,
        options: ClientOptions,
    ) -> StdioServer {
        let mode = options.protocol.clone();
        StdioServer::try_start(sdk, launcher, stem, options)
            .await
            .unwrap_or_else(|(e, stderr)| {
                panic!("connect to {} {stem} in {mode:?}: {e}\n{stderr}", sdk.label)
            })
    }

    /// Connects, or returns the error with the server's stderr.
    pub async fn try_start(
        sdk: &'static Sdk,
        launcher: &Launcher,
        stem: &str,
        options: ClientOptions,
    ) -> Result<StdioServer, (Error, String)> {
        let child = launcher
            .child(stem)
            .spawn()
            .await
            .unwrap_or_else(|e| panic!("start {} {stem}: {e}", sdk.label));
        let stderr = child.stderr();
        let wire = Wire::new();
        let link = tap(child.into_link(), wire.observer(Side::Client));
        let inbox = Inbox::default();
        match Client::connect(link, inbox.install(options)).await {
            Ok(client) => Ok(StdioServer {
                sdk,
                client,
                wire,
                inbox,
                stderr,
            }),
            Err(e) => Err((e, stderr.tail(4096))),
        }
    }

    pub fn stateless(&self) -> bool {
        self.client.protocol_version().is_stateless()
    }

    /// Methods of the requests and notifications our client sent, in order.
    pub fn methods_sent(&self) -> Vec<String> {
        self.wire
            .sent_by(Side::Client)
            .iter()
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect()
    }

    /// The requests our client sent with this method, in order.
    pub fn sent(&self, method: &str) -> Vec<Value> {
        self.wire
            .sent_by(Side::Client)
            .into_iter()
            .filter(|m| m["method"] == method && m.get("id").is_some())
            .collect()
    }

    /// Calls a tool that must answer (an error result is an answer): its flag and text.
    pub async fn call(&self, tool: &str, arguments: Value) -> (bool, String) {
        let result = self
            .client
            .call_tool(tool, arguments)
            .await
            .unwrap_or_else(|e| panic!("call {tool}: {e}"));
        (result.is_error(), result.text_content())
    }

    /// Closes the connection and checks the server did not crash: nothing in its stderr
    /// carries the SDK's crash marker, but for the failures in `expected` (a line starting
    /// with one of them follows each marker).
    pub async fn finish_allowing(self, expected: &[&str]) {
        self.client.close().await;
        let stderr = self.stderr.tail(1 << 16);
        for report in stderr.split(self.sdk.crash_marker).skip(1) {
            // The exception line is the first unindented one after the traceback's frames.
            let raised = report
                .lines()
                .skip(1)
                .find(|l| !l.is_empty() && !l.starts_with(' '))
                .unwrap_or_default();
            assert!(
                expected.iter().any(|e| raised.starts_with(e)),
                "{} reported an error:\n{stderr}",
                self.sdk.label
            );
        }
    }

    /// Closes the connection and checks the server reported no error at all.
    pub async fn finish(self) {
        self.finish_allowing(&[]).await;
    }
}
