//! The five protocol revisions and what differs between them.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An MCP protocol revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// The first public revision (HTTP+SSE transport).
    V2024_11_05,
    /// Streamable HTTP, JSON-RPC batches, tool annotations, audio content.
    V2025_03_26,
    /// Structured tool output, elicitation, resource links; batches removed.
    V2025_06_18,
    /// Tasks, URL elicitation, tools in sampling, icons; validation errors as tool results.
    V2025_11_25,
    /// The stateless revision: no handshake, per-request `_meta`, `server/discover`, MRTR.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;
    /// The newest revision negotiated with an `initialize` handshake.
    pub const LATEST_HANDSHAKE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision's date string, as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire string; `None` for revisions we do not know.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether the revision is stateless (no `initialize`, per-request `_meta`).
    pub fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// Whether the revision negotiates with `initialize`.
    pub fn uses_handshake(self) -> bool {
        !self.is_stateless()
    }

    /// Whether JSON-RPC batches are accepted (removed in 2025-06-18).
    pub fn allows_batches(self) -> bool {
        self <= ProtocolVersion::V2025_03_26
    }

    /// Whether tools may declare `outputSchema` and return `structuredContent`.
    pub fn has_structured_content(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Whether results carry `resultType` (and list results `ttlMs`/`cacheScope`).
    pub fn has_result_type(self) -> bool {
        self.is_stateless()
    }

    /// The handshake-era revisions, newest first (the order a server prefers them in).
    pub fn handshake_versions() -> impl Iterator<Item = ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .rev()
            .filter(|v| v.uses_handshake())
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::parse(s).ok_or_else(|| crate::Error::UnsupportedProtocolVersion {
            requested: s.to_owned(),
            supported: ProtocolVersion::ALL
                .iter()
                .map(|v| v.as_str().to_owned())
                .collect(),
        })
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ProtocolVersion::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown protocol version `{s}`")))
    }
}
