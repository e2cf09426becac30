//! The raw limit's message handling: what any MCP server must do per message (parse the
//! JSON-RPC envelope, dispatch on the method, serialise a real MCP-shaped answer) and nothing
//! else. Shared by `raw_stdio` and `raw_http`, so both limits do the same work per call.

use serde::Deserialize;
use serde_json::{Value, json, value::RawValue};

/// The envelope fields the limit reads; params stay unparsed until a method needs them.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: serde_json::Map<String, Value>,
}

/// The answer to one line, or `None` for a notification or a response.
pub fn answer(line: &[u8]) -> Option<Vec<u8>> {
    let Ok(env) = serde_json::from_slice::<Envelope>(line) else {
        return Some(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
                .to_vec(),
        );
    };
    let id = env.id?;
    let method = env.method?;
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "echo",
            "description": "Echo the text",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        }]}),
        "tools/call" => {
            let params: CallParams = match env.params.map(|p| serde_json::from_str(p.get())) {
                Some(Ok(p)) => p,
                _ => return Some(error(id, -32602, "invalid params")),
            };
            if params.name != "echo" {
                return Some(error(id, -32602, "unknown tool"));
            }
            let text = params
                .arguments
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("");
            json!({"content": [{"type": "text", "text": text}]})
        }
        "ping" => json!({}),
        _ => return Some(error(id, -32601, "method not found")),
    };
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","result":"#);
    serde_json::to_writer(&mut out, &result).ok()?;
    out.push(b'}');
    Some(out)
}

fn error(id: &RawValue, code: i64, message: &str) -> Vec<u8> {
    let mut out = format!(r#"{{"jsonrpc":"2.0","id":{},"error":"#, id.get()).into_bytes();
    let _ = serde_json::to_writer(&mut out, &json!({"code": code, "message": message}));
    out.push(b'}');
    out
}
