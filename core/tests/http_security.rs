//! Security of the Streamable HTTP server, proved over real sockets on 127.0.0.1 with a raw
//! TCP client that writes every header byte itself (hyper's client would normalise or refuse
//! some of them):
//!
//! - DNS-rebinding protection: every hostile `Host`/`Origin` vector is answered 403 (or 400
//!   when malformed), and that answer is decided before the body is read — the requests
//!   declare `Content-Length: 1000000` and send no body at all, so a server that read the
//!   body first would hang (the test's timeout turns that into a failure). Accepted names stay
//!   accepted.
//! - The body cap: 413 for a declared length over the cap (body never sent) and for a chunked
//!   body streaming past it; a body at or just under the cap is served; the 4 MiB default.
//! - Sessions: a flood of random session ids gets 404 and allocates nothing; initialize
//!   cannot adopt a client-chosen id; ids are 22-char random base64url; the session cap
//!   answers 503 and DELETE frees a slot; idle sessions are reaped.
//! - Binding: a non-loopback address needs an allowlist or an auth hook; a refusing auth hook
//!   answers with its status before the body is read.
//! - Methods and headers: 405/406/415/400/404/202 as the transport specification says; a
//!   client that never finishes its headers is cut off.
//!
//! Hostile traffic runs next to a well-behaved neighbour (an oxmcp client calling in a loop, or
//! legitimate raw sessions) that must keep working, and accepted requests are interleaved with
//! refused ones: a refusal neither disturbs real sessions nor leaves state behind.

mod common;

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::Duration,
};

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use common::*;
use http::{HeaderMap, StatusCode};
use oxmcp::{
    Error,
    client::Client,
    server::Server,
    transport::{
        Transport,
        http::{HttpClientOptions, HttpClientTransport, HttpServer, HttpServerOptions},
        tap::tap,
    },
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    task::JoinHandle,
};

// ---------------------------------------------------------------------------------------------
// A raw HTTP/1.1 client: the bytes on the wire are exactly the bytes written here.
// ---------------------------------------------------------------------------------------------

/// Long enough for a debug build on a loaded machine; only ever turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(20);

const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#
);
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const ACCEPT_BOTH: &[u8] = b"Accept: application/json, text/event-stream";
const JSON_TYPE: &[u8] = b"Content-Type: application/json";
/// Declared but never sent: a server that reads the body before deciding would wait forever.
const NEVER_SENT: &[u8] = b"Content-Length: 1000000";

/// One response as read off the socket.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not JSON ({e}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The JSON-RPC error code of the body, if it is a JSON-RPC error.
    fn rpc_code(&self) -> Option<i64> {
        serde_json::from_slice::<Value>(&self.body)
            .ok()?
            .pointer("/error/code")?
            .as_i64()
    }

    fn session_id(&self) -> String {
        self.header("mcp-session-id")
            .unwrap_or_else(|| panic!("no Mcp-Session-Id on {self:?}"))
    }
}

/// A request written byte for byte: the request line, header lines (no CRLF) and the body.
fn raw_request(request_line: &str, lines: &[&[u8]], body: &[u8]) -> Vec<u8> {
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

/// A well-formed MCP POST to `/mcp` with `Host: localhost`, plus `extra` header lines.
fn mcp_post(session: Option<&str>, extra: &[&[u8]], body: &str) -> Vec<u8> {
    let length = format!("Content-Length: {}", body.len());
    let session = session.map(|s| format!("Mcp-Session-Id: {s}"));
    let mut lines: Vec<&[u8]> = vec![b"Host: localhost", ACCEPT_BOTH, JSON_TYPE];
    lines.push(length.as_bytes());
    if let Some(s) = &session {
        lines.push(s.as_bytes());
    }
    lines.extend_from_slice(extra);
    raw_request("POST /mcp HTTP/1.1", &lines, body.as_bytes())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads until `buf` holds at least `want` bytes; false at end of stream.
async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let mut chunk = [0u8; 16 * 1024];
    while buf.len() < want {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(false);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(true)
}

/// Reads until `buf` contains `needle`; its position, or `None` at end of stream.
async fn fill_until(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    needle: &[u8],
) -> std::io::Result<Option<usize>> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(i) = find(buf, needle) {
            return Ok(Some(i));
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Reads one response; `buf` carries bytes already read past the previous response.
async fn read_reply(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<Reply> {
    let eof = || std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
    let end = fill_until(stream, buf, b"\r\n\r\n")
        .await?
        .ok_or_else(eof)?;
    let head: Vec<u8> = buf.drain(..end + 4).collect();
    let head = String::from_utf8_lossy(&head[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers: Vec<(String, Vec<u8>)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().as_bytes().to_vec()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| String::from_utf8_lossy(v).to_ascii_lowercase())
    };
    let body = if let Some(len) = get("content-length") {
        let len: usize = len.parse().expect("numeric Content-Length");
        if !fill(stream, buf, len).await? {
            return Err(eof());
        }
        buf.drain(..len).collect()
    } else if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        let mut body = Vec::new();
        loop {
            let line_end = fill_until(stream, buf, b"\r\n").await?.ok_or_else(eof)?;
            let size_text = String::from_utf8_lossy(&buf[..line_end]).into_owned();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .expect("chunk size");
            buf.drain(..line_end + 2);
            if size == 0 {
                // No trailers from this server: the final CRLF follows.
                fill(stream, buf, 2).await?;
                buf.drain(..2.min(buf.len()));
                break;
            }
            if !fill(stream, buf, size + 2).await? {
                return Err(eof());
            }
            body.extend(buf.drain(..size));
            buf.drain(..2);
        }
        body
    } else if status == 204 || status == 304 || (100..200).contains(&status) {
        Vec::new()
    } else {
        // Close-delimited.
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await?;
        buf.extend_from_slice(&rest);
        std::mem::take(buf)
    };
    Ok(Reply {
        status,
        headers,
        body,
    })
}

/// Sends `request` on a fresh connection and reads the response, within [`PATIENCE`].
async fn exchange(addr: SocketAddr, request: &[u8]) -> Reply {
    tokio::time::timeout(PATIENCE, async {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.write_all(request).await.expect("write request");
        let mut buf = Vec::new();
        read_reply(&mut stream, &mut buf).await.expect("a response")
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "no response within {PATIENCE:?} (was the body awaited?) to:\n{}",
            String::from_utf8_lossy(&request[..request.len().min(600)])
        )
    })
}

/// A keep-alive connection for many requests in a row.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        Conn {
            stream: TcpStream::connect(addr).await.expect("connect"),
            buf: Vec::new(),
        }
    }

    async fn send(&mut self, request: &[u8]) -> Reply {
        tokio::time::timeout(PATIENCE, async {
            self.stream.write_all(request).await.expect("write");
            read_reply(&mut self.stream, &mut self.buf)
                .await
                .expect("a response")
        })
        .await
        .expect("a response in time")
    }
}

