//! The user step for a person at a terminal (`oxmcp login`): open the authorization URL in
//! their browser and receive the authorization server's redirect on a loopback listener, the
//! native-app pattern of RFC 8252 §7.3.
//!
//! The URL has already passed [`super::check_authorization_url`] (http(s) only, no CR/LF, no
//! flag-like values) when it gets here, and it is handed to the browser program as one
//! argument, never through a shell. The listener answers only `GET /callback` on 127.0.0.1,
//! serves up to [`MAX_CONNECTIONS`] connections at once (each with [`HEAD_TIMEOUT`] to send
//! at most 8 KiB of request head; the first valid redirect wins), and gives up at its timeout
//! or deadline, so a stray or hostile local connection can neither delay the real redirect
//! nor make it take the wrong one. The browser is opened once per authorizer: a login whose
//! flow failed is not retried behind the user's back with a second window.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use futures::future::BoxFuture;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::{Mutex, Semaphore, mpsc},
    task::JoinSet,
};

use super::Authorizer;
use crate::Error;

/// The path the authorization server redirects to.
const CALLBACK_PATH: &str = "/callback";
/// The most of a request head the listener reads.
const MAX_HEAD: usize = 8 * 1024;
/// How long one connection may take to send its request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more are closed at once (a browser needs one or two).
pub const MAX_CONNECTIONS: usize = 16;

/// Called with the authorization URL before the browser is started (to print it, so the user
/// can open it by hand where no browser can be started).
pub type UrlNotice = Arc<dyn Fn(&str) + Send + Sync>;

/// Opens the authorization URL with the user's browser and waits for the redirect on
/// `http://127.0.0.1:PORT/callback`.
///
/// The browser is `$BROWSER` when set (a program and its arguments, split on whitespace; the
/// URL is appended as the last argument), else `xdg-open` (Linux and BSD) or `open` (macOS).
/// A browser that cannot be started is not an error: the notice has shown the URL.
pub struct BrowserAuthorizer {
    listener: Mutex<TcpListener>,
    redirect_uri: String,
    timeout: Duration,
    deadline: Option<Instant>,
    notice: Option<UrlNotice>,
    /// Set when the browser was started: it is never started twice.
    opened: AtomicBool,
}

impl std::fmt::Debug for BrowserAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserAuthorizer")
            .field("redirect_uri", &self.redirect_uri)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl BrowserAuthorizer {
    /// Listens on `127.0.0.1:port` (`0`: a free port). A fixed port keeps the redirect URI,
    /// and so a dynamic registration made with it, the same from one login to the next.
    pub async fn bind(port: u16) -> Result<Self, Error> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
            Error::InvalidArgument(format!(
                "cannot listen for the authorization redirect on 127.0.0.1:{port}: {e}"
            ))
        })?;
        let port = listener.local_addr()?.port();
        Ok(BrowserAuthorizer {
            listener: Mutex::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
            timeout: Duration::from_secs(300),
            deadline: None,
            notice: None,
            opened: AtomicBool::new(false),
        })
    }

    /// How long to wait for the user (default 5 minutes).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Stops waiting at `deadline` even when the timeout would go on (a CLI's one deadline
    /// for the whole login).
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Shows the URL to the user before the browser starts.
    pub fn with_notice(mut self, notice: UrlNotice) -> Self {
        self.notice = Some(notice);
        self
    }

    /// The redirect URI to register and send (`http://127.0.0.1:PORT/callback`).
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    async fn run(&self, url: String) -> Result<String, Error> {
        // One authorization at a time owns the listener.
        let listener = self.listener.lock().await;
        if self.opened.swap(true, Ordering::SeqCst) {
            return Err(Error::Auth(
                "the browser was already opened once for this login and that authorization did \
                 not complete; not opening it again (run the login again)"
                    .into(),
            ));
        }
        let mut deadline = Instant::now() + self.timeout;
        if let Some(d) = self.deadline {
            deadline = deadline.min(d);
        }
        if let Some(notice) = &self.notice {
            notice(&url);
        }
        let waited = deadline.saturating_duration_since(Instant::now());
        open_browser(&url);
        let (found, mut redirects) = mpsc::channel::<String>(1);
        let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        // Dropped on return: connections still being read are abandoned with it.
        let mut serving = JoinSet::new();
        let wait = tokio::time::sleep_until(deadline.into());
        tokio::pin!(wait);
        loop {
            tokio::select! {
                Some(target) = redirects.recv() => {
                    return Ok(format!(
                        "{}{}",
                        self.redirect_uri.trim_end_matches(CALLBACK_PATH),
                        target
                    ));
                }
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    // Over the cap: closed unread, the wait goes on.
                    let Ok(slot) = slots.clone().try_acquire_owned() else { continue };
                    let found = found.clone();
                    serving.spawn(async move {
                        if let Some(target) = serve_one(stream).await {
                            let _ = found.try_send(target);
                        }
                        drop(slot);
                    });
                }
                Some(_) = serving.join_next(), if !serving.is_empty() => {}
                () = &mut wait => {
                    return Err(Error::Auth(format!(
                        "no authorization redirect arrived within {:.1} s",
                        waited.as_secs_f64()
                    )));
                }
            }
        }
    }
}

impl Authorizer for BrowserAuthorizer {
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<String, Error>> {
        Box::pin(self.run(url))
    }
}

