//! Tool arguments mirrored into HTTP headers (SEP-2243, 2026-07-28).
//!
//! A tool's `inputSchema` may mark primitive properties with `x-mcp-header: "Name"`; on
//! Streamable HTTP the client then sends the argument's value as `Mcp-Param-Name`, so load
//! balancers and gateways can route on it without parsing bodies, and the server refuses a
//! request whose header and body disagree (two sources of truth are a security hole). The
//! rules live here once, because both sides need them: which declarations are valid, how a
//! value is written into a header (`=?base64?…?=` when it cannot travel as plain ASCII), and
//! how a header is read back and compared.

use std::collections::HashMap;
use std::sync::Arc;

use base64::{Engine, engine::general_purpose::STANDARD};
use serde_json::Value;

use super::JsonObject;
use crate::sync::RwLock;

/// The schema annotation that asks for a header.
pub const ANNOTATION: &str = "x-mcp-header";
/// The prefix of every mirrored header's name.
pub const HEADER_PREFIX: &str = "Mcp-Param-";

/// Integers beyond ±(2^53 − 1) lose precision in JavaScript peers, so the spec excludes them.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One declared header: the name after `Mcp-Param-` and where its value sits in the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The `x-mcp-header` value, e.g. `Region` for `Mcp-Param-Region`.
    pub name: String,
    /// Property names from the arguments object down to the value.
    pub path: Vec<String>,
}

impl ParamHeader {
    /// The full header name, e.g. `Mcp-Param-Region`.
    pub fn header_name(&self) -> String {
        format!("{HEADER_PREFIX}{}", self.name)
    }

    /// The argument this header mirrors, if the arguments carry one.
    pub fn value_in<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        self.path
            .iter()
            .try_fold(arguments, |v, key| v.get(key))
            .filter(|v| !v.is_null())
    }
}

/// Every `x-mcp-header` declaration in a tool's input schema, or why the tool is invalid.
///
/// Declarations may sit at any depth of nested `properties`. Each name must be an RFC 9110
/// token, unique regardless of case, on a `string`, `integer` or `boolean` property (not
/// `number`: a float has no single text form to compare).
pub fn declarations(input_schema: &JsonObject) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(input_schema, &mut Vec::new(), &mut found)?;
    let mut seen: HashMap<String, &str> = HashMap::new();
    for header in &found {
        if let Some(first) = seen.insert(header.name.to_ascii_lowercase(), &header.name) {
            return Err(format!(
                "x-mcp-header `{}` is declared twice (also as `{first}`); names must be unique regardless of case",
                header.name
            ));
        }
    }
    Ok(found)
}

fn walk(
    schema: &JsonObject,
    path: &mut Vec<String>,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        let Some(property) = property.as_object() else {
            continue;
        };
        path.push(key.clone());
        if let Some(annotation) = property.get(ANNOTATION) {
            let where_ = path.join(".");
            let name = annotation
                .as_str()
                .ok_or_else(|| format!("x-mcp-header of `{where_}` must be a string"))?;
            check_name(name).map_err(|why| format!("x-mcp-header of `{where_}` {why}"))?;
            match property.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                other => {
                    return Err(format!(
                        "x-mcp-header of `{where_}` is on a property of type {}; only string, integer and boolean are allowed",
                        other.map_or("(none)".to_owned(), |t| format!("`{t}`"))
                    ));
                }
            }
            found.push(ParamHeader {
                name: name.to_owned(),
                path: path.clone(),
            });
        }
        walk(property, path, found)?;
        path.pop();
    }
    Ok(())
}

/// An RFC 9110 `token`: visible ASCII except delimiters, at least one character.
fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("must not be empty");
    }
    let tchar = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            )
    };
    if name.bytes().all(tchar) {
        Ok(())
    } else {
        Err("must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~ only)")
    }
}