/// Initializes a session over raw HTTP and completes the handshake; returns its id.
async fn raw_session(addr: SocketAddr) -> String {
    let r = exchange(addr, &mcp_post(None, &[], INITIALIZE)).await;
    assert_eq!(r.status, 200, "initialize: {r:?}");
    let id = r.session_id();
    let r = exchange(addr, &mcp_post(Some(&id), &[], INITIALIZED)).await;
    assert_eq!(r.status, 202, "initialized: {r:?}");
    id
}

fn tools_call(id: u64, text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": text}}})
    .to_string()
}

/// A small deterministic generator (splitmix64): random-looking ids without a dependency.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A session id shaped exactly like the server's (16 random bytes, base64url).
    fn session_id(&mut self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next().to_le_bytes());
        bytes[8..].copy_from_slice(&self.next().to_le_bytes());
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

/// Client options pinned to the newest handshake revision: a session per client (the default
/// `Auto` mode would probe the stateless era first and hold no session at all).
fn session_options() -> oxmcp::client::ClientOptions {
    client_options().protocol(oxmcp::client::ProtocolMode::Handshake(
        oxmcp::ProtocolVersion::V2025_11_25,
    ))
}

// ---------------------------------------------------------------------------------------------
// Servers and the well-behaved neighbour.
// ---------------------------------------------------------------------------------------------

async fn start(options: HttpServerOptions) -> (Server, HttpServer) {
    let server = test_server(&Probe::default());
    let http = server.serve_http(options).await.expect("the server binds");
    (server, http)
}

/// An oxmcp client over HTTP whose traffic is recorded for schema validation.
async fn http_client(url: &str) -> (Client, Wire) {
    let wire = Wire::new();
    let transport = HttpClientTransport::new(url, HttpClientOptions::default()).expect("url");
    let link = tap(transport.into_link(), wire.observer(Side::Client));
    let client = Client::connect(link, session_options())
        .await
        .expect("the neighbour connects");
    (client, wire)
}

/// A legitimate client calling `echo` in a loop until stopped; every answer must be its own.
struct Neighbour {
    client: Client,
    wire: Wire,
    stop: Arc<AtomicBool>,
    task: JoinHandle<usize>,
}

impl Neighbour {
    async fn start(url: &str) -> Neighbour {
        let (client, wire) = http_client(url).await;
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (client.clone(), stop.clone());
        let task = tokio::spawn(async move {
            let mut calls = 0;
            while !s.load(Ordering::Relaxed) {
                let text = format!("neighbour call {calls}");
                let r = c
                    .call_tool("echo", json!({ "text": text }))
                    .await
                    .expect("the neighbour's call succeeds");
                assert_eq!(r.content[0].as_text(), Some(text.as_str()));
                calls += 1;
            }
            calls
        });
        Neighbour {
            client,
            wire,
            stop,
            task,
        }
    }

    /// Stops the loop, checks it made progress, closes the client and validates its wire.
    async fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let calls = tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("the neighbour stops")
            .expect("the neighbour did not panic");
        assert!(calls > 0, "the neighbour made no call");
        let r = self
            .client
            .call_tool("echo", json!({"text": "last"}))
            .await
            .expect("the neighbour still works");
        assert_eq!(r.content[0].as_text(), Some("last"));
        self.client.close().await;
        self.wire.assert_valid();
    }
}

/// Waits (real time, bounded) until the server holds `n` sessions.
async fn wait_sessions(http: &HttpServer, n: usize) {
    tokio::time::timeout(PATIENCE, async {
        while http.session_count() != n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} sessions, expected {n}", http.session_count()));
}

// ---------------------------------------------------------------------------------------------
// Host and Origin.
// ---------------------------------------------------------------------------------------------

/// A hostile request: these `Host` lines (zero, one or several) and `Origin` lines.
struct Vector {
    name: &'static str,
    hosts: &'static [&'static [u8]],
    origins: &'static [&'static [u8]],
    expect: u16,
}

const fn v(
    name: &'static str,
    hosts: &'static [&'static [u8]],
    origins: &'static [&'static [u8]],
    expect: u16,
) -> Vector {
    Vector {
        name,
        hosts,
        origins,
        expect,
    }
}

