//! The `oxmcp` binary, run as a shell user would: `tools` in every format, `call`, progress,
//! `--trace`, and the exit codes and messages for every way it can go wrong.

mod common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use common::{
    cli::{code, stderr, stdout_json},
    example_bin as example,
};
use serde_json::{Value, json};

/// This suite's config file for `tag`.
fn write_config(tag: &str, config: Value) -> PathBuf {
    common::cli::write_config("cli", tag, &config)
}

fn weather_config(tag: &str, extra: Value) -> PathBuf {
    let mut servers =
        json!({"weather": {"command": example("weather_server").display().to_string()}});
    if let (Value::Object(s), Value::Object(e)) = (&mut servers, extra) {
        s.extend(e);
    }
    write_config(tag, json!({ "mcpServers": servers }))
}

fn oxmcp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxmcp"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn tools_prints_every_format_and_names_a_failed_server_on_stderr() {
    let cfg = weather_config("tools", json!({"broken": {"command": "/nonexistent/mcp"}}));
    let cfg = cfg.to_str().unwrap();
    let o = oxmcp(&["tools", "--config", cfg]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("server `broken` failed") && stderr(&o).contains("/nonexistent/mcp"),
        "{}",
        stderr(&o)
    );
    let tools = stdout_json(&o);
    assert_eq!(tools[0]["function"]["name"], "weather__get_weather");
    assert_eq!(tools[0]["function"]["strict"], true);

    let cfg = weather_config("formats", json!({}));
    let cfg = cfg.to_str().unwrap();
    let cases = [
        ("anthropic", "/0/input_schema/type", json!("object")),
        ("responses", "/0/name", json!("weather__get_weather")),
        (
            "gemini",
            "/0/functionDeclarations/0/parametersJsonSchema/type",
            json!("object"),
        ),
        (
            "gemini-openapi",
            "/0/functionDeclarations/0/parameters/type",
            json!("OBJECT"),
        ),
        ("langchain", "/0/args_schema/required/0", json!("city")),
        ("mcp", "/weather/0/name", json!("get_weather")),
    ];
    for (format, pointer, want) in cases {
        let o = oxmcp(&["tools", "--config", cfg, "--format", format]);
        assert_eq!(code(&o), 0, "{format}: {}", stderr(&o));
        assert_eq!(stdout_json(&o).pointer(pointer), Some(&want), "{format}");
    }
    let o = oxmcp(&[
        "tools",
        "--config",
        cfg,
        "--no-strict",
        "--namespace",
        "never",
    ]);
    assert_eq!(stdout_json(&o)[0]["function"]["name"], "get_weather");
    assert_eq!(stdout_json(&o)[0]["function"]["strict"], false);
}

