//! Content blocks: what tools return and prompts contain.
//!
//! The block kind is read from `type` first and only the matching struct is decoded, so an
//! unknown kind from a newer peer is kept as [`ContentBlock::Unknown`] instead of failing the
//! whole result.

use serde::{Deserialize, Deserializer, Serialize, Serializer, ser::SerializeMap};
use serde_json::Value;
use serde_with::skip_serializing_none;

use super::{JsonObject, Resource};

/// `{"type":"text"}`
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Audience/priority annotations.
    pub annotations: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `{"type":"image"}`: base64 data and a MIME type.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded bytes.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Annotations.
    pub annotations: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `{"type":"audio"}` (2025-03-26+): base64 data and a MIME type.
pub type AudioContent = ImageContent;

/// `{"type":"resource_link"}` (2025-06-18+): a pointer to a resource. The schema defines it as
/// a [`Resource`] with a `type`, so it is one: the block's tag is written by [`ContentBlock`].
pub type ResourceLink = Resource;

/// The contents of a resource: text or base64 blob.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Text contents.
    pub text: Option<String>,
    /// Base64 contents.
    pub blob: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `{"type":"resource"}`: a resource embedded in a result or prompt.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The embedded contents.
    pub resource: ResourceContents,
    /// Annotations.
    pub annotations: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta")]
    pub meta: Option<JsonObject>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One block of content.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentBlock {
    /// `text`
    Text(TextContent),
    /// `image`
    Image(ImageContent),
    /// `audio`
    Audio(AudioContent),
    /// `resource_link`
    ResourceLink(ResourceLink),
    /// `resource`
    Resource(EmbeddedResource),
    /// A kind this version does not model, kept verbatim.
    Unknown(JsonObject),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            ..Default::default()
        })
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..Default::default()
        })
    }

    /// An audio block from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..Default::default()
        })
    }

    /// The `type` tag of this block.
    pub fn kind(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
            ContentBlock::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        fn tagged<S: Serializer, T: Serialize>(
            s: S,
            tag: &str,
            body: &T,
        ) -> Result<S::Ok, S::Error> {
            let Value::Object(fields) =
                serde_json::to_value(body).map_err(serde::ser::Error::custom)?
            else {
                return Err(serde::ser::Error::custom("content block must be an object"));
            };
            let mut map = s.serialize_map(Some(fields.len() + 1))?;
            map.serialize_entry("type", tag)?;
            for (k, v) in &fields {
                if k != "type" {
                    map.serialize_entry(k, v)?;
                }
            }
            map.end()
        }
        match self {
            ContentBlock::Text(b) if plain_text(b) => {
                // The common block, written directly: the same members in the same order as
                // `tagged` would write them, without building a `Value` first.
                let mut map = s.serialize_map(None)?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", &b.text)?;
                if let Some(annotations) = &b.annotations {
                    map.serialize_entry("annotations", annotations)?;
                }
                if let Some(meta) = &b.meta {
                    map.serialize_entry("_meta", meta)?;
                }
                for (k, v) in &b.extra {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            ContentBlock::Text(b) => tagged(s, "text", b),
            ContentBlock::Image(b) => tagged(s, "image", b),
            ContentBlock::Audio(b) => tagged(s, "audio", b),
            ContentBlock::ResourceLink(b) => tagged(s, "resource_link", b),
            ContentBlock::Resource(b) => tagged(s, "resource", b),
            ContentBlock::Unknown(v) => v.serialize(s),
        }
    }
}

/// Whether a text block can skip the detour through a `Value`: none of its unknown members
/// shadows a member it writes itself (through the detour a shadowing member would replace
/// the value in place, or `type` be dropped).
fn plain_text(b: &TextContent) -> bool {
    b.extra.is_empty()
        || !["type", "text", "annotations", "_meta"]
            .iter()
            .any(|k| b.extra.contains_key(*k))
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut obj = JsonObject::deserialize(d)?;
        let kind = match obj.get("type") {
            Some(Value::String(s)) => s.clone(),
            _ => {
                return Err(serde::de::Error::custom(
                    "content block without a string `type`",
                ));
            }
        };
        fn body<T: serde::de::DeserializeOwned, E: serde::de::Error>(
            mut obj: JsonObject,
            kind: &str,
        ) -> Result<T, E> {
            obj.remove("type");
            serde_json::from_value(Value::Object(obj))
                .map_err(|e| E::custom(format!("invalid `{kind}` content: {e}")))
        }
        Ok(match kind.as_str() {
            "text" => ContentBlock::Text(body(obj, &kind)?),
            "image" => ContentBlock::Image(body(obj, &kind)?),
            "audio" => ContentBlock::Audio(body(obj, &kind)?),
            "resource_link" => ContentBlock::ResourceLink(body(obj, &kind)?),
            "resource" => ContentBlock::Resource(body(obj, &kind)?),
            _ => {
                obj.insert("type".into(), Value::String(kind));
                ContentBlock::Unknown(obj)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_round_trip_with_unknown_members() {
        let v = json!({"type":"text","text":"hi","x-new":1,"_meta":{"a":1}});
        let b: ContentBlock = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(b.as_text(), Some("hi"));
        assert_eq!(serde_json::to_value(&b).unwrap(), v);
    }

    #[test]
    fn text_blocks_are_written_as_through_a_value() {
        // The direct path for text blocks must write what the `Value` detour writes.
        let detour = |b: &TextContent| {
            let Value::Object(mut fields) = serde_json::to_value(b).unwrap() else {
                unreachable!()
            };
            fields.shift_remove("type");
            let mut out = JsonObject::new();
            out.insert("type".into(), "text".into());
            out.extend(fields);
            serde_json::to_string(&out).unwrap()
        };
        let mut block = TextContent {
            text: "a \"quoted\"\nline".into(),
            annotations: Some(json!({"priority": 1}).as_object().cloned().unwrap()),
            meta: Some(json!({"k": [1, 2]}).as_object().cloned().unwrap()),
            extra: json!({"z": 1, "a": null}).as_object().cloned().unwrap(),
        };
        let direct = serde_json::to_string(&ContentBlock::Text(block.clone())).unwrap();
        assert_eq!(direct, detour(&block));
        // A shadowing unknown member takes the detour, as before.
        block.extra.insert("text".into(), json!("shadow"));
        block.extra.insert("type".into(), json!("other"));
        let shadowed = serde_json::to_value(ContentBlock::Text(block)).unwrap();
        assert_eq!(shadowed["text"], "shadow");
        assert_eq!(shadowed["type"], "text");
    }

    #[test]
    fn unknown_kinds_are_kept() {
        let v = json!({"type":"hologram","frames":3});
        let b: ContentBlock = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(b.kind(), "hologram");
        assert_eq!(serde_json::to_value(&b).unwrap(), v);
    }

    #[test]
    fn malformed_known_kinds_name_the_kind() {
        let e =
            serde_json::from_value::<ContentBlock>(json!({"type":"image","data":1})).unwrap_err();
        assert!(e.to_string().contains("image"), "{e}");
    }
}
