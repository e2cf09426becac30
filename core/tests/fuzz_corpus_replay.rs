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

/// Replays the corpus of the fuzz target `target` through `check`. The corpus must hold at
/// least `min_seeds` inputs, and the `regression-` seeds where `with_regressions`: guards
/// against replaying an empty or misplaced corpus and passing vacuously.
fn replay_corpus(target: &str, min_seeds: usize, with_regressions: bool, check: fn(&[u8])) {
    let inputs = corpus(target);
    assert!(
        inputs.len() >= min_seeds,
        "{target}: only {} seeds",
        inputs.len()
    );
    if with_regressions {
        assert!(
            inputs
                .iter()
                .any(|(name, _)| name.starts_with("regression-")),
            "{target}: no regression seeds"
        );
    }
    replay(inputs, check);
}

#[test]
fn jsonrpc_envelope_corpus() {
    replay_corpus(
        "jsonrpc_envelope",
        50,
        true,
        oxmcp::fuzzing::jsonrpc_envelope,
    );
}

#[test]
fn stdio_framer_corpus() {
    replay_corpus("stdio_framer", 15, true, oxmcp::fuzzing::stdio_framer);
}

#[test]
fn http_request_corpus() {
    // Every body shape of the POST rule against every server kind, at least.
    replay_corpus("http_request", 140, false, oxmcp::fuzzing::http_request);
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
