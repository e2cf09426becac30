//! Opaque cursors for every list method.
//!
//! A cursor encodes the offset of the next page together with a tag for the list it belongs
//! to, base64url-encoded so clients treat it as opaque. A cursor that does not decode, belongs
//! to another list, or points past the end is refused with `-32602`, as the spec asks.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};

use crate::jsonrpc::ErrorObject;

/// Items per page when the server does not say otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// Returns the range of the page starting at `cursor` and the cursor of the page after it.
pub(crate) fn page(
    list: &str,
    cursor: Option<&str>,
    len: usize,
    page_size: usize,
) -> Result<(std::ops::Range<usize>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => decode(list, c, len)
            .ok_or_else(|| ErrorObject::invalid_params(format!("Invalid cursor for {list}")))?,
    };
    let end = start.saturating_add(page_size.max(1)).min(len);
    let next = (end < len).then(|| encode(list, end));
    Ok((start..end, next))
}

fn encode(list: &str, offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{list}:{offset}"))
}

fn decode(list: &str, cursor: &str, len: usize) -> Option<usize> {
    if cursor.len() > 256 {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let (tag, offset) = text.rsplit_once(':')?;
    let offset: usize = offset.parse().ok()?;
    (tag == list && offset <= len).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_pages_and_refuses_foreign_cursors() {
        let (r, next) = page("tools/list", None, 5, 2).unwrap();
        assert_eq!(r, 0..2);
        let (r, next) = page("tools/list", next.as_deref(), 5, 2).unwrap();
        assert_eq!(r, 2..4);
        let (r, next) = page("tools/list", next.as_deref(), 5, 2).unwrap();
        assert_eq!((r, next), (4..5, None));
        let foreign = encode("prompts/list", 1);
        assert!(page("tools/list", Some(&foreign), 5, 2).is_err());
        assert!(page("tools/list", Some("!!"), 5, 2).is_err());
        assert!(page("tools/list", Some(&encode("tools/list", 99)), 5, 2).is_err());
    }
}
