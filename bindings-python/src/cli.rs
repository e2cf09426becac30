//! `oxmcp._native.run_cli`: the `oxmcp` command (`oxmcp::cli`) for the wheel's console script.
//!
//! The command is the core's, byte for byte the same as the Rust binary; this only runs it on
//! the binding's runtime with the GIL released. While it runs, the calling thread wakes every
//! 100 ms to let Python see signals, so Ctrl-C ends the command (`KeyboardInterrupt`, which
//! the console script turns into exit code 130) instead of being held until it finishes.

use std::time::Duration;

use pyo3::prelude::*;

use crate::runtime::runtime;

/// Runs `oxmcp ARGV...` and returns its exit code (stdout and stderr are this process's).
#[pyfunction]
pub fn run_cli(py: Python<'_>, argv: Vec<String>) -> PyResult<u8> {
    let mut task = runtime().spawn(oxmcp::cli::run(argv));
    loop {
        let done = py.detach(|| {
            runtime().block_on(async {
                tokio::select! {
                    out = &mut task => Some(out),
                    _ = tokio::time::sleep(Duration::from_millis(100)) => None,
                }
            })
        });
        match done {
            Some(Ok(code)) => return Ok(code),
            Some(Err(e)) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "oxmcp: the command failed: {e}"
                )));
            }
            None => {
                if let Err(e) = py.check_signals() {
                    // Dropping the task's future closes the hosts it started (children go
                    // through the shutdown ladder in their drop).
                    task.abort();
                    return Err(e);
                }
            }
        }
    }
}