#[test]
fn call_prints_the_result_and_exits_by_outcome() {
    let cfg = weather_config("call", json!({}));
    let cfg = cfg.to_str().unwrap();
    let o = oxmcp(&[
        "call",
        "--config",
        cfg,
        "weather",
        "get_weather",
        r#"{"city":"Beijing"}"#,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = stdout_json(&o);
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Beijing"),
        "{r}"
    );
    assert_eq!(r["structuredContent"]["city"], "Beijing");
    // A tool failure: the result is still printed, and the exit code says it failed.
    let o = oxmcp(&[
        "call",
        "--config",
        cfg,
        "weather",
        "get_weather",
        r#"{"city":"Atlantis"}"#,
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(stdout_json(&o)["isError"], true);
    assert!(stderr(&o).contains("returned an error"), "{}", stderr(&o));
}

#[test]
fn trace_shows_every_json_rpc_message_on_stderr() {
    let cfg = weather_config("trace", json!({}));
    let o = oxmcp(&[
        "call",
        "--trace",
        "--config",
        cfg.to_str().unwrap(),
        "weather",
        "get_weather",
        r#"{"city":"北京"}"#,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let err = stderr(&o);
    let sent: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("[trace weather] → "))
        .collect();
    let got: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("[trace weather] ← "))
        .collect();
    assert!(
        sent.iter()
            .any(|l| l.contains("\"tools/call\"") && l.contains("北京")),
        "{err}"
    );
    assert!(got.iter().any(|l| l.contains("Beijing")), "{err}");
    for l in sent.iter().chain(&got) {
        let json = l
            .split_once(" ")
            .unwrap()
            .1
            .split_once(" ")
            .unwrap()
            .1
            .split_once(' ')
            .unwrap()
            .1;
        serde_json::from_str::<Value>(json).unwrap_or_else(|e| panic!("{e}: {l}"));
    }
    stdout_json(&o); // the trace never reaches stdout
}

#[test]
fn progress_is_drawn_on_stderr_when_the_server_reports_it() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/host/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !p.exists() {
        assert!(
            std::env::var("OXMCP_REQUIRE_INTEROP").is_err(),
            "{} missing: run `make host-deps`",
            p.display()
        );
        eprintln!("skipping: run `make host-deps`");
        return;
    }
    let cfg = write_config(
        "progress",
        json!({"mcpServers": {"everything": {"command": "node", "args": [p.display().to_string()]}}}),
    );
    let o = oxmcp(&[
        "call",
        "--config",
        cfg.to_str().unwrap(),
        "everything",
        "trigger-long-running-operation",
        r#"{"duration": 1, "steps": 4}"#,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("100% (4/4)") && err.contains("[#"), "{err}");
    stdout_json(&o);
}

#[test]
fn exit_codes_and_messages_a_shell_user_can_act_on() {
    let cfg = weather_config(
        "codes",
        json!({"broken": {"command": "sh", "args": ["-c", "echo 'no token' >&2; exit 1"]}}),
    );
    let cfg = cfg.to_str().unwrap();
    let bad_cfg = write_config(
        "badcfg",
        json!({"mcpServers": {"w": {"type": "carrier-pigeon"}}}),
    );
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec![], 2, "USAGE"),
        (
            vec!["frobnicate", "--config", cfg],
            2,
            "unknown command `frobnicate`",
        ),
        (
            vec!["tools", "--config", cfg, "--bogus"],
            2,
            "unknown option `--bogus`",
        ),
        (vec!["tools", "--config"], 2, "`--config` needs a value"),
        (
            vec!["tools", "--config", cfg, "--format", "cohere"],
            2,
            "unknown --format `cohere`",
        ),
        (
            vec!["tools", "--config", cfg, "--namespace", "sometimes"],
            2,
            "--namespace: unknown namespace `sometimes` (one of: always, collision, never)",
        ),
        (
            vec![
                "call",
                "--config",
                cfg,
                "weather",
                "get_weather",
                "{city: Beijing}",
            ],
            2,
            "not valid JSON",
        ),
        (
            vec!["call", "--config", cfg, "weather", "get_weather", "[1]"],
            2,
            "must be a JSON object",
        ),
        (vec!["call", "--config", cfg, "weather"], 2, "SERVER TOOL"),
        (
            vec!["tools", "--config", "/nonexistent/mcp.json"],
            3,
            "/nonexistent/mcp.json: cannot read",
        ),
        (
            vec!["tools", "--config", bad_cfg.to_str().unwrap()],
            3,
            "server `w`, field `type`: unknown transport `carrier-pigeon`",
        ),
        (
            vec!["call", "--config", cfg, "nope", "x"],
            3,
            "server `nope` is not in the config (servers: weather, broken)",
        ),
        (vec!["call", "--config", cfg, "broken", "x"], 4, "no token"),
        (
            vec!["call", "--config", cfg, "weather", "no_such_tool"],
            5,
            "Unknown tool: no_such_tool",
        ),
    ];
    for (args, want, message) in cases {
        let o = oxmcp(&args);
        assert_eq!(code(&o), want, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
        if want >= 2 {
            assert!(o.stdout.is_empty(), "{args:?} printed to stdout");
        }
    }
    let o = oxmcp(&["--help"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("EXIT CODES"));
    let o = oxmcp(&["servers", "--config", cfg]);
    assert_eq!(code(&o), 4);
    let s = stdout_json(&o);
    assert_eq!(s[0]["state"], "connected");
    assert_eq!(s[1]["state"], "failed");
    assert!(s[1]["stderr"].as_str().unwrap().contains("no token"));
}

#[test]
fn the_seed_story_runs_with_any_number_of_weather_servers_in_every_format() {
    let weather = example("weather_server").display().to_string();
    let cfg = write_config(
        "story",
        json!({"mcpServers": {
            "weather-a": {"command": weather},
            "weather-b": {"command": weather, "args": []}
        }}),
    );
    for provider in [
        "openai",
        "responses",
        "anthropic",
        "gemini",
        "gemini-openapi",
        "langchain",
    ] {
        let o = Command::new(example("seed_story"))
            .args([cfg.to_str().unwrap(), "--provider", provider, "--trace"])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(code(&o), 0, "{provider}: {out}\n{}", stderr(&o));
        assert!(out.contains("SCRIPTED MODEL (not an LLM)"), "{provider}");
        assert!(
            out.contains("weather-a__get_weather") && out.contains("weather-b__get_weather"),
            "{provider}: {out}"
        );
        let answer = out.split("== 7. final answer").nth(1).unwrap_or_default();
        let answer = answer.split("== 8.").next().unwrap_or_default();
        assert!(
            answer.contains("from 2 weather servers") && answer.matches("Beijing").count() == 2,
            "{provider}: {answer}"
        );
        // The second scripted model, without function calling, through the prompt provider.
        assert!(out.contains("WITHOUT FUNCTION CALLING"), "{provider}");
        let text_answer = out
            .split("== 9. final answer (text model)")
            .nth(1)
            .unwrap_or_default();
        assert!(
            text_answer.contains("from 2 weather servers, read from <tool_response> text")
                && text_answer.matches("Beijing").count() == 2,
            "{provider}: {text_answer}"
        );
        assert!(
            stderr(&o).contains("[trace weather-b] → "),
            "{provider}: the trace"
        );
    }
    // The default config, as `make seed-story` runs it (from the repository root).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let o = Command::new(example("seed_story"))
        .current_dir(&root)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("from 1 weather server)"));
}

/// The config with the official server-everything, or `None` (skipped) without `make host-deps`.
fn everything_config(tag: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/host/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !p.exists() {
        assert!(
            std::env::var("OXMCP_REQUIRE_INTEROP").is_err(),
            "{} missing: run `make host-deps`",
            p.display()
        );
        eprintln!("skipping: run `make host-deps`");
        return None;
    }
    Some(write_config(
        tag,
        json!({"mcpServers": {"everything": {"command": "node", "args": [p.display().to_string()]}}}),
    ))
}

#[test]
fn resources_read_prompts_prompt_and_ping_work_against_server_everything() {
    let Some(cfg) = everything_config("inspect") else {
        return;
    };
    let cfg = cfg.to_str().unwrap();

    let o = oxmcp(&["resources", "--config", cfg]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let listed = stdout_json(&o);
    let resources = listed["everything"].as_array().expect("a list per server");
    let first = resources
        .iter()
        .find_map(|r| r["uri"].as_str())
        .expect("server-everything has resources");

    let o = oxmcp(&["read", "--config", cfg, "everything", first]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let read = stdout_json(&o);
    assert_eq!(read["contents"][0]["uri"], first, "{read}");

    let o = oxmcp(&["prompts", "--config", cfg]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let prompts = stdout_json(&o);
    assert!(
        prompts["everything"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "args-prompt"),
        "{prompts}"
    );

    let o = oxmcp(&[
        "prompt",
        "--trace",
        "--config",
        cfg,
        "everything",
        "args-prompt",
        r#"{"city":"Beijing","state":"北京"}"#,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let got = stdout_json(&o);
    assert_eq!(
        got["messages"][0]["content"]["text"], "What's weather in Beijing, 北京?",
        "{got}"
    );
    assert!(stderr(&o).contains("\"prompts/get\""), "the trace shows it");

    let o = oxmcp(&["ping", "--config", cfg]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let pinged = stdout_json(&o);
    assert_eq!(pinged["everything"]["ok"], true, "{pinged}");
    assert!(pinged["everything"]["ms"].as_f64().unwrap() >= 0.0);
    let o = oxmcp(&["ping", "--config", cfg, "everything"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    // What the server refuses, what the command line gets wrong, and servers that are not
    // there: each with its exit code, nothing on stdout.
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec![
                "read",
                "--config",
                cfg,
                "everything",
                "demo://no/such/thing",
            ],
            5,
            "reading `demo://no/such/thing` on `everything` failed",
        ),
        (
            vec!["prompt", "--config", cfg, "everything", "args-prompt"],
            5,
            "getting the prompt `args-prompt` on `everything` failed",
        ),
        (
            vec!["prompt", "--config", cfg, "everything", "no-such-prompt"],
            5,
            "no-such-prompt",
        ),
        (
            vec![
                "prompt",
                "--config",
                cfg,
                "everything",
                "args-prompt",
                r#"{"city":1}"#,
            ],
            2,
            "prompt argument `city` is 1, not a string",
        ),
        (
            vec!["prompt", "--config", cfg, "everything", "args-prompt", "[]"],
            2,
            "must be a JSON object of strings",
        ),
        (
            vec!["prompt", "--config", cfg, "everything", "args-prompt", "{"],
            2,
            "not valid JSON",
        ),
        (
            vec!["read", "--config", cfg, "everything"],
            2,
            "`read` takes SERVER URI",
        ),
        (
            vec!["resources", "--config", cfg, "x"],
            2,
            "takes no arguments",
        ),
        (
            vec!["ping", "--config", cfg, "a", "b"],
            2,
            "`ping` takes [SERVER]",
        ),
        (
            vec!["ping", "--config", cfg, "nope"],
            3,
            "server `nope` is not in the config",
        ),
        (
            vec!["read", "--config", cfg, "nope", "demo://x"],
            3,
            "server `nope` is not in the config",
        ),
    ];
    for (args, want, message) in cases {
        let o = oxmcp(&args);
        assert_eq!(code(&o), want, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?} printed to stdout");
    }

    // A server that cannot start: 4, named on stderr; `ping` still prints the live ones.
    let broken = write_config(
        "inspect-broken",
        json!({"mcpServers": {
            "everything": serde_json::from_str::<Value>(&std::fs::read_to_string(cfg).unwrap())
                .unwrap()["mcpServers"]["everything"].clone(),
            "broken": {"command": "/nonexistent/mcp"}
        }}),
    );
    let broken = broken.to_str().unwrap();
    let o = oxmcp(&["ping", "--config", broken]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("server `broken` failed"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stdout_json(&o)["everything"]["ok"], true);
    let o = oxmcp(&["read", "--config", broken, "broken", "demo://x"]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let o = oxmcp(&["prompts", "--config", broken]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    assert!(stdout_json(&o)["everything"].is_array());
}

#[test]
fn every_command_has_its_own_help() {
    for command in [
        "tools",
        "call",
        "servers",
        "login",
        "resources",
        "read",
        "prompts",
        "prompt",
        "ping",
    ] {
        let o = oxmcp(&[command, "--help"]);
        assert_eq!(code(&o), 0, "{command}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.starts_with(&format!("usage: oxmcp {command}")),
            "{command}: {text}"
        );
        assert!(text.contains("--timeout"), "{command}: {text}");
    }
    let o = oxmcp(&["--help"]);
    let text = String::from_utf8_lossy(&o.stdout);
    for command in [
        "oxmcp resources",
        "oxmcp read ",
        "oxmcp prompts",
        "oxmcp prompt ",
        "oxmcp ping",
    ] {
        assert!(text.contains(command), "the overview lists `{command}`");
    }
}

#[test]
fn a_crashed_server_shows_its_stderr_tail_once() {
    let cfg = write_config(
        "crash-tail",
        json!({"mcpServers": {"crashy": {
            "command": "sh",
            // The markers are assembled at run time: the error names the command line,
            // which must not count as a copy of the tail.
            "args": ["-c", "m=crash-marker; echo \"$m-1\" >&2; echo \"$m-2\" >&2; exit 3"]
        }}}),
    );
    let o = oxmcp(&["tools", "--config", cfg.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(code(&o), 4, "{err}");
    assert!(err.contains("server `crashy` failed"), "{err}");
    for marker in ["crash-marker-1", "crash-marker-2"] {
        assert_eq!(err.matches(marker).count(), 1, "{marker}: {err}");
    }
}
