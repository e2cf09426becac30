//! Rendering MCP tool-result content as text, for providers that cannot take a kind.
//!
//! Every provider takes text; few take audio, some take images only in certain places (an
//! OpenAI Chat Completions tool message is text only). Rather than failing a whole agent
//! step, a block a provider cannot carry is described in text (its kind, type, size, URI), and
//! the provider files attach the real bytes where the provider has somewhere to put them.

use base64::Engine;

use crate::protocol::{CallToolResult, ContentBlock};

/// A block as text: text as is, everything else as a short bracketed description.
pub fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => {
            format!("[image {}, {} bytes]", i.mime_type, decoded_len(&i.data))
        }
        ContentBlock::Audio(a) => format!(
            "[audio {}, {} bytes, not passed to the model]",
            a.mime_type,
            decoded_len(&a.data)
        ),
        ContentBlock::ResourceLink(l) => {
            let mut s = format!("[resource link: {} ({}", l.uri, l.name);
            if let Some(m) = &l.mime_type {
                s.push_str(", ");
                s.push_str(m);
            }
            s.push_str(")]");
            if let Some(d) = &l.description {
                s.push(' ');
                s.push_str(d);
            }
            s
        }
        ContentBlock::Resource(r) => {
            let res = &r.resource;
            match (&res.text, &res.blob) {
                (Some(text), _) => format!("[resource {}]\n{text}", res.uri),
                (None, Some(blob)) => format!(
                    "[resource {}: {}, {} bytes]",
                    res.uri,
                    res.mime_type
                        .as_deref()
                        .unwrap_or("application/octet-stream"),
                    decoded_len(blob)
                ),
                (None, None) => format!("[resource {}]", res.uri),
            }
        }
        ContentBlock::Unknown(v) => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// The whole result as one string: the blocks' text, or the structured content as JSON when
/// there is no content (servers that follow the spec duplicate it as text, so it is not sent
/// twice).
pub fn result_text(result: &CallToolResult) -> String {
    if result.content.is_empty() {
        return match &result.structured_content {
            Some(v) => serde_json::to_string(v).unwrap_or_default(),
            None => String::new(),
        };
    }
    result
        .content
        .iter()
        .map(block_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A `data:` URL for base64 data.
pub fn data_url(mime: &str, data: &str) -> String {
    format!("data:{mime};base64,{data}")
}

/// How many bytes base64 `data` decodes to (an estimate when it is not valid base64).
pub fn decoded_len(data: &str) -> usize {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map(|d| d.len())
        .unwrap_or(data.len() * 3 / 4)
}
