//! The host against real servers started from one config: the official server-everything,
//! server-filesystem and server-memory (npm, pinned in tests/host/), our Rust weather server,
//! the oxmcp fixture server, an in-process oxmcp server over Streamable HTTP, and servers
//! that do not exist, crash at start or never answer.
//!
//! The npm servers come from `make host-deps`; without them these tests skip, unless
//! OXMCP_REQUIRE_INTEROP=1 (as `make test` sets), when they fail.

mod common;

use std::{
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use common::example_bin as example;
use oxmcp::{
    ErrorKind, ProtocolVersion,
    host::{AgentOptions, Config, Host, HostOptions, ModelRequest, StopReason},
    protocol::{CallToolResult, Tool},
    schema::{Provider, TranslateOptions},
    server::Server,
    transport::{http::HttpServerOptions, tap::Direction},
};
use serde_json::{Value, json};

fn npm_server(name: &str) -> Option<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/host/node_modules/@modelcontextprotocol")
        .join(format!("server-{name}"))
        .join("dist/index.js");
    if p.exists() {
        return Some(p.canonicalize().unwrap().display().to_string());
    }
    if std::env::var("OXMCP_REQUIRE_INTEROP").is_ok_and(|v| v == "1") {
        panic!("{} is missing: run `make host-deps`", p.display());
    }
    eprintln!(
        "skipping: {} is missing (run `make host-deps`)",
        p.display()
    );
    None
}

