//! Replays the fuzz corpora in `fuzz/corpus/<target>/` through the very checks the cargo-fuzz
//! targets run (`oxmcp::fuzzing`), so plain `cargo test` pins every seed and every regression
//! the fuzzers found, without libFuzzer or a nightly compiler. Every line of the malformed-input
//! fixture goes through the envelope checks too.

#[path = "../../tests/fixtures/jsonrpc/malformed.rs"]
mod malformed;

use std::{panic::AssertUnwindSafe, path::PathBuf};

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|entry| {
            let path = entry.expect("directory entry").path();
            let bytes =
                std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            (
                path.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                bytes,
            )
        })
        .collect();
    files.sort();
    files
}

/// Runs `check` on every input, then fails naming every input that broke an invariant.
fn replay(inputs: Vec<(String, Vec<u8>)>, check: fn(&[u8])) {
    let failed: Vec<String> = inputs
        .iter()
        .filter(|(_, bytes)| std::panic::catch_unwind(AssertUnwindSafe(|| check(bytes))).is_err())
        .map(|(name, _)| name.clone())
        .collect();
    assert!(
        failed.is_empty(),
        "{} inputs broke an invariant (see above): {failed:?}",
        failed.len()
    );
}

#[test]
fn jsonrpc_envelope_corpus() {
    let inputs = corpus("jsonrpc_envelope");
    // Guards against replaying an empty or misplaced corpus and passing vacuously.
    assert!(inputs.len() >= 50, "only {} seeds", inputs.len());
    assert!(
        inputs
            .iter()
            .any(|(name, _)| name.starts_with("regression-"))
    );
    replay(inputs, oxmcp::fuzzing::jsonrpc_envelope);
}

#[test]
fn stdio_framer_corpus() {
    let inputs = corpus("stdio_framer");
    assert!(inputs.len() >= 15, "only {} seeds", inputs.len());
    assert!(
        inputs
            .iter()
            .any(|(name, _)| name.starts_with("regression-"))
    );
    replay(inputs, oxmcp::fuzzing::stdio_framer);
}

#[test]
fn http_request_corpus() {
    let inputs = corpus("http_request");
    // Every body shape of the POST rule against every server kind, at least.
    assert!(inputs.len() >= 140, "only {} seeds", inputs.len());
    replay(inputs, oxmcp::fuzzing::http_request);
}

#[test]
fn malformed_fixture_lines_keep_the_envelope_invariants() {
    let cases = malformed::load();
    assert!(cases.len() >= 200, "only {} cases", cases.len());
    replay(
        cases.into_iter().map(|c| (c.name, c.bytes)).collect(),
        oxmcp::fuzzing::jsonrpc_envelope,
    );
}
