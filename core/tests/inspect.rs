//! `oxmcp inspect` as a running process, probed with raw HTTP/1.1 over TCP: the URL on stdout,
//! the token, Host and Origin refusals (each with exactly the headers an attacker's page or a
//! rebinding DNS name would send), bad bodies, a real tool call through the API, a fresh
//! token per launch, and a clean stop on SIGTERM. The browser half is tests/inspect/.

mod common;

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::Duration,
};

use common::example_bin as example;
use serde_json::{Value, json};

/// This suite's config file for `tag`.
fn write_config(tag: &str, config: Value) -> PathBuf {
    common::cli::write_config("inspect", tag, &config)
}

/// A running inspector, stopped with SIGTERM when dropped.
struct Inspector {
    child: Child,
    port: u16,
    token: String,
}

impl Inspector {
    fn start(tag: &str) -> Inspector {
        let weather = example("weather_server");
        Inspector::start_with(
            tag,
            json!({"mcpServers": {
                "weather": {"command": weather.display().to_string()},
                "broken": {"command": "sh", "args": ["-c", "echo 'no API key' >&2; exit 3"]},
            }}),
        )
    }

    fn start_with(tag: &str, config: Value) -> Inspector {
        let config = write_config(tag, config);
        let mut child = Command::new(env!("CARGO_BIN_EXE_oxmcp"))
            .args(["inspect", "--no-open", "--port", "0", "--config"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim();
        let rest = url
            .strip_prefix("http://127.0.0.1:")
            .unwrap_or_else(|| panic!("not a loopback URL: {url:?}"));
        let (port, token) = rest.split_once("/?token=").unwrap();
        Inspector {
            port: port.parse().unwrap(),
            token: token.to_owned(),
            child,
        }
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// One request with exactly `headers` (Host included); the status and the body.
    fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> (u16, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        if !body.is_empty() || method == "POST" {
            req.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        req.push_str("\r\n");
        req.push_str(body);
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        let status = out
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status line: {out:?}"));
        assert!(
            !out.to_ascii_lowercase().contains("access-control-allow"),
            "no CORS header is ever sent: {out}"
        );
        let body = out
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (status, body)
    }

    fn host(&self) -> (&'static str, String) {
        ("Host", format!("127.0.0.1:{}", self.port))
    }

    fn api_post(&self, route: &str, body: &Value) -> (u16, Value) {
        let (status, text) = self.raw(
            "POST",
            &format!("/api/{route}"),
            &[
                self.host(),
                ("Origin", self.origin()),
                ("X-Oxmcp-Token", self.token.clone()),
                ("Content-Type", "application/json".into()),
            ],
            &body.to_string(),
        );
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn state(&self) -> Value {
        let (status, text) = self.raw(
            "GET",
            "/api/state",
            &[self.host(), ("X-Oxmcp-Token", self.token.clone())],
            "",
        );
        assert_eq!(status, 200, "{text}");
        serde_json::from_str(&text).unwrap()
    }

    /// Waits until no server is still connecting.
    fn settled(&self) -> Value {
        for _ in 0..300 {
            let s = self.state();
            if s["servers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|x| x["state"] != "connecting")
            {
                return s;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("servers still connecting after 30 s");
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// A request (method, path, headers) and the status it must get.
type Case = (&'static str, String, Vec<(&'static str, String)>, u16);

#[test]
fn refuses_every_request_without_the_token_or_from_elsewhere() {
    let i = Inspector::start("guard");
    assert_eq!(i.token.len(), 43);
    let token = i.token.clone();
    let host = i.host();
    let cases: Vec<Case> = vec![
        ("GET", "/".into(), vec![host.clone()], 401),
        ("GET", "/?token=nope".into(), vec![host.clone()], 401),
        ("GET", "/api/state".into(), vec![host.clone()], 401),
        (
            "GET",
            "/api/state".into(),
            vec![host.clone(), ("X-Oxmcp-Token", "a".repeat(43))],
            401,
        ),
        (
            "GET",
            format!("/api/state?token={token}"),
            vec![host.clone()],
            401,
        ),
        (
            "GET",
            format!("/?token={token}"),
            vec![("Host", format!("evil.example:{}", i.port))],
            403,
        ),
        (
            "GET",
            "/api/state".into(),
            vec![
                ("Host", "evil.example".into()),
                ("X-Oxmcp-Token", token.clone()),
            ],
            403,
        ),
        (
            "GET",
            "/api/state".into(),
            vec![("X-Oxmcp-Token", token.clone())],
            403,
        ),
        (
            "GET",
            "/api/state".into(),
            vec![
                host.clone(),
                ("X-Oxmcp-Token", token.clone()),
                ("Origin", "http://evil.example".into()),
            ],
            403,
        ),
        (
            "OPTIONS",
            "/api/call".into(),
            vec![
                host.clone(),
                ("Origin", "http://evil.example".into()),
                ("Access-Control-Request-Method", "POST".into()),
            ],
            403,
        ),
        (
            "POST",
            "/api/connect".into(),
            vec![
                host.clone(),
                ("X-Oxmcp-Token", token.clone()),
                ("Content-Type", "application/json".into()),
            ],
            403,
        ),
        (
            "POST",
            "/api/connect".into(),
            vec![
                host.clone(),
                ("Origin", i.origin()),
                ("Content-Type", "application/json".into()),
            ],
            401,
        ),
    ];
    for (method, path, headers, want) in cases {
        let (status, body) = i.raw(
            method,
            &path,
            &headers,
            if method == "POST" { "{}" } else { "" },
        );
        assert_eq!(status, want, "{method} {path} {headers:?}: {body}");
        assert!(
            !body.contains("weather") && !body.contains("API key"),
            "no server data: {body}"
        );
    }
    let (status, page) = i.raw(
        "GET",
        &format!("/?token={token}"),
        std::slice::from_ref(&host),
        "",
    );
    assert_eq!(status, 200);
    assert!(page.contains("<h2 id=\"trace-h\">Trace</h2>"));
}

#[test]
fn bad_bodies_get_typed_errors_and_a_call_goes_through() {
    let i = Inspector::start("api");
    let s = i.settled();
    let by_name = |n: &str| {
        s["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("weather")["state"], "connected");
    let broken = by_name("broken");
    assert_eq!(broken["state"], "failed");
    assert!(
        broken["stderr"].as_str().unwrap().contains("no API key"),
        "{broken}"
    );

    let (status, text) = i.raw(
        "POST",
        "/api/call",
        &[
            i.host(),
            ("Origin", i.origin()),
            ("X-Oxmcp-Token", i.token.clone()),
            ("Content-Type", "text/plain".into()),
        ],
        "{}",
    );
    assert_eq!(status, 415, "{text}");
    let (status, _) = i.raw(
        "POST",
        "/api/call",
        &[
            i.host(),
            ("Origin", i.origin()),
            ("X-Oxmcp-Token", i.token.clone()),
            ("Content-Type", "application/json".into()),
        ],
        "{\"call\": ",
    );
    assert_eq!(status, 400);
    let (status, body) = i.api_post("call", &json!([1, 2]));
    assert_eq!(status, 400, "{body}");
    let (status, body) = i.api_post("nothing-here", &json!({}));
    assert_eq!(status, 404, "{body}");
    let (status, body) = i.api_post("connect", &json!({"server": "sh -c 'touch /tmp/x'"}));
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("no server named"));
    let (status, body) = i.api_post("call", &json!({"call": "c", "server": "weather", "tool": "get_weather", "arguments": {"town": "Oslo"}}));
    assert_eq!(status, 422, "{body}");
    assert!(!body["schemaErrors"].as_array().unwrap().is_empty());
    let (status, body) = i.api_post(
        "call",
        &json!({"call": "c", "server": "weather", "tool": "nope"}),
    );
    assert_eq!(status, 400, "{body}");
    let (status, body) = i.api_post("answer", &json!({"id": "unknown", "reject": "no"}));
    assert_eq!(status, 400, "{body}");

    let (status, body) = i.api_post("call", &json!({"call": "c1", "server": "weather", "tool": "get_weather", "arguments": {"city": "Beijing"}}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["structuredContent"]["city"], "Beijing");
    assert_eq!(body["outputCheck"]["valid"], true);
    // The trace has the call both ways.
    let (_, events) = i.raw(
        "GET",
        "/api/events?after=0&wait=0",
        &[i.host(), ("X-Oxmcp-Token", i.token.clone())],
        "",
    );
    let events: Value = serde_json::from_str(&events).unwrap();
    let frames: Vec<&Value> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "trace")
        .collect();
    assert!(
        frames
            .iter()
            .any(|e| e["dir"] == "out" && e["text"].as_str().unwrap().contains("tools/call"))
    );
    assert!(
        frames
            .iter()
            .any(|e| e["dir"] == "in" && e["text"].as_str().unwrap().contains("Beijing"))
    );
}

#[test]
fn each_launch_has_its_own_token_and_a_bad_port_is_refused() {
    let a = Inspector::start("token-a");
    let b = Inspector::start("token-b");
    assert_ne!(a.token, b.token);
    // b's token does not open a.
    let (status, _) = a.raw(
        "GET",
        "/api/state",
        &[a.host(), ("X-Oxmcp-Token", b.token.clone())],
        "",
    );
    assert_eq!(status, 401);
    let o = Command::new(env!("CARGO_BIN_EXE_oxmcp"))
        .args(["inspect", "--no-open", "--port", "70000"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--port `70000` is not a port"));
    // There is no way to listen elsewhere than on loopback.
    let o = Command::new(env!("CARGO_BIN_EXE_oxmcp"))
        .args(["inspect", "--no-open", "--host", "0.0.0.0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown option `--host`"));
    // The port a is on is taken.
    let config = write_config("taken", json!({"mcpServers": {}}));
    let o = Command::new(env!("CARGO_BIN_EXE_oxmcp"))
        .args([
            "inspect",
            "--no-open",
            "--port",
            &a.port.to_string(),
            "--config",
        ])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "no URL when nothing listens");
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot listen on 127.0.0.1"));
}

#[test]
fn sigterm_stops_the_inspector_and_its_servers() {
    let mut i = Inspector::start("stop");
    i.settled();
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(i.child.id() as i32, libc::SIGTERM) };
    let status = i.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(
        TcpStream::connect(("127.0.0.1", i.port)).is_err(),
        "nothing listens after the stop"
    );
}

/// A WebSocket server in the config (`{"type": "ws"}`) is inspected like any other; one that
/// is not listening fails by name (issue 39).
#[test]
fn a_websocket_server_in_the_config_is_inspected_and_a_dead_one_fails_by_name() {
    let mut weather = Command::new(example("weather_server"))
        .args(["--ws", "--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(weather.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_owned();
    let i = Inspector::start_with(
        "ws",
        json!({"mcpServers": {
            "weather-ws": {"type": "ws", "url": url},
            "gone-ws": {"url": "ws://127.0.0.1:1/mcp"},
        }}),
    );
    let s = i.settled();
    let state = |n: &str| {
        s["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .unwrap()["state"]
            .clone()
    };
    assert_eq!(state("weather-ws"), "connected", "{s}");
    assert_eq!(state("gone-ws"), "failed", "{s}");
    let (status, body) = i.api_post(
        "call",
        &json!({"call": "w", "server": "weather-ws", "tool": "get_weather", "arguments": {"city": "Oslo"}}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["structuredContent"]["city"], "Oslo");
    drop(i);
    let _ = weather.kill();
    let _ = weather.wait();
}
