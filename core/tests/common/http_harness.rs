//! What the Streamable HTTP suites (`http_security`, `http_reliability`, `http_post_rule`,
//! `http_legacy_sse`) share: requests written byte for byte for a raw TCP peer, a seeded
//! generator for forged session ids and cut points, and oxmcp HTTP clients holding a session.

use std::time::Duration;

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use oxmcp::{
    client::{Client, ClientOptions, ProtocolMode},
    transport::{
        Transport,
        http::{HttpClientOptions, HttpClientTransport, HttpServer},
        tap::tap,
    },
};

use super::{Side, Wire, client_options};

/// Where `needle` first stands in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A request written byte for byte: the request line, header lines (no CRLF) and the body.
pub fn raw_request(request_line: &str, lines: &[&[u8]], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + body.len());
    out.extend_from_slice(request_line.as_bytes());
    out.extend_from_slice(b"\r\n");
    for line in lines {
        out.extend_from_slice(line);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

/// A response head (without its blank line): the status code and the header lines, names as
/// sent and values trimmed.
pub fn parse_head(head: &[u8]) -> (u16, Vec<(String, String)>) {
    let head = String::from_utf8_lossy(head);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    (status, headers)
}

/// splitmix64: a small seeded generator (no dependency), so a failing trial can be replayed
/// from its seed.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A session id shaped exactly like the server's (16 random bytes, base64url).
    pub fn session_id(&mut self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next().to_le_bytes());
        bytes[8..].copy_from_slice(&self.next().to_le_bytes());
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

/// Client options pinned to the newest handshake revision: a session per client (the default
/// `Auto` mode would probe the stateless era first and hold no session at all).
pub fn session_options() -> ClientOptions {
    client_options().protocol(ProtocolMode::Handshake(oxmcp::ProtocolVersion::V2025_11_25))
}

/// An oxmcp client over HTTP; its traffic recorded on `wire` when given.
pub async fn http_client(
    url: &str,
    options: ClientOptions,
    wire: Option<&Wire>,
) -> oxmcp::Result<Client> {
    let transport = HttpClientTransport::new(url, HttpClientOptions::default())?;
    match wire {
        Some(w) => {
            Client::connect(
                tap(transport.into_link(), w.observer(Side::Client)),
                options,
            )
            .await
        }
        None => Client::connect(transport, options).await,
    }
}

/// Waits (real time) until the server holds `n` sessions; `within` only turns a hang into a
/// failure.
pub async fn wait_sessions(http: &HttpServer, n: usize, within: Duration) {
    tokio::time::timeout(within, async {
        while http.session_count() != n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} sessions, expected {n}", http.session_count()));
}
