//! The interop suite: one table of behaviours, run against every peer.
//!
//! A behaviour is written once, as a function of the peer (a row of `sdk.rs`: the official
//! Python SDK and the official TypeScript SDK) and its other parameters (a protocol revision,
//! a client mode, a script). The table below stamps out one test per cell, named
//! `<behaviour>::<peer>`, so a failure names its cell. Where the peers differ, the peer table
//! says so in one place: a revision an SDK does not speak skips the cell and prints why, and
//! every difference in what an SDK answers (its schemas, its error wording) is a field of its
//! row. A new peer is a row there and a name in the peer lists (`=> python | typescript`) here.
//!
//! Both directions run, over stdio, Streamable HTTP (each flavour an SDK serves: sessions or
//! none, SSE or JSON answers), the legacy HTTP+SSE transport and WebSocket (each SDK's 1.x
//! transport, `ws.rs`), with real processes: oxmcp's
//! client drives each SDK's servers (`tests/interop/{python,node}/server.*`,
//! `feature_server.*`, `http_server.*`), every frame validated against the official schema of
//! the revision in use and, over HTTP, every exchange recorded by a proxy; and each SDK's own
//! client scripts drive oxmcp's examples (`weather_server`, `conformance_server`), asserting
//! what they receive.
//!
//! The peers come from `make interop-deps`, which exports `OXMCP_INTEROP_PYTHON` (the venv's
//! python), `OXMCP_INTEROP_WS_PYTHON` (the python of a second venv with the Python SDK 1.x,
//! for WebSocket) and `OXMCP_INTEROP_NODE_DIR` (the folder with the TypeScript SDK's
//! `node_modules`; `node` is taken from `PATH`). Without them the cells are skipped, unless
//! `OXMCP_REQUIRE_INTEROP=1`. The examples must be built (`make interop-test` does it).

#[path = "../common/mod.rs"]
mod common;

mod features;
mod features_asks;
mod features_notify;
mod features_rpc;
mod http;
mod http_clients;
mod http_legacy_sse;
mod http_server;
mod proxy;
mod sdk;
mod sdk_clients;
mod stdio;
mod stdio_tools;
mod tasks;
mod tools;
mod ws;

use http::Flavour::{Sessions, SessionsJson, Stateless, StatelessJson};
use oxmcp::ProtocolVersion::{V2024_11_05, V2025_03_26, V2025_11_25, V2026_07_28};
use oxmcp::client::ProtocolMode;
use sdk_clients::{FEATURE_CLIENT, WEATHER_CLIENT};

/// Stamps out the cells: for each behaviour a module, and in it one `#[tokio::test]` per
/// peer, which calls the behaviour with the peer's row and the listed arguments.
macro_rules! cells {
    ($($cell:ident: $behaviour:path $(, $arg:expr)* => $($peer:ident)|+;)*) => {
        $(
            mod $cell {
                #[allow(unused_imports)]
                use super::*;
                peer_tests!($behaviour, ($($arg),*), $($peer),+);
            }
        )*
    };
}

/// The tests of one behaviour, a peer each.
macro_rules! peer_tests {
    ($behaviour:path, $args:tt, $($peer:ident),+) => {
        $(
            #[tokio::test]
            async fn $peer() {
                call!($behaviour, crate::sdk::$peer(), $args);
            }
        )+
    };
}

/// `behaviour(peer, args…).await`.
macro_rules! call {
    ($behaviour:path, $peer:expr, ($($arg:expr),*)) => {
        $behaviour($peer $(, $arg)*).await
    };
}

