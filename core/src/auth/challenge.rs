//! The `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, RFC 9728 §5.1): what a 401 or a
//! 403 tells the client to do next.
//!
//! Both sides use it: the client parses a server's challenge (`resource_metadata`, `scope`,
//! `error`), the resource server writes one. Values are peer data: the parser never panics,
//! caps what it keeps, and ignores other schemes' parameters.

/// A Bearer challenge's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// Where the protected-resource metadata is (RFC 9728).
    pub resource_metadata: Option<String>,
    /// The scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, `invalid_request`.
    pub error: Option<String>,
    /// A human-readable reason.
    pub error_description: Option<String>,
}

/// The longest header value parsed (a peer can send anything).
const MAX_HEADER: usize = 8 * 1024;

impl BearerChallenge {
    /// Parses the Bearer challenge out of a `WWW-Authenticate` value (which may hold several
    /// challenges); `None` when there is no Bearer challenge.
    pub fn parse(header: &str) -> Option<Self> {
        if header.len() > MAX_HEADER {
            return None;
        }
        let mut out = BearerChallenge::default();
        let mut in_bearer = false;
        let mut found = false;
        let mut rest = header.trim();
        while !rest.is_empty() {
            rest = rest.trim_start_matches([',', ' ', '\t']);
            // A token: either a new scheme or a parameter name.
            let end = rest
                .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let token = &rest[..end];
            rest = rest[end..].trim_start_matches([' ', '\t']);
            if token.is_empty() {
                // Stray punctuation: skip one char so the loop always advances.
                let mut chars = rest.chars();
                chars.next();
                rest = chars.as_str();
                continue;
            }
            if let Some(after) = rest.strip_prefix('=') {
                // `name=value` or `name="quoted value"`; a token68 (`abc==`) ends in '='s.
                let after = after.trim_start_matches([' ', '\t']);
                let (value, remaining) = if let Some(q) = after.strip_prefix('"') {
                    parse_quoted(q)
                } else {
                    let end = after.find([',', ' ', '\t']).unwrap_or(after.len());
                    (after[..end].to_owned(), &after[end..])
                };
                rest = remaining;
                if in_bearer {
                    let slot = match token.to_ascii_lowercase().as_str() {
                        "resource_metadata" => &mut out.resource_metadata,
                        "scope" => &mut out.scope,
                        "error" => &mut out.error,
                        "error_description" => &mut out.error_description,
                        _ => continue,
                    };
                    if slot.is_none() {
                        *slot = Some(value);
                    }
                }
            } else {
                in_bearer = token.eq_ignore_ascii_case("bearer");
                found |= in_bearer;
            }
        }
        found.then_some(out)
    }

    /// The scopes named, split on spaces.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref())
    }

    /// Whether this is a step-up request (403 `insufficient_scope`).
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }

    /// The header value for this challenge (the server side).
    pub fn to_header(&self) -> String {
        let mut parts = Vec::new();
        let mut add = |name: &str, value: &Option<String>| {
            if let Some(v) = value {
                parts.push(format!("{name}=\"{}\"", quote(v)));
            }
        };
        add("error", &self.error);
        add("error_description", &self.error_description);
        add("scope", &self.scope);
        add("resource_metadata", &self.resource_metadata);
        if parts.is_empty() {
            "Bearer".into()
        } else {
            format!("Bearer {}", parts.join(", "))
        }
    }
}

/// Space-separated scopes, without duplicates, in order.
pub(crate) fn split_scopes(scope: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scope.unwrap_or_default().split_whitespace() {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    }
    out
}

fn parse_quoted(s: &str) -> (String, &str) {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (value, &s[i + 1..]),
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            c if c.is_control() => {}
            c => value.push(c),
        }
    }
    (value, "")
}

/// Escapes a value for a quoted-string, dropping control characters (no header injection).
fn quote(v: &str) -> String {
    v.chars()
        .filter(|c| !c.is_control())
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_parameters_of_a_bearer_challenge() {
        let c = BearerChallenge::parse(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error_description="say \"hi\"""#,
        )
        .unwrap();
        assert_eq!(c.scopes(), vec!["a", "b"]);
        assert!(c.insufficient_scope());
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.error_description.as_deref(), Some("say \"hi\""));
    }

    #[test]
    fn finds_bearer_among_other_schemes_and_ignores_their_parameters() {
        let c =
            BearerChallenge::parse(r#"Basic realm="x", scope="wrong", Bearer scope=read"#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("read"));
        assert!(BearerChallenge::parse(r#"Basic realm="x""#).is_none());
        assert_eq!(
            BearerChallenge::parse("Bearer"),
            Some(BearerChallenge::default())
        );
    }

    #[test]
    fn hostile_values_do_not_panic() {
        for h in [
            "",
            "=",
            "Bearer =\"",
            "Bearer scope=\"unterminated",
            ",,,, ,",
            "Bearer a=b=c, ==",
            "Bearer \u{0}\u{1}=\"\\",
            &"Bearer x=".repeat(2000),
        ] {
            let _ = BearerChallenge::parse(h);
        }
    }

    #[test]
    fn writes_a_header_that_parses_back() {
        let c = BearerChallenge {
            error: Some("insufficient_scope".into()),
            scope: Some("a \"b\"\r\nX-Evil: 1".into()),
            resource_metadata: Some("https://r/.well-known/oauth-protected-resource".into()),
            error_description: None,
        };
        let h = c.to_header();
        assert!(!h.contains('\r') && !h.contains('\n'));
        let back = BearerChallenge::parse(&h).unwrap();
        assert_eq!(back.scope.as_deref(), Some("a \"b\"X-Evil: 1"));
        assert_eq!(back.error, c.error);
    }
}