fn config(json: Value) -> Config {
    Config::from_value(&json, &|k| std::env::var(k).ok()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_config_real_servers_and_broken_ones_reported_by_name() {
    let (Some(everything), Some(filesystem), Some(memory)) = (
        npm_server("everything"),
        npm_server("filesystem"),
        npm_server("memory"),
    ) else {
        return;
    };
    let dir = tempdir("host-all");
    let tools_lists = Arc::new(AtomicUsize::new(0));
    let seen = tools_lists.clone();
    // server-everything announces `tools/list_changed` right after the handshake, so a
    // listing after that announcement is correct, and counted.
    let changes = Arc::new(AtomicUsize::new(0));
    let changes_seen = changes.clone();
    let options = HostOptions {
        connect_timeout: Duration::from_secs(30),
        trace: Some(Arc::new(
            move |_server: &str, dir: Direction, bytes: &[u8]| {
                let text = String::from_utf8_lossy(bytes);
                if dir == Direction::Outbound && text.contains("\"tools/list\"") {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
                if dir == Direction::Inbound && text.contains("notifications/tools/list_changed") {
                    changes_seen.fetch_add(1, Ordering::SeqCst);
                }
            },
        )),
        ..HostOptions::default()
    };
    let host = Host::start(
        config(json!({"mcpServers": {
            "everything": {"command": "node", "args": [everything]},
            "filesystem": {"command": "node", "args": [filesystem, dir.display().to_string()]},
            "memory": {"command": "node", "args": [memory], "env": {"MEMORY_FILE_PATH": dir.join("memory.jsonl").display().to_string()}},
            "weather": {"command": example("weather_server").display().to_string()},
            "missing": {"command": "/nonexistent/bin/mcp-server"},
            "crashing": {"command": "sh", "args": ["-c", "echo 'fatal: OPENAI_API_KEY is not set' >&2; exit 3"]},
            "silent": {"command": "sh", "args": ["-c", "echo 'loading model weights...' >&2; exec sleep 600"], "timeout": 2},
            "off": {"command": "whatever", "disabled": true}
        }})),
        options,
    )
    .await;

    let status = host.status().await;
    let by = |n: &str| status.iter().find(|s| s.name == n).unwrap().clone();
    for ok in ["everything", "filesystem", "memory", "weather"] {
        assert_eq!(by(ok).state, "connected", "{:?}", by(ok));
    }
    assert_eq!(
        by("missing").error_kind,
        Some("spawn"),
        "{:?}",
        by("missing")
    );
    assert!(
        by("missing")
            .error
            .unwrap()
            .contains("/nonexistent/bin/mcp-server")
    );
    let crashing = by("crashing");
    assert_eq!(crashing.state, "failed");
    assert!(
        crashing
            .stderr
            .as_deref()
            .unwrap_or("")
            .contains("OPENAI_API_KEY is not set"),
        "{crashing:?}"
    );
    let silent = by("silent");
    assert_eq!(silent.error_kind, Some("timeout"), "{silent:?}");
    assert!(
        silent
            .stderr
            .as_deref()
            .unwrap_or("")
            .contains("loading model weights"),
        "{silent:?}"
    );
    assert_eq!(by("off").state, "disabled");

    // The live servers' tools, namespaced; the dead ones are simply absent.
    let tools = host.tools().await;
    let names: Vec<&str> = tools.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(names, ["everything", "filesystem", "memory", "weather"]);
    let t = host
        .translate(Provider::OpenAi, &TranslateOptions::default())
        .await;
    for name in [
        "everything__echo",
        "filesystem__read_text_file",
        "memory__create_entities",
        "weather__get_weather",
    ] {
        assert!(
            t.names.resolve(name).is_some(),
            "{name} missing from {:?}",
            t.names.names().collect::<Vec<_>>()
        );
    }
    assert!(
        t.reports.iter().all(|r| r.error.is_none()),
        "{:?}",
        t.reports
    );
    // Cached: more listings and translations send tools/list again only after a server
    // announced a change.
    let lists_before = tools_lists.load(Ordering::SeqCst);
    assert!(lists_before >= 4, "one tools/list per live server");
    for _ in 0..3 {
        host.translate(Provider::Anthropic, &TranslateOptions::default())
            .await;
    }
    let extra = tools_lists.load(Ordering::SeqCst) - 4;
    assert!(
        extra <= changes.load(Ordering::SeqCst),
        "{extra} extra tools/list for {} list_changed",
        changes.load(Ordering::SeqCst)
    );
    // Calls route to the right server, over the one session each has.
    let w = host
        .call_tool("weather", "get_weather", json!({"city": "北京"}))
        .await
        .unwrap();
    assert!(w.text_content().contains("Beijing"), "{w:?}");
    let e = host
        .call_tool("everything", "echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert!(e.text_content().contains("hi"), "{e:?}");
    host.call_tool("memory", "create_entities", json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]}))
        .await
        .unwrap();
    let g = host
        .call_tool("memory", "read_graph", json!({}))
        .await
        .unwrap();
    assert!(
        g.text_content().contains("wrote the first program"),
        "{g:?}"
    );
    // Resources and prompts are aggregated the same way.
    let resources = host.resources().await;
    assert!(
        resources
            .iter()
            .any(|(s, r)| s == "everything" && !r.is_empty()),
        "{resources:?}"
    );
    let prompts = host.prompts().await;
    assert!(
        prompts
            .iter()
            .any(|(s, p)| s == "everything" && !p.is_empty())
    );
    // A dead server's call fails with its own typed error; the others are untouched.
    let err = host.call_tool("missing", "x", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Spawn);
    let err = host.call_tool("nope", "x", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("no server named `nope`"));
    assert!(
        host.call_tool("weather", "get_weather", json!({"city": "Oslo"}))
            .await
            .is_ok()
    );
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_loop_drives_filesystem_on_a_temp_folder() {
    let Some(filesystem) = npm_server("filesystem") else {
        return;
    };
    let dir = tempdir("host-agent");
    let dir_s = dir.canonicalize().unwrap().display().to_string();
    let host = Host::start(
        config(json!({"mcpServers": {"fs": {"command": "node", "args": [filesystem, dir_s]}}})),
        HostOptions::default(),
    )
    .await;
    let file = format!("{dir_s}/note.txt");
    // SCRIPTED MODEL (not an LLM): writes a file, reads it back (with the nulls a strict-mode
    // model sends for optional `head`/`tail`), also makes one call with broken JSON, answers.
    let script_file = file.clone();
    let model = move |req: ModelRequest| {
        let file = script_file.clone();
        async move {
            let names: Vec<String> = req
                .tools
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect();
            assert!(names.contains(&"fs__write_file".to_owned()));
            let call = |id: &str, name: &str, args: String| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}});
            Ok(match req.step {
                1 => json!({"role": "assistant", "content": null, "tool_calls": [
                    call("w", "fs__write_file", json!({"path": file, "content": "hello from the agent"}).to_string()),
                    call("bad", "fs__list_directory", "{\"path\": ".into()),
                ]}),
                2 => json!({"role": "assistant", "content": null, "tool_calls": [
                    call("r", "fs__read_text_file", json!({"path": file, "head": null, "tail": null}).to_string()),
                ]}),
                _ => {
                    let last = req.messages.last().unwrap()["content"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    json!({"role": "assistant", "content": format!("The file says: {last}")})
                }
            })
        }
    };
    let t = host
        .run_agent(
            &model,
            vec![json!({"role": "user", "content": "write and read a note"})],
            &AgentOptions::new(Provider::OpenAi),
        )
        .await
        .unwrap();
    assert_eq!(t.stop, StopReason::Final);
    assert_eq!(t.steps, 3);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "hello from the agent"
    );
    assert_eq!(t.final_text, "The file says: hello from the agent");
    assert_eq!(t.calls.len(), 3, "{:#?}", t.calls);
    assert!(
        !t.calls[0].is_error && t.calls[1].is_error && !t.calls[2].is_error,
        "{:#?}",
        t.calls
    );
    assert!(t.calls[1].text.contains("not usable"), "{:?}", t.calls[1]);
    // The strict-mode nulls were stripped before tools/call.
    assert_eq!(t.calls[2].arguments, json!({"path": file}));
    // The transcript is the provider's own shape: the broken call got a tool message too.
    let tool_msgs: Vec<&Value> = t.messages.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_msgs.len(), 3);

    // A step limit stops a model that never stops calling tools.
    let looping = |_req: ModelRequest| async {
        Ok(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "l", "type": "function",
            "function": {"name": "fs__list_allowed_directories", "arguments": "{}"}}]}),
        )
    };
    let mut opts = AgentOptions::new(Provider::OpenAi);
    opts.max_steps = 3;
    let t = host.run_agent(&looping, vec![], &opts).await.unwrap();
    assert_eq!(
        (t.stop, t.steps, t.calls.len()),
        (StopReason::StepLimit, 3, 3)
    );
    // A failing model fails the run with its own error.
    let failing =
        |_req: ModelRequest| async { Err(oxmcp::Error::Protocol("model API returned 500".into())) };
    let e = host.run_agent(&failing, vec![], &opts).await.unwrap_err();
    assert!(e.to_string().contains("500"));
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_restarted_on_the_next_call() {
    let host = Host::start(
        config(json!({"mcpServers": {
            "fixture": {"command": example("mcp_fixture").display().to_string(), "args": ["server"]},
            "weather": {"command": example("weather_server").display().to_string()}
        }})),
        HostOptions::default(),
    )
    .await;
    let ok = host
        .call_tool("fixture", "echo", json!({"text": "one"}))
        .await
        .unwrap();
    assert!(ok.text_content().contains("one"));
    // `die` exits the server in the middle of the call.
    let crashed = host
        .call_tool(
            "fixture",
            "die",
            json!({"code": 7, "message": "segfault in plugin"}),
        )
        .await;
    let e = crashed.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionClosed, "{e}");
    assert!(
        e.to_string().contains("segfault in plugin"),
        "stderr tail attached: {e}"
    );
    let status = host.status().await;
    assert_eq!(status[0].state, "failed");
    assert!(
        status[0]
            .error
            .as_deref()
            .unwrap()
            .contains("started again on the next call")
    );
    assert_eq!(
        status[1].state, "connected",
        "the other server is untouched"
    );
    // The next call starts it again.
    let again = host
        .call_tool("fixture", "echo", json!({"text": "two"}))
        .await
        .unwrap();
    assert!(again.text_content().contains("two"));
    let status = host.status().await;
    assert_eq!((status[0].state, status[0].restarts), ("connected", 1));
    host.close().await;
    // A closed host starts nothing again: calls fail, and no server is restarted behind it.
    let after = host
        .call_tool("fixture", "echo", json!({"text": "three"}))
        .await
        .unwrap_err();
    assert_eq!(after.kind(), ErrorKind::ConnectionClosed, "{after}");
    assert!(after.to_string().contains("the host is closed"), "{after}");
    let status = host.status().await;
    assert_eq!(status[0].restarts, 1, "no restart after close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_s_list_changed_refreshes_the_cached_tools() {
    // Both eras: a 2026-07-28 server announces changes on a `subscriptions/listen` stream, a
    // handshake-era one (2025-11-25 only) with `notifications/tools/list_changed` on its GET
    // stream; either way the host's cache follows, and only then.
    for versions in [
        vec![],
        vec![ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18],
    ] {
        list_changed_refreshes(versions).await;
    }
}