/// Hosts and Origins that must be refused. 403 for a well-formed name that is not allowed,
/// 400 for a header that is not a valid authority at all.
const HOSTILE: &[Vector] = &[
    // Host: names that resolve (or could be made to resolve) to loopback but are not listed.
    v("trailing dot", &[b"Host: localhost."], &[], 403),
    v(
        "trailing dot with port",
        &[b"Host: localhost.:8080"],
        &[],
        403,
    ),
    v("suffix domain", &[b"Host: localhost.evil.com"], &[], 403),
    v("prefix domain", &[b"Host: evil-localhost"], &[], 403),
    v("attacker domain", &[b"Host: evil.example"], &[], 403),
    v(
        "nip.io wildcard DNS",
        &[b"Host: 127.0.0.1.nip.io"],
        &[],
        403,
    ),
    v("decimal IPv4", &[b"Host: 2130706433"], &[], 403),
    v("octal IPv4", &[b"Host: 0177.0.0.1"], &[], 403),
    v("hex IPv4 dotted", &[b"Host: 0x7f.0.0.1"], &[], 403),
    v("hex IPv4 whole", &[b"Host: 0x7f000001"], &[], 403),
    v("short IPv4", &[b"Host: 127.1"], &[], 403),
    v("other loopback address", &[b"Host: 127.0.0.2"], &[], 403),
    v("unspecified IPv4", &[b"Host: 0.0.0.0"], &[], 403),
    v("IPv4-mapped IPv6", &[b"Host: [::ffff:127.0.0.1]"], &[], 403),
    v("uncompressed IPv6", &[b"Host: [0:0:0:0:0:0:0:1]"], &[], 403),
    v("unspecified IPv6", &[b"Host: [::]:80"], &[], 403),
    v("IPv6 zone id", &[b"Host: [::1%25lo]"], &[], 403),
    v(
        "punycode look-alike",
        &[b"Host: xn--lcalhost-nbh"],
        &[],
        403,
    ),
    v("userinfo in Host", &[b"Host: user@localhost"], &[], 403),
    v("percent-encoded dot", &[b"Host: localhost%2e"], &[], 403),
    // Host: malformed.
    v("empty Host", &[b"Host: "], &[], 400),
    v("missing Host", &[], &[], 400),
    v(
        "duplicated Host, same value",
        &[b"Host: localhost", b"Host: localhost"],
        &[],
        400,
    ),
    v(
        "duplicated Host, second hostile",
        &[b"Host: localhost", b"Host: evil.example"],
        &[],
        400,
    ),
    v("obs-text byte in Host", &[b"Host: localhost\xff"], &[], 400),
    v(
        "UTF-8 look-alike (Cyrillic o)",
        &[b"Host: l\xd0\xbecalhost"],
        &[],
        400,
    ),
    v("space inside Host", &[b"Host: local host"], &[], 400),
    v("non-numeric port", &[b"Host: localhost:abc"], &[], 400),
    v("empty port", &[b"Host: localhost:"], &[], 400),
    v("six-digit port", &[b"Host: localhost:123456"], &[], 400),
    v("two ports", &[b"Host: localhost:80:80"], &[], 400),
    v(
        "port with a domain",
        &[b"Host: 127.0.0.1:80.evil.com"],
        &[],
        400,
    ),
    v("unclosed IPv6 bracket", &[b"Host: [::1"], &[], 400),
    v("IPv6 bracket, empty port", &[b"Host: [::1]:"], &[], 400),
    v("bare IPv6 without brackets", &[b"Host: ::1"], &[], 400),
    // Origin, with an allowed Host.
    v(
        "null Origin",
        &[b"Host: localhost"],
        &[b"Origin: null"],
        403,
    ),
    v(
        "file Origin",
        &[b"Host: localhost"],
        &[b"Origin: file://"],
        403,
    ),
    v(
        "file Origin with path",
        &[b"Host: localhost"],
        &[b"Origin: file:///etc/passwd"],
        403,
    ),
    v(
        "other host Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://evil.example"],
        403,
    ),
    v(
        "other host Origin, https with port",
        &[b"Host: localhost:3000"],
        &[b"Origin: https://evil.example:443"],
        403,
    ),
    v(
        "suffix domain Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost.evil.com"],
        403,
    ),
    v(
        "trailing dot Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost."],
        403,
    ),
    v(
        "nip.io Origin",
        &[b"Host: 127.0.0.1"],
        &[b"Origin: http://127.0.0.1.nip.io"],
        403,
    ),
    v(
        "decimal IPv4 Origin",
        &[b"Host: 127.0.0.1"],
        &[b"Origin: http://2130706433"],
        403,
    ),
    v(
        "IPv4-mapped IPv6 Origin",
        &[b"Host: [::1]"],
        &[b"Origin: http://[::ffff:127.0.0.1]"],
        403,
    ),
    v(
        "userinfo Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://user@localhost"],
        403,
    ),
    v(
        "userinfo with password Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://user:pw@localhost:5173"],
        403,
    ),
    v(
        "userinfo hiding another host",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost@evil.example"],
        403,
    ),
    v(
        "Origin with a path",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost/app"],
        403,
    ),
    v(
        "Origin with a query",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost?x=1"],
        403,
    ),
    v(
        "websocket scheme Origin",
        &[b"Host: localhost"],
        &[b"Origin: ws://localhost"],
        403,
    ),
    v(
        "extension Origin",
        &[b"Host: localhost"],
        &[b"Origin: chrome-extension://abcdef"],
        403,
    ),
    v(
        "scheme without host",
        &[b"Host: localhost"],
        &[b"Origin: http://"],
        403,
    ),
    v("empty Origin", &[b"Host: localhost"], &[b"Origin: "], 403),
    v(
        "punycode Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://xn--lcalhost-nbh"],
        403,
    ),
    v(
        "bad port Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost:abc"],
        403,
    ),
    v(
        "allowed Origin, hostile Host",
        &[b"Host: evil.example"],
        &[b"Origin: http://localhost:5173"],
        403,
    ),
    v(
        "duplicated Origin, same value",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost", b"Origin: http://localhost"],
        400,
    ),
    v(
        "duplicated Origin, second hostile",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost", b"Origin: http://evil.example"],
        400,
    ),
    v(
        "obs-text byte in Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://localhost\xfe"],
        400,
    ),
    v(
        "UTF-8 look-alike Origin",
        &[b"Host: localhost"],
        &[b"Origin: http://l\xd0\xbecalhost"],
        400,
    ),
];

