//! Claims as a binding's token verifier returns them: a JSON object, read the same way for
//! Python (`def verify(token) -> dict | None`) and JavaScript (`async (token) => object |
//! null`), so a verifier written in either language means the same thing.
//!
//! The names may be snake_case (`client_id`, `expires_at`), camelCase (`clientId`,
//! `expiresAt`) or the JWT claim names (`sub`, `scope`, `aud`, `exp`), so a decoded JWT
//! payload can be returned as it is. Scopes may be a list or one space-separated string (as
//! OAuth writes them); the audience a string or a list. Other keys are ignored. `null` or
//! `false` means "not a token I know".

use serde::Deserialize;
use serde_json::Value;

use super::AccessClaims;
use crate::Error;

#[derive(Deserialize)]
struct Claims {
    #[serde(default, alias = "sub")]
    subject: Option<String>,
    #[serde(default, alias = "clientId")]
    client_id: Option<String>,
    #[serde(default, alias = "scope")]
    scopes: OneOrMany,
    #[serde(default, alias = "aud")]
    audience: OneOrMany,
    /// Seconds since the Unix epoch (a JavaScript number may carry a fraction).
    #[serde(default, alias = "expiresAt", alias = "exp")]
    expires_at: Option<f64>,
}

/// A list, or one string.
#[derive(Deserialize, Default)]
#[serde(untagged)]
enum OneOrMany {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self, split: bool) -> Vec<String> {
        match self {
            OneOrMany::None => Vec::new(),
            OneOrMany::One(s) if split => s.split_whitespace().map(str::to_owned).collect(),
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

impl AccessClaims {
    /// Reads what a binding's verifier returned (see the module doc). Anything else is an
    /// [`Error::Auth`]: the request gets a 401, never the server an error.
    pub fn from_verifier(value: Value) -> Result<AccessClaims, Error> {
        if value.is_null() || value == Value::Bool(false) {
            return Err(Error::Auth("the verifier did not accept the token".into()));
        }
        let claims: Claims = serde_json::from_value(value).map_err(|e| {
            Error::Auth(format!(
                "the verifier returned unusable claims (expected an object with subject, \
                 client_id, scopes, audience, expires_at): {e}"
            ))
        })?;
        let expires_at = match claims.expires_at {
            None => None,
            Some(at) if at.is_finite() && at >= 0.0 => Some(at as u64),
            Some(_) => {
                return Err(Error::Auth(
                    "the verifier returned an invalid expiry (seconds since 1970)".into(),
                ));
            }
        };
        Ok(AccessClaims {
            subject: claims.subject,
            client_id: claims.client_id,
            scopes: claims.scopes.into_vec(true),
            audience: claims.audience.into_vec(false),
            expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_spelling_means_the_same_claims() {
        let want = AccessClaims {
            subject: Some("ada".into()),
            client_id: Some("cli".into()),
            scopes: vec!["a".into(), "b".into()],
            audience: vec!["https://mcp.example/mcp".into()],
            expires_at: Some(2_000_000_000),
        };
        for v in [
            json!({"subject": "ada", "client_id": "cli", "scopes": ["a", "b"],
                   "audience": "https://mcp.example/mcp", "expires_at": 2_000_000_000}),
            json!({"subject": "ada", "clientId": "cli", "scopes": "a b",
                   "audience": ["https://mcp.example/mcp"], "expiresAt": 2_000_000_000.5}),
            json!({"sub": "ada", "client_id": "cli", "scope": "a  b", "iss": "https://as",
                   "aud": "https://mcp.example/mcp", "exp": 2_000_000_000, "jti": "x"}),
        ] {
            assert_eq!(AccessClaims::from_verifier(v.clone()).unwrap(), want, "{v}");
        }
    }

    #[test]
    fn anything_else_is_an_auth_error() {
        for v in [
            json!(null),
            json!(false),
            json!(42),
            json!("ada"),
            json!([1]),
            json!({"scopes": 7}),
            json!({"expires_at": -1}),
            json!({"expiresAt": "tomorrow"}),
        ] {
            let e = AccessClaims::from_verifier(v.clone()).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Auth, "{v}");
        }
    }
}