async fn list_changed_refreshes(versions: Vec<ProtocolVersion>) {
    let era = if versions.is_empty() {
        "2026-07-28"
    } else {
        "2025-11-25"
    };
    let mut builder = Server::builder("dynamic", "1.0");
    if !versions.is_empty() {
        builder = builder.protocol_versions(versions);
    }
    let server = builder.build();
    server
        .add_tool(
            Tool::new("first", "the first tool", json!({"type": "object"})),
            |_args: Value, _ctx| async {
                Ok::<_, oxmcp::server::ToolError>(CallToolResult::text("first!"))
            },
        )
        .unwrap();
    let http = server
        .serve_http(HttpServerOptions::default())
        .await
        .unwrap();
    let url = http.url();
    // Counts the `tools/list` requests the host sends to `dyn`.
    let lists = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = lists.clone();
    let options = HostOptions {
        trace: Some(Arc::new(
            move |server: &str, dir: Direction, bytes: &[u8]| {
                if server == "dyn"
                    && matches!(dir, Direction::Outbound)
                    && String::from_utf8_lossy(bytes).contains("\"method\":\"tools/list\"")
                {
                    seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            },
        )),
        ..HostOptions::default()
    };
    let host = Host::start(config(json!({"mcpServers": {"dyn": {"url": url}, "bad-scheme-free": {"type": "http", "url": "http://127.0.0.1:1/mcp", "timeout": 3}}})), options).await;
    let status = host.status().await;
    assert_eq!(status[0].state, "connected", "{status:?}");
    assert_eq!(
        status[0].protocol_version.as_deref(),
        Some(era),
        "{status:?}"
    );
    assert_eq!(status[1].state, "failed", "{status:?}");
    let names = |tools: &[(String, Arc<Vec<Tool>>)]| {
        tools
            .iter()
            .flat_map(|(_, t)| t.iter().map(|t| t.name.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&host.tools().await), ["first"]);
    // Nothing changed: the cache answers, the server is not asked again.
    for _ in 0..5 {
        assert_eq!(names(&host.tools().await), ["first"]);
    }
    let before = lists.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(before, 1, "{era}: one tools/list for six listings");
    server
        .add_tool(
            Tool::new("second", "added at run time", json!({"type": "object"})),
            |_args: Value, _ctx| async {
                Ok::<_, oxmcp::server::ToolError>(CallToolResult::text("second!"))
            },
        )
        .unwrap();
    let mut listed = Vec::new();
    for _ in 0..100 {
        listed = names(&host.tools().await);
        if listed.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        listed,
        ["first", "second"],
        "{era}: list_changed never refreshed the cache"
    );
    assert!(
        lists.load(std::sync::atomic::Ordering::SeqCst) > before,
        "{era}"
    );
    let r = host.call_tool("dyn", "second", json!({})).await.unwrap();
    assert_eq!(r.text_content(), "second!");
    host.close().await;
    http.shutdown().await;
}

fn tempdir(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("oxmcp-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}
