//! RFC 6570 URI templates, matched against URIs in linear time.
//!
//! A server routes `resources/read` by matching the requested URI against its templates, and
//! that URI comes from the peer. Regex-based matchers backtrack: the TypeScript SDK's
//! generated regex for `{/id*}` pinned a CPU on one hostile URI (CVE-2026-0621). This matcher
//! walks the URI once, left to right: each expression's text ends at the first character its
//! operator does not allow or at the first occurrence of the literal that follows it
//! (found with a linear-time substring search), so there is never anything to backtrack over.
//!
//! All four levels are understood: simple `{x}`, reserved `{+x}`, fragment `{#x}`, label
//! `{.x}`, path segments `{/x}`, path parameters `{;x}`, query `{?x,y}` and continuation
//! `{&x}`, with prefix (`{x:3}`) and explode (`{x*}`) modifiers.

use memchr::memmem;
use serde_json::Value;

use crate::{Error, protocol::JsonObject};

/// Longest template accepted.
pub const MAX_TEMPLATE_LEN: usize = 8192;
/// Most variables in one template.
pub const MAX_VARIABLES: usize = 256;
/// Longest URI a template is matched against; longer ones never match.
pub const MAX_URI_LEN: usize = 65_536;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn from_char(c: char) -> Option<Op> {
        Some(match c {
            '+' => Op::Reserved,
            '#' => Op::Fragment,
            '.' => Op::Label,
            '/' => Op::Path,
            ';' => Op::PathParam,
            '?' => Op::Query,
            '&' => Op::QueryCont,
            _ => return None,
        })
    }

    /// The character an expansion starts with, if any.
    fn first(self) -> Option<u8> {
        match self {
            Op::Simple | Op::Reserved => None,
            Op::Fragment => Some(b'#'),
            Op::Label => Some(b'.'),
            Op::Path => Some(b'/'),
            Op::PathParam => Some(b';'),
            Op::Query => Some(b'?'),
            Op::QueryCont => Some(b'&'),
        }
    }

    fn separator(self) -> u8 {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => b',',
            Op::Label => b'.',
            Op::Path => b'/',
            Op::PathParam => b';',
            Op::Query | Op::QueryCont => b'&',
        }
    }

    fn named(self) -> bool {
        matches!(self, Op::PathParam | Op::Query | Op::QueryCont)
    }

    /// Whether `b` can appear inside this expression's expansion.
    fn allows(self, b: u8) -> bool {
        let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%');
        match self {
            Op::Reserved | Op::Fragment => unreserved || b"!$&'()*+,;=:/?#[]@".contains(&b),
            // The separators of multi-variable and exploded expansions.
            Op::Simple => unreserved || b == b',',
            Op::Label => unreserved,
            Op::Path => unreserved || b == b'/' || b == b',',
            Op::PathParam => unreserved || b == b';' || b == b'=' || b == b',',
            Op::Query | Op::QueryCont => unreserved || b == b'&' || b == b'=' || b == b',',
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct VarSpec {
    name: String,
    prefix: Option<usize>,
    explode: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr(Op, Vec<VarSpec>),
}

/// A parsed URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a template, refusing malformed ones and ones over the size caps.
    pub fn parse(template: &str) -> Result<UriTemplate, Error> {
        let bad =
            |why: &str| Error::InvalidArgument(format!("invalid URI template `{template}`: {why}"));
        if template.len() > MAX_TEMPLATE_LEN {
            return Err(bad(&format!("longer than {MAX_TEMPLATE_LEN} characters")));
        }
        let mut parts = Vec::new();
        let mut rest = template;
        let mut variables = 0usize;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let close = rest.find('}').ok_or_else(|| bad("unclosed `{`"))?;
                    let body = &rest[1..close];
                    let (op, list) = match body.chars().next().and_then(Op::from_char) {
                        Some(op) => (op, &body[1..]),
                        None => (Op::Simple, body),
                    };
                    let mut vars = Vec::new();
                    for spec in list.split(',') {
                        let (name, explode, prefix) = if let Some(n) = spec.strip_suffix('*') {
                            (n, true, None)
                        } else if let Some((n, len)) = spec.split_once(':') {
                            let len: usize = len.parse().map_err(|_| bad("bad prefix length"))?;
                            if len == 0 || len >= 10_000 {
                                return Err(bad("prefix length must be 1-9999"));
                            }
                            (n, false, Some(len))
                        } else {
                            (spec, false, None)
                        };
                        let valid = !name.is_empty()
                            && name.bytes().all(|b| {
                                b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'%')
                            });
                        if !valid {
                            return Err(bad(&format!("bad variable name `{name}`")));
                        }
                        vars.push(VarSpec {
                            name: name.to_owned(),
                            prefix,
                            explode,
                        });
                    }
                    variables += vars.len();
                    if variables > MAX_VARIABLES {
                        return Err(bad(&format!("more than {MAX_VARIABLES} variables")));
                    }
                    parts.push(Part::Expr(op, vars));
                    rest = &rest[close + 1..];
                }
                Some(i) => {
                    if rest[..i].contains('}') {
                        return Err(bad("unmatched `}`"));
                    }
                    parts.push(Part::Literal(rest[..i].to_owned()));
                    rest = &rest[i..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(bad("unmatched `}`"));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the template's variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().flat_map(|p| match p {
            Part::Expr(_, vars) => vars.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            Part::Literal(_) => Vec::new(),
        })
    }

    /// Matches `uri`, returning each variable's (percent-decoded) value: a string, or an array
    /// of strings for an exploded variable. Variables absent from the URI are left out.
    pub fn matches(&self, uri: &str) -> Option<JsonObject> {
        if uri.len() > MAX_URI_LEN {
            return None;
        }
        let bytes = uri.as_bytes();
        let mut pos = 0usize;
        let mut out = JsonObject::new();
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(lit) => {
                    if !bytes[pos..].starts_with(lit.as_bytes()) {
                        return None;
                    }
                    pos += lit.len();
                }
                Part::Expr(op, vars) => {
                    let next_literal = match self.parts.get(i + 1) {
                        Some(Part::Literal(l)) => Some(l.as_bytes()),
                        _ => None,
                    };
                    let mut end = region_end(*op, &bytes[pos..], next_literal) + pos;
                    if op.named() {
                        // Stop before the first `name=value` item that is not this
                        // expression's: it belongs to the next one (`{?q}{&page}`).
                        end = pos + own_items_len(*op, vars, &uri[pos..end]);
                    }
                    bind(*op, vars, &uri[pos..end], &mut out)?;
                    pos = end;
                }
            }
        }
        (pos == bytes.len()).then_some(out)
    }
}

