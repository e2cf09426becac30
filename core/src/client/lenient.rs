//! Lists that survive a bad entry: a tool, resource, template or prompt that does not parse
//! is left out of its page and reported (which list, its name, the field, why), and the
//! rest of the page still works. One server's malformed tool (an `inputSchema` that is not
//! an object, say) must not hide all its other tools, as it would if the page were decoded
//! in one piece.
//!
//! One common slip is repaired rather than skipped: a tool whose schema is spelled
//! `input_schema` (as some documentation's own example has it) is read as `inputSchema`, with
//! a warning.

use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};

use crate::{Error, Result};

/// An entry of a list that did not parse as it came: left out (`skipped`) or, for a slip the
/// client repairs, kept (`repaired`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EntryIssue {
    /// The list: `tools`, `resources`, `resourceTemplates` or `prompts`.
    pub list: &'static str,
    /// The entry's name (or URI), when it has a readable one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The field at fault (`(entry)` when the entry as a whole is).
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

/// The fields each list's entries are named by.
fn name_of(list: &str, entry: &Map<String, Value>) -> Option<String> {
    let key = match list {
        "resources" => "uri",
        "resourceTemplates" => "uriTemplate",
        _ => "name",
    };
    entry.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Checks and repairs what a decode error would not name: the fields every list needs.
/// `Ok(Some(issue))` when it repaired a slip.
fn precheck(
    list: &str,
    entry: &mut Map<String, Value>,
) -> std::result::Result<Option<(String, String)>, (String, String)> {
    let name = if list == "resources" { "uri" } else { "name" };
    let name = if list == "resourceTemplates" {
        "uriTemplate"
    } else {
        name
    };
    if !entry.get(name).is_some_and(Value::is_string) {
        return Err((name.to_owned(), "missing, or not a string".into()));
    }
    let mut repaired = None;
    if list == "tools" {
        if !entry.contains_key("inputSchema")
            && let Some(schema) = entry.remove("input_schema")
        {
            entry.insert("inputSchema".into(), schema);
            repaired = Some((
                "input_schema".to_owned(),
                "spelled `input_schema`; read as `inputSchema`".to_owned(),
            ));
        }
        match entry.get("inputSchema") {
            Some(Value::Object(_)) => {}
            None => return Err(("inputSchema".into(), "missing".into())),
            Some(other) => {
                return Err((
                    "inputSchema".into(),
                    format!("must be a JSON Schema object, not `{}`", kind(other)),
                ));
            }
        }
    }
    Ok(repaired)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The field a decode error is about: the one it names (a missing or unknown field), else
/// the top-level field without which the entry decodes or misses only that field (a type
/// error names none; entries are small and this runs only for a bad one), else `(entry)`.
fn field_at_fault<I: DeserializeOwned>(message: &str, entry: &Map<String, Value>) -> String {
    if (message.starts_with("missing field") || message.starts_with("unknown field"))
        && let Some(field) = message.split('`').nth(1)
    {
        return field.to_owned();
    }
    // Without the culprit the entry decodes, or fails only because that (required) field is
    // now missing.
    entry
        .keys()
        .find(|key| {
            let mut without = entry.clone();
            without.remove(*key);
            match serde_json::from_value::<I>(Value::Object(without)) {
                Ok(_) => true,
                Err(e) => e.to_string().starts_with(&format!("missing field `{key}`")),
            }
        })
        .cloned()
        .unwrap_or_else(|| "(entry)".to_owned())
}

/// Decodes one page of a list method, leaving out the entries of `list` (a key of the page)
/// that do not decode as `I`, and saying which.
pub(crate) fn decode_page<P: DeserializeOwned, I: DeserializeOwned>(
    method: &str,
    list: &'static str,
    mut page: Value,
) -> Result<Decoded<P>> {
    let mut skipped = Vec::new();
    let mut repaired = Vec::new();
    if let Some(Value::Array(entries)) = page.get_mut(list) {
        let mut kept = Vec::with_capacity(entries.len());
        for entry in entries.drain(..) {
            let Value::Object(mut map) = entry else {
                skipped.push(EntryIssue {
                    list,
                    name: None,
                    field: "(entry)".into(),
                    reason: format!("must be an object, not {}", kind(&entry)),
                });
                continue;
            };
            let name = name_of(list, &map);
            let issue = |(field, reason): (String, String)| EntryIssue {
                list,
                name: name.clone(),
                field,
                reason,
            };
            match precheck(list, &mut map) {
                Err(why) => {
                    skipped.push(issue(why));
                    continue;
                }
                Ok(Some(repair)) => repaired.push(issue(repair)),
                Ok(None) => {}
            }
            match serde_json::from_value::<I>(Value::Object(map.clone())) {
                Ok(_) => kept.push(Value::Object(map)),
                Err(e) => {
                    let message = e.to_string();
                    skipped.push(issue((field_at_fault::<I>(&message, &map), message)));
                }
            }
        }
        *entries = kept;
    }
    for s in &skipped {
        tracing::warn!(
            list = s.list,
            name = s.name.as_deref().unwrap_or("?"),
            field = %s.field,
            "left out an entry that does not parse: {}",
            s.reason
        );
    }
    for r in &repaired {
        tracing::warn!(
            list = r.list,
            name = r.name.as_deref().unwrap_or("?"),
            "{}",
            r.reason
        );
    }
    let page = serde_json::from_value(page)
        .map_err(|e| Error::Protocol(format!("invalid `{method}` result: {e}")))?;
    Ok(Decoded {
        page,
        skipped,
        repaired,
    })
}

/// A decoded page and what it left out or repaired.
pub(crate) struct Decoded<P> {
    pub page: P,
    pub skipped: Vec<EntryIssue>,
    pub repaired: Vec<EntryIssue>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{ListToolsResult, Tool};

    #[test]
    fn a_bad_tool_is_left_out_and_named_and_the_rest_survive() {
        let page = json!({"tools": [
            {"name": "good", "inputSchema": {"type": "object"}},
            {"name": "string_schema", "inputSchema": "object"},
            {"name": "snake", "input_schema": {"type": "object"}},
            {"name": "no_schema"},
            {"inputSchema": {"type": "object"}},
            {"name": "bad_output", "inputSchema": {"type": "object"}, "outputSchema": 7},
            "not an object"
        ], "nextCursor": "n"});
        let decoded: Decoded<ListToolsResult> =
            decode_page::<_, Tool>("tools/list", "tools", page).unwrap();
        let (page, skipped) = (decoded.page, decoded.skipped);
        let names: Vec<&str> = page.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["good", "snake"]);
        assert_eq!(page.next_cursor.as_deref(), Some("n"));
        let why: Vec<(Option<&str>, &str)> = skipped
            .iter()
            .map(|s| (s.name.as_deref(), s.field.as_str()))
            .collect();
        assert_eq!(
            why,
            [
                (Some("string_schema"), "inputSchema"),
                (Some("no_schema"), "inputSchema"),
                (None, "name"),
                (Some("bad_output"), "outputSchema"),
                (None, "(entry)"),
            ]
        );
        assert!(skipped[0].reason.contains("not `a string`"), "{skipped:?}");
        let repaired: Vec<(Option<&str>, &str)> = decoded
            .repaired
            .iter()
            .map(|r| (r.name.as_deref(), r.field.as_str()))
            .collect();
        assert_eq!(repaired, [(Some("snake"), "input_schema")]);
    }

    #[test]
    fn bad_resources_and_prompts_are_named_by_uri_and_name() {
        let page = json!({"resources": [
            {"uri": "file:///a", "name": "a"},
            {"uri": "file:///b", "name": 5},
            {"name": "no uri"}
        ]});
        let decoded: Decoded<crate::protocol::ListResourcesResult> =
            decode_page::<_, crate::protocol::Resource>("resources/list", "resources", page)
                .unwrap();
        assert_eq!(decoded.page.resources.len(), 1);
        let why: Vec<(Option<&str>, &str)> = decoded
            .skipped
            .iter()
            .map(|s| (s.name.as_deref(), s.field.as_str()))
            .collect();
        assert_eq!(why, [(Some("file:///b"), "name"), (None, "uri")]);
        let page = json!({"prompts": [{"name": "p", "arguments": "x"}, {"name": "q"}]});
        let decoded: Decoded<crate::protocol::ListPromptsResult> =
            decode_page::<_, crate::protocol::Prompt>("prompts/list", "prompts", page).unwrap();
        assert_eq!(decoded.page.prompts.len(), 1);
        assert_eq!(decoded.skipped[0].field, "arguments");
    }

    #[test]
    fn a_page_that_is_not_a_page_is_still_an_error() {
        assert!(decode_page::<ListToolsResult, Tool>("tools/list", "tools", json!([1])).is_err());
        assert!(
            decode_page::<ListToolsResult, Tool>("tools/list", "tools", json!({"tools": 3}))
                .is_err()
        );
    }
}
