//! The `oxmcp` binary as a shell user runs it, for the CLI suites (`cli`, `cli_prompt`,
//! `cli_login`, `inspect`, `hostile_peers`): scratch directories that clean up after
//! themselves, config files and executable scripts in them, and readers for what a run left
//! (its exit code, its stderr, its stdout as one JSON document, the marks a fake browser made).

use std::{
    path::{Path, PathBuf},
    process::Output,
};

use serde_json::Value;

/// A directory of its own for one test (`oxmcp-<suite>-<tag>-<pid>` under the temporary
/// directory), emptied when created and removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(suite: &str, tag: &str) -> Scratch {
        let dir = scratch_path(suite, tag);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_path(suite: &str, tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("oxmcp-{suite}-{tag}-{}", std::process::id()))
}

/// Writes `config` as `mcp.json` in the suite's directory for `tag` (kept after the test, for
/// a look when it fails) and returns its path.
pub fn write_config(suite: &str, tag: &str, config: &Value) -> PathBuf {
    let dir = scratch_path(suite, tag);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mcp.json");
    std::fs::write(&path, serde_json::to_string_pretty(config).unwrap()).unwrap();
    path
}

/// Writes `text` to `path` as an executable script; returns the path as text (for a config or
/// `BROWSER`).
pub fn executable(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.display().to_string()
}

/// How many times a fake browser in `dir` was opened (it appends a line to `opened`).
pub fn opened(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("opened"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// The exit code of a run that exited (was not killed).
pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Checks a run exited with `want` and said `needle` on stderr, where the CLI explains every
/// failure; shows that stderr when it did not.
pub fn assert_exit(o: &Output, want: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(want), "{err}");
    assert!(err.contains(needle), "`{needle}` not on stderr: {err}");
}

/// stdout is exactly one JSON document (nothing else ever goes there).
pub fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}