/// Where an expression's text ends: the first byte the operator does not allow, or the first
/// occurrence of the following literal, whichever comes first.
fn region_end(op: Op, rest: &[u8], next_literal: Option<&[u8]>) -> usize {
    // Operators with a leading character expand to nothing when it is absent.
    let start = match op.first() {
        Some(first) if rest.first() == Some(&first) => 1,
        Some(_) => return 0,
        None => 0,
    };
    let mut end = rest[start..]
        .iter()
        .position(|&b| !op.allows(b))
        .map_or(rest.len(), |i| i + start);
    if let Some(lit) = next_literal.filter(|l| !l.is_empty())
        && let Some(found) = memmem::find(&rest[start..end], lit)
    {
        end = found + start;
    }
    end
}

/// How much of a named expression's text holds items named after its own variables (all of
/// it when a variable is exploded, since an exploded map takes any name).
fn own_items_len(op: Op, vars: &[VarSpec], text: &str) -> usize {
    if text.is_empty() || vars.iter().any(|v| v.explode) {
        return text.len();
    }
    let sep = op.separator();
    let mut len = 1; // the leading character
    for (i, item) in text[1..].split(sep as char).enumerate() {
        let name = item.split_once('=').map_or(item, |(n, _)| n);
        if !vars.iter().any(|v| v.name == name) {
            // Leave the separator for the next expression to start with.
            return if i == 0 { 0 } else { len - 1 };
        }
        len += item.len() + 1;
    }
    text.len()
}

/// Binds the text of one expression to its variables.
fn bind(op: Op, vars: &[VarSpec], text: &str, out: &mut JsonObject) -> Option<()> {
    if text.is_empty() {
        return Some(());
    }
    let body = match op.first() {
        Some(_) => &text[1..],
        None => text,
    };
    let sep = op.separator() as char;
    let items: Vec<&str> = body.split(sep).collect();
    if op.named() {
        for item in items {
            let (name, value) = item.split_once('=').unwrap_or((item, ""));
            let name = decode(name)?;
            let Some(var) = vars.iter().find(|v| v.name == name) else {
                // An exploded map-like variable takes unknown keys as a whole.
                if let Some(v) = vars.iter().find(|v| v.explode) {
                    push_list(out, &v.name, format!("{name}={}", decode(value)?));
                    continue;
                }
                return None;
            };
            let value = decode(value)?;
            if var.explode {
                push_list(out, &var.name, value);
            } else {
                check_prefix(var, &value)?;
                out.insert(var.name.clone(), Value::String(value));
            }
        }
        return Some(());
    }
    let mut items = items.into_iter();
    for var in vars {
        if var.explode {
            let rest: Vec<Value> = items
                .by_ref()
                .map(|s| decode(s).map(Value::String))
                .collect::<Option<_>>()?;
            out.insert(var.name.clone(), Value::Array(rest));
            break;
        }
        let Some(item) = items.next() else { break };
        let value = decode(item)?;
        check_prefix(var, &value)?;
        out.insert(var.name.clone(), Value::String(value));
    }
    // Left-over items with no variable to hold them: not this template.
    items.next().is_none().then_some(())
}

