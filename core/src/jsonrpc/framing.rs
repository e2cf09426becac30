//! Newline-delimited framing with a size cap.
//!
//! A line longer than the cap is not buffered: the reader switches to discarding until the
//! next newline and reports the drop, so a hostile peer cannot make us allocate more than the
//! cap, and the message after the oversized one is read normally (no resync problem).

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

/// One event read from a newline-delimited stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameEvent {
    /// A complete line, without its line terminator.
    Frame(Bytes),
    /// A line longer than the cap was skipped; `len` bytes were discarded.
    Oversized {
        /// Bytes discarded (at least the cap).
        len: usize,
    },
}

/// Cuts newline-delimited frames out of bytes as they arrive, with the size cap. This is the
/// whole of the framing logic; [`LineReader`] feeds it from an async stream, and a host event
/// loop that reads the bytes itself (see [`crate::embed`]) feeds it directly.
#[derive(Debug)]
pub struct LineSplitter {
    buf: BytesMut,
    /// Bytes of `buf` already known to contain no newline.
    scanned: usize,
    max: usize,
    /// When set, bytes are being dropped until the next newline; holds the count so far.
    discarding: Option<usize>,
}

impl LineSplitter {
    /// A splitter that refuses lines longer than `max` bytes.
    pub fn new(max: usize) -> Self {
        LineSplitter {
            buf: BytesMut::with_capacity(8 * 1024),
            scanned: 0,
            max,
            discarding: None,
        }
    }

    /// Whether bytes are waiting in the buffer.
    pub fn has_buffered_input(&self) -> bool {
        !self.buf.is_empty()
    }

    /// Appends bytes that arrived. Feed at most a read's worth at a time and take the frames
    /// out in between: a line being discarded is dropped as it goes, so the buffer stays
    /// within the cap plus one chunk.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The buffer to read into directly (with room for at least 4 KiB more).
    fn read_buffer(&mut self) -> &mut BytesMut {
        if self.buf.capacity() - self.buf.len() < 4096 {
            self.buf.reserve(self.buf.len().clamp(8 * 1024, 1 << 20));
        }
        &mut self.buf
    }

    /// Takes a complete frame out of the buffer if there is one.
    pub fn next_frame(&mut self) -> Option<FrameEvent> {
        loop {
            let newline =
                memchr::memchr(b'\n', &self.buf[self.scanned..]).map(|i| self.scanned + i);
            match (newline, self.discarding) {
                (Some(pos), Some(dropped)) => {
                    // The `\r` of a CRLF terminator is not part of the line (it was kept in
                    // the buffer while discarding, see below).
                    let cr = usize::from(pos > 0 && self.buf[pos - 1] == b'\r');
                    let _ = self.buf.split_to(pos + 1);
                    self.scanned = 0;
                    self.discarding = None;
                    return Some(FrameEvent::Oversized {
                        len: dropped + pos - cr,
                    });
                }
                (Some(pos), None) => {
                    let mut line = self.buf.split_to(pos + 1);
                    self.scanned = 0;
                    line.truncate(pos);
                    if line.last() == Some(&b'\r') {
                        line.truncate(pos - 1);
                    }
                    if line.len() > self.max {
                        return Some(FrameEvent::Oversized { len: line.len() });
                    }
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return Some(FrameEvent::Frame(line.freeze()));
                }
                (None, Some(dropped)) => {
                    self.discarding = Some(dropped + self.discard_buffered());
                    return None;
                }
                (None, None) => {
                    // A trailing `\r` may be the first half of a CRLF terminator split across
                    // reads: it does not count toward the cap until the next byte says, or a
                    // line of exactly the cap would be dropped or not depending on where the
                    // reads happened to end.
                    let cr = usize::from(self.buf.last() == Some(&b'\r'));
                    if self.buf.len() - cr > self.max {
                        self.discarding = Some(self.discard_buffered());
                    } else {
                        self.scanned = self.buf.len();
                    }
                    return None;
                }
            }
        }
    }

