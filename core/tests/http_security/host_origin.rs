//! DNS-rebinding protection: every hostile `Host`/`Origin` vector is refused (403, or 400
//! when malformed) by every method, before the body is read; the loopback names and local
//! origins stay accepted, and configured names replace them.

use oxmcp::transport::http::HttpServerOptions;
use serde_json::Value;

use crate::{
    Neighbour,
    common::http_harness::raw_request,
    raw::{
        ACCEPT_BOTH, INITIALIZE, JSON_TYPE, NEVER_SENT, exchange, initialize_from, initialize_with,
    },
    start,
};

use Lines::{Absent, One, Two};

/// Zero, one or two lines of one header.
#[derive(Clone, Copy)]
enum Lines {
    Absent,
    One(&'static [u8]),
    Two(&'static [u8], &'static [u8]),
}

impl Lines {
    fn push_onto(self, lines: &mut Vec<&'static [u8]>) {
        match self {
            Absent => {}
            One(a) => lines.push(a),
            Two(a, b) => lines.extend([a, b]),
        }
    }
}

/// A hostile request: these `Host` lines and `Origin` lines, and the status they must get.
struct Vector {
    name: &'static str,
    hosts: Lines,
    origins: Lines,
    expect: u16,
}

const fn v(name: &'static str, hosts: Lines, origins: Lines, expect: u16) -> Vector {
    Vector {
        name,
        hosts,
        origins,
        expect,
    }
}

/// A hostile `Host` line, no `Origin`.
const fn host(name: &'static str, line: &'static [u8], expect: u16) -> Vector {
    Vector {
        name,
        hosts: One(line),
        origins: Absent,
        expect,
    }
}

/// A hostile `Origin` line, with the allowed `Host: localhost`.
const fn origin(name: &'static str, line: &'static [u8], expect: u16) -> Vector {
    Vector {
        name,
        hosts: One(b"Host: localhost"),
        origins: One(line),
        expect,
    }
}

/// Hosts and Origins that must be refused. 403 for a well-formed name that is not allowed,
/// 400 for a header that is not a valid authority at all.
const HOSTILE: &[Vector] = &[
    // Host: names that resolve (or could be made to resolve) to loopback but are not listed.
    host("trailing dot", b"Host: localhost.", 403),
    host("trailing dot with port", b"Host: localhost.:8080", 403),
    host("suffix domain", b"Host: localhost.evil.com", 403),
    host("prefix domain", b"Host: evil-localhost", 403),
    host("attacker domain", b"Host: evil.example", 403),
    host("nip.io wildcard DNS", b"Host: 127.0.0.1.nip.io", 403),
    host("decimal IPv4", b"Host: 2130706433", 403),
    host("octal IPv4", b"Host: 0177.0.0.1", 403),
    host("hex IPv4 dotted", b"Host: 0x7f.0.0.1", 403),
    host("hex IPv4 whole", b"Host: 0x7f000001", 403),
    host("short IPv4", b"Host: 127.1", 403),
    host("other loopback address", b"Host: 127.0.0.2", 403),
    host("unspecified IPv4", b"Host: 0.0.0.0", 403),
    host("IPv4-mapped IPv6", b"Host: [::ffff:127.0.0.1]", 403),
    host("uncompressed IPv6", b"Host: [0:0:0:0:0:0:0:1]", 403),
    host("unspecified IPv6", b"Host: [::]:80", 403),
    host("IPv6 zone id", b"Host: [::1%25lo]", 403),
    host("punycode look-alike", b"Host: xn--lcalhost-nbh", 403),
    host("userinfo in Host", b"Host: user@localhost", 403),
    host("percent-encoded dot", b"Host: localhost%2e", 403),
    // Host: malformed.
    host("empty Host", b"Host: ", 400),
    v("missing Host", Absent, Absent, 400),
    v(
        "duplicated Host, same value",
        Two(b"Host: localhost", b"Host: localhost"),
        Absent,
        400,
    ),
    v(
        "duplicated Host, second hostile",
        Two(b"Host: localhost", b"Host: evil.example"),
        Absent,
        400,
    ),
    host("obs-text byte in Host", b"Host: localhost\xff", 400),
    host(
        "UTF-8 look-alike (Cyrillic o)",
        b"Host: l\xd0\xbecalhost",
        400,
    ),
    host("space inside Host", b"Host: local host", 400),
    host("non-numeric port", b"Host: localhost:abc", 400),
    host("empty port", b"Host: localhost:", 400),
    host("six-digit port", b"Host: localhost:123456", 400),
    host("two ports", b"Host: localhost:80:80", 400),
    host("port with a domain", b"Host: 127.0.0.1:80.evil.com", 400),
    host("unclosed IPv6 bracket", b"Host: [::1", 400),
    host("IPv6 bracket, empty port", b"Host: [::1]:", 400),
    host("bare IPv6 without brackets", b"Host: ::1", 400),
    // Origin, with an allowed Host.
    origin("null Origin", b"Origin: null", 403),
    origin("file Origin", b"Origin: file://", 403),
    origin("file Origin with path", b"Origin: file:///etc/passwd", 403),
    origin("other host Origin", b"Origin: http://evil.example", 403),
    v(
        "other host Origin, https with port",
        One(b"Host: localhost:3000"),
        One(b"Origin: https://evil.example:443"),
        403,
    ),
    origin(
        "suffix domain Origin",
        b"Origin: http://localhost.evil.com",
        403,
    ),
    origin("trailing dot Origin", b"Origin: http://localhost.", 403),
    v(
        "nip.io Origin",
        One(b"Host: 127.0.0.1"),
        One(b"Origin: http://127.0.0.1.nip.io"),
        403,
    ),
    v(
        "decimal IPv4 Origin",
        One(b"Host: 127.0.0.1"),
        One(b"Origin: http://2130706433"),
        403,
    ),
    v(
        "IPv4-mapped IPv6 Origin",
        One(b"Host: [::1]"),
        One(b"Origin: http://[::ffff:127.0.0.1]"),
        403,
    ),
    origin("userinfo Origin", b"Origin: http://user@localhost", 403),
    origin(
        "userinfo with password Origin",
        b"Origin: http://user:pw@localhost:5173",
        403,
    ),
    origin(
        "userinfo hiding another host",
        b"Origin: http://localhost@evil.example",
        403,
    ),
    origin("Origin with a path", b"Origin: http://localhost/app", 403),
    origin("Origin with a query", b"Origin: http://localhost?x=1", 403),
    origin("websocket scheme Origin", b"Origin: ws://localhost", 403),
    origin(
        "extension Origin",
        b"Origin: chrome-extension://abcdef",
        403,
    ),
    origin("scheme without host", b"Origin: http://", 403),
    origin("empty Origin", b"Origin: ", 403),
    origin("punycode Origin", b"Origin: http://xn--lcalhost-nbh", 403),
    origin("bad port Origin", b"Origin: http://localhost:abc", 403),
    v(
        "allowed Origin, hostile Host",
        One(b"Host: evil.example"),
        One(b"Origin: http://localhost:5173"),
        403,
    ),
    v(
        "duplicated Origin, same value",
        One(b"Host: localhost"),
        Two(b"Origin: http://localhost", b"Origin: http://localhost"),
        400,
    ),
    v(
        "duplicated Origin, second hostile",
        One(b"Host: localhost"),
        Two(b"Origin: http://localhost", b"Origin: http://evil.example"),
        400,
    ),
    origin(
        "obs-text byte in Origin",
        b"Origin: http://localhost\xfe",
        400,
    ),
    origin(
        "UTF-8 look-alike Origin",
        b"Origin: http://l\xd0\xbecalhost",
        400,
    ),
];

/// The hostile request for `vector`: an initialize POST whose body is declared, never sent.
fn hostile_request(vector: &Vector, method: &str) -> Vec<u8> {
    let mut lines = Vec::new();
    vector.hosts.push_onto(&mut lines);
    vector.origins.push_onto(&mut lines);
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
        let r = exchange(http.local_addr(), &initialize_with(&[host.as_bytes()])).await;
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
        let r = exchange(http.local_addr(), &initialize_from(host, origin.as_deref())).await;
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
        let r = exchange(addr, &initialize_from(host, *origin)).await;
        println!(
            "configured: Host {host:28} Origin {origin:?} -> {}",
            r.status
        );
        assert_eq!(r.status, *expect, "Host {host} Origin {origin:?}: {r:?}");
    }
    assert_eq!(http.session_count(), 3);
}
