//! Keywords a provider cannot take are moved into the schema's `description`, never dropped.
//!
//! A model still reads descriptions, so a `minLength`, an unsupported `format` or a `default`
//! that a provider's schema dialect rejects keeps reaching the model as text. Each move is
//! also reported as a [`Note`], so a caller (and the golden tests' checker) can prove that no
//! constraint was lost silently.

use serde::Serialize;
use serde_json::{Map, Value};

/// One keyword moved out of a schema into its description.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Note {
    /// JSON pointer of the schema in the translated output that carries the note.
    pub path: String,
    /// The keyword that was moved.
    pub keyword: String,
    /// Its value in the source schema.
    pub value: Value,
}

impl Note {
    /// The text put into the description: `keyword: value`.
    pub fn text(&self) -> String {
        format!("{}: {}", self.keyword, compact(&self.value))
    }
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Removes `keywords` from `schema` (those present), appending them to its description and
/// to `notes`.
pub fn move_to_description(
    schema: &mut Map<String, Value>,
    keywords: &[String],
    path: &str,
    notes: &mut Vec<Note>,
) {
    let mut moved = Vec::new();
    for key in keywords {
        if let Some(value) = schema.remove(key) {
            let note = Note {
                path: path.to_owned(),
                keyword: key.clone(),
                value,
            };
            moved.push(note.text());
            notes.push(note);
        }
    }
    if moved.is_empty() {
        return;
    }
    let extra = format!("(JSON Schema: {}.)", moved.join("; "));
    let description = match schema.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{}\n{extra}", d.trim_end()),
        _ => extra,
    };
    schema.insert("description".into(), Value::String(description));
}
