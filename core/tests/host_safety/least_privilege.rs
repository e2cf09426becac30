//! `includeTools`, `excludeTools` and `disabledTools`: what the config hides is neither shown
//! to the model nor callable through the host, and a call that names it cannot be told from a
//! call of a tool the server does not have.

use oxmcp::{
    Error, ErrorKind,
    host::Config,
    schema::{Provider, TranslateOptions},
};
use serde_json::json;

use super::OldServer;

fn names(tools: &[oxmcp::protocol::Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_tools_are_neither_listed_nor_called() {
    let old = OldServer::new("filter");
    let host = old
        .host(json!({
            "includeTools": ["peek", "write", "secret", "wipe"],
            "excludeTools": ["secret"],
            "disabledTools": ["wipe"],
        }))
        .await;
    let tools = host.tools().await;
    assert_eq!(names(&tools[0].1), ["peek", "write"]);
    // The model's tool list is the same two.
    let translated = host
        .translate(Provider::OpenAi, &TranslateOptions::default())
        .await;
    let offered: Vec<&str> = translated
        .reports
        .iter()
        .filter(|r| r.error.is_none())
        .map(|r| r.tool.as_str())
        .collect();
    assert_eq!(offered, ["peek", "write"]);

    assert!(host.call_tool("old", "write", json!({})).await.is_ok());
    // Hidden by `excludeTools`, by `disabledTools`, and by not being included: each gets the
    // error of a tool that does not exist, and the server never hears of the call.
    let hidden_error = |e: Error| match e {
        Error::Rpc(obj) => (obj.code, obj.message),
        other => panic!("not an RPC error: {other:?}"),
    };
    for tool in ["secret", "wipe", "crash"] {
        let e = host.call_tool("old", tool, json!({})).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Rpc);
        assert_eq!(hidden_error(e), (-32602, format!("Unknown tool: {tool}")));
    }
    let called: Vec<String> = old.calls().into_iter().map(|(name, _)| name).collect();
    assert_eq!(called, ["write"]);
    host.close().await;

    // A tool the server really lacks gets the server's own answer: the same error.
    let host = old.host(json!({"excludeTools": ["secret"]})).await;
    let missing = host.call_tool("old", "nope", json!({})).await.unwrap_err();
    assert_eq!(hidden_error(missing), (-32602, "Unknown tool: nope".into()));
    assert_eq!(old.calls().last().map(|c| c.0.as_str()), Some("nope"));
    host.close().await;
}

#[test]
fn a_filter_that_is_not_a_list_of_names_is_a_config_error_naming_the_field() {
    let old = OldServer::new("filter-bad");
    for (extra, field) in [
        (json!({"includeTools": "peek"}), "includeTools"),
        (json!({"excludeTools": ["peek", 3]}), "excludeTools[1]"),
        (json!({"disabledTools": {"peek": true}}), "disabledTools"),
        (json!({"alwaysAllow": [null]}), "alwaysAllow[0]"),
        (json!({"autoApprove": true}), "autoApprove"),
    ] {
        let e = Config::from_value(&old.config(extra.clone()), &|_| None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{extra}");
        let text = e.to_string();
        assert!(
            text.contains("old") && text.contains(field),
            "{extra}: {text}"
        );
    }
    // An empty include list hides everything: least privilege, not a mistake to fix up.
    let config = Config::from_value(&old.config(json!({"includeTools": []})), &|_| None).unwrap();
    assert!(!config.servers[0].tools.allows("peek"));
}
