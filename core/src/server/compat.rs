//! Keeping what a server sends within what the client's revision can represent.
//!
//! A handler writes one result for every client. Content kinds newer than the session's
//! revision (audio before 2025-03-26, resource links before 2025-06-18) are rendered as text
//! for it, so an older client still gets something it can parse and show. Requests a revision
//! cannot carry at all (elicitation before 2025-06-18, multi-select enums before 2025-11-25)
//! are refused to the handler with an error saying which revision they need.

use serde_json::Value;

use crate::{
    Error,
    protocol::{ContentBlock, ElicitRequestParams, ProtocolVersion, TextContent},
};

/// Renders blocks the revision cannot represent as text.
pub(crate) fn downgrade_content(blocks: &mut [ContentBlock], version: ProtocolVersion) {
    for block in blocks {
        if let Some(text) = fallback_text(block, version) {
            *block = ContentBlock::Text(TextContent {
                text,
                ..Default::default()
            });
        }
    }
}

fn fallback_text(block: &ContentBlock, version: ProtocolVersion) -> Option<String> {
    match block {
        ContentBlock::Audio(a) if version < ProtocolVersion::V2025_03_26 => Some(format!(
            "[audio content ({}, {} bytes of base64) that protocol version {version} cannot carry]",
            a.mime_type,
            a.data.len()
        )),
        ContentBlock::ResourceLink(l) if version < ProtocolVersion::V2025_06_18 => {
            let name = l.title.as_deref().unwrap_or(&l.name);
            Some(format!("Resource: {} ({name})", l.uri))
        }
        _ => None,
    }
}

/// Whether an elicitation can be sent to a handshake-era client of `version`.
pub(crate) fn check_elicitation(
    params: &ElicitRequestParams,
    version: ProtocolVersion,
) -> Result<(), Error> {
    let needs = |what: &str, rev: ProtocolVersion| {
        Err(Error::InvalidArgument(format!(
            "{what} needs protocol version {rev} or later; this client speaks {version}"
        )))
    };
    if version < ProtocolVersion::V2025_06_18 {
        return needs("elicitation", ProtocolVersion::V2025_06_18);
    }
    if version >= ProtocolVersion::V2025_11_25 {
        return Ok(());
    }
    if params.is_url() {
        return needs("URL-mode elicitation", ProtocolVersion::V2025_11_25);
    }
    let properties = params
        .requested_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    for (name, schema) in properties.into_iter().flatten() {
        let kind = schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let flat = match kind {
            "string" => schema.get("oneOf").is_none() || schema.get("enum").is_some(),
            "number" | "integer" | "boolean" => true,
            _ => false,
        };
        if !flat {
            return needs(
                &format!("form field `{name}` (multi-select or titled enum)"),
                ProtocolVersion::V2025_11_25,
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn new_content_kinds_become_text_for_old_revisions() {
        let mut blocks = vec![
            ContentBlock::audio("AAAA", "audio/wav"),
            ContentBlock::text("kept"),
        ];
        downgrade_content(&mut blocks, ProtocolVersion::V2024_11_05);
        assert!(blocks[0].as_text().unwrap().contains("audio/wav"));
        assert_eq!(blocks[1].as_text(), Some("kept"));
        let mut blocks = vec![ContentBlock::audio("AAAA", "audio/wav")];
        downgrade_content(&mut blocks, ProtocolVersion::V2025_03_26);
        assert_eq!(blocks[0].kind(), "audio");
    }

    #[test]
    fn elicitation_shapes_are_checked_per_revision() {
        let multi = ElicitRequestParams::form(
            "m",
            json!({"type": "object", "properties": {"x": {"type": "array", "items": {"type": "string", "enum": ["a"]}}}}),
        );
        assert!(check_elicitation(&multi, ProtocolVersion::V2025_06_18).is_err());
        assert!(check_elicitation(&multi, ProtocolVersion::V2025_11_25).is_ok());
        let flat = ElicitRequestParams::form(
            "m",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        );
        assert!(check_elicitation(&flat, ProtocolVersion::V2025_06_18).is_ok());
        assert!(check_elicitation(&flat, ProtocolVersion::V2025_03_26).is_err());
        assert!(
            check_elicitation(
                &ElicitRequestParams::url("m", "https://x"),
                ProtocolVersion::V2025_06_18
            )
            .is_err()
        );
    }
}
