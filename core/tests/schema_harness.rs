//! The schema checker used by every protocol test must itself catch invalid messages, or the
//! "everything we emit validates" guarantee would be vacuous.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::{Side, Wire};
use serde_json::json;

fn fails(frames: &[(Side, serde_json::Value)]) -> bool {
    let wire = Wire::new();
    for (side, msg) in frames {
        wire.record(*side, msg.to_string().as_bytes());
    }
    catch_unwind(AssertUnwindSafe(|| wire.assert_valid())).is_err()
}

#[test]
fn valid_traffic_passes() {
    assert!(!fails(&[
        (
            Side::Client,
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
        ),
        (
            Side::Server,
            json!({"jsonrpc":"2.0","id":1,"result":{
            "protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}})
        ),
        (
            Side::Client,
            json!({"jsonrpc":"2.0","method":"notifications/initialized"})
        ),
        (
            Side::Client,
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})
        ),
        (
            Side::Server,
            json!({"jsonrpc":"2.0","id":2,"result":{"tools":[]}})
        ),
    ]));
}

#[test]
fn a_malformed_result_is_caught() {
    assert!(fails(&[
        (
            Side::Client,
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})
        ),
        (
            Side::Server,
            json!({"jsonrpc":"2.0","id":2,"result":{"tools":"not a list"}})
        ),
    ]));
}

#[test]
fn a_malformed_request_is_caught() {
    assert!(fails(&[(
        Side::Client,
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}})
    )]));
}

#[test]
fn stateless_results_need_result_type() {
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}});
    let request =
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","_meta":meta}});
    assert!(fails(&[
        (Side::Client, request.clone()),
        (
            Side::Server,
            json!({"jsonrpc":"2.0","id":4,"result":{"content":[]}})
        ),
    ]));
    assert!(!fails(&[
        (Side::Client, request),
        (
            Side::Server,
            json!({"jsonrpc":"2.0","id":4,"result":{"content":[],"resultType":"complete"}})
        ),
    ]));
}

#[test]
fn content_kinds_are_checked_per_revision() {
    // Audio content does not exist in 2024-11-05.
    let init = |v: &str| {
        vec![
            (
                Side::Client,
                json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                "protocolVersion":v,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}),
            ),
            (
                Side::Server,
                json!({"jsonrpc":"2.0","id":1,"result":{
                "protocolVersion":v,"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}),
            ),
            (
                Side::Client,
                json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}),
            ),
            (
                Side::Server,
                json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}}),
            ),
        ]
    };
    assert!(fails(&init("2024-11-05")));
    assert!(!fails(&init("2025-03-26")));
}