/// Starts the browser on `url` without a shell, and reaps it in the background.
pub(crate) fn open_browser(url: &str) {
    let mut argv: Vec<String> = match std::env::var("BROWSER") {
        Ok(b) if !b.trim().is_empty() => b
            .split(':')
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
        _ if cfg!(target_os = "macos") => vec!["open".into()],
        _ => vec!["xdg-open".into()],
    };
    if argv.is_empty() {
        return;
    }
    argv.push(url.to_owned());
    let child = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(false)
        .spawn();
    if let Ok(mut child) = child {
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
    }
}

/// Reads one request; answers it. The request target when it was `GET /callback?...`.
async fn serve_one(mut stream: TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let read = tokio::time::timeout(HEAD_TIMEOUT, async {
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 || head.len() + n > MAX_HEAD {
                return None;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Some(())
    })
    .await;
    if !matches!(read, Ok(Some(()))) {
        // Too long, cut or too slow: refused, and the wait goes on.
        let _ = stream
            .write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )
            .await;
        return None;
    }
    let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let ours = method == "GET" && path == CALLBACK_PATH && target.contains('?');
    let (status, body) = if ours {
        (
            "200 OK",
            "<!doctype html><title>oxmcp</title><p>Authorization received. You can close this \
             window and go back to the terminal.</p>",
        )
    } else {
        (
            "404 Not Found",
            "<!doctype html><title>oxmcp</title><p>Not found.</p>",
        )
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    ours.then(|| target.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An authorizer on a free port whose browser opens nothing.
    async fn quiet_authorizer() -> BrowserAuthorizer {
        // SAFETY: the test process sets BROWSER for itself only; `true` ignores the URL.
        unsafe { std::env::set_var("BROWSER", "true") };
        BrowserAuthorizer::bind(0).await.unwrap()
    }

    /// The `host:port` of the redirect URI.
    fn addr_of(uri: &str) -> String {
        uri.trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_owned()
    }

    async fn get(uri: &str, raw: &str) -> String {
        let mut s = TcpStream::connect(addr_of(uri)).await.unwrap();
        let _ = s.write_all(raw.as_bytes()).await;
        let mut out = String::new();
        let _ = s.read_to_string(&mut out).await;
        out
    }

    #[tokio::test]
    async fn takes_the_callback_and_ignores_everything_else() {
        let auth = Arc::new(
            quiet_authorizer()
                .await
                .with_timeout(Duration::from_secs(20)),
        );
        let uri = auth.redirect_uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let waiting = tokio::spawn({
            let auth = auth.clone();
            async move {
                auth.authorize("https://as.example/authorize?x=1".into())
                    .await
            }
        });
        // A wrong path, a POST, a head that never ends and an empty connection are all
        // answered or dropped without ending the wait.
        assert!(
            get(&uri, "GET /favicon.ico HTTP/1.1\r\n\r\n")
                .await
                .starts_with("HTTP/1.1 404")
        );
        assert!(
            get(&uri, "POST /callback?code=x HTTP/1.1\r\n\r\n")
                .await
                .starts_with("HTTP/1.1 404")
        );
        let junk = format!("GET /callback?{} HTTP/1.1\r\n", "a".repeat(20_000));
        // (400, or a reset when the unread rest of it is dropped: never a 200.)
        assert!(!get(&uri, &junk).await.starts_with("HTTP/1.1 200"));
        let reply = get(
            &uri,
            "GET /callback?code=abc&state=s1 HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        .await;
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        let redirected = waiting.await.unwrap().unwrap();
        assert_eq!(redirected, format!("{uri}?code=abc&state=s1"));
    }

    #[tokio::test]
    async fn idle_connections_do_not_hold_off_the_redirect() {
        let auth = Arc::new(
            quiet_authorizer()
                .await
                .with_timeout(Duration::from_secs(30)),
        );
        let uri = auth.redirect_uri().to_owned();
        let addr = addr_of(&uri);
        let waiting = tokio::spawn({
            let auth = auth.clone();
            async move { auth.authorize("https://as.example/a".into()).await }
        });
        // Local processes that connect and send nothing (or half a head), held open while
        // the real redirect comes in: it is served beside them, well before their head
        // timeout would have freed a one-at-a-time listener.
        let mut idle = Vec::new();
        for half in ["", "GET /callback?code=evil", ""] {
            let mut s = TcpStream::connect(&addr).await.unwrap();
            let _ = s.write_all(half.as_bytes()).await;
            idle.push(s);
        }
        let reply = get(&uri, "GET /callback?code=real&state=s HTTP/1.1\r\n\r\n").await;
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        let redirected = tokio::time::timeout(HEAD_TIMEOUT / 2, waiting)
            .await
            .expect("the redirect is taken while the idle connections are still open")
            .unwrap()
            .unwrap();
        assert_eq!(redirected, format!("{uri}?code=real&state=s"));
        drop(idle);
        // The same authorizer never opens the browser a second time.
        let again = auth
            .authorize("https://as.example/a".into())
            .await
            .unwrap_err();
        assert!(
            again.to_string().contains("not opening it again"),
            "{again}"
        );
    }

    #[tokio::test]
    async fn a_deadline_ends_the_wait_before_the_timeout() {
        let auth = quiet_authorizer()
            .await
            .with_timeout(Duration::from_secs(300))
            .with_deadline(Instant::now() + Duration::from_millis(200));
        let err = tokio::time::timeout(
            Duration::from_secs(30),
            auth.authorize("https://as.example/a".into()),
        )
        .await
        .expect("the deadline ends the wait")
        .unwrap_err();
        assert!(
            err.to_string().contains("no authorization redirect"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn gives_up_after_its_timeout() {
        let auth = quiet_authorizer()
            .await
            .with_timeout(Duration::from_millis(200));
        let err = auth
            .authorize("https://as.example/a".into())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Auth);
    }
}