cells! {
    // --- Handshake and tools: oxmcp's client against the SDK's tools server over stdio ---
    stdio_auto_mode: stdio_tools::auto_mode => python | typescript;
    stdio_stateless_refuses_a_late_handshake:
        stdio_tools::stateless_refuses_a_late_handshake => python | typescript;
    stdio_forced_stateless_mode: stdio_tools::forced_stateless_mode => python | typescript;
    stdio_auto_mode_recovers_from_a_timed_out_probe:
        stdio_tools::auto_mode_recovers_from_a_timed_out_probe => python | typescript;
    stdio_handshake_2025_11_25: stdio_tools::handshake, V2025_11_25 => python | typescript;
    stdio_handshake_2024_11_05: stdio_tools::handshake, V2024_11_05 => python | typescript;

    // --- Everything beyond tools: oxmcp's client against the SDK's feature server ---------
    resources_prompts_and_completion_2026_07_28:
        features_rpc::resources_prompts_and_completion, V2026_07_28 => python | typescript;
    resources_prompts_and_completion_2025_11_25:
        features_rpc::resources_prompts_and_completion, V2025_11_25 => python | typescript;
    resources_prompts_and_completion_2024_11_05:
        features_rpc::resources_prompts_and_completion, V2024_11_05 => python | typescript;
    resource_subscriptions_2025_11_25:
        features_notify::resource_subscriptions, V2025_11_25 => python | typescript;
    resource_updates_on_a_listen_stream_2026_07_28:
        features_notify::resource_updates_on_a_listen_stream => python | typescript;
    resources_subscribe_is_refused_locally_2026_07_28:
        features_notify::resources_subscribe_is_refused_locally_over_2026_07_28
        => python | typescript;
    logging_2026_07_28: features_notify::logging, V2026_07_28 => python | typescript;
    logging_2025_11_25: features_notify::logging, V2025_11_25 => python | typescript;
    server_asks_the_client_2026_07_28:
        features_asks::server_asks_the_client, V2026_07_28 => python | typescript;
    server_asks_the_client_2025_11_25:
        features_asks::server_asks_the_client, V2025_11_25 => python | typescript;
    a_client_that_cannot_answer_2026_07_28:
        features_asks::a_client_that_cannot_answer, V2026_07_28 => python | typescript;
    a_client_that_cannot_answer_2025_11_25:
        features_asks::a_client_that_cannot_answer, V2025_11_25 => python | typescript;

    // --- The SDK's client against oxmcp's examples over stdio -------------------------------
    weather_client_auto: sdk_clients::drives_oxmcp, WEATHER_CLIENT, "auto" => python | typescript;
    weather_client_legacy:
        sdk_clients::drives_oxmcp, WEATHER_CLIENT, "legacy" => python | typescript;
    weather_client_pinned_2026_07_28:
        sdk_clients::drives_oxmcp, WEATHER_CLIENT, "2026-07-28" => python | typescript;
    weather_client_rejects_another_server_auto:
        sdk_clients::rejects_another_server, WEATHER_CLIENT, "auto",
        "discover _meta serverInfo.name", "weather" => python | typescript;
    weather_client_rejects_another_server_legacy:
        sdk_clients::rejects_another_server, WEATHER_CLIENT, "legacy",
        "serverInfo.name", "weather" => python | typescript;
    feature_client_auto:
        sdk_clients::drives_oxmcp, FEATURE_CLIENT, "auto" => python | typescript;
    feature_client_legacy:
        sdk_clients::drives_oxmcp, FEATURE_CLIENT, "legacy" => python | typescript;
    feature_client_rejects_another_server_legacy:
        sdk_clients::rejects_another_server, FEATURE_CLIENT, "legacy",
        "serverInfo.name", "oxmcp-conformance" => python | typescript;

    // --- oxmcp's HTTP client against the SDK's HTTP server, through the recording proxy ----
    http_auto_mode_sessions: http_server::auto_mode, Sessions => python | typescript;
    http_auto_mode_stateless: http_server::auto_mode, Stateless => python | typescript;
    http_auto_mode_sessions_json: http_server::auto_mode, SessionsJson => python | typescript;
    http_auto_mode_stateless_json:
        http_server::auto_mode, StatelessJson => python | typescript;
    http_handshake_2025_11_25_sessions:
        http_server::handshake, Sessions, V2025_11_25 => python | typescript;
    http_handshake_2025_11_25_stateless:
        http_server::handshake, Stateless, V2025_11_25 => python | typescript;
    http_handshake_2025_11_25_sessions_json:
        http_server::handshake, SessionsJson, V2025_11_25 => python | typescript;
    http_handshake_2025_11_25_stateless_json:
        http_server::handshake, StatelessJson, V2025_11_25 => python | typescript;
    http_handshake_2025_03_26_sessions:
        http_server::handshake, Sessions, V2025_03_26 => python | typescript;
    http_every_request_declares_the_protocol_version:
        http_server::every_request_declares_the_protocol_version => python | typescript;
    http_log_messages_2026_07_28: http_server::log_messages, V2026_07_28 => python | typescript;
    http_log_messages_2025_11_25: http_server::log_messages, V2025_11_25 => python | typescript;
    http_progress_and_logs_sessions:
        http_server::progress_and_logs, Sessions => python | typescript;
    http_progress_and_logs_sessions_json:
        http_server::progress_and_logs, SessionsJson => python | typescript;
    http_questions_2026_07_28_sessions:
        http_server::questions, V2026_07_28, Sessions => python | typescript;
    http_questions_2025_11_25_sessions:
        http_server::questions, V2025_11_25, Sessions => python | typescript;
    http_questions_2025_11_25_sessions_json:
        http_server::questions, V2025_11_25, SessionsJson => python | typescript;
    http_stateless_server_cannot_ask:
        http_server::stateless_server_cannot_ask => python | typescript;
    http_unknown_session_is_404: http_server::unknown_session_is_404 => python | typescript;
    http_restarted_server_gets_a_new_session:
        http_server::restarted_server_gets_a_new_session => python | typescript;
    http_lost_session_that_cannot_be_reopened:
        http_server::lost_session_that_cannot_be_reopened => python | typescript;
    http_server_that_is_gone: http_server::server_that_is_gone => python | typescript;
    legacy_sse_auto_mode_falls_back:
        http_legacy_sse::fallback, ProtocolMode::Auto, V2025_11_25 => python | typescript;
    legacy_sse_handshake_2024_11_05:
        http_legacy_sse::fallback, ProtocolMode::Handshake(V2024_11_05), V2024_11_05
        => python | typescript;
    legacy_sse_refused_without_the_fallback:
        http_legacy_sse::refused_without_the_fallback => python | typescript;

    // --- The SDK's HTTP client against oxmcp's conformance server --------------------------
    http_client_auto_sessions: http_clients::drives_oxmcp, "auto", false => python | typescript;
    http_client_legacy_sessions:
        http_clients::drives_oxmcp, "legacy", false => python | typescript;
    http_client_pinned_2026_07_28_sessions:
        http_clients::drives_oxmcp, "2026-07-28", false => python | typescript;
    http_client_auto_stateless: http_clients::drives_oxmcp, "auto", true => python | typescript;
    http_client_legacy_stateless:
        http_clients::drives_oxmcp, "legacy", true => python | typescript;
    http_client_legacy_json:
        http_clients::drives_oxmcp_answering_in_json => python | typescript;
    http_client_legacy_sse: http_clients::legacy_sse_drives_oxmcp => python | typescript;
    http_client_rejects_another_server:
        http_clients::rejects_another_server => python | typescript;

    // --- Tasks (2025-11-25 experimental tasks), both directions, stdio and HTTP -------------
    tasks_sdk_client_drives_oxmcp_stdio: tasks::sdk_client_drives_oxmcp, "stdio" => python | typescript;
    tasks_sdk_client_drives_oxmcp_http: tasks::sdk_client_drives_oxmcp, "http" => python | typescript;
    tasks_oxmcp_drives_the_sdk_server_stdio:
        tasks::oxmcp_drives_sdk_server, "stdio" => python | typescript;
    tasks_oxmcp_drives_the_sdk_server_http:
        tasks::oxmcp_drives_sdk_server, "http" => python | typescript;

    // --- WebSocket: each SDK's 1.x transport (gone from both in 2.x), both directions -------
    ws_oxmcp_client_drives_the_sdk_server: ws::oxmcp_drives_sdk_server => python | typescript;
    ws_sdk_client_drives_oxmcp: ws::sdk_client_drives_oxmcp => python | typescript;
    ws_sdk_client_rejects_another_server:
        ws::sdk_client_rejects_another_server => python | typescript;
}
