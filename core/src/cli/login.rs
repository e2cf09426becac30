//! `oxmcp login SERVER`, and the authorization every other command uses for `url` servers.
//!
//! Login runs the OAuth flow once with a person in the loop: the browser opens the
//! authorization server's page and the redirect comes back to a loopback listener
//! ([`BrowserAuthorizer`]). The registration and tokens land in a [`FileStore`] (0600 files);
//! `tools` and `call` then use and refresh them, and never open a browser on their own: a
//! server that needs a new authorization tells the user to log in again.
//!
//! One deadline bounds a login (`--timeout`, else [`LOGIN_TIME`]): discovery, registration,
//! the wait for the browser and the token exchange all end by then, each request's own limit
//! capped by what remains, so a silent or trickling endpoint cannot hold the terminal.

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use futures::future::BoxFuture;

use super::Args;
use crate::{
    Error,
    auth::{
        AuthProvider, Authorizer, BrowserAuthorizer, FileStore, OAuthClient, OAuthOptions,
        TargetPolicy,
    },
    host::{AuthFactory, Config, HostOptions, ServerSpec, TransportSpec},
    sanitize,
};

/// The loopback port of the redirect when `--callback-port` is not given. Fixed, so that a
/// dynamic registration made at one login still matches the redirect URI of the next.
pub(super) const DEFAULT_CALLBACK_PORT: u16 = 33418;
/// How much longer than the login's deadline the connection may take, so that an OAuth step cut
/// short by the deadline reports first.
const STEP_ERROR_GRACE: Duration = Duration::from_millis(300);

/// How long a login may take without `--timeout`: the person needs time in the browser.
pub(super) const LOGIN_TIME: Duration = Duration::from_secs(300);

/// Where registrations and tokens are kept: `--auth-dir`, `$OXMCP_AUTH_DIR`,
/// `$XDG_CONFIG_HOME/oxmcp/auth`, or `~/.config/oxmcp/auth`.
pub(super) fn auth_dir(args: &Args) -> PathBuf {
    if let Some(dir) = &args.auth_dir {
        return dir.clone();
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("OXMCP_AUTH_DIR")
        .or_else(|| env("XDG_CONFIG_HOME").map(|d| d.join("oxmcp").join("auth")))
        .or_else(|| env("HOME").map(|h| h.join(".config").join("oxmcp").join("auth")))
        .unwrap_or_else(|| PathBuf::from(".oxmcp-auth"))
}

/// The user step of every command but `login`: refuse, and say how to log in.
struct LoginRequired(String);

impl Authorizer for LoginRequired {
    fn authorize(&self, _url: String) -> BoxFuture<'_, Result<String, Error>> {
        let server = self.0.clone();
        Box::pin(async move {
            Err(Error::Auth(format!(
                "server `{server}` needs an authorization: run `oxmcp login {server}`"
            )))
        })
    }
}

/// Authorization for the config's `url` servers, with tokens from the store. `browser` is the
/// user step of `login`; without it a needed authorization fails with [`LoginRequired`].
/// Every OAuth request ends by `deadline`.
pub(super) fn factory(
    args: &Args,
    browser: Option<Arc<BrowserAuthorizer>>,
    deadline: Option<Instant>,
) -> AuthFactory {
    let dir = auth_dir(args);
    let port = args.callback_port.unwrap_or(DEFAULT_CALLBACK_PORT);
    let redirect = browser.as_ref().map_or_else(
        || format!("http://127.0.0.1:{port}/callback"),
        |b| b.redirect_uri().to_owned(),
    );
    let allow_loopback = args.allow_loopback;
    Arc::new(move |spec: &ServerSpec| {
        let mut options = OAuthOptions::new("oxmcp", redirect.clone());
        options.store = Arc::new(FileStore::new(dir.clone())?);
        options.deadline = deadline;
        options.targets = if allow_loopback {
            TargetPolicy::public_only().allow_loopback()
        } else {
            TargetPolicy::public_only()
        };
        options.authorizer = Some(match &browser {
            Some(b) => b.clone() as Arc<dyn Authorizer>,
            None => Arc::new(LoginRequired(spec.name.clone())),
        });
        Ok(Some(
            Arc::new(OAuthClient::new(options)?) as Arc<dyn AuthProvider>
        ))
    })
}

/// `oxmcp login SERVER`: exit 0 once the server accepted us, with the tokens stored.
pub(super) async fn login(
    args: &Args,
    path: &std::path::Path,
    config: Config,
    mut options: HostOptions,
) -> u8 {
    let [server] = args.positional.as_slice() else {
        return super::usage("`login` takes SERVER");
    };
    let spec = match super::one_server(&config, path, server) {
        Ok(spec) => spec,
        Err(code) => return code,
    };
    if !matches!(spec.transport, TransportSpec::Http { .. }) {
        return super::usage(format!(
            "server `{server}` is started as a local process; only `url` servers log in"
        ));
    }
    let port = args.callback_port.unwrap_or(DEFAULT_CALLBACK_PORT);
    let browser = match BrowserAuthorizer::bind(port).await {
        Ok(b) => b,
        Err(e) => {
            eprintln!("oxmcp: {e} (choose another with --callback-port)");
            return 2;
        }
    };
    // The whole login ends by --timeout, 5 minutes by default.
    let deadline = args.deadline.unwrap_or_else(|| Instant::now() + LOGIN_TIME);
    let wait = deadline.saturating_duration_since(Instant::now());
    let name = sanitize::line(server).into_owned();
    let browser = Arc::new(
        browser
            .with_timeout(wait)
            .with_deadline(deadline)
            .with_notice(Arc::new(move |url| {
                eprintln!(
                    "oxmcp: opening your browser to authorize `{name}`; if it does not open, \
                     visit:\n  {}",
                    sanitize::line(url)
                );
            })),
    );
    options.auth = Some(factory(args, Some(browser), Some(deadline)));
    // The connection's own timeout falls a little after the deadline, so that when the time
    // runs out during an OAuth step it is that step's error (naming the endpoint that did not
    // answer) the user reads, not a bare "connect timed out" that won a race by microseconds.
    options.connect_timeout = wait + STEP_ERROR_GRACE;
    options.restart = false;
    let host = super::start_one(spec, options).await;
    let status = host.status().await;
    host.close().await;
    match status.into_iter().next() {
        Some(s) if s.state == "connected" => {
            eprintln!(
                "oxmcp: logged in to `{}` (tokens kept in {})",
                sanitize::line(server),
                auth_dir(args).display()
            );
            0
        }
        Some(s) => {
            eprintln!(
                "oxmcp: login to `{}` failed: {}",
                sanitize::line(server),
                sanitize::clean(
                    s.error.as_deref().unwrap_or_default(),
                    true,
                    sanitize::BLOCK_CAP
                )
            );
            4
        }
        None => 4,
    }
}
