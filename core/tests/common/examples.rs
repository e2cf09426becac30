//! Where the example binaries the tests start are found: built by cargo next to the test
//! executable, in `target/<profile>/examples/`. Shared by `common` and `scale_out`.

use std::path::PathBuf;

/// The path of an example binary built alongside the tests (`cargo test` builds examples;
/// `cargo test --test NAME` and nextest do not, so build them first).
pub fn example_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> → target/<profile>/examples/<name>
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|p| p.join("examples").join(name))
        .expect("target dir");
    assert!(
        path.exists(),
        "{} not built; run the tests through cargo (it builds examples; the scale-out ones \
         need --features redis), or `cargo build --example {name}` first",
        path.display()
    );
    path
}
