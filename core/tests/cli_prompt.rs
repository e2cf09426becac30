//! `oxmcp tools --format prompt[:FORMAT]`: the system-prompt text for a model without function
//! calling, printed as plain text (the same text `Translation::system_text` gives), and a
//! format that does not exist refused as a usage error before any server starts.

mod common;

use std::{path::PathBuf, process::Command};

use common::{cli::write_config, example_bin};
use oxmcp::schema::{PromptFormat, Provider, TranslateOptions, translate_value};
use serde_json::{Value, json};

fn weather_config() -> PathBuf {
    let weather = example_bin("weather_server").display().to_string();
    let config = json!({"mcpServers": {"weather": {"command": weather}}});
    write_config("cli-prompt", "weather", &config)
}

fn tools(config: &PathBuf, format: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_oxmcp"))
        .args(["tools", "--config"])
        .arg(config)
        .args(["--format", format])
        .output()
        .unwrap()
}

#[test]
fn tools_prints_the_system_text_in_every_prompt_format() {
    let config = weather_config();
    let mcp = tools(&config, "mcp");
    assert_eq!(
        mcp.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&mcp.stderr)
    );
    let listed: Value = serde_json::from_slice(&mcp.stdout).unwrap();
    for (arg, format) in [
        ("prompt", PromptFormat::Hermes),
        ("prompt:hermes", PromptFormat::Hermes),
        ("prompt:json", PromptFormat::Json),
        ("prompt:react", PromptFormat::React),
        ("prompt:xml", PromptFormat::Xml),
    ] {
        let out = tools(&config, arg);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{arg}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let expected = translate_value(
            Provider::Prompt(format),
            &listed,
            &TranslateOptions::default(),
        )
        .unwrap()
        .system_text()
        .unwrap();
        assert_eq!(text, format!("{expected}\n"), "{arg}");
        assert!(text.contains("weather__get_weather"), "{arg}: {text}");
    }
}

#[test]
fn an_unknown_prompt_format_is_a_usage_error() {
    let config = weather_config();
    for bad in ["prompt:yaml", "prompt:", "prompts"] {
        let out = tools(&config, bad);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(out.stdout.is_empty(), "{bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("unknown --format"),
            "{bad}"
        );
    }
}
