//! The `http_request` fuzz target's harness: arbitrary method, headers and body bytes into the
//! server's request handler, over an in-memory pipe (hyper parses them exactly as it would
//! off a socket), checking that every request gets exactly one answer that follows
//! `post_rule`, and that a session survives whatever it was sent.
//!
//! Input: `data[0]` picks the server (bits 0-1: no session yet, a 2025-03-26 session, a
//! 2025-11-25 session, `stateless`; bit 2: `json_response`); the rest is
//! `METHOD PATH\nName: value\n…\n\nbody`. The harness adds `Host`, `Content-Length` (any the
//! input names is dropped, so framing is always whole) and the session's `Mcp-Session-Id`
//! and `MCP-Protocol-Version` unless the input sets them. Input whose head does not read that
//! way is a POST to `/mcp` with the usual headers and all of it as the body.

use std::{sync::Arc, time::Duration};

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::{HttpServerOptions, InMemoryServer, SessionFactory};
use crate::jsonrpc::{Decoded, Limits, Message, decode};

/// Longer than any answer takes: not reaching it is the invariant, not a speed claim.
const DEADLINE: Duration = Duration::from_secs(5);

/// One answer as read off the pipe.
#[derive(Debug)]
struct Answer {
    status: u16,
    content_type: String,
    session: Option<String>,
    /// The whole body for sized responses; `None` for a stream (not read to its end).
    body: Option<Vec<u8>>,
}

struct Input {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Input {
    /// A well-formed POST of `body` to the MCP endpoint.
    fn post(body: &[u8]) -> Input {
        Input {
            method: "POST".into(),
            path: "/mcp".into(),
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                (
                    "Accept".into(),
                    "application/json, text/event-stream".into(),
                ),
            ],
            body: body.to_vec(),
        }
    }
}

fn parse_input(data: &[u8]) -> Input {
    let fallback = || Input::post(data);
    let Some(split) = data.windows(2).position(|w| w == b"\n\n") else {
        return fallback();
    };
    let Ok(head) = std::str::from_utf8(&data[..split]) else {
        return fallback();
    };
    let mut lines = head.split('\n');
    let Some((method, path)) = lines.next().and_then(|l| l.split_once(' ')) else {
        return fallback();
    };
    let clean = |s: &str| s.replace(['\r', '\n'], "");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (clean(n).trim().to_owned(), clean(v).trim().to_owned()))
        .filter(|(n, _)| {
            !n.eq_ignore_ascii_case("content-length")
                && !n.eq_ignore_ascii_case("transfer-encoding")
                && !n.eq_ignore_ascii_case("connection")
        })
        .collect();
    Input {
        method: clean(method),
        path: clean(path),
        headers,
        body: data[split + 2..].to_vec(),
    }
}

fn raw_request(input: &Input, session: Option<&(String, &str)>) -> Vec<u8> {
    let has = |name: &str| {
        input
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let mut head = format!("{} {} HTTP/1.1\r\n", input.method, input.path);
    if !has("host") {
        head.push_str("Host: 127.0.0.1\r\n");
    }
    if let Some((id, version)) = session {
        if !has("mcp-session-id") {
            head.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
        }
        if !has("mcp-protocol-version") {
            head.push_str(&format!("MCP-Protocol-Version: {version}\r\n"));
        }
    }
    for (n, v) in &input.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        input.body.len()
    ));
    let mut out = head.into_bytes();
    out.extend_from_slice(&input.body);
    out
}

/// Reads one response: its head, and its body when it is sized.
async fn read_answer(pipe: &mut DuplexStream) -> Option<Answer> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = pipe.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut content_type = String::new();
    let mut session = None;
    let mut length = None;
    for line in lines {
        let Some((n, v)) = line.split_once(':') else {
            continue;
        };
        match n.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = v.trim().to_owned(),
            "mcp-session-id" => session = Some(v.trim().to_owned()),
            "content-length" => length = v.trim().parse::<usize>().ok(),
            _ => {}
        }
    }
    let Some(length) = length else {
        return Some(Answer {
            status,
            content_type,
            session,
            body: None,
        });
    };
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = pipe.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Answer {
        status,
        content_type,
        session,
        body: Some(body),
    })
}

async fn exchange(server: &InMemoryServer, request: &[u8]) -> Option<Answer> {
    let mut pipe = server.connect();
    let answer = tokio::time::timeout(DEADLINE, async {
        // The server may answer (and close) before the whole body is in: that is fine.
        let _ = pipe.write_all(request).await;
        read_answer(&mut pipe).await
    })
    .await;
    match answer {
        Ok(answer) => answer,
        Err(_) => panic!(
            "no HTTP answer within {DEADLINE:?} to {:?}",
            String::from_utf8_lossy(request)
        ),
    }
}

fn post(body: &str, session: Option<&(String, &str)>) -> Vec<u8> {
    raw_request(&Input::post(body.as_bytes()), session)
}

/// Opens a session at `version` and sends `notifications/initialized`.
async fn open_session(server: &InMemoryServer, version: &'static str) -> (String, &'static str) {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"fuzz","version":"0"}}}}}}"#
    );
    let answer = exchange(server, &post(&init, None)).await;
    let id = answer
        .and_then(|a| a.session)
        .unwrap_or_else(|| panic!("initialize at {version} opened no session"));
    let session = (id, version);
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let acked = exchange(server, &post(note, Some(&session))).await;
    assert_eq!(acked.map(|a| a.status), Some(202), "initialized");
    (session.0, version)
}

