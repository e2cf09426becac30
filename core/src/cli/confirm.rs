//! `oxmcp call` asks before a destructive tool runs. A tool its server marks
//! `destructiveHint: true` (and the config does not list in `alwaysAllow` / `autoApprove`) is
//! shown with its arguments and runs only when the user answers yes on a terminal. Without a
//! terminal (a script, CI, a pipe) nobody can answer, so the call is refused rather than run
//! unseen; `--yes` is the explicit, greppable way to run it anyway.
//!
//! The annotation is the server's word, so it can only make the CLI ask *more*: a server that
//! says nothing about a tool is not asked about (as with `read-only`, the hints are trusted
//! only in the cautious direction).

use std::io::{BufRead, IsTerminal, Write};

use serde_json::Value;

use crate::{host::Host, sanitize};

/// Exit code of a call that was not run because it was not confirmed.
pub(super) const DECLINED: u8 = 6;

/// Whether the call may go ahead: `Ok(())`, or the exit code after saying why not.
pub(super) async fn destructive_call(
    host: &Host,
    server: &str,
    tool: &str,
    arguments: &Value,
    yes: bool,
) -> Result<(), u8> {
    if yes || !marked_destructive(host, server, tool).await {
        return Ok(());
    }
    let shown = format!(
        "`{}` on server `{}` is marked destructive (destructiveHint)",
        sanitize::line(tool),
        sanitize::line(server)
    );
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "oxmcp: {shown}; not run without a terminal to confirm it. Pass --yes to run it \
             anyway."
        );
        return Err(DECLINED);
    }
    eprint!(
        "oxmcp: {shown}.\n  arguments: {}\nRun it? [y/N] ",
        sanitize::clean(&arguments.to_string(), false, sanitize::BLOCK_CAP)
    );
    let _ = std::io::stderr().flush();
    // The terminal's line, read off the runtime's threads (stdin blocks).
    let answer = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await;
    match answer {
        Ok(Ok(line)) if matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") => Ok(()),
        _ => {
            eprintln!("oxmcp: not run.");
            Err(DECLINED)
        }
    }
}

/// Whether the server lists `tool` with `destructiveHint: true` and the config does not
/// always allow it. A tool that cannot be found is left to the call, which names the problem.
async fn marked_destructive(host: &Host, server: &str, tool: &str) -> bool {
    if host
        .spec(server)
        .is_some_and(|spec| spec.always_allow.iter().any(|t| t == tool))
    {
        return false;
    }
    host.tools()
        .await
        .into_iter()
        .filter(|(s, _)| s == server)
        .flat_map(|(_, tools)| {
            tools
                .iter()
                .filter(|t| t.name == tool)
                .map(|t| t.annotations.as_ref().and_then(|a| a.destructive_hint))
                .collect::<Vec<_>>()
        })
        .any(|hint| hint == Some(true))
}
