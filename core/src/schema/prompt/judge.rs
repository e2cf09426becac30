//! Judging one call found in a reply: a call to make, or an error the model can act on.
//!
//! Nothing is guessed: a name no tool has is not matched to the nearest one, arguments that
//! fail the schema are not cast or trimmed into shape. The one thing read twice is arguments
//! sent as a JSON string (`"arguments": "{\"path\": …}"`), a habit of models trained on
//! OpenAI's wire format; the string must then hold an object. Each message has fixed wording
//! (tests and models both rely on it), names the call and the tool, and restates how a call
//! is written in the format when the mistake was in the writing.

use serde_json::{Map, Value};

use super::{
    Catalog, FormatError, FormatErrorKind, PromptCall, PromptFormat,
    scan::{Malformation, RawCall},
};
use crate::schema::{SchemaValidator, ToolCall};

/// The longest piece of the model's own text quoted back in a message.
const MAX_ECHO: usize = 200;

/// Judges the `index`-th call (1-based) of a reply.
pub(super) fn judge(
    format: PromptFormat,
    index: usize,
    raw: RawCall,
    catalog: &dyn Catalog,
) -> PromptCall {
    let error = |kind, tool: Option<String>, message: String| {
        PromptCall::Error(FormatError {
            index,
            tool,
            kind,
            message,
        })
    };
    let restate = format!("Write each call as {}.", format.example());
    let (name, arguments) = match raw {
        RawCall::Malformed { kind, name } => {
            let about = about(index, name.as_deref());
            let (kind_of, message) = match kind {
                Malformation::BadJson(why) => (
                    FormatErrorKind::InvalidJson,
                    format!("{about} is not valid JSON ({why}). {restate}"),
                ),
                Malformation::CutOff => (
                    FormatErrorKind::InvalidJson,
                    format!("{about} ends before the call is complete; nothing was run. {restate}"),
                ),
                Malformation::ExtraData => (
                    FormatErrorKind::Malformed,
                    format!(
                        "{about} has more text after the call's JSON object; nothing was run. \
                         Put one call in each block. {restate}"
                    ),
                ),
                Malformation::Shape(what) => (
                    FormatErrorKind::Malformed,
                    format!("{about} is malformed: {what}. {restate}"),
                ),
            };
            return error(kind_of, name, message);
        }
        RawCall::Named { name, arguments } => (name, Some(arguments)),
        RawCall::Object(Value::Object(mut object)) => {
            let Some(Value::String(name)) = object.remove("name") else {
                return error(
                    FormatErrorKind::Malformed,
                    None,
                    format!("{} has no \"name\" string. {restate}", about(index, None)),
                );
            };
            let arguments = object.remove("arguments");
            let parameters = object.remove("parameters");
            if arguments.is_some() && parameters.is_some() {
                return error(
                    FormatErrorKind::Malformed,
                    Some(name.clone()),
                    format!(
                        "{} has both \"arguments\" and \"parameters\"; send the arguments once. \
                         {restate}",
                        about(index, Some(&name))
                    ),
                );
            }
            (name, arguments.or(parameters))
        }
        RawCall::Object(other) => {
            return error(
                FormatErrorKind::Malformed,
                None,
                format!(
                    "{} is `{}`, not a JSON object. {restate}",
                    about(index, None),
                    echo(&other.to_string())
                ),
            );
        }
    };
    let Some(schema) = catalog.input_schema(&name) else {
        return error(
            FormatErrorKind::UnknownTool,
            Some(name.clone()),
            format!(
                "{} is not a valid tool, try one of [{}].",
                echo(&name),
                catalog.tool_names().join(", ")
            ),
        );
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        // Stringified arguments: parsed once, and the string must hold an object.
        Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(m)) => m,
            Ok(_) | Err(_) if s.trim().is_empty() => Map::new(),
            _ => {
                return error(
                    FormatErrorKind::InvalidArguments,
                    Some(name.clone()),
                    format!(
                        "The arguments for {name} must be a JSON object, not the string {}.",
                        echo(&Value::String(s.clone()).to_string())
                    ),
                );
            }
        },
        Some(other) => {
            return error(
                FormatErrorKind::InvalidArguments,
                Some(name.clone()),
                format!(
                    "The arguments for {name} must be a JSON object, not `{}`.",
                    echo(&other.to_string())
                ),
            );
        }
    };
    if let Some(message) = check(&name, &arguments, schema) {
        return error(FormatErrorKind::InvalidArguments, Some(name), message);
    }
    PromptCall::Call(ToolCall {
        id: Some(format!("call_{index}")),
        name,
        arguments: Ok(arguments),
    })
}

/// "Tool call 2 (read_file)" or "Tool call 2".
fn about(index: usize, name: Option<&str>) -> String {
    match name {
        Some(n) if !n.is_empty() => format!("Tool call {index} ({})", echo(n)),
        _ => format!("Tool call {index}"),
    }
}

/// The model's text, cut to [`MAX_ECHO`] characters.
fn echo(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHO) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The arguments against the schema: the common mistakes in fixed words first (a required
/// parameter missing, a value outside an enum), then the validator's own words.
fn check(name: &str, arguments: &Map<String, Value>, schema: &Value) -> Option<String> {
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !arguments.contains_key(key) {
                return Some(format!(
                    "Missing value for required parameter '{key}' of {name}."
                ));
            }
        }
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (key, value) in arguments {
            let Some(allowed) = properties
                .get(key)
                .and_then(|p| p.get("enum"))
                .and_then(Value::as_array)
            else {
                continue;
            };
            if !allowed.contains(value) {
                let listed: Vec<String> = allowed
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                return Some(format!(
                    "{key} must be one of [{}] for {name}, not {}.",
                    listed.join(", "),
                    echo(&value.to_string())
                ));
            }
        }
    }
    let validator = match SchemaValidator::compile(schema) {
        Ok(v) => v,
        Err(e) => return Some(format!("The tool {name} cannot be called: {e}.")),
    };
    let instance = Value::Object(arguments.clone());
    match validator.validate(&instance) {
        Ok(()) => None,
        Err(problems) => Some(format!(
            "The arguments for {name} do not match its schema: {}.",
            echo(&problems.join("; "))
        )),
    }
}