fn push_list(out: &mut JsonObject, name: &str, value: String) {
    let entry = out
        .entry(name.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(items) = entry {
        items.push(Value::String(value));
    }
}

fn check_prefix(var: &VarSpec, value: &str) -> Option<()> {
    match var.prefix {
        Some(max) if value.chars().count() > max => None,
        _ => Some(()),
    }
}

/// Percent-decodes; `None` for malformed escapes or a result that is not UTF-8.
fn decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn m(template: &str, uri: &str) -> Option<Value> {
        UriTemplate::parse(template)
            .unwrap()
            .matches(uri)
            .map(Value::Object)
    }

    #[test]
    fn simple_variables() {
        assert_eq!(
            m("test://template/{id}/data", "test://template/42/data"),
            Some(json!({"id": "42"}))
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template/4/2/data"),
            None
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template/42/data/x"),
            None
        );
        assert_eq!(
            m("weather://{city}/current", "weather://New%20York/current"),
            Some(json!({"city": "New York"}))
        );
        assert_eq!(
            m("x://{a}-{b}", "x://1-2"),
            Some(json!({"a": "1", "b": "2"}))
        );
        assert_eq!(m("x://{a,b}", "x://1,2"), Some(json!({"a": "1", "b": "2"})));
        assert_eq!(m("x://{a}", "x://%zz"), None);
    }

    #[test]
    fn operators() {
        assert_eq!(
            m("file:///{+path}", "file:///a/b/c.txt"),
            Some(json!({"path": "a/b/c.txt"}))
        );
        assert_eq!(
            m("x://h{/seg*}", "x://h/a/b/c"),
            Some(json!({"seg": ["a", "b", "c"]}))
        );
        assert_eq!(
            m("x://h{/a,b}", "x://h/1/2"),
            Some(json!({"a": "1", "b": "2"}))
        );
        assert_eq!(
            m("x://s{?q,lang}", "x://s?q=rust&lang=en"),
            Some(json!({"q": "rust", "lang": "en"}))
        );
        assert_eq!(m("x://s{?q}", "x://s"), Some(json!({})));
        assert_eq!(
            m("x://s{?q}{&page}", "x://s?q=a&page=2"),
            Some(json!({"q": "a", "page": "2"}))
        );
        assert_eq!(
            m("x://s{?tags*}", "x://s?tags=a&tags=b"),
            Some(json!({"tags": ["a", "b"]}))
        );
        assert_eq!(m("x://f{.ext}", "x://f.json"), Some(json!({"ext": "json"})));
        assert_eq!(m("x://p{;v}", "x://p;v=1"), Some(json!({"v": "1"})));
        assert_eq!(
            m("x://d{#frag}", "x://d#sec/1"),
            Some(json!({"frag": "sec/1"}))
        );
        assert_eq!(m("x://{code:2}", "x://ab"), Some(json!({"code": "ab"})));
        assert_eq!(m("x://{code:2}", "x://abc"), None);
    }

    #[test]
    fn malformed_templates_are_refused() {
        for t in [
            "x://{",
            "x://}",
            "x://{}",
            "x://{a b}",
            "x://{a:0}",
            "x://{a:x}",
        ] {
            assert!(UriTemplate::parse(t).is_err(), "{t}");
        }
        assert!(UriTemplate::parse(&"a".repeat(MAX_TEMPLATE_LEN + 1)).is_err());
        let many: String = (0..=MAX_VARIABLES).map(|i| format!("{{v{i}}}")).collect();
        assert!(UriTemplate::parse(&many).is_err());
    }

    #[test]
    fn hostile_uris_are_linear() {
        // The shapes that made backtracking matchers explode, at the 64 KiB URI cap.
        let cases = [
            ("x://h{/id*}", format!("x://h/{}!", "a,".repeat(32_000))),
            (
                "x://s{?tags*}",
                format!("x://s?{}!", "tags=a&".repeat(9_000)),
            ),
            (
                "x://s{?q}{&x*}",
                format!("x://s?q=1{}!", "&x=a".repeat(16_000)),
            ),
            ("x://{a}{b}{c}/z", format!("x://{}", "a".repeat(65_000))),
        ];
        for (template, uri) in cases {
            let t = UriTemplate::parse(template).unwrap();
            assert!(uri.len() <= MAX_URI_LEN, "{}", uri.len());
            assert_eq!(t.matches(&uri), None, "{template}");
        }
        let t = UriTemplate::parse("x://{a}").unwrap();
        assert_eq!(t.matches(&format!("x://{}", "a".repeat(MAX_URI_LEN))), None);
    }
}
