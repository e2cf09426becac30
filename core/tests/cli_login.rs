//! `oxmcp login`, run as a shell user would, against an OAuth-protected oxmcp HTTP server and
//! a small authorization server on 127.0.0.1 (`auth_server`). The "browser" is a real child
//! process (`$BROWSER`, a Python script) that follows the authorization URL, so the redirect
//! reaches the CLI's loopback listener exactly as a user's browser would send it.
//!
//! - Before login, `tools` fails for that server with a message naming `oxmcp login`, and no
//!   browser is opened.
//! - `login` opens the browser once, stores the tokens (0600 files), and exits 0; `call` then
//!   works with the stored token and no new authorization.
//! - A refused authorization, a browser that never comes back, an unknown server and a stdio
//!   server each end with their exit code and a message.

mod auth_server;
mod common;

use std::{path::Path, process::Output, time::Duration};

use auth_server::{AuthServer, protected};
use common::cli::{Scratch, assert_exit, executable, opened, stderr as err};
use serde_json::json;

const PATIENCE: Duration = Duration::from_secs(60);

/// A "browser": follows the authorization URL (urllib follows the authorization server's
/// redirect to the CLI's callback) and leaves a mark that it ran. With `deny`, it answers
/// the callback with `error=access_denied` instead, as a user pressing "Deny" would cause.
fn browser(dir: &Path, deny: bool) -> String {
    let path = dir.join(if deny { "deny.py" } else { "browser.py" });
    let script = format!(
        r#"#!/usr/bin/env python3
import sys, urllib.parse, urllib.request
open({mark:?}, "a").write(sys.argv[1] + "\n")
if {deny}:
    u = urllib.parse.urlsplit(sys.argv[1])
    q = urllib.parse.parse_qs(u.query)
    iss = urllib.parse.quote(u.scheme + "://" + u.netloc, safe="")
    urllib.request.urlopen(q["redirect_uri"][0] + "?error=access_denied&state=" + q["state"][0] + "&iss=" + iss).read()
else:
    urllib.request.urlopen(sys.argv[1]).read()
"#,
        mark = dir.join("opened").display().to_string(),
        deny = if deny { "True" } else { "False" },
    );
    executable(&path, &script)
}

async fn oxmcp(dir: &Path, browser: &str, args: &[&str]) -> Output {
    let auth_dir = dir.join("auth");
    let config = dir.join("mcp.json");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_oxmcp"));
    cmd.args(args)
        .args(["--config", &config.display().to_string()])
        .args(["--auth-dir", &auth_dir.display().to_string()])
        .args(["--allow-loopback", "--callback-port", "0"])
        .env("BROWSER", browser)
        .kill_on_drop(true);
    tokio::time::timeout(PATIENCE, cmd.output())
        .await
        .expect("the CLI does not hang")
        .expect("the CLI runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_stores_tokens_that_the_other_commands_use() {
    let scratch = Scratch::new("login", "ok");
    let dir = &scratch.0;
    let auth = AuthServer::start(json!({})).await;
    let (_server, _http, url) = protected(&auth, &[], None).await;
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {"secure": {"url": url}}}).to_string(),
    )
    .unwrap();
    let ok = browser(dir, false);

    // Not logged in yet: the server is reported with the way out, and no browser opens.
    let before = oxmcp(dir, &ok, &["tools"]).await;
    assert_exit(&before, 4, "oxmcp login secure");
    assert_eq!(opened(dir), 0, "only `login` opens a browser");

    let login = oxmcp(dir, &ok, &["login", "secure"]).await;
    assert_exit(&login, 0, "logged in to `secure`");
    assert_eq!(opened(dir), 1);
    assert!(login.stdout.is_empty(), "login prints nothing on stdout");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let files: Vec<_> = std::fs::read_dir(dir.join("auth"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(!files.is_empty(), "tokens were stored");
        for f in files {
            let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", f.display());
            let text = std::fs::read_to_string(&f).unwrap();
            assert!(text.contains("at-"), "the access token is in the store");
        }
    }
    let authorizations = auth.state.lock().unwrap().authorizations;
    assert_eq!(authorizations, 1);

    // The stored token is used: the call succeeds without a new authorization or browser.
    let call = oxmcp(dir, &ok, &["call", "secure", "whoami"]).await;
    assert_eq!(call.status.code(), Some(0), "{}", err(&call));
    assert!(String::from_utf8_lossy(&call.stdout).contains("hello"));
    assert_eq!(auth.state.lock().unwrap().authorizations, 1);
    assert_eq!(opened(dir), 1);
    // The token never appears in what the CLI prints.
    assert!(!err(&call).contains("at-"), "{}", err(&call));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_or_abandoned_login_and_bad_targets_fail_clearly() {
    let scratch = Scratch::new("login", "bad");
    let dir = &scratch.0;
    let auth = AuthServer::start(json!({})).await;
    let (_server, _http, url) = protected(&auth, &[], None).await;
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {
            "secure": {"url": url},
            "local": {"command": "definitely-not-a-program"}
        }})
        .to_string(),
    )
    .unwrap();

    // The user presses "Deny": the authorization server's error reaches the message.
    let deny = browser(dir, true);
    let denied = oxmcp(dir, &deny, &["login", "secure"]).await;
    assert_exit(&denied, 4, "access_denied");

    // No browser comes back: the wait ends at --timeout.
    let gone = oxmcp(dir, "false", &["login", "secure", "--timeout", "1"]).await;
    assert_exit(&gone, 4, "no authorization redirect");

    // Servers that cannot log in.
    let unknown = oxmcp(dir, &deny, &["login", "nope"]).await;
    assert_eq!(unknown.status.code(), Some(3), "{}", err(&unknown));
    let local = oxmcp(dir, &deny, &["login", "local"]).await;
    assert_exit(&local, 2, "only `url` servers log in");
    let missing = oxmcp(dir, &deny, &["login"]).await;
    assert_eq!(missing.status.code(), Some(2), "{}", err(&missing));
}