/// The text a value is mirrored as: strings as they are, integers in decimal, booleans as
/// `true`/`false`. `None` for values that are never mirrored (null, objects, arrays, integers
/// outside the safe range).
pub fn plain_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i.abs() <= MAX_SAFE_INTEGER => Some(i.to_string()),
            _ => n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64)
                .map(|f| (f as i64).to_string()),
        },
        _ => None,
    }
}

/// A header value for `text`: plain when it is printable ASCII without surrounding
/// whitespace (and cannot be mistaken for the sentinel), else `=?base64?…?=`.
pub fn encode(text: &str) -> String {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && text.trim_matches(' ') == text
        && !text.starts_with("=?base64?");
    if plain {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(text))
    }
}

/// Reads a header value back: `=?base64?…?=` is decoded strictly (canonical padding, the
/// standard alphabet, UTF-8 inside); anything else is taken literally.
pub fn decode(raw: &[u8]) -> Result<String, String> {
    let text = std::str::from_utf8(raw)
        .map_err(|_| "is not valid text".to_owned())?
        .trim_matches(|c| c == ' ' || c == '\t');
    match text
        .strip_prefix("=?base64?")
        .and_then(|t| t.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = STANDARD
                .decode(encoded)
                .map_err(|_| "is not valid base64".to_owned())?;
            String::from_utf8(bytes).map_err(|_| "does not decode to UTF-8".to_owned())
        }
        None => Ok(text.to_owned()),
    }
}

/// Whether a decoded header text stands for the same value as the body's argument. Integers
/// compare by value (`042` and `42` agree), so a proxy that normalises numbers is not refused.
pub fn matches(header_text: &str, body_value: &Value) -> bool {
    match body_value {
        Value::Number(n) => match (header_text.trim().parse::<i64>(), n.as_i64()) {
            (Ok(h), Some(b)) => h == b,
            _ => match (header_text.trim().parse::<f64>(), n.as_f64()) {
                (Ok(h), Some(b)) => h == b,
                _ => false,
            },
        },
        other => plain_text(other).is_some_and(|text| text == header_text),
    }
}

/// The declarations of the tools a client has listed, by tool name, shared between the client
/// (which learns them from `tools/list`) and its HTTP transport (which writes the headers).
#[derive(Debug, Clone, Default)]
pub struct ParamHeaderTable {
    tools: Arc<RwLock<HashMap<String, Arc<[ParamHeader]>>>>,
}

impl ParamHeaderTable {
    /// Records a listed tool's declarations (an empty list forgets it).
    pub fn insert(&self, tool: &str, headers: Vec<ParamHeader>) {
        let mut tools = self.tools.write();
        if headers.is_empty() {
            tools.remove(tool);
        } else {
            tools.insert(tool.to_owned(), headers.into());
        }
    }

    /// The headers a `tools/call` of `tool` with `arguments` carries, as (name, value) pairs.
    pub fn headers_for(&self, tool: &str, arguments: &Value) -> Vec<(String, String)> {
        let Some(declared) = self.tools.read().get(tool).cloned() else {
            return Vec::new();
        };
        declared
            .iter()
            .filter_map(|h| {
                let text = plain_text(h.value_in(arguments)?)?;
                Some((h.header_name(), encode(&text)))
            })
            .collect()
    }
}

