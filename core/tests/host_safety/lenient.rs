//! One bad entry does not spoil a list: the old server lists a tool whose schema is a string,
//! a resource whose name is a number and a prompt whose arguments are a string, each next to
//! good ones, and a tool spelled `input_schema`. The host shows the good ones and the repaired
//! one, reports what it left out (server, list, name, field) in its status, and the repaired
//! tool is callable.

use serde_json::json;

use super::OldServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_entries_are_left_out_and_reported_and_the_rest_work() {
    let old = OldServer::new("lenient");
    let host = old.host(json!({})).await;
    let tools = host.tools().await;
    let names: Vec<&str> = tools[0].1.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["peek", "wipe", "write", "secret", "crash", "snake"]);
    assert_eq!(host.resources().await[0].1.len(), 1);
    assert_eq!(host.prompts().await[0].1.len(), 1);

    let status = host.status().await;
    assert_eq!(status[0].state, "connected");
    let skipped: Vec<(&str, Option<&str>, &str)> = status[0]
        .skipped
        .iter()
        .map(|s| (s.list, s.name.as_deref(), s.field.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("tools", Some("broken"), "inputSchema"),
            ("resources", Some("file:///bad.txt"), "name"),
            ("prompts", Some("bad"), "arguments"),
        ]
    );
    let repaired: Vec<(&str, Option<&str>, &str)> = status[0]
        .repaired
        .iter()
        .map(|s| (s.list, s.name.as_deref(), s.field.as_str()))
        .collect();
    assert_eq!(repaired, [("tools", Some("snake"), "input_schema")]);
    // As JSON (what Python, Node and `oxmcp servers` show).
    let as_json = serde_json::to_value(&status[0]).unwrap();
    assert_eq!(as_json["skipped"][0]["field"], "inputSchema");
    assert!(
        as_json["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("a string")
    );

    let r = host
        .call_tool("old", "snake", json!({"path": "/s"}))
        .await
        .unwrap();
    assert_eq!(r.is_error, None);
    // The model is never offered the left-out tool.
    let offered = host
        .translate(oxmcp::schema::Provider::Anthropic, &Default::default())
        .await;
    assert!(offered.reports.iter().all(|r| r.tool != "broken"));
    host.close().await;
}