/// The checks of one answer against the body that earned it.
fn check(input: &Input, answer: &Answer) {
    assert!(
        answer.status < 500,
        "a server error for a client's input: {answer:?}"
    );
    let is_post_to_mcp = input.method == "POST" && input.path == "/mcp";
    if !is_post_to_mcp {
        return;
    }
    let decoded = decode(&input.body, &Limits::SERVER);
    if answer.status == 202 {
        assert!(
            answer.body.as_ref().is_none_or(Vec::is_empty),
            "202 with a body: {answer:?}"
        );
        let items: Vec<&Result<Message, _>> = match &decoded {
            Ok(Decoded::Single(item)) => vec![item],
            Ok(Decoded::Batch(items)) => items.iter().collect(),
            Err(e) => panic!("202 for a body that is not JSON ({e})"),
        };
        for item in items {
            match item {
                Ok(Message::Request(r)) => panic!("202 for a body holding request {}", r.id),
                Ok(_) => {}
                Err(e) => panic!("202 for a body holding an invalid message: {}", e.reason),
            }
        }
    }
    if answer.content_type.starts_with("application/json")
        && let Some(body) = &answer.body
    {
        let value: serde_json::Value = serde_json::from_slice(body)
            .unwrap_or_else(|e| panic!("a JSON answer that is not JSON ({e}): {answer:?}"));
        let well_formed = |v: &serde_json::Value| {
            v.get("jsonrpc") == Some(&serde_json::json!("2.0"))
                && (v.get("result").is_some() || v.get("error").is_some())
        };
        let ok = match &value {
            serde_json::Value::Array(items) => !items.is_empty() && items.iter().all(well_formed),
            v => well_formed(v),
        };
        assert!(ok, "a JSON answer that is no JSON-RPC response: {value}");
        if let Ok(Decoded::Single(Ok(Message::Request(r)))) = &decoded
            && (200..300).contains(&answer.status)
        {
            assert_eq!(
                value.get("id"),
                Some(&serde_json::to_value(&r.id).unwrap_or_default()),
                "the answer is not for request {}",
                r.id
            );
        }
    }
}

/// The `http_request` fuzz target.
pub(crate) fn http_request(data: &[u8]) {
    let (config, rest) = match data {
        [config, rest @ ..] => (*config, rest),
        [] => (0, data),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => panic!("a runtime for the harness: {e}"),
    };
    runtime.block_on(async {
        let options = HttpServerOptions {
            stateless: config & 3 == 3,
            json_response: config & 4 != 0,
            // Small, so that short inputs reach the cap too.
            max_body_bytes: 4096,
            ..Default::default()
        };
        let server = crate::server::Server::builder("fuzz", "0").build();
        let factory: SessionFactory = Arc::new(move |link| server.serve(link));
        let http = InMemoryServer::new(options, factory);
        let session = match config & 3 {
            1 => Some(open_session(&http, "2025-03-26").await),
            2 => Some(open_session(&http, "2025-11-25").await),
            _ => None,
        };
        let session = session.as_ref().map(|(id, v)| (id.clone(), *v));
        let input = parse_input(rest);
        let answer = exchange(&http, &raw_request(&input, session.as_ref())).await;
        // hyper itself answers unreadable heads with 400 and may just close on some.
        if let Some(answer) = &answer {
            check(&input, answer);
        }
        if let Some(session) = &session
            && !input.method.eq_ignore_ascii_case("DELETE")
        {
            let ping = exchange(
                &http,
                &post(
                    r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#,
                    Some(session),
                ),
            )
            .await;
            let ping = ping.unwrap_or_else(|| panic!("no answer to a ping after {answer:?}"));
            assert_eq!(ping.status, 200, "the session stopped serving: {ping:?}");
        }
        http.shutdown().await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, json: &str) -> Answer {
        Answer {
            status,
            content_type: "application/json".into(),
            session: None,
            body: Some(json.as_bytes().to_vec()),
        }
    }

    // The checks must be able to fail: these are the faults of issue 13.
    #[test]
    #[should_panic(expected = "202 for a body holding an invalid message")]
    fn a_202_for_invalid_elements_is_caught() {
        let input = parse_input(b"POST /mcp\n\n[1,2]");
        check(&input, &answer(202, ""));
    }

    #[test]
    #[should_panic(expected = "202 for a body holding request")]
    fn a_202_for_a_request_is_caught() {
        let input = parse_input(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        check(&input, &answer(202, ""));
    }

    #[test]
    #[should_panic(expected = "not for request")]
    fn an_answer_for_another_id_is_caught() {
        let input = parse_input(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        check(
            &input,
            &answer(200, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#),
        );
    }

    #[test]
    fn input_framing_is_always_whole() {
        let input = parse_input(b"POST /x\nContent-Length: 99\nA: b\n\nbody");
        let raw = String::from_utf8(raw_request(&input, None)).expect("text");
        assert!(raw.contains("Content-Length: 4\r\n"), "{raw}");
        assert!(!raw.contains("99"), "{raw}");
        assert!(raw.ends_with("\r\n\r\nbody"), "{raw}");
    }
}