/// What a 2026-07-28 request's `Mcp-Name` header mirrors (SEP-2243, SEP-2663): the tool or
/// prompt name, the resource URI, or the task id of a tasks method; `None` for other methods.
pub fn mcp_name_of<'a>(method: &str, params: Option<&'a serde_json::Value>) -> Option<&'a str> {
    use super::{methods, tasks};
    let member = match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => "name",
        methods::RESOURCES_READ => "uri",
        tasks::TASKS_GET | tasks::TASKS_UPDATE | tasks::TASKS_CANCEL => "taskId",
        _ => return None,
    };
    params?.get(member)?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn finds_nested_declarations() {
        let s = schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {
                "tier": {"type": "integer", "x-mcp-header": "Tier"}}}}}));
        let found = declarations(&s).expect("valid");
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].path, vec!["opts".to_owned(), "tier".to_owned()]);
        let args = json!({"region": "eu", "opts": {"tier": 3}});
        assert_eq!(found[1].value_in(&args), Some(&json!(3)));
    }

    #[test]
    fn refuses_invalid_declarations() {
        for bad in [
            json!({"a": {"type": "string", "x-mcp-header": ""}}),
            json!({"a": {"type": "string", "x-mcp-header": "Has Space"}}),
            json!({"a": {"type": "string", "x-mcp-header": "Col:on"}}),
            json!({"a": {"type": "string", "x-mcp-header": "Ünï"}}),
            json!({"a": {"type": "string", "x-mcp-header": "Line\nBreak"}}),
            json!({"a": {"type": "number", "x-mcp-header": "Score"}}),
            json!({"a": {"type": "object", "x-mcp-header": "Obj"}}),
            json!({"a": {"type": "array", "x-mcp-header": "Arr"}}),
            json!({"a": {"type": "null", "x-mcp-header": "Nil"}}),
            json!({"a": {"x-mcp-header": "Untyped"}}),
            json!({"a": {"type": "string", "x-mcp-header": 7}}),
            json!({"a": {"type": "string", "x-mcp-header": "Dup"},
                   "b": {"type": "string", "x-mcp-header": "dUP"}}),
        ] {
            let s = schema(json!({"type": "object", "properties": bad}));
            assert!(declarations(&s).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn encodes_what_cannot_travel_plain() {
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("us west 1"), "us west 1");
        assert_eq!(encode(""), "");
        for text in [" padded ", "Hello, 世界", "a\r\nb", "\tx", "=?base64?x?="] {
            let encoded = encode(text);
            assert!(encoded.starts_with("=?base64?"), "{text:?}");
            assert_eq!(decode(encoded.as_bytes()).as_deref(), Ok(text));
        }
    }

    #[test]
    fn decoding_is_strict_about_base64_only() {
        assert_eq!(decode(b"=?base64?SGVsbG8=?=").as_deref(), Ok("Hello"));
        assert!(decode(b"=?base64?SGVsbG8?=").is_err(), "missing padding");
        assert!(decode(b"=?base64?SGVs!!!bG8=?=").is_err(), "bad alphabet");
        assert!(decode(b"=?base64?/w==?=").is_err(), "not UTF-8");
        assert!(decode(b"\xff").is_err());
        // Without both ends of the sentinel the value is literal.
        assert_eq!(
            decode(b"=?base64?SGVsbG8=").as_deref(),
            Ok("=?base64?SGVsbG8=")
        );
        assert_eq!(decode(b"SGVsbG8=").as_deref(), Ok("SGVsbG8="));
    }

    #[test]
    fn compares_by_value() {
        assert!(matches("42", &json!(42)));
        assert!(matches("042", &json!(42)));
        assert!(!matches("43", &json!(42)));
        assert!(!matches("x", &json!(42)));
        assert!(matches("true", &json!(true)));
        assert!(!matches("1", &json!(true)));
        assert!(matches("eu", &json!("eu")));
        assert!(!matches("EU", &json!("eu")));
        assert!(!matches("{}", &json!({})));
    }

    #[test]
    fn table_mirrors_only_present_primitive_values() {
        let table = ParamHeaderTable::default();
        let s = schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "n": {"type": "integer", "x-mcp-header": "N"}}}));
        table.insert("t", declarations(&s).expect("valid"));
        let headers = table.headers_for("t", &json!({"region": "é", "verbose": null, "n": 9}));
        assert_eq!(
            headers,
            vec![
                ("Mcp-Param-Region".to_owned(), "=?base64?w6k=?=".to_owned()),
                ("Mcp-Param-N".to_owned(), "9".to_owned()),
            ]
        );
        assert!(
            table
                .headers_for("unknown", &json!({"region": "x"}))
                .is_empty()
        );
    }
}
