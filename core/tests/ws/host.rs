//! WebSocket in configs and on the command line: `{"type": "ws"}` and bare `ws://` entries
//! connect, bad ones are config errors naming the field, and the fixture server run as a
//! child process (`mcp_fixture server --ws --port 0`) is driven by the host and the CLI.

use std::process::Stdio;

use oxmcp::{
    ErrorKind,
    host::{Config, Host, HostOptions, TransportSpec},
    transport::ws::WsServerOptions,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{
    STEP,
    common::{Probe, cli, example_bin, test_server},
    serve,
};

fn config(value: Value) -> Result<Config, oxmcp::Error> {
    Config::from_value(&value, &|_| None)
}

#[test]
fn ws_entries_are_read_with_a_type_or_from_the_scheme() {
    let c = config(json!({"mcpServers": {
        "typed": {"type": "ws", "url": "ws://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"}},
        "bare": {"url": "wss://example.com/mcp"},
        "vscode": {"type": "websocket", "url": "ws://localhost/mcp"},
        "http": {"url": "http://127.0.0.1:9/mcp"},
    }}))
    .unwrap();
    assert_eq!(
        c.servers[0].transport,
        TransportSpec::Ws {
            url: "ws://127.0.0.1:9/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer t".into())],
        }
    );
    assert!(
        matches!(&c.servers[1].transport, TransportSpec::Ws { url, .. } if url == "wss://example.com/mcp")
    );
    assert!(matches!(c.servers[2].transport, TransportSpec::Ws { .. }));
    assert!(matches!(c.servers[3].transport, TransportSpec::Http { .. }));
}

#[test]
fn bad_ws_entries_are_config_errors_naming_the_field() {
    let error = |entry: Value| {
        let e = config(json!({"mcpServers": {"s": entry}})).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
        e.to_string()
    };
    let e = error(json!({"type": "ws", "url": "http://127.0.0.1/mcp"}));
    assert!(
        e.contains("field `url`") && e.contains("only ws:// and wss://"),
        "{e}"
    );
    let e = error(json!({"type": "http", "url": "ws://127.0.0.1/mcp"}));
    assert!(e.contains("set `type` to `ws`"), "{e}");
    let e = error(json!({"type": "ws"}));
    assert!(e.contains("field `url`") && e.contains("missing"), "{e}");
    let e = error(json!({"url": "ws:///mcp"}));
    assert!(e.contains("has no host"), "{e}");
    let e = error(json!({"type": "ws", "url": "127.0.0.1:9/mcp"}));
    assert!(e.contains("is not a URL (expected ws://host/path)"), "{e}");
    let e = error(json!({"type": "socket", "url": "ws://127.0.0.1/mcp"}));
    assert!(e.contains("`sse` or `ws`"), "{e}");
}

#[tokio::test]
async fn the_host_connects_typed_and_bare_entries() {
    let server = test_server(&Probe::default());
    let ws = serve(&server, WsServerOptions::default()).await;
    let url = ws.url();
    let host = Host::start(
        config(json!({"mcpServers": {
            "typed": {"type": "ws", "url": url},
            "bare": {"url": url},
            "refused": {"type": "ws", "url": url, "headers": {"Origin": "https://evil.example"}},
            "bad-header": {"type": "ws", "url": url, "headers": {"X-Bad": "line\nbreak"}},
        }}))
        .unwrap(),
        HostOptions::default(),
    )
    .await;
    let status = host.status().await;
    assert_eq!(status[0].state, "connected", "{status:?}");
    assert_eq!(status[1].state, "connected", "{status:?}");
    // One server refused, one entry unusable: each reported by name, the others unharmed.
    assert_eq!(status[2].state, "failed", "{status:?}");
    assert_eq!(status[2].error_kind, Some("auth"), "{status:?}");
    assert_eq!(status[3].error_kind, Some("config"), "{status:?}");
    for name in ["typed", "bare"] {
        let r = host
            .call_tool(name, "echo", json!({"text": name}))
            .await
            .unwrap();
        assert_eq!(r.text_content(), name);
    }
    host.close().await;
    ws.shutdown().await;
}

/// `mcp_fixture server --ws --port 0`, and the URL it prints.
async fn fixture_child() -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(example_bin("mcp_fixture"))
        .args(["server", "--ws", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start mcp_fixture");
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    tokio::time::timeout(STEP, BufReader::new(stdout).read_line(&mut line))
        .await
        .expect("the fixture prints its URL")
        .unwrap();
    let url = line.trim().to_owned();
    assert!(url.starts_with("ws://127.0.0.1:"), "{url:?}");
    (child, url)
}

#[tokio::test]
async fn a_server_process_that_dies_mid_call_fails_the_call() {
    let (mut child, url) = fixture_child().await;
    let host = Host::start(
        config(json!({"mcpServers": {"fixture": {"url": url}}})).unwrap(),
        HostOptions::default(),
    )
    .await;
    let r = host
        .call_tool("fixture", "echo", json!({"text": "from a child"}))
        .await
        .unwrap();
    assert_eq!(r.text_content(), "from a child");
    let e = tokio::time::timeout(
        STEP,
        host.call_tool("fixture", "die", json!({"code": 3, "message": "bye"})),
    )
    .await
    .expect("the call fails in time")
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionClosed, "{e}");
    let status = tokio::time::timeout(STEP, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(3));
    host.close().await;
}

