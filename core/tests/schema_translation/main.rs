//! Golden vectors for tool-schema translation (tests/fixtures/schema-translation/), the OpenAI
//! strict-mode checker, the no-constraint-lost checker, result mapping vectors, the way back
//! (tool calls → `tools/call`) and hostile schemas.
//!
//! `OXMCP_BLESS=1 cargo test --test schema_translation` rewrites the expected files; the
//! checkers (`checkers.rs`) run on whatever is produced, blessed or not, so a blessed
//! regression that breaks a provider's rules still fails. `results.rs` holds the way back
//! (results and tool calls), `hostile.rs` the schemas that must be refused.

mod checkers;
mod hostile;
mod results;

use std::path::{Path, PathBuf};

use oxmcp::{
    ErrorKind,
    protocol::Tool,
    schema::{Provider, ServerTools, TranslateOptions, Translation, normalize, translate},
};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/schema-translation")
}

fn inputs() -> Vec<(String, Vec<Tool>)> {
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures().join("input"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for p in paths {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let tools: Vec<Tool> = serde_json::from_value(v["tools"].clone()).unwrap();
        out.push((p.file_stem().unwrap().to_string_lossy().into_owned(), tools));
    }
    assert!(out.len() >= 5, "fixtures missing: {out:?}");
    out
}

fn run(provider: Provider, server: &str, tools: &[Tool]) -> Translation {
    translate(
        provider,
        &[ServerTools { server, tools }],
        &TranslateOptions::default(),
    )
}

fn bless() -> bool {
    std::env::var("OXMCP_BLESS").is_ok_and(|v| v == "1")
}

fn golden(path: &Path, actual: &Value) {
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = serde_json::to_string_pretty(actual).unwrap();
        text.push('\n');
        std::fs::write(path, text).unwrap();
        return;
    }
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{}: {e} (OXMCP_BLESS=1 writes it)", path.display())),
    )
    .unwrap();
    assert_eq!(
        &expected,
        actual,
        "{} differs (OXMCP_BLESS=1 rewrites it after review)",
        path.display()
    );
}

#[test]
fn golden_tool_vectors() {
    let mut count = 0;
    for (stem, tools) in inputs() {
        for provider in Provider::ALL {
            let t = run(provider, &stem, &tools);
            let actual = json!({"tools": t.request_tools(), "reports": t.reports});
            let path = fixtures()
                .join("expected")
                .join(format!("{stem}.{}.json", provider.as_str()));
            golden(&path, &actual);
            count += 1;
        }
    }
    assert_eq!(count, inputs().len() * Provider::ALL.len());
}

#[test]
fn every_real_server_tool_translates_for_every_provider() {
    for (stem, tools) in inputs() {
        for provider in Provider::ALL {
            let t = run(provider, &stem, &tools);
            assert_eq!(
                t.tools.len(),
                tools.len(),
                "{stem} {provider}: {:?}",
                t.reports
            );
            for r in &t.reports {
                assert!(r.error.is_none(), "{stem} {provider}: {r:?}");
            }
        }
    }
}

#[test]
fn normalisation_handles_every_source_quirk() {
    let zod3 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "title": "Args",
        "properties": {"l": {"$ref": "#/definitions/x"}, "n": {"type": "integer", "minimum": -9007199254740991i64, "maximum": 9007199254740991i64}, "a": {"type": "array"}},
        "definitions": {"x": {"type": "string", "$comment": "c"}}
    });
    let n = normalize(&zod3).unwrap();
    assert_eq!(
        n,
        json!({
            "type": "object",
            "properties": {"l": {"$ref": "#/$defs/x"}, "n": {"type": "integer"}, "a": {"type": "array", "items": {}}},
            "$defs": {"x": {"type": "string"}}
        })
    );
    assert_eq!(
        normalize(&json!({})).unwrap(),
        json!({"type": "object", "properties": {}})
    );
    // A property called `$schema` is data, not a keyword.
    let p = normalize(&json!({"type": "object", "properties": {"$schema": {"type": "string"}}}))
        .unwrap();
    assert!(p["properties"].get("$schema").is_some());
    for bad in [json!({"type": "string"}), json!([1]), json!("x")] {
        assert_eq!(
            normalize(&bad).unwrap_err().kind(),
            ErrorKind::InvalidSchema,
            "{bad}"
        );
    }
}
