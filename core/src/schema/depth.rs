//! The nesting cap on JSON values that reach the schema functions already parsed.
//!
//! Text from a peer is refused past 128 levels before it is parsed ([`Limits`]), and every
//! per-schema pass stops at [`MAX_TRANSLATE_DEPTH`](super::MAX_TRANSLATE_DEPTH). But
//! [`translate_value`](super::translate_value) takes a `Value` that a Rust caller or a binding
//! built, and it clones and deserialises that value (both recursive) before any per-schema cap
//! runs: a value 100,000 levels deep would overflow the stack and abort the process.
//! [`check_depth`] walks it without recursion first.

use serde_json::Value;

use crate::{Error, jsonrpc::Limits};

/// Deepest nesting of arrays and objects accepted in a value given to the schema functions:
/// the same cap as on a peer's message, so nothing that could arrive on the wire is refused.
pub const MAX_VALUE_DEPTH: usize = Limits::SERVER.max_depth;

/// Refuses `value` when arrays and objects nest deeper than [`MAX_VALUE_DEPTH`] (the outermost
/// one is level 1, as in the wire check); `what` names the value in the message.
pub fn check_depth(value: &Value, what: &str) -> Result<(), Error> {
    // An explicit stack: the point is to never recurse on a hostile value.
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, depth + 1))),
            Value::Object(m) => stack.extend(m.values().map(|c| (c, depth + 1))),
            _ => continue,
        }
        if depth > MAX_VALUE_DEPTH {
            return Err(Error::InvalidSchema(format!(
                "{what} nest deeper than {MAX_VALUE_DEPTH} levels"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn nested(levels: usize) -> Value {
        let mut v = json!("leaf");
        for i in 0..levels {
            v = if i % 2 == 0 {
                json!([v])
            } else {
                json!({ "k": v })
            };
        }
        v
    }

    #[test]
    fn the_cap_counts_containers_like_the_wire_check() {
        assert!(check_depth(&json!(1), "x").is_ok());
        assert!(check_depth(&nested(MAX_VALUE_DEPTH), "x").is_ok());
        let text = serde_json::to_string(&nested(MAX_VALUE_DEPTH)).unwrap();
        assert!(!crate::jsonrpc::exceeds_depth(
            text.as_bytes(),
            MAX_VALUE_DEPTH
        ));
        let e = check_depth(&nested(MAX_VALUE_DEPTH + 1), "the tools").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidSchema);
        assert_eq!(
            e.to_string(),
            "invalid schema: the tools nest deeper than 128 levels"
        );
        let text = serde_json::to_string(&nested(MAX_VALUE_DEPTH + 1)).unwrap();
        assert!(crate::jsonrpc::exceeds_depth(
            text.as_bytes(),
            MAX_VALUE_DEPTH
        ));
    }

    #[test]
    fn a_wide_shallow_value_is_fine() {
        let wide = Value::Array((0..10_000).map(|i| json!({ "i": [i] })).collect());
        assert!(check_depth(&wide, "x").is_ok());
    }
}
