//! The other direction: each SDK's own client (its client scripts) drives oxmcp's servers.
//! A script asserts everything it receives, prints `ok: …` lines, and ends with `all checks
//! passed`, or exits 1 with a `MISMATCH` line at the first difference. Each script is also
//! pointed at a server that is not the one it expects (the SDK's own), to show its checks are
//! real.

use std::{ffi::OsString, path::PathBuf, process::Output, time::Duration};

use crate::sdk::{Launcher, Sdk, ServerNames, skip};

/// A client script and what it expects to drive.
#[derive(Clone, Copy)]
pub struct ClientScript {
    /// The script's stem: `client` drives the weather example, `feature_client` the
    /// conformance example.
    pub stem: &'static str,
    /// The oxmcp example it drives over stdio.
    pub example: &'static str,
    /// The SDK's own server the rejection points it at, and the name that server reports.
    pub other_server: &'static str,
    pub other_name: fn(&ServerNames) -> &'static str,
}

pub const WEATHER_CLIENT: ClientScript = ClientScript {
    stem: "client",
    example: "weather_server",
    other_server: "server",
    other_name: |names| names.tools,
};

pub const FEATURE_CLIENT: ClientScript = ClientScript {
    stem: "feature_client",
    example: "conformance_server",
    other_server: "feature_server",
    other_name: |names| names.features,
};

/// The revision a client mode reaches against oxmcp.
fn version_of(mode: &str) -> &'static str {
    match mode {
        "legacy" => "2025-11-25",
        _ => "2026-07-28",
    }
}

/// The launcher, with the script's arguments for `mode`; `None` (said why) where the SDK's
/// client has no such mode or the peer is not installed.
pub fn client_for(sdk: &Sdk, mode: &str) -> Option<(Launcher, Vec<OsString>)> {
    if mode != "legacy" && !sdk.client_takes_mode {
        // Its client always handshakes and takes no mode.
        skip(sdk.no_stateless.unwrap_or("its client takes no mode"));
        return None;
    }
    let launcher = sdk.launcher()?;
    let args = if sdk.client_takes_mode {
        vec![mode.into()]
    } else {
        Vec::new()
    };
    Some((launcher, args))
}

/// Runs a client script to completion (a 60 s guard against a hang, not a timed assertion:
/// a script takes a few seconds); kills it if the test gives up.
pub async fn run(mut command: tokio::process::Command) -> Output {
    command
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("the client script finished within 60 s")
        .expect("run the client script")
}

/// A script's exit status and output, for failure messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Asserts a client script passed: exit 0, each of `lines`, and its closing line.
pub fn assert_passed(output: &Output, lines: &[String], what: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success()
            && lines.iter().all(|l| stdout.contains(l.as_str()))
            && stdout.ends_with("all checks passed\n"),
        "{what} failed (expected {lines:?})\n{}",
        describe(output)
    );
}

/// The SDK's client script in `mode` drives oxmcp's example over stdio.
pub async fn drives_oxmcp(sdk: &'static Sdk, script: ClientScript, mode: &str) {
    let Some((launcher, mut args)) = client_for(sdk, mode) else {
        return;
    };
    args.push(crate::common::example_bin(script.example).into());
    let output = run(launcher.command(script.stem, args)).await;
    let connected = (sdk.connected_line)(mode, version_of(mode));
    assert_passed(
        &output,
        &[connected],
        &format!("{} {mode} against {}", script.stem, script.example),
    );
}

/// Pointed at the SDK's own server in `mode`, the script fails at `field` (the server's name,
/// `expected` there) and says why.
pub async fn rejects_another_server(
    sdk: &'static Sdk,
    script: ClientScript,
    mode: &str,
    field: &str,
    expected: &str,
) {
    let actual = (script.other_name)(&sdk.names);
    let Some((launcher, mut args)) = client_for(sdk, mode) else {
        return;
    };
    let other: PathBuf = launcher.script(script.other_server);
    args.extend([launcher.program().into(), other.into()]);
    let output = run(launcher.command(script.stem, args)).await;
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    sdk.mismatch
        .assert_reported(&stderr, field, expected, actual);
}
