//! Server-Sent Events: writing events, and parsing a stream of them with a size cap.
//!
//! The parser is incremental and never recurses (rmcp once recursed per skipped event); an
//! event larger than the cap is dropped without being buffered, like an oversized stdio line.

use bytes::{Bytes, BytesMut};

/// One event to send.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// `id:` (for resumption with `Last-Event-ID`).
    pub id: Option<String>,
    /// `event:` (absent means `message`).
    pub event: Option<String>,
    /// `data:`; may be empty (a priming event).
    pub data: String,
    /// `retry:` in milliseconds.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// A `message` event carrying one JSON-RPC message.
    pub fn message(id: Option<String>, json: &[u8]) -> Self {
        SseEvent {
            id,
            event: Some("message".into()),
            data: String::from_utf8_lossy(json).into_owned(),
            retry: None,
        }
    }

    /// Encodes the event. Multi-line data is split into several `data:` lines.
    pub fn to_bytes(&self) -> Bytes {
        let mut out = String::with_capacity(self.data.len() + 64);
        if let Some(event) = &self.event {
            out.push_str("event: ");
            out.push_str(event);
            out.push('\n');
        }
        if let Some(id) = &self.id {
            out.push_str("id: ");
            out.push_str(id);
            out.push('\n');
        }
        if let Some(retry) = self.retry {
            out.push_str(&format!("retry: {retry}\n"));
        }
        if self.data.is_empty() {
            out.push_str("data: \n");
        } else {
            for line in self.data.split('\n') {
                out.push_str("data: ");
                out.push_str(line.trim_end_matches('\r'));
                out.push('\n');
            }
        }
        out.push('\n');
        Bytes::from(out)
    }
}

/// What the parser produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseItem {
    /// A complete event.
    Event(SseEvent),
    /// An event over the cap was skipped.
    Oversized {
        /// Bytes skipped.
        len: usize,
    },
}

/// Incremental SSE parser.
#[derive(Debug)]
pub struct SseParser {
    buf: BytesMut,
    max_event: usize,
    current: SseEvent,
    has_fields: bool,
    data_lines: usize,
    event_len: usize,
    skipping: bool,
    /// The last `id:` seen (kept across events, as the EventSource spec says).
    last_id: Option<String>,
}

impl SseParser {
    /// A parser that refuses events larger than `max_event` bytes.
    pub fn new(max_event: usize) -> Self {
        SseParser {
            buf: BytesMut::new(),
            max_event,
            current: SseEvent::default(),
            has_fields: false,
            data_lines: 0,
            event_len: 0,
            skipping: false,
            last_id: None,
        }
    }

    /// The id of the last event that carried one.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseItem> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(pos) = memchr::memchr(b'\n', &self.buf) {
            let mut line = self.buf.split_to(pos + 1);
            line.truncate(pos);
            if line.last() == Some(&b'\r') {
                line.truncate(line.len() - 1);
            }
            if let Some(item) = self.line(&line) {
                out.push(item);
            }
        }
        // A line with no end in sight that is already over the cap: stop buffering it.
        if self.buf.len() > self.max_event {
            self.event_len += self.buf.len();
            self.buf.clear();
            self.skipping = true;
        }
        out
    }

    fn line(&mut self, line: &[u8]) -> Option<SseItem> {
        if line.is_empty() {
            return self.dispatch();
        }
        self.event_len += line.len() + 1;
        if self.event_len > self.max_event {
            self.skipping = true;
        }
        if self.skipping || line.first() == Some(&b':') {
            return None;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"data" => {
                if self.data_lines > 0 {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(&value);
                self.has_fields = true;
                self.data_lines += 1;
            }
            b"event" => {
                self.current.event = Some(value.into_owned());
                self.has_fields = true;
            }
            b"id" if !value.contains('\0') => {
                self.current.id = Some(value.into_owned());
                self.has_fields = true;
            }
            b"retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.current.retry = Some(ms);
                    self.has_fields = true;
                }
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseItem> {
        let skipped = std::mem::take(&mut self.skipping);
        let len = std::mem::take(&mut self.event_len);
        let event = std::mem::take(&mut self.current);
        let had = std::mem::take(&mut self.has_fields);
        self.data_lines = 0;
        if skipped {
            return Some(SseItem::Oversized { len });
        }
        if !had {
            return None;
        }
        if let Some(id) = &event.id {
            self.last_id = Some(id.clone());
        }
        Some(SseItem::Event(event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &[&[u8]], max: usize) -> Vec<SseItem> {
        let mut p = SseParser::new(max);
        input.iter().flat_map(|c| p.push(c)).collect()
    }

    #[test]
    fn round_trips_and_splits_across_chunks() {
        let e = SseEvent {
            id: Some("s1-3".into()),
            event: Some("message".into()),
            data: "a\nb".into(),
            retry: Some(500),
        };
        let bytes = e.to_bytes();
        let (a, b) = bytes.split_at(7);
        assert_eq!(events(&[a, b], 1024), vec![SseItem::Event(e)]);
    }

    #[test]
    fn priming_events_comments_and_crlf() {
        let got = events(
            &[b": hello\r\nid: p-0\r\nretry: 1000\r\ndata: \r\n\r\n"],
            1024,
        );
        assert_eq!(
            got,
            vec![SseItem::Event(SseEvent {
                id: Some("p-0".into()),
                retry: Some(1000),
                ..Default::default()
            })]
        );
    }

    #[test]
    fn oversized_events_are_skipped_and_the_next_one_read() {
        let big = format!("data: {}\n\n", "x".repeat(5000));
        let got = events(&[big.as_bytes(), b"data: ok\n\n"], 100);
        assert!(matches!(got[0], SseItem::Oversized { .. }));
        assert_eq!(
            got[1],
            SseItem::Event(SseEvent {
                data: "ok".into(),
                ..Default::default()
            })
        );
        // A line with no newline at all does not grow the buffer past the cap.
        let mut p = SseParser::new(100);
        for _ in 0..100 {
            p.push(&[b'y'; 1000]);
        }
        assert!(p.buf.len() <= 100);
    }
}
