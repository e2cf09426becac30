//! `oxmcp inspect [--config FILE] [--port N] [--no-open]`: the web inspector.
//!
//! Listens on 127.0.0.1 (never another address), prints the page's URL with its fresh token
//! as the first line of stdout, opens the browser like `login` does (unless `--no-open`),
//! then starts the config's servers and serves until Ctrl-C (or SIGTERM), when every server
//! is closed through its shutdown ladder.

use std::io::Write;

use super::Args;
use crate::{
    host::{Config, HostOptions},
    inspect::{Inspector, servers::Servers},
};

pub(super) async fn inspect(
    args: &Args,
    path: &std::path::Path,
    config: Config,
    options: HostOptions,
) -> u8 {
    if !args.positional.is_empty() {
        return super::usage("`inspect` takes no arguments (the servers come from --config)");
    }
    let inspector = match Inspector::bind(args.port.unwrap_or(0)).await {
        Ok(i) => i,
        Err(e) => {
            eprintln!(
                "oxmcp: cannot listen on 127.0.0.1:{}: {e} (choose another with --port)",
                args.port.unwrap_or(0)
            );
            return 2;
        }
    };
    let url = inspector.url();
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{url}");
        let _ = out.flush();
    }
    eprintln!(
        "oxmcp: inspector on 127.0.0.1 only; the URL above carries its token. Ctrl-C stops it."
    );
    if !args.no_open {
        crate::auth::open_browser(&url);
    }
    let servers = Servers::new(config, path, options);
    servers.start_all();
    let stop = tokio_util::sync::CancellationToken::new();
    // The bindings run this as a task they abort on Ctrl-C: dropping it stops serving too.
    let _stop_on_drop = stop.clone().drop_guard();
    let serving = tokio::spawn(inspector.serve(servers.clone(), stop.clone()));
    wait_for_stop().await;
    stop.cancel();
    let _ = serving.await;
    servers.close().await;
    0
}

/// Ctrl-C, or SIGTERM on Unix, when nobody else handles them.
///
/// In the Rust binary both signals have their default disposition and are taken here, so a
/// stop closes every server cleanly. Inside the bindings the host process may already handle
/// them (Node's handler for SIGINT and SIGTERM re-raises the signal, so chaining to it from
/// ours would loop; Python's SIGINT becomes KeyboardInterrupt, which aborts this task and,
/// through the drop guard, the serving): a handled signal is left to its owner.
async fn wait_for_stop() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let ours = |sig: libc::c_int, kind: SignalKind| {
            if is_default(sig) {
                signal(kind).ok()
            } else {
                None
            }
        };
        let mut int = ours(libc::SIGINT, SignalKind::interrupt());
        let mut term = ours(libc::SIGTERM, SignalKind::terminate());
        tokio::select! {
            () = next(&mut int) => {}
            () = next(&mut term) => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The next delivery of a signal we took; never, for one we left alone.
#[cfg(unix)]
async fn next(signal: &mut Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

/// Whether `sig` still has its default disposition (no handler installed by anyone).
#[cfg(unix)]
fn is_default(sig: libc::c_int) -> bool {
    // SAFETY: a query only (the new action is null); `old` is a plain C struct we own.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_DFL
    }
}