    /// At end of stream: a last line without a newline still counts.
    pub fn finish(&mut self) -> Option<FrameEvent> {
        let line = self.buf.split();
        self.scanned = 0;
        if let Some(dropped) = self.discarding.take() {
            // A `\r` kept while discarding ends the stream: it was part of the line.
            return Some(FrameEvent::Oversized {
                len: dropped + line.len(),
            });
        }
        // The cap first, as for a line ended by a newline: a blank line over the cap is
        // reported either way.
        if line.len() > self.max {
            return Some(FrameEvent::Oversized { len: line.len() });
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(FrameEvent::Frame(line.freeze()))
    }

    /// Drops the buffered part of a line being discarded, all but a trailing `\r` (which may
    /// be half of a CRLF terminator); returns how many bytes were dropped.
    fn discard_buffered(&mut self) -> usize {
        let cr = self.buf.last() == Some(&b'\r');
        let dropped = self.buf.len() - usize::from(cr);
        self.buf.clear();
        if cr {
            self.buf.extend_from_slice(b"\r");
        }
        self.scanned = self.buf.len();
        dropped
    }
}

/// Reads newline-delimited frames from an async byte stream.
pub struct LineReader<R> {
    inner: R,
    lines: LineSplitter,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader that refuses lines longer than `max` bytes.
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            lines: LineSplitter::new(max),
            eof: false,
        }
    }

    /// Whether bytes are waiting in the buffer (used to decide when to flush replies).
    pub fn has_buffered_input(&self) -> bool {
        self.lines.has_buffered_input()
    }

    /// The next frame, `Ok(None)` at end of stream.
    pub async fn next(&mut self) -> std::io::Result<Option<FrameEvent>> {
        loop {
            if let Some(event) = self.lines.next_frame() {
                return Ok(Some(event));
            }
            if self.eof {
                return Ok(self.lines.finish());
            }
            let n = self.inner.read_buf(self.lines.read_buffer()).await?;
            if n == 0 {
                self.eof = true;
            }
        }
    }
}

/// Appends `frame` to `out` as one newline-terminated line.
///
/// Our own encoder never writes a line break, but params and results are copied through as the
/// peer sent them, and a pretty-printed HTTP body may contain some. In valid JSON a raw CR or LF
/// can only be insignificant whitespace (inside strings they must be escaped), so turning them
/// into spaces keeps the value and the framing intact.
pub fn push_line(out: &mut Vec<u8>, frame: &[u8]) {
    let start = out.len();
    out.extend_from_slice(frame);
    if memchr::memchr2(b'\n', b'\r', frame).is_some() {
        for b in &mut out[start..] {
            if matches!(*b, b'\n' | b'\r') {
                *b = b' ';
            }
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<FrameEvent> {
        let mut r = LineReader::new(input, max);
        let mut out = vec![];
        while let Some(f) = r.next().await.unwrap() {
            out.push(f);
        }
        out
    }

    fn frame(s: &str) -> FrameEvent {
        FrameEvent::Frame(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[tokio::test]
    async fn splits_lines_and_strips_crlf() {
        assert_eq!(
            frames(b"a\r\nb\n\n  \nc", 10).await,
            vec![frame("a"), frame("b"), frame("c")]
        );
    }

    #[tokio::test]
    async fn oversized_line_is_skipped_and_the_next_one_read() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nok\n");
        assert_eq!(
            frames(&input, 10).await,
            vec![FrameEvent::Oversized { len: 100 }, frame("ok")]
        );
    }

    #[tokio::test]
    async fn oversized_line_across_reads_is_counted_without_buffering() {
        let (mut w, r) = tokio::io::duplex(64);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for _ in 0..100 {
                w.write_all(&[b'y'; 1000]).await.unwrap();
            }
            w.write_all(b"\n{}\n").await.unwrap();
        });
        let mut reader = LineReader::new(r, 4096);
        assert_eq!(
            reader.next().await.unwrap(),
            Some(FrameEvent::Oversized { len: 100_000 })
        );
        assert!(reader.lines.buf.capacity() < 2 << 20);
        assert_eq!(reader.next().await.unwrap(), Some(frame("{}")));
        writer.await.unwrap();
    }

    #[test]
    fn push_line_flattens_line_breaks_a_peer_left_in_raw_values() {
        let mut out = Vec::new();
        super::push_line(&mut out, b"{\"a\":\r\n [1,\n2],\"s\":\"x\\ny\"}");
        push_line(&mut out, b"{}");
        assert_eq!(out, b"{\"a\":   [1, 2],\"s\":\"x\\ny\"}\n{}\n".to_vec());
        let value: serde_json::Value =
            serde_json::from_slice(out.split(|b| *b == b'\n').next().unwrap_or_default())
                .expect("still valid JSON");
        assert_eq!(value["s"], "x\ny");
    }
}
