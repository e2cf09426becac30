//! What the feature behaviours share: each SDK's feature server (`feature_server.py`,
//! `feature_server.mjs`: resources, a template, subscriptions, prompts, completion, logging
//! and tools that ask the client) started over stdio and connected at a given revision, and
//! small helpers for their results.

use std::collections::BTreeMap;

use oxmcp::{Error, ProtocolVersion, client::ClientOptions, jsonrpc::ErrorObject};
use serde::Serialize;
use serde_json::Value;

use crate::common::Side;
use crate::sdk::{Sdk, skip};
use crate::stdio::StdioServer;

/// The 1×1 red PNG both feature servers and the conformance fixture serve.
pub const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

pub fn client_options() -> ClientOptions {
    ClientOptions::new("oxmcp-interop", "1.0.0")
}

/// The feature server connected at `version` with `options` (the mode the peer table says
/// reaches it); `None` where the peer is not installed or does not speak `version` (the
/// cell says why).
pub async fn start(
    sdk: &'static Sdk,
    version: ProtocolVersion,
    options: ClientOptions,
) -> Option<StdioServer> {
    let mode = sdk.mode_for(version).map_err(skip).ok()?;
    let launcher = sdk.launcher()?;
    let server = StdioServer::start(sdk, &launcher, "feature_server", options.protocol(mode)).await;
    let details = server.client.server();
    assert_eq!(
        (details.info.name.as_str(), details.info.version.as_str()),
        (sdk.names.features, sdk.version)
    );
    assert_eq!(server.client.protocol_version(), version);
    Some(server)
}

/// Closes the connection; the server may have logged only the failures its table allows.
pub async fn finish(server: StdioServer) {
    let allowed = server.sdk.features.logged_failures;
    server.finish_allowing(allowed).await;
}

/// The requests the server sent to our client, by method.
pub fn server_requests(server: &StdioServer) -> Vec<String> {
    server
        .wire
        .sent_by(Side::Server)
        .iter()
        .filter(|m| m.get("id").is_some())
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect()
}

/// Our client's answers to the server's requests, in order.
pub fn answers(server: &StdioServer) -> Vec<Value> {
    let asked: Vec<Value> = server
        .wire
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m.get("method").is_some() && m.get("id").is_some())
        .map(|m| m["id"].clone())
        .collect();
    server
        .wire
        .sent_by(Side::Client)
        .into_iter()
        .filter(|m| m.get("method").is_none() && asked.contains(&m["id"]))
        .collect()
}

/// The results the server sent that asked for input (2026-07-28).
pub fn input_required(server: &StdioServer) -> Vec<Value> {
    server
        .wire
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m["result"]["resultType"] == "input_required")
        .map(|m| m["result"].clone())
        .collect()
}

/// A result as JSON; over 2026-07-28 without the keys only that revision adds (`_meta` with
/// `serverInfo`, `ttlMs`, `cacheScope`, `resultType`), so every era compares against the
/// same value.
pub fn plain(server: &StdioServer, result: impl Serialize) -> Value {
    let mut value = serde_json::to_value(result).unwrap();
    if let (true, Value::Object(map)) = (server.stateless(), &mut value) {
        for key in ["_meta", "ttlMs", "cacheScope", "resultType"] {
            map.remove(key);
        }
    }
    value
}

/// The JSON-RPC error inside `err`.
pub fn rpc(err: Error) -> ErrorObject {
    match err {
        Error::Rpc(e) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

pub fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}
