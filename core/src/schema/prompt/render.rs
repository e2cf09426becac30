//! The system-prompt text that gives a model its tools.
//!
//! Each format's text follows what the models were trained on (Qwen-Agent's and Ollama's
//! Hermes template, vLLM's Llama 3.1 JSON template, LangChain's ReAct prompt, Cherry Studio's
//! `<tool_use>`), since a model follows the wording it has seen far better than a new one.
//! The text is deterministic, byte for byte, for the same tools (prompt caching depends on
//! it), and a description cannot break out of its wrapper: JSON is written with `<` and `>`
//! escaped, XML text with entities, so a `</tools>` in a description stays inert.

use serde_json::{Map, Value};

use super::PromptFormat;

/// The system text for `tools` (each `{"type": "function", "function": {name, description,
/// parameters}}`, as the prompt provider translates them).
pub fn render(format: PromptFormat, tools: &[Value]) -> String {
    let tools: Vec<Described<'_>> = tools.iter().filter_map(Described::of).collect();
    match format {
        PromptFormat::Hermes => hermes(&tools),
        PromptFormat::Json => json(&tools),
        PromptFormat::React => react(&tools),
        PromptFormat::Xml => xml(&tools),
    }
}

struct Described<'a> {
    whole: &'a Value,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

impl<'a> Described<'a> {
    fn of(tool: &'a Value) -> Option<Self> {
        let f = tool.get("function")?;
        Some(Described {
            whole: tool,
            name: f.get("name")?.as_str()?,
            description: f.get("description").and_then(Value::as_str).unwrap_or(""),
            parameters: f.get("parameters").unwrap_or(&Value::Null),
        })
    }
}

fn hermes(tools: &[Described<'_>]) -> String {
    let mut out = String::from(
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n",
    );
    for t in tools {
        out.push_str(&inert_json(t.whole));
        out.push('\n');
    }
    out.push_str(
        "</tools>\n\nFor each function call, return a json object with function name and \
         arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n\
         {\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>\n\n\
         Each result comes back within <tool_response></tool_response> XML tags.",
    );
    out
}

fn json(tools: &[Described<'_>]) -> String {
    let mut out = String::from("# Tools\n\nYou have access to the following functions:\n\n");
    for t in tools {
        out.push_str(&signature_line(t));
        out.push_str(&inert_json(t.whole));
        out.push_str("\n\n");
    }
    out.push_str(
        "To call a function, respond with a JSON object of the form {\"name\": function name, \
         \"parameters\": dictionary of argument name and its value}. Do not use variables. \
         Each result comes back as {\"name\": function name, \"output\": result}.",
    );
    out
}

fn react(tools: &[Described<'_>]) -> String {
    let mut out = String::from(
        "Answer the following questions as best you can. You have access to the following \
         tools:\n\n",
    );
    for t in tools {
        out.push_str(&signature_line(t));
        if !simple(t.parameters) {
            out.push_str("  JSON Schema of the input: ");
            out.push_str(&inert_json(t.parameters));
            out.push('\n');
        }
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
    out.push_str(&format!(
        "\nUse the following format:\n\n\
         Question: the input question you must answer\n\
         Thought: you should always think about what to do\n\
         Action: the action to take, should be one of [{}]\n\
         Action Input: the input to the action, as a JSON object on one line\n\
         Observation: the result of the action\n\
         ... (this Thought/Action/Action Input/Observation can repeat N times)\n\
         Thought: I now know the final answer\n\
         Final Answer: the final answer to the original input question",
        names.join(", ")
    ));
    out
}

fn xml(tools: &[Described<'_>]) -> String {
    let mut out = String::from(
        "# Tools\n\nYou can use the tools below. To use one, write exactly:\n<tool_use>\n  \
         <name>{tool name}</name>\n  <arguments>{the arguments as a JSON object}</arguments>\n\
         </tool_use>\nEach result comes back as:\n<tool_use_result>\n  <name>{tool name}</name>\n  \
         <result>{the result}</result>\n</tool_use_result>\n\nAvailable tools:\n<tools>\n",
    );
    for t in tools {
        out.push_str(&format!(
            "<tool>\n  <name>{}</name>\n  <description>{}</description>\n  \
             <arguments>{}</arguments>\n</tool>\n",
            xml_text(t.name),
            xml_text(t.description),
            inert_json(t.parameters)
        ));
    }
    out.push_str("</tools>");
    out
}

/// `name(city: string, unit?: "celsius" | "fahrenheit"): description`, one line.
fn signature_line(t: &Described<'_>) -> String {
    let description = t
        .description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut line = format!("{}({})", t.name, signature(t.parameters));
    if !description.is_empty() {
        line.push_str(": ");
        line.push_str(&description);
    }
    line.push('\n');
    line
}

fn signature(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .map(|(name, p)| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            format!("{name}{optional}: {}", type_of(p))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn type_of(p: &Value) -> String {
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match p.get("type") {
        Some(Value::String(t)) if t == "array" => {
            format!("{}[]", p.get("items").map_or("any".into(), type_of))
        }
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".into(),
    }
}

/// Whether the signature says all the schema says (only flat, typed properties; a property's
/// description or title is the only thing left out, and a ReAct line has no room for them).
fn simple(schema: &Value) -> bool {
    const PLAIN: &[&str] = &["type", "properties", "required", "title", "description"];
    const PLAIN_PROPERTY: &[&str] = &["type", "enum", "title"];
    let Some(root) = schema.as_object() else {
        return schema.is_null();
    };
    let plain =
        |m: &Map<String, Value>, keys: &[&str]| m.keys().all(|k| keys.contains(&k.as_str()));
    plain(root, PLAIN)
        && root
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(|ps| {
                ps.values().all(|p| {
                    p.as_object().is_some_and(|p| {
                        plain(p, PLAIN_PROPERTY)
                            && p.get("type").is_none_or(Value::is_string)
                            && p.get("type").and_then(Value::as_str) != Some("object")
                            && p.get("type").and_then(Value::as_str) != Some("array")
                    })
                })
            })
}

/// Compact JSON that cannot close a tag: `<` and `>` only occur inside JSON strings, where
/// `\u003c` and `\u003e` mean the same.
fn inert_json(value: &Value) -> String {
    serde_json::to_string(value)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
}

fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