#[tokio::test]
async fn the_cli_calls_a_tool_over_websocket() {
    let (mut child, url) = fixture_child().await;
    let cfg = cli::write_config(
        "ws",
        "cli",
        &json!({"mcpServers": {"fixture": {"type": "ws", "url": url}}}),
    );
    let cfg = cfg.display().to_string();
    let run = |args: Vec<String>| async move {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_oxmcp"))
            .args(args)
            .output()
            .await
            .unwrap()
    };
    let o = run(vec![
        "call".into(),
        "--config".into(),
        cfg.clone(),
        "fixture".into(),
        "echo".into(),
        r#"{"text":"over ws"}"#.into(),
    ])
    .await;
    assert_eq!(cli::code(&o), 0, "{}", cli::stderr(&o));
    assert_eq!(cli::stdout_json(&o)["content"][0]["text"], "over ws");
    let o = run(vec![
        "tools".into(),
        "--config".into(),
        cfg.clone(),
        "--format".into(),
        "mcp".into(),
    ])
    .await;
    assert_eq!(cli::code(&o), 0, "{}", cli::stderr(&o));
    assert!(
        cli::stdout_json(&o)["fixture"]
            .as_array()
            .is_some_and(|t| t.len() == 3)
    );
    // The server gone: the CLI says which server could not be reached (exit 4).
    child.kill().await.unwrap();
    let o = run(vec!["servers".into(), "--config".into(), cfg.clone()]).await;
    let servers = cli::stdout_json(&o);
    assert_eq!(servers[0]["state"], "failed", "{servers}");
    let o = run(vec![
        "call".into(),
        "--config".into(),
        cfg,
        "fixture".into(),
        "echo".into(),
        "{}".into(),
    ])
    .await;
    cli::assert_exit(&o, 4, "fixture");
}

/// Starts an example with `args` and returns it with the URL it announces on stderr
/// (`… listening on <url>`, the first line that says so with `scheme`).
async fn example_child(name: &str, args: &[&str], scheme: &str) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(example_bin(name))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the example");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let marker = format!("listening on {scheme}://");
    let url = tokio::time::timeout(STEP, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(at) = line.find(&marker) {
                return line[at + "listening on ".len()..].trim().to_owned();
            }
        }
        panic!("{name} exited without listening")
    })
    .await
    .expect("the example announces its URL");
    (child, url)
}

/// The examples serve WebSocket with `--ws --port N` (issue 39: every fixture server does):
/// the weather example and the conformance fixture alone, and the fixture beside Streamable
/// HTTP on one port with `--http --ws`.
#[tokio::test]
async fn the_examples_serve_websocket_with_ws_and_port() {
    use oxmcp::{
        client::{Client, ClientOptions},
        transport::ws::WsClientOptions,
    };
    let options = || ClientOptions::new("ws-examples", "1.0.0");
    let (_weather, url) = example_child("weather_server", &["--ws", "--port", "0"], "ws").await;
    let client = Client::connect_ws(&url, options(), WsClientOptions::default())
        .await
        .expect("connects to the weather example");
    let r = client
        .call_tool("get_weather", json!({"city": "Beijing"}))
        .await
        .unwrap();
    assert!(r.text_content().starts_with("Beijing:"), "{r:?}");
    let unknown = client
        .call_tool("get_weather", json!({"city": "Atlantis"}))
        .await
        .unwrap();
    assert!(unknown.is_error());
    client.close().await;

    let (_fixture, url) = example_child("conformance_server", &["--ws", "--port", "0"], "ws").await;
    let client = Client::connect_ws(&url, options(), WsClientOptions::default())
        .await
        .unwrap();
    let r = client
        .call_tool("test_simple_text", json!({}))
        .await
        .unwrap();
    assert_eq!(
        r.text_content(),
        "This is a simple text response for testing."
    );
    client.close().await;

    let (_both, ws_url) = example_child(
        "conformance_server",
        &["--http", "--ws", "--port", "0"],
        "ws",
    )
    .await;
    let http_url = ws_url.replacen("ws://", "http://", 1);
    let over_ws = Client::connect_ws(&ws_url, options(), WsClientOptions::default())
        .await
        .unwrap();
    let over_http = Client::connect_http(&http_url, options(), Default::default())
        .await
        .unwrap();
    for c in [&over_ws, &over_http] {
        let r = c.call_tool("test_simple_text", json!({})).await.unwrap();
        assert_eq!(
            r.text_content(),
            "This is a simple text response for testing."
        );
        c.close().await;
    }
    // The neighbour: a bad port is refused before anything listens.
    let bad = tokio::process::Command::new(example_bin("weather_server"))
        .args(["--ws", "--port", "not-a-port"])
        .output()
        .await
        .unwrap();
    assert!(!bad.status.success());
}