/// The hostile request for `vector`: an initialize POST whose body is declared, never sent.
fn hostile_request(vector: &Vector, method: &str) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = vector.hosts.to_vec();
    lines.extend_from_slice(vector.origins);
    lines.extend_from_slice(&[ACCEPT_BOTH, JSON_TYPE, NEVER_SENT]);
    raw_request(&format!("{method} /mcp HTTP/1.1"), &lines, b"")
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_hosts_and_origins_are_refused_before_the_body_is_read() {
    assert!(HOSTILE.len() >= 30);
    let (_server, http) = start(HttpServerOptions::default()).await;
    let neighbour = Neighbour::start(&http.url()).await;
    let addr = http.local_addr();
    let mut failures = Vec::new();
    for vector in HOSTILE {
        // POST, GET and DELETE all pass through the same gate.
        for method in ["POST", "GET", "DELETE"] {
            let r = exchange(addr, &hostile_request(vector, method)).await;
            println!("{method:6} {:40} -> {}", vector.name, r.status);
            if r.status != vector.expect {
                failures.push(format!(
                    "{method} {}: expected {}, got {} {:?}",
                    vector.name,
                    vector.expect,
                    r.status,
                    String::from_utf8_lossy(&r.body)
                ));
            } else {
                // The refusal is the server's own, a JSON-RPC error without an id.
                assert_eq!(r.rpc_code(), Some(-32600), "{}: {r:?}", vector.name);
                assert_eq!(r.json()["id"], Value::Null, "{}", vector.name);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing was allocated for the hostile requests: only the neighbour's session exists.
    assert_eq!(http.session_count(), 1);
    neighbour.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn absolute_form_target_is_checked_as_the_host() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    let request = raw_request(
        "POST http://evil.example/mcp HTTP/1.1",
        &[
            b"Host: localhost",
            ACCEPT_BOTH,
            JSON_TYPE,
            format!("Content-Length: {}", INITIALIZE.len()).as_bytes(),
        ],
        INITIALIZE.as_bytes(),
    );
    let r = exchange(http.local_addr(), &request).await;
    assert_eq!(r.status, 403, "{:?}", String::from_utf8_lossy(&r.body));
    assert_eq!(http.session_count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn bracketed_host_with_trailing_junk_is_malformed() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    for host in ["Host: [::1]evil.example", "Host: [::1]x:80"] {
        // A complete request: a server that accepts the Host answers at once (200) instead
        // of waiting for a body that never comes.
        let length = format!("Content-Length: {}", INITIALIZE.len());
        let request = raw_request(
            "POST /mcp HTTP/1.1",
            &[host.as_bytes(), ACCEPT_BOTH, JSON_TYPE, length.as_bytes()],
            INITIALIZE.as_bytes(),
        );
        let r = exchange(http.local_addr(), &request).await;
        assert_eq!(
            r.status,
            400,
            "{host}: {:?}",
            String::from_utf8_lossy(&r.body)
        );
    }
    assert_eq!(http.session_count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_names_and_local_origins_stay_accepted() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    let port = http.local_addr().port();
    // A hostile request between every accepted one: a refusal leaves no state behind.
    let hostile = hostile_request(&HOSTILE[0], "POST");
    let accepted: Vec<(String, Option<String>)> = vec![
        ("localhost".into(), None),
        (format!("localhost:{port}"), None),
        ("127.0.0.1".into(), None),
        (format!("127.0.0.1:{port}"), None),
        ("[::1]".into(), None),
        (format!("[::1]:{port}"), None),
        ("LOCALHOST".into(), None),
        (format!("LocalHost:{port}"), None),
        ("localhost".into(), Some("http://localhost:5173".into())),
        (
            format!("127.0.0.1:{port}"),
            Some(format!("http://127.0.0.1:{port}")),
        ),
        ("localhost".into(), Some("https://localhost".into())),
        ("[::1]".into(), Some("http://[::1]:5173".into())),
        ("localhost".into(), Some("http://LOCALHOST:5173".into())),
    ];
    let mut ids = Vec::new();
    for (i, (host, origin)) in accepted.iter().enumerate() {
        let r = exchange(http.local_addr(), &hostile).await;
        assert_eq!(r.status, 403);
        let host_line = format!("Host: {host}");
        let origin_line = origin.as_ref().map(|o| format!("Origin: {o}"));
        let length = format!("Content-Length: {}", INITIALIZE.len());
        let mut lines: Vec<&[u8]> = vec![host_line.as_bytes(), ACCEPT_BOTH, JSON_TYPE];
        lines.push(length.as_bytes());
        if let Some(o) = &origin_line {
            lines.push(o.as_bytes());
        }
        let r = exchange(
            http.local_addr(),
            &raw_request("POST /mcp HTTP/1.1", &lines, INITIALIZE.as_bytes()),
        )
        .await;
        println!("accepted? Host {host:22} Origin {origin:?} -> {}", r.status);
        assert_eq!(r.status, 200, "Host {host} Origin {origin:?}: {r:?}");
        assert_eq!(r.json()["result"]["serverInfo"]["name"], "test-server");
        ids.push(r.session_id());
        assert_eq!(http.session_count(), i + 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_hosts_and_origins_replace_the_loopback_defaults() {
    let (_server, http) = start(HttpServerOptions {
        allowed_hosts: Some(vec!["mcp.example.com".into()]),
        allowed_origins: Some(vec!["https://app.example".into()]),
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let post = |host: &str, origin: Option<&str>| {
        let length = format!("Content-Length: {}", INITIALIZE.len());
        let host = format!("Host: {host}");
        let origin = origin.map(|o| format!("Origin: {o}"));
        let mut lines: Vec<Vec<u8>> = vec![
            host.into_bytes(),
            ACCEPT_BOTH.to_vec(),
            JSON_TYPE.to_vec(),
            length.into_bytes(),
        ];
        if let Some(o) = origin {
            lines.push(o.into_bytes());
        }
        let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        raw_request("POST /mcp HTTP/1.1", &lines, INITIALIZE.as_bytes())
    };
    let cases: &[(&str, Option<&str>, u16)] = &[
        ("mcp.example.com", None, 200),
        ("MCP.Example.COM:443", Some("https://app.example"), 200),
        ("mcp.example.com", Some("https://app.example/"), 200),
        // The loopback defaults are gone once hosts are configured.
        ("localhost", None, 403),
        ("127.0.0.1", None, 403),
        ("mcp.example.com.evil.com", None, 403),
        ("mcp.example.com", Some("https://app.example.evil.com"), 403),
        ("mcp.example.com", Some("http://app.example"), 403),
        ("mcp.example.com", Some("https://app.example:8443"), 403),
        ("mcp.example.com", Some("https://mcp.example.com"), 403),
        ("mcp.example.com", Some("null"), 403),
    ];
    for (host, origin, expect) in cases {
        let r = exchange(addr, &post(host, *origin)).await;
        println!(
            "configured: Host {host:28} Origin {origin:?} -> {}",
            r.status
        );
        assert_eq!(r.status, *expect, "Host {host} Origin {origin:?}: {r:?}");
    }
    assert_eq!(http.session_count(), 3);
}

// ---------------------------------------------------------------------------------------------
// The body cap.
// ---------------------------------------------------------------------------------------------

/// An initialize request padded with trailing whitespace (valid JSON) to exactly `len` bytes.
fn padded_initialize(len: usize) -> String {
    assert!(len >= INITIALIZE.len());
    let mut body = INITIALIZE.to_owned();
    body.push_str(&" ".repeat(len - INITIALIZE.len()));
    body
}

/// Streams `total` bytes of chunked body (never terminated) while reading the response on
/// the same connection; returns the response and how many body bytes were written before it.
async fn chunked_past_cap(addr: SocketAddr, total: usize) -> (Reply, usize) {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut read, mut write) = stream.into_split();
    let head = raw_request(
        "POST /mcp HTTP/1.1",
        &[
            b"Host: localhost",
            ACCEPT_BOTH,
            JSON_TYPE,
            b"Transfer-Encoding: chunked",
        ],
        b"",
    );
    let written = Arc::new(AtomicUsize::new(0));
    let w = written.clone();
    let writer = tokio::spawn(async move {
        write.write_all(&head).await.expect("head");
        let chunk = vec![b' '; 4096];
        let mut sent = 0;
        // A valid JSON prefix, then whitespace, never ending: only the cap can stop it.
        let prefix = r#"{"jsonrpc":"2.0","#;
        let first = format!("{:x}\r\n{prefix}\r\n", prefix.len());
        if write.write_all(first.as_bytes()).await.is_err() {
            return write;
        }
        while sent < total {
            let frame = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
            // The server may close once it has answered; that ends the flood.
            if write.write_all(&frame).await.is_err() {
                break;
            }
            sent += chunk.len();
            w.store(sent, Ordering::Relaxed);
        }
        write
    });
    let reply = tokio::time::timeout(PATIENCE, async {
        let mut stream_buf = Vec::new();
        // Read the response with a plain loop on the read half (no TcpStream here).
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(end) = find(&stream_buf, b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&stream_buf[..end]).into_owned();
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if stream_buf.len() >= end + 4 + len {
                    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
                    let body = stream_buf[end + 4..end + 4 + len].to_vec();
                    break Reply {
                        status,
                        headers: vec![],
                        body,
                    };
                }
            }
            let n = read.read(&mut chunk).await.expect("read");
            assert!(n > 0, "connection closed without a response");
            stream_buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .expect("a response while the body is still streaming");
    let sent = written.load(Ordering::Relaxed);
    writer.abort();
    (reply, sent)
}

#[tokio::test(flavor = "multi_thread")]
async fn body_cap_is_enforced_before_parsing() {
    const CAP: usize = 1024;
    let (_server, http) = start(HttpServerOptions {
        max_body_bytes: CAP,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let neighbour = Neighbour::start(&http.url()).await;

    // Declared over the cap, body never sent: refused from the header alone.
    for declared in [CAP + 1, 10 * CAP, 1 << 40] {
        let cl = format!("Content-Length: {declared}");
        let request = raw_request(
            "POST /mcp HTTP/1.1",
            &[b"Host: localhost", ACCEPT_BOTH, JSON_TYPE, cl.as_bytes()],
            b"",
        );
        let r = exchange(addr, &request).await;
        println!("Content-Length {declared} (no body) -> {}", r.status);
        assert_eq!(r.status, 413, "{r:?}");
        assert_eq!(r.rpc_code(), Some(-32600));
    }

    // Chunked, streaming far past the cap: refused once the cap is crossed, while the
    // client is still sending.
    let (r, sent) = chunked_past_cap(addr, 64 * CAP).await;
    println!(
        "chunked past a {CAP}-byte cap -> {} after {sent} bytes",
        r.status
    );
    assert_eq!(r.status, 413, "{r:?}");

    // At the cap and just under it: served. One byte over with a real body: 413.
    for (len, expect) in [(CAP - 1, 200), (CAP, 200), (CAP + 1, 413)] {
        let r = exchange(addr, &mcp_post(None, &[], &padded_initialize(len))).await;
        println!("body of {len} bytes, cap {CAP} -> {}", r.status);
        assert_eq!(r.status, expect, "{len} bytes: {r:?}");
    }
    // Chunked at exactly the cap: served.
    let body = padded_initialize(CAP);
    let (a, b) = body.split_at(CAP / 2);
    let chunked =
        [format!("{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n", a.len(), b.len()).as_bytes()].concat();
    let request = raw_request(
        "POST /mcp HTTP/1.1",
        &[
            b"Host: localhost",
            ACCEPT_BOTH,
            JSON_TYPE,
            b"Transfer-Encoding: chunked",
        ],
        &chunked,
    );
    let r = exchange(addr, &request).await;
    assert_eq!(r.status, 200, "{r:?}");

    // The neighbour plus the three sessions the bodies within the cap opened.
    assert_eq!(http.session_count(), 4);
    neighbour.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn default_body_cap_is_4_mib() {
    const CAP: usize = 4 * 1024 * 1024;
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let cl = format!("Content-Length: {}", CAP + 1);
    let request = raw_request(
        "POST /mcp HTTP/1.1",
        &[b"Host: localhost", ACCEPT_BOTH, JSON_TYPE, cl.as_bytes()],
        b"",
    );
    let r = exchange(addr, &request).await;
    assert_eq!(r.status, 413, "{r:?}");
    let (r, sent) = chunked_past_cap(addr, 2 * CAP).await;
    println!(
        "chunked past the 4 MiB cap -> {} after {sent} bytes",
        r.status
    );
    assert_eq!(r.status, 413);
    let r = exchange(addr, &mcp_post(None, &[], &padded_initialize(CAP))).await;
    assert_eq!(r.status, 200, "a body of exactly 4 MiB is served");
    assert_eq!(http.session_count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_framing_is_refused() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let neighbour = Neighbour::start(&http.url()).await;
    let cases: &[(&str, &[&[u8]])] = &[
        (
            "Content-Length overflowing u64",
            &[b"Content-Length: 99999999999999999999999"],
        ),
        ("negative Content-Length", &[b"Content-Length: -1"]),
        (
            "two different Content-Lengths",
            &[b"Content-Length: 5", b"Content-Length: 6"],
        ),
        ("non-numeric Content-Length", &[b"Content-Length: 1e3"]),
        ("unknown transfer coding", &[b"Transfer-Encoding: gzip"]),
    ];
    for (name, lines) in cases {
        let mut all: Vec<&[u8]> = vec![b"Host: localhost", ACCEPT_BOTH, JSON_TYPE];
        all.extend_from_slice(lines);
        let r = exchange(addr, &raw_request("POST /mcp HTTP/1.1", &all, b"")).await;
        println!("{name:34} -> {}", r.status);
        assert_eq!(r.status, 400, "{name}: {r:?}");
    }
    assert_eq!(http.session_count(), 1);
    neighbour.finish().await;
}

// ---------------------------------------------------------------------------------------------
// Sessions.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_random_session_ids_allocates_nothing() {
    const REQUESTS: usize = 10_000;
    const CONNECTIONS: usize = 8;
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let neighbour = Neighbour::start(&http.url()).await;
    let not_found = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for c in 0..CONNECTIONS {
        let not_found = not_found.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = SplitMix(0x5E55_1011 + c as u64);
            let mut conn = Conn::open(addr).await;
            for i in 0..REQUESTS / CONNECTIONS {
                let id = rng.session_id();
                let line = format!("Mcp-Session-Id: {id}");
                // Mostly POSTs; some GETs (stream open and Last-Event-ID resume) and DELETEs,
                // which must not find, open or close anything either.
                let request = match i % 10 {
                    7 => raw_request(
                        "GET /mcp HTTP/1.1",
                        &[
                            b"Host: localhost",
                            b"Accept: text/event-stream",
                            line.as_bytes(),
                        ],
                        b"",
                    ),
                    8 => raw_request(
                        "GET /mcp HTTP/1.1",
                        &[
                            b"Host: localhost",
                            b"Accept: text/event-stream",
                            line.as_bytes(),
                            b"Last-Event-ID: 1-0",
                        ],
                        b"",
                    ),
                    9 => raw_request(
                        "DELETE /mcp HTTP/1.1",
                        &[b"Host: localhost", line.as_bytes()],
                        b"",
                    ),
                    // initialize too: a client-chosen id must not be adopted.
                    0 => mcp_post(Some(&id), &[], INITIALIZE),
                    _ => mcp_post(Some(&id), &[], &tools_call(i as u64, "x")),
                };
                let r = conn.send(&request).await;
                assert_eq!(r.status, 404, "random id {id}: {r:?}");
                assert_eq!(r.rpc_code(), Some(-32600));
                not_found.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // Sample the session count while the flood runs: only the neighbour's session, ever.
    let mut samples = 0;
    while tasks.iter().any(|t| !t.is_finished()) {
        assert_eq!(http.session_count(), 1, "the flood allocated a session");
        samples += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for t in tasks {
        t.await.expect("flood task");
    }
    assert_eq!(not_found.load(Ordering::Relaxed), REQUESTS);
    assert_eq!(http.session_count(), 1);
    println!("{REQUESTS} random session ids: all 404, {samples} session-count samples, all 1");
    neighbour.finish().await;
    wait_sessions(&http, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn session_ids_are_fresh_random_128_bit_values() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let mut ids = std::collections::HashSet::new();
    let mut rng = SplitMix(22);
    for _ in 0..200 {
        // A forged id shaped like a real one, offered with initialize: never adopted.
        let forged = rng.session_id();
        let r = exchange(addr, &mcp_post(Some(&forged), &[], INITIALIZE)).await;
        assert_eq!(r.status, 404);
        let id = raw_session(addr).await;
        assert_ne!(id, forged);
        assert_eq!(id.len(), 22, "{id}");
        let bytes = URL_SAFE_NO_PAD.decode(&id).expect("base64url");
        assert_eq!(bytes.len(), 16);
        assert!(ids.insert(id), "a session id repeated");
    }
    assert_eq!(http.session_count(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn session_cap_refuses_the_next_initialize_and_delete_frees_a_slot() {
    let (_server, http) = start(HttpServerOptions {
        max_sessions: 3,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(raw_session(addr).await);
    }
    assert_eq!(http.session_count(), 3);
    for _ in 0..5 {
        let r = exchange(addr, &mcp_post(None, &[], INITIALIZE)).await;
        assert_eq!(r.status, 503, "{r:?}");
        assert_eq!(r.header("retry-after").as_deref(), Some("5"));
        assert!(r.header("mcp-session-id").is_none());
        assert_eq!(r.rpc_code(), Some(-32603));
        assert_eq!(
            http.session_count(),
            3,
            "a refused initialize created a session"
        );
    }
    // The sessions at the cap keep working.
    for (i, id) in ids.iter().enumerate() {
        let r = exchange(
            addr,
            &mcp_post(Some(id), &[], &tools_call(7, &format!("s{i}"))),
        )
        .await;
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["result"]["content"][0]["text"], format!("s{i}"));
    }
    let delete = |id: &str| {
        let line = format!("Mcp-Session-Id: {id}");
        raw_request(
            "DELETE /mcp HTTP/1.1",
            &[b"Host: localhost", line.as_bytes()],
            b"",
        )
    };
    let r = exchange(addr, &delete(&ids[1])).await;
    assert_eq!(r.status, 200);
    assert_eq!(http.session_count(), 2);
    let fourth = raw_session(addr).await;
    assert_eq!(http.session_count(), 3);
    let r = exchange(addr, &mcp_post(None, &[], INITIALIZE)).await;
    assert_eq!(r.status, 503);
    // The deleted session is gone for good; the new one works.
    let r = exchange(addr, &mcp_post(Some(&ids[1]), &[], &tools_call(8, "x"))).await;
    assert_eq!(r.status, 404);
    let r = exchange(addr, &mcp_post(Some(&fourth), &[], &tools_call(9, "4th"))).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "4th");
}

#[tokio::test(flavor = "multi_thread")]
async fn session_cap_holds_under_concurrent_initializes() {
    const CAP: usize = 3;
    let (_server, http) = start(HttpServerOptions {
        max_sessions: CAP,
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    for round in 0..20 {
        // Connections first, then every initialize written at once.
        let mut conns = Vec::new();
        for _ in 0..64 {
            conns.push(Conn::open(addr).await);
        }
        let barrier = Arc::new(tokio::sync::Barrier::new(conns.len()));
        let tasks: Vec<_> = conns
            .into_iter()
            .map(|mut c| {
                let b = barrier.clone();
                tokio::spawn(async move {
                    b.wait().await;
                    c.send(&mcp_post(None, &[], INITIALIZE)).await
                })
            })
            .collect();
        let mut ok = Vec::new();
        for t in tasks {
            let r = t.await.unwrap();
            if r.status == 200 {
                ok.push(r.session_id());
            } else {
                assert_eq!(r.status, 503);
            }
        }
        assert!(
            http.session_count() <= CAP && ok.len() <= CAP,
            "round {round}: {} initializes succeeded, {} sessions with max_sessions = {CAP}",
            ok.len(),
            http.session_count()
        );
        for id in ok {
            let line = format!("Mcp-Session-Id: {id}");
            let r = exchange(
                addr,
                &raw_request(
                    "DELETE /mcp HTTP/1.1",
                    &[b"Host: localhost", line.as_bytes()],
                    b"",
                ),
            )
            .await;
            assert_eq!(r.status, 200);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_sessions_are_reaped_and_then_unknown() {
    let (_server, http) = start(HttpServerOptions {
        session_idle_timeout: Duration::from_millis(300),
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    let ids = [raw_session(addr).await, raw_session(addr).await];
    assert_eq!(http.session_count(), 2);
    wait_sessions(&http, 0).await;
    for id in &ids {
        let r = exchange(addr, &mcp_post(Some(id), &[], &tools_call(2, "late"))).await;
        assert_eq!(r.status, 404, "a reaped session answered: {r:?}");
    }
    // A session that is not idle is not reaped: a long call keeps it alive past the timeout.
    let id = raw_session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "sleep", "arguments": {"ms": 900}}})
    .to_string();
    let r = exchange(addr, &mcp_post(Some(&id), &[], &call)).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["result"]["content"][0]["text"], "slept 900");
}

// ---------------------------------------------------------------------------------------------
// Binding and authentication.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn non_loopback_bind_needs_an_allowlist_or_an_auth_hook() {
    let server = test_server(&Probe::default());
    for bind in ["0.0.0.0:0", "[::]:0"] {
        let err = server
            .serve_http(HttpServerOptions {
                bind: bind.parse().unwrap(),
                ..Default::default()
            })
            .await
            .expect_err("a non-loopback bind without allowlist or auth");
        assert!(matches!(err, Error::InvalidArgument(_)), "{bind}: {err:?}");
    }
    // Other loopback addresses need nothing.
    let http = server
        .serve_http(HttpServerOptions {
            bind: "127.0.0.2:0".parse().unwrap(),
            ..Default::default()
        })
        .await
        .expect("127.0.0.2 is loopback");
    http.shutdown().await;

    // With an allowlist: bound, and the allowlist (not the loopback names) is enforced.
    let http = server
        .serve_http(HttpServerOptions {
            bind: "0.0.0.0:0".parse().unwrap(),
            allowed_hosts: Some(vec!["mcp.example.com".into()]),
            ..Default::default()
        })
        .await
        .expect("allowed with an allowlist");
    let addr = SocketAddr::from(([127, 0, 0, 1], http.local_addr().port()));
    let length = format!("Content-Length: {}", INITIALIZE.len());
    let with_host = |host: &'static [u8]| {
        raw_request(
            "POST /mcp HTTP/1.1",
            &[host, ACCEPT_BOTH, JSON_TYPE, length.as_bytes()],
            INITIALIZE.as_bytes(),
        )
    };
    assert_eq!(
        exchange(addr, &with_host(b"Host: mcp.example.com"))
            .await
            .status,
        200
    );
    assert_eq!(
        exchange(addr, &with_host(b"Host: localhost")).await.status,
        403
    );
    http.shutdown().await;

    // With an auth hook only: bound.
    let http = server
        .serve_http(HttpServerOptions {
            bind: "0.0.0.0:0".parse().unwrap(),
            auth: Some(Arc::new(bearer("secret"))),
            ..Default::default()
        })
        .await
        .expect("allowed with an auth hook");
    let addr = SocketAddr::from(([127, 0, 0, 1], http.local_addr().port()));
    let request = raw_request(
        "POST /mcp HTTP/1.1",
        &[
            b"Host: localhost",
            ACCEPT_BOTH,
            JSON_TYPE,
            b"Authorization: Bearer secret",
            length.as_bytes(),
        ],
        INITIALIZE.as_bytes(),
    );
    assert_eq!(exchange(addr, &request).await.status, 200);
    // Observed, not asserted as right or wrong: with only an auth hook the Host allowlist is
    // still the loopback names, so a remote client naming the machine is refused 403.
    let remote_host = format!("Host: 192.0.2.10:{}", addr.port());
    let request = raw_request(
        "POST /mcp HTTP/1.1",
        &[
            remote_host.as_bytes(),
            ACCEPT_BOTH,
            JSON_TYPE,
            b"Authorization: Bearer secret",
            length.as_bytes(),
        ],
        INITIALIZE.as_bytes(),
    );
    let r = exchange(addr, &request).await;
    println!(
        "auth-only 0.0.0.0 server, authenticated, Host {remote_host} -> {}",
        r.status
    );
    http.shutdown().await;
}

/// An auth hook accepting only `Authorization: Bearer <token>`.
fn bearer(token: &str) -> impl Fn(&HeaderMap) -> Result<(), (StatusCode, String)> + use<> {
    let expected = format!("Bearer {token}");
    move |headers: &HeaderMap| {
        if headers
            .get(http::header::AUTHORIZATION)
            .is_some_and(|v| v.as_bytes() == expected.as_bytes())
        {
            Ok(())
        } else {
            Err((StatusCode::UNAUTHORIZED, "bearer token required".into()))
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refusing_auth_hook_answers_before_the_body_is_read() {
    let (_server, http) = start(HttpServerOptions {
        auth: Some(Arc::new(bearer("secret"))),
        ..Default::default()
    })
    .await;
    let addr = http.local_addr();
    // The neighbour authenticates.
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::AUTHORIZATION,
        "Bearer secret".parse().unwrap(),
    );
    let neighbour = Client::connect_http(
        &http.url(),
        session_options(),
        HttpClientOptions {
            headers,
            ..Default::default()
        },
    )
    .await
    .expect("an authenticated client connects");
    for (method, auth) in [
        ("POST", None),
        ("POST", Some(&b"Authorization: Bearer wrong"[..])),
        ("POST", Some(&b"Authorization: Basic c2VjcmV0"[..])),
        ("GET", None),
        ("DELETE", None),
    ] {
        let mut lines: Vec<&[u8]> = vec![b"Host: localhost", ACCEPT_BOTH, JSON_TYPE, NEVER_SENT];
        lines.extend(auth);
        let r = exchange(
            addr,
            &raw_request(&format!("{method} /mcp HTTP/1.1"), &lines, b""),
        )
        .await;
        assert_eq!(r.status, 401, "{method} {auth:?}: {r:?}");
        assert!(String::from_utf8_lossy(&r.body).contains("bearer token required"));
    }
    // The Host check comes first: a hostile Host with a good token is still 403.
    let r = exchange(
        addr,
        &raw_request(
            "POST /mcp HTTP/1.1",
            &[
                b"Host: evil.example",
                b"Authorization: Bearer secret",
                ACCEPT_BOTH,
                JSON_TYPE,
                NEVER_SENT,
            ],
            b"",
        ),
    )
    .await;
    assert_eq!(r.status, 403);
    let r = neighbour
        .call_tool("echo", json!({"text": "authenticated"}))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("authenticated"));
    assert_eq!(http.session_count(), 1);
    neighbour.close().await;
}

// ---------------------------------------------------------------------------------------------
// Methods and headers.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn methods_and_headers_get_the_specified_statuses() {
    let (_server, http) = start(HttpServerOptions::default()).await;
    let addr = http.local_addr();
    let neighbour = Neighbour::start(&http.url()).await;
    let session = raw_session(addr).await;
    let sid = format!("Mcp-Session-Id: {session}");
    let sid = sid.as_bytes();

    // Unsupported methods: 405 with Allow, before the body.
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let r = exchange(
            addr,
            &raw_request(
                &format!("{method} /mcp HTTP/1.1"),
                &[b"Host: localhost", JSON_TYPE, NEVER_SENT],
                b"",
            ),
        )
        .await;
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow").as_deref(), Some("GET, POST, DELETE"));
    }
    // GET without text/event-stream: 406.
    for accept in [&b"Accept: application/json"[..], b"Accept: text/html"] {
        let r = exchange(
            addr,
            &raw_request("GET /mcp HTTP/1.1", &[b"Host: localhost", accept, sid], b""),
        )
        .await;
        assert_eq!(r.status, 406);
    }
    let r = exchange(
        addr,
        &raw_request("GET /mcp HTTP/1.1", &[b"Host: localhost", sid], b""),
    )
    .await;
    assert_eq!(r.status, 406, "GET with no Accept");
    // POST without both types: 406, decided before the body.
    for accept in [
        None,
        Some(&b"Accept: application/json"[..]),
        Some(b"Accept: text/event-stream"),
        Some(b"Accept: application/*"),
    ] {
        let mut lines: Vec<&[u8]> = vec![b"Host: localhost", JSON_TYPE, NEVER_SENT, sid];
        lines.extend(accept);
        let r = exchange(addr, &raw_request("POST /mcp HTTP/1.1", &lines, b"")).await;
        assert_eq!(r.status, 406, "{accept:?}");
    }
    // Wrong or missing Content-Type: 415, before the body.
    for ct in [
        None,
        Some(&b"Content-Type: text/plain"[..]),
        Some(b"Content-Type: application/x-www-form-urlencoded"),
        Some(b"Content-Type: application/json-seq"),
        Some(b"Content-Type: multipart/form-data; boundary=x"),
    ] {
        let mut lines: Vec<&[u8]> = vec![b"Host: localhost", ACCEPT_BOTH, NEVER_SENT, sid];
        lines.extend(ct);
        let r = exchange(addr, &raw_request("POST /mcp HTTP/1.1", &lines, b"")).await;
        assert_eq!(r.status, 415, "{ct:?}");
    }
    // Content-Type parameters are fine.
    let r = exchange(
        addr,
        &mcp_post(
            Some(&session),
            &[b"Content-Type: application/json; charset=utf-8"],
            &tools_call(50, "charset"),
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    // Malformed JSON: 400 with a parse error.
    for body in ["{", "{\"jsonrpc\":\"2.0\",", "\u{0}", "[1,2", "nul"] {
        let r = exchange(addr, &mcp_post(Some(&session), &[], body)).await;
        assert_eq!(r.status, 400, "{body:?}");
        assert_eq!(r.rpc_code(), Some(-32700), "{body:?}: {r:?}");
    }
    // A notification: 202, no body.
    let r = exchange(
        addr,
        &mcp_post(
            Some(&session),
            &[],
            r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
        ),
    )
    .await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
    // Missing session id: 400 (POST, GET, DELETE).
    let r = exchange(addr, &mcp_post(None, &[], &tools_call(51, "x"))).await;
    assert_eq!(r.status, 400);
    let r = exchange(
        addr,
        &raw_request(
            "GET /mcp HTTP/1.1",
            &[b"Host: localhost", b"Accept: text/event-stream"],
            b"",
        ),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = exchange(
        addr,
        &raw_request("DELETE /mcp HTTP/1.1", &[b"Host: localhost"], b""),
    )
    .await;
    assert_eq!(r.status, 400);
    // Unknown session id: 404.
    let r = exchange(
        addr,
        &mcp_post(Some("no-such-session"), &[], &tools_call(52, "x")),
    )
    .await;
    assert_eq!(r.status, 404);
    // Wrong path: 404.
    let r = exchange(
        addr,
        &raw_request(
            "POST /mcp/ HTTP/1.1",
            &[b"Host: localhost", ACCEPT_BOTH, JSON_TYPE, NEVER_SENT],
            b"",
        ),
    )
    .await;
    assert_eq!(r.status, 404);
    // DELETE, then any reuse: 404.
    let r = exchange(
        addr,
        &raw_request("DELETE /mcp HTTP/1.1", &[b"Host: localhost", sid], b""),
    )
    .await;
    assert_eq!(r.status, 200);
    let r = exchange(addr, &mcp_post(Some(&session), &[], &tools_call(53, "x"))).await;
    assert_eq!(r.status, 404);
    let r = exchange(
        addr,
        &raw_request(
            "GET /mcp HTTP/1.1",
            &[b"Host: localhost", b"Accept: text/event-stream", sid],
            b"",
        ),
    )
    .await;
    assert_eq!(r.status, 404);
    let r = exchange(
        addr,
        &raw_request("DELETE /mcp HTTP/1.1", &[b"Host: localhost", sid], b""),
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        http.session_count(),
        1,
        "only the neighbour's session is left"
    );
    neighbour.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let (_server, http) = start(HttpServerOptions {
        header_read_timeout: Duration::from_millis(300),
        ..Default::default()
    })
    .await;
    let neighbour = Neighbour::start(&http.url()).await;
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(http.local_addr()).await.unwrap();
        s.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json")
            .await
            .unwrap();
        slow.push(s);
    }
    for mut s in slow {
        let mut rest = Vec::new();
        // The server closes the connection (it may say 408 first); it never waits forever.
        let read = tokio::time::timeout(PATIENCE, s.read_to_end(&mut rest))
            .await
            .expect("the server hung up on a client that never finished its headers");
        if let Ok(n) = read
            && n > 0
        {
            assert!(
                rest.starts_with(b"HTTP/1.1 408"),
                "{:?}",
                String::from_utf8_lossy(&rest)
            );
        }
    }
    neighbour.finish().await;
}
