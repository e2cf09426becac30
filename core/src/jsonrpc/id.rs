//! Request ids, kept exactly as the peer sent them.
//!
//! `1` and `"1"` are different ids: a response must echo the id's JSON type, and a peer that
//! numbers its requests must never see a string come back. MCP allows integers and strings
//! only (never `null`), so anything else is rejected at decode time.

use std::{fmt, io::Write, sync::Arc};

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

/// A JSON-RPC request id: an integer or a string, never `null`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id, as most clients send.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl RequestId {
    /// Writes the id as JSON into `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            RequestId::Number(n) => {
                // Writing into a Vec cannot fail.
                let _ = write!(out, "{n}");
            }
            RequestId::String(s) => {
                // Serializing a &str into a Vec cannot fail.
                let _ = serde_json::to_writer(out, &**s);
            }
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            RequestId::Number(n) => serde_json::Value::from(*n),
            RequestId::String(s) => serde_json::Value::from(&**s),
        }
    }

    /// Reads an id from a JSON value; `None` for anything MCP does not allow as an id.
    pub fn from_value(value: &serde_json::Value) -> Option<RequestId> {
        match value {
            serde_json::Value::Number(n) => n.as_i64().map(RequestId::Number),
            serde_json::Value::String(s) => Some(RequestId::String(s.as_str().into())),
            _ => None,
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer or string request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("request id does not fit in a 64-bit integer"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<RequestId, E> {
                Err(E::custom(
                    "request id must be an integer or a string, not a fraction",
                ))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.into()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<RequestId, E> {
                Err(E::custom("request id must not be null"))
            }
        }
        d.deserialize_any(V)
    }
}
