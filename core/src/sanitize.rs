//! Text a peer chose, made safe to show on a terminal or in a log line.
//!
//! A server, a child's stderr or an authorization server can put anything in the strings we
//! print: an ESC that retitles the window or clears the screen, a CR that overwrites the line
//! with a fake "logged in", a BEL, a bidi override (U+202E) that shows text reversed. Every
//! human-readable path that prints peer text (error messages, stderr tails, server names,
//! log and progress messages, `--trace`) passes it through here first. JSON written to stdout
//! does not: its escapes already make it safe (see [`json_writer`] for DEL, C1 and the bidi
//! JSON leaves raw).
//!
//! What is done: control characters (C0, DEL, C1) and the invisible formatting characters
//! that reorder or hide text (bidi embeddings, overrides and isolates, zero-width joiners,
//! line and paragraph separators, the BOM) are written as visible escapes (`\x1b`, `\r`,
//! `\u202e`); newlines are kept only in [`block`] (text that is multi-line by design, a
//! stderr tail), where `\r\n` becomes `\n` and every line is quoted with [`QUOTE`], so a
//! peer's line can never pass for one of ours ("oxmcp: logged in …"); and the text is cut
//! at a length cap with `…`.

use std::borrow::Cow;

/// The cap of [`line()`]: enough for any honest message, short enough that a peer cannot fill
/// the screen with one.
pub const LINE_CAP: usize = 2000;
/// The cap of [`block`].
pub const BLOCK_CAP: usize = 16 * 1024;

/// `text` as one line: every control and bidi character escaped (newlines too), at most
/// [`LINE_CAP`] characters.
pub fn line(text: &str) -> Cow<'_, str> {
    clean(text, false, LINE_CAP)
}

/// What starts every line of a [`block`].
pub const QUOTE: &str = "  | ";

/// `text` as a quoted block: its newlines kept (multi-line by design) and every line starting
/// with [`QUOTE`], everything else as in [`line()`], at most [`BLOCK_CAP`] characters. Shown
/// after a header line of ours (`--- server stderr (tail) ---`).
pub fn block(text: &str) -> Cow<'_, str> {
    let cleaned = clean(text, true, BLOCK_CAP);
    let mut out = String::with_capacity(cleaned.len() + 16);
    for (i, l) in cleaned.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(QUOTE);
        out.push_str(l);
    }
    Cow::Owned(out)
}

/// The general form: newlines kept when `multiline`, cut to `cap` characters with `…`.
pub fn clean(text: &str, multiline: bool, cap: usize) -> Cow<'_, str> {
    let over = text.chars().nth(cap).is_some();
    if !over && !text.chars().any(|c| needs_escape(c, multiline)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(cap.saturating_mul(2)) + 8);
    let mut chars = text.chars().peekable();
    let mut taken = 0;
    while let Some(c) = chars.next() {
        if taken == cap {
            out.push('…');
            break;
        }
        taken += 1;
        if multiline && c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if multiline && c == '\n' {
            out.push('\n');
        } else if needs_escape(c, multiline) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `c` may not reach a terminal as it is.
fn needs_escape(c: char, multiline: bool) -> bool {
    if c == '\n' {
        return !multiline;
    }
    c.is_control() || is_invisible_format(c)
}

/// The formatting characters that reorder or hide text: Trojan Source (CVE-2021-42574) and
/// friends. JSON leaves them raw, so [`json_writer`] escapes them too.
pub fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
    )
}

fn escape_into(out: &mut String, c: char) {
    use std::fmt::Write;
    let _ = match c {
        '\n' => write!(out, "\\n"),
        '\r' => write!(out, "\\r"),
        '\t' => write!(out, "\\t"),
        c if (c as u32) < 0x100 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{:04x}", c as u32),
    };
}

/// A `serde_json` formatter that also escapes, as `\uXXXX`, what JSON leaves raw but a
/// terminal acts on: DEL, the C1 controls (U+0080–U+009F, U+009B is a CSI) and the bidi and
/// invisible characters. The output is the same JSON value.
#[derive(Clone, Debug)]
pub struct SafeJson<F>(pub F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for SafeJson<F> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = rest.find(|c: char| c.is_control() || is_invisible_format(c)) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// Writes `value` as pretty JSON with [`SafeJson`] escapes (what the CLI prints on stdout).
pub fn json_writer<W: std::io::Write>(
    writer: W,
    value: &serde_json::Value,
) -> serde_json::Result<()> {
    use serde::Serialize;
    let mut ser = serde_json::Serializer::with_formatter(
        writer,
        SafeJson(serde_json::ser::PrettyFormatter::new()),
    );
    value.serialize(&mut ser)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_is_borrowed_untouched() {
        let s = "oxmcp: server `a` failed: 北京 ünïcode \\x1b stays";
        assert!(matches!(line(s), Cow::Borrowed(_)));
        assert!(matches!(clean("two\nlines", true, 10), Cow::Borrowed(_)));
    }

    #[test]
    fn hostile_characters_are_escaped_visibly() {
        let hostile = "\x1b]0;pwned\x07\x1b[2J\roxmcp: logged in\u{202e}gnp.exe\u{9b}x\0";
        let shown = line(hostile);
        assert_eq!(
            shown,
            "\\x1b]0;pwned\\x07\\x1b[2J\\roxmcp: logged in\\u202egnp.exe\\x9bx\\x00"
        );
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() || is_invisible_format(c))
        );
        assert_eq!(line("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(clean("a\r\nb\rc\n\x1b", true, 100), "a\nb\\rc\n\\x1b");
        // A block's lines are quoted: none can pass for a line of ours.
        assert_eq!(
            block("oxmcp: logged in\r\nx\x1b"),
            "  | oxmcp: logged in\n  | x\\x1b"
        );
        // Escaping twice changes nothing more (messages nest).
        assert_eq!(line(&line(hostile)), shown);
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis() {
        let long = "x".repeat(LINE_CAP + 10);
        let shown = line(&long);
        assert_eq!(shown.chars().count(), LINE_CAP + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(clean("abcdef", false, 3), "abc…");
        assert_eq!(clean("abc", false, 3), "abc");
        assert_eq!(clean("", true, 0), "");
    }

    #[test]
    fn json_stays_the_same_value_without_raw_bidi() {
        let v = serde_json::json!({
            "name": "a\u{202e}b\u{2066}",
            "ctl": "\x1b\u{7f}\u{9b}",
            "ok": "北京"
        });
        let mut out = Vec::new();
        json_writer(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("a\\u202eb\\u2066"), "{text}");
        assert!(
            text.contains("\\u001b\\u007f\\u009b") && text.contains("北京"),
            "{text}"
        );
        assert!(
            !text
                .chars()
                .any(|c| is_invisible_format(c) || (c.is_control() && c != '\n'))
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
