//! Connecting over WebSocket: TCP, TLS for `wss://` (the HTTP client's rustls setup: ring, the
//! compiled-in and system roots, plus any the caller adds), the upgrade request through hyper,
//! and the checks of the server's 101 (see `handshake`).
//!
//! The whole of it runs inside the caller's future and under one timeout, so a server that
//! accepts the connection and then never answers fails with a timeout, and a caller that gives
//! up (drops the future) leaves nothing running behind.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
};
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{handshake::client::generate_key, protocol::Role},
};

use super::{WsSettings, handshake, socket};
use crate::{
    Error,
    transport::{Link, Transport, http::tls},
};

/// Client settings.
#[derive(Clone)]
pub struct WsClientOptions {
    /// Extra headers on the upgrade request (`Authorization`, say). The upgrade's own headers
    /// (`Upgrade`, `Connection`, `Sec-WebSocket-*`) are always ours.
    pub headers: HeaderMap,
    /// How long connecting may take: TCP, TLS and the upgrade together.
    pub connect_timeout: Duration,
    /// Root certificates (DER) trusted for `wss://` besides the built-in and system ones.
    pub extra_root_certificates: Vec<Vec<u8>>,
    /// The message cap and keepalive.
    pub websocket: WsSettings,
}

impl std::fmt::Debug for WsClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values may be credentials: names only.
        f.debug_struct("WsClientOptions")
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("connect_timeout", &self.connect_timeout)
            .field("websocket", &self.websocket)
            .finish_non_exhaustive()
    }
}

impl Default for WsClientOptions {
    fn default() -> Self {
        WsClientOptions {
            headers: HeaderMap::new(),
            connect_timeout: Duration::from_secs(10),
            extra_root_certificates: Vec::new(),
            websocket: WsSettings::default(),
        }
    }
}

/// An upgraded connection to a WebSocket server, ready to carry a session.
pub struct WsClientTransport {
    socket: WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>,
    settings: WsSettings,
}

impl std::fmt::Debug for WsClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsClientTransport").finish_non_exhaustive()
    }
}

/// The largest error body kept from a refused upgrade (for the error message).
const REFUSAL_BODY: usize = 4096;

/// Where to connect, from a `ws://` or `wss://` URL.
struct Target {
    uri: Uri,
    host: String,
    port: u16,
    tls: bool,
}

impl Target {
    fn parse(url: &str) -> Result<Target, Error> {
        let uri: Uri = url
            .parse()
            .map_err(|e| Error::InvalidArgument(format!("invalid URL `{url}`: {e}")))?;
        let tls = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("ws") => false,
            Some(s) if s.eq_ignore_ascii_case("wss") => true,
            Some(other) => {
                return Err(Error::InvalidArgument(format!(
                    "unsupported URL scheme `{other}` for WebSocket (ws or wss)"
                )));
            }
            None => return Err(Error::InvalidArgument(format!("URL `{url}` has no scheme"))),
        };
        let host = match uri.host() {
            Some(h) if !h.is_empty() => h.trim_start_matches('[').trim_end_matches(']'),
            _ => return Err(Error::InvalidArgument(format!("URL `{url}` has no host"))),
        }
        .to_owned();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        Ok(Target {
            uri,
            host,
            port,
            tls,
        })
    }
}

impl WsClientTransport {
    /// Connects to `url` (`ws://` or `wss://`) and completes the upgrade.
    pub async fn connect(url: &str, options: WsClientOptions) -> Result<Self, Error> {
        let target = Target::parse(url)?;
        // Built before connecting, so a bad extra root fails at once.
        let tls = if target.tls {
            Some(tls::client_config(&options.extra_root_certificates)?)
        } else {
            None
        };
        let timeout = options.connect_timeout;
        let connected = tokio::time::timeout(timeout, async {
            let tcp = TcpStream::connect((target.host.as_str(), target.port)).await?;
            let _ = tcp.set_nodelay(true);
            match tls {
                None => upgrade(tcp, &target, &options).await,
                Some(config) => {
                    let name = rustls::pki_types::ServerName::try_from(target.host.clone())
                        .map_err(|e| {
                            Error::InvalidArgument(format!(
                                "`{}` is not a TLS name: {e}",
                                target.host
                            ))
                        })?;
                    let stream = tokio_rustls::TlsConnector::from(config)
                        .connect(name, tcp)
                        .await?;
                    upgrade(stream, &target, &options).await
                }
            }
        })
        .await;
        let upgraded = match connected {
            Ok(result) => result?,
            Err(_) => {
                return Err(Error::Timeout {
                    method: format!("WebSocket connect to {}", target.uri),
                    after: timeout,
                });
            }
        };
        let socket = WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Client,
            Some(options.websocket.framing()),
        )
        .await;
        Ok(WsClientTransport {
            socket,
            settings: options.websocket,
        })
    }
}

impl Transport for WsClientTransport {
    fn into_link(self) -> Link {
        socket::link(self.socket, &self.settings, "the server")
    }
}

/// Sends the upgrade request over `stream` and returns the connection once switched.
async fn upgrade<S>(
    stream: S,
    target: &Target,
    options: &WsClientOptions,
) -> Result<hyper::upgrade::Upgraded, Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let failed = |e: hyper::Error| Error::closed(format!("WebSocket upgrade: {e}"));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(failed)?;
    // The connection is driven right here, beside the request, not by a task of its own: a
    // caller that gives up drops it, and nothing is left waiting on a silent server.
    let connection = connection.with_upgrades();
    tokio::pin!(connection);
    let key = generate_key();
    let path = target
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .body(Empty::<Bytes>::new())
        .map_err(|e| Error::InvalidArgument(format!("WebSocket request: {e}")))?;
    let headers = request.headers_mut();
    for (name, value) in &options.headers {
        headers.append(name, value.clone());
    }
    if let Some(authority) = target.uri.authority() {
        let host = http::HeaderValue::from_str(authority.as_str())
            .map_err(|_| Error::InvalidArgument(format!("bad host `{authority}`")))?;
        headers.insert(header::HOST, host);
    }
    for (name, value) in handshake::request_headers(&key)? {
        if let Some(name) = name {
            headers.insert(name, value);
        }
    }
    // The connection's future ends once it hands itself over, which can be in the very poll
    // that delivers the 101: so when it ends first, the response is still awaited.
    let send = sender.send_request(request);
    tokio::pin!(send);
    let mut connection_done = false;
    let response = tokio::select! {
        response = &mut send => response.map_err(failed)?,
        ended = &mut connection => {
            ended.map_err(failed)?;
            connection_done = true;
            send.await.map_err(failed)?
        }
    };
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        let status = response.status();
        let body = Limited::new(response.into_body(), REFUSAL_BODY).collect();
        let body = if connection_done {
            body.await.ok()
        } else {
            tokio::select! {
                body = body => body.ok(),
                _ = &mut connection => None,
            }
        };
        let body = body.map(|b| b.to_bytes()).unwrap_or_default();
        return Err(handshake::refused(status, &body));
    }
    handshake::check_switch(response.headers(), &key)?;
    let upgraded = if connection_done {
        hyper::upgrade::on(response).await
    } else {
        tokio::join!(hyper::upgrade::on(response), connection).0
    };
    upgraded.map_err(failed)
}
