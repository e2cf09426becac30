//! Tool names as each provider accepts them, namespaced per server, with the way back.
//!
//! OpenAI, the Responses API and Anthropic take `^[a-zA-Z0-9_-]{1,64}$`; Gemini also takes `.`
//! and `:` but must start with a letter or `_`. MCP names may be longer and contain other
//! characters, and two servers often both have `search` or `get_weather`: a host that lets
//! the later one overwrite the earlier (langchain-mcp-adapters #18, #202) calls the wrong
//! server. [`NameMap`] gives every (server, tool) pair a distinct provider name, `server__tool`
//! by default, sanitised and shortened with a stable hash when needed, and maps it back.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

/// Longest name any supported provider accepts.
pub const MAX_NAME_LEN: usize = 64;

/// A provider's naming rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRules {
    /// `[a-zA-Z0-9_-]`, at most 64 (OpenAI, Responses, Anthropic, LangChain).
    Strict,
    /// `[a-zA-Z0-9_.:-]`, at most 64, starting with a letter or `_` (Gemini).
    Gemini,
}

/// Which names get the server prefix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Namespace {
    /// Every tool is `server__tool` (predictable; the default).
    #[default]
    Always,
    /// Only tools whose name another server also uses (single-server hosts keep plain names).
    OnCollision,
    /// Never prefix; a colliding name gets a hash suffix instead.
    Never,
}

impl Namespace {
    /// Every mode, in the order the help texts list them.
    pub const ALL: [Namespace; 3] = [Namespace::Always, Namespace::OnCollision, Namespace::Never];

    /// The mode's stable name (`always`, `collision`, `never`), as the CLI and both bindings
    /// spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Namespace::Always => "always",
            Namespace::OnCollision => "collision",
            Namespace::Never => "never",
        }
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A namespace mode that is not one of [`Namespace::ALL`]; the message lists the accepted
/// names, so the CLI and both bindings give the same guidance.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown namespace `{given}` (one of: {})",
    Namespace::ALL.map(Namespace::as_str).join(", ")
)]
pub struct UnknownNamespace {
    /// What was given.
    pub given: String,
}

impl From<UnknownNamespace> for crate::Error {
    fn from(e: UnknownNamespace) -> Self {
        crate::Error::InvalidArgument(e.to_string())
    }
}

impl std::str::FromStr for Namespace {
    type Err = UnknownNamespace;

    /// Parses [`Namespace::as_str`], exactly (no case folding: the names are documented
    /// lower-case, and a second spelling would be one more thing to keep in step).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Namespace::ALL
            .into_iter()
            .find(|n| n.as_str() == s)
            .ok_or_else(|| UnknownNamespace {
                given: s.to_owned(),
            })
    }
}

/// Makes `name` valid under `rules` (invalid characters become `_`, too long gets cut with a
/// hash of the whole name, so different long names stay different).
pub fn sanitize(name: &str, rules: NameRules) -> String {
    let ok = |c: char| {
        c.is_ascii_alphanumeric()
            || c == '_'
            || c == '-'
            || (rules == NameRules::Gemini && (c == '.' || c == ':'))
    };
    let mut out: String = name.chars().map(|c| if ok(c) { c } else { '_' }).collect();
    if out.is_empty() {
        out.push('_');
    }
    if rules == NameRules::Gemini && !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
    {
        out.insert(0, '_');
    }
    if out != name || out.len() > MAX_NAME_LEN {
        // A changed name carries a hash of the original, so `a.b` and `a_b` stay apart.
        let hash = format!("{:08x}", fnv1a(name.as_bytes()) as u32);
        out.truncate(MAX_NAME_LEN - 9);
        out.push('_');
        out.push_str(&hash);
    }
    out
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Where a provider-facing tool name leads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolRef {
    /// The server's name in the config.
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
}

/// Provider names for (server, tool) pairs, both ways.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(transparent)]
pub struct NameMap {
    reverse: BTreeMap<String, ToolRef>,
    #[serde(skip)]
    forward: BTreeMap<(String, String), String>,
}

impl NameMap {
    /// Assigns names to `entries` (in order; the first of two equal names keeps the plain
    /// form when namespacing is off).
    pub fn assign(entries: &[(String, String)], rules: NameRules, namespace: Namespace) -> Self {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, tool) in entries {
            *counts.entry(tool.as_str()).or_default() += 1;
        }
        let mut map = NameMap::default();
        let mut taken = HashSet::new();
        for (server, tool) in entries {
            if map.forward.contains_key(&(server.clone(), tool.clone())) {
                continue;
            }
            let prefixed = match namespace {
                Namespace::Always => true,
                Namespace::OnCollision => counts.get(tool.as_str()).copied().unwrap_or(0) > 1,
                Namespace::Never => false,
            };
            let raw = if prefixed {
                format!("{server}__{tool}")
            } else {
                tool.clone()
            };
            let mut name = sanitize(&raw, rules);
            if taken.contains(&name) {
                let hash = format!(
                    "{:08x}",
                    fnv1a(format!("{server}\0{tool}").as_bytes()) as u32
                );
                name.truncate(MAX_NAME_LEN - 9);
                name.push('_');
                name.push_str(&hash);
                let mut n = 2;
                while taken.contains(&name) {
                    name.truncate(MAX_NAME_LEN - 12);
                    name.push_str(&format!("_{n:02}"));
                    n += 1;
                }
            }
            taken.insert(name.clone());
            map.forward
                .insert((server.clone(), tool.clone()), name.clone());
            map.reverse.insert(
                name,
                ToolRef {
                    server: server.clone(),
                    tool: tool.clone(),
                },
            );
        }
        map
    }

    /// The provider name of a server's tool.
    pub fn name_of(&self, server: &str, tool: &str) -> Option<&str> {
        self.forward
            .get(&(server.to_owned(), tool.to_owned()))
            .map(String::as_str)
    }

    /// The server and tool a provider name stands for.
    pub fn resolve(&self, name: &str) -> Option<&ToolRef> {
        self.reverse.get(name)
    }

    /// Every provider name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.reverse.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_parses_back_from_its_name() {
        for mode in Namespace::ALL {
            assert_eq!(mode.as_str().parse::<Namespace>(), Ok(mode));
            assert_eq!(mode.to_string(), mode.as_str());
        }
        assert_eq!("collision".parse(), Ok(Namespace::OnCollision));
    }

    #[test]
    fn an_unknown_mode_is_refused_with_the_accepted_names() {
        for bad in ["sometimes", "", "Always", " never", "on_collision"] {
            let e = bad.parse::<Namespace>().unwrap_err();
            assert_eq!(e.given, bad);
            assert_eq!(
                e.to_string(),
                format!("unknown namespace `{bad}` (one of: always, collision, never)")
            );
        }
        let core: crate::Error = "sometimes".parse::<Namespace>().unwrap_err().into();
        assert_eq!(core.kind(), crate::ErrorKind::InvalidArgument);
    }
}
