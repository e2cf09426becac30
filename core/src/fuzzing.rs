//! Invariant checks on the inbound path, shared by the cargo-fuzz targets in `fuzz/` and by
//! `core/tests/fuzz_corpus_replay.rs`, so that `cargo test` replays every corpus input through
//! exactly the code the fuzzers run (no libFuzzer needed).
//!
//! Each entry point takes arbitrary bytes and panics, which is what a fuzzer reports, when an
//! invariant breaks:
//!
//! - [`jsonrpc_envelope`]: [`decode`] never panics; it accepts exactly the inputs that are
//!   valid UTF-8 JSON within the caps (everything else is a [`ParseError`], which the session
//!   drops); every decoded [`Message`] re-encodes with [`Message::to_bytes`] to bytes that
//!   decode to the same message; every error reply an invalid message earns is itself a valid
//!   JSON-RPC error response carrying the id that could be read.
//! - [`stdio_framer`]: [`LineReader`] cuts any byte stream, delivered in any chunks, into
//!   exactly the lines a one-line reference model finds (so no chunk boundary changes the
//!   result), every frame has no `\n`, is within the cap and is not blank, and the bytes it
//!   accounts for never exceed the input.
//! - [`http_request`]: method, headers and body bytes into the HTTP server's request handler
//!   over an in-memory pipe: every request gets exactly one answer, no 5xx, never a 202 for a
//!   body holding a request or an invalid message, JSON answers are JSON-RPC responses (to
//!   the request's id), and a session still answers a ping afterwards.
//!
//! Not part of the public API: the checks panic on purpose.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, ReadBuf};

use crate::jsonrpc::{
    Decoded, FrameEvent, Invalid, Limits, LineReader, Message, ParseError, codes, decode,
    encode_error, exceeds_depth,
};

/// The `jsonrpc_envelope` fuzz target: `data` is one inbound message.
///
/// Decoded under [`Limits::SERVER`], and again under tiny caps so that short inputs reach the
/// size and depth refusals too.
pub fn jsonrpc_envelope(data: &[u8]) {
    check_decode(data, &Limits::SERVER);
    check_decode(
        data,
        &Limits {
            max_message_bytes: 96,
            max_depth: 3,
        },
    );
}

/// The `stdio_framer` fuzz target: `data[0]` picks the line cap (1..=64 bytes), `data[1]` how
/// the rest is cut into reads (sizes, and whether reads return `Pending` in between), and the
/// rest is the byte stream.
pub fn stdio_framer(data: &[u8]) {
    let (cap, plan, stream) = match data {
        [cap, plan, stream @ ..] => (1 + usize::from(cap & 0x3f), *plan, stream),
        // Too short to carry a header: still a stream worth reading.
        _ => (8, 0, data),
    };
    check_framing(stream, cap, ReadPlan::from_byte(plan));
}

/// The `http_request` fuzz target: `data[0]` picks the server (no session, a 2025-03-26 or a
/// 2025-11-25 session, stateless; JSON responses or not), the rest is `METHOD PATH`, header
/// lines, a blank line and the body (see `transport::http::fuzz_request`).
pub fn http_request(data: &[u8]) {
    crate::transport::http::fuzz_request::http_request(data);
}

/// Whether `data` is a JSON text by RFC 8259: valid UTF-8 and valid JSON grammar. Parsing into
/// `IgnoredAny` from a `&str` checks the grammar iteratively (no recursion, so any depth) and
/// the `&str` guarantees the encoding.
fn is_json_text(data: &[u8]) -> bool {
    std::str::from_utf8(data).is_ok_and(|s| serde_json::from_str::<IgnoredAny>(s).is_ok())
}

fn first_token(data: &[u8]) -> Option<u8> {
    data.iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

fn check_decode(data: &[u8], limits: &Limits) {
    let verdict = decode(data, limits);
    if data.len() > limits.max_message_bytes {
        assert!(
            matches!(verdict, Err(ParseError::TooLarge { .. })),
            "a message over the size cap must be refused as too large, got {verdict:?}"
        );
        return;
    }
    let json = is_json_text(data);
    let too_deep = exceeds_depth(data, limits.max_depth);
    match (&verdict, json, too_deep) {
        (Err(ParseError::TooLarge { .. }), ..) => {
            panic!("a message within the size cap was refused as too large")
        }
        (Err(ParseError::TooDeep { .. }), _, true) => return,
        (Err(e), _, true) => panic!("the depth cap must be checked before parsing, got {e}"),
        (Err(e), true, false) => panic!("a valid JSON text was refused as unparseable: {e}"),
        (Err(_), false, _) => return,
        (Ok(_), _, true) => panic!("a message nested deeper than the cap was accepted"),
        (Ok(_), false, _) => panic!(
            "bytes that are not a JSON text (invalid UTF-8 or invalid grammar) were accepted \
             as parseable, so the session would act on them instead of dropping them"
        ),
        (Ok(_), true, false) => {}
    }
    let Ok(decoded) = verdict else { return };
    match decoded {
        Decoded::Single(item) => {
            match first_token(data) {
                Some(b'[') => assert!(item.is_err(), "an array decoded as a single message"),
                Some(b'{') => {}
                _ => assert!(item.is_err(), "a JSON scalar decoded as a message"),
            }
            check_item(&item, data, limits);
        }
        Decoded::Batch(items) => {
            assert_eq!(
                first_token(data),
                Some(b'['),
                "a batch must come from a JSON array"
            );
            assert!(
                !items.is_empty(),
                "an empty array must not decode as a batch"
            );
            for item in &items {
                check_item(item, data, limits);
            }
        }
    }
}

fn check_item(item: &Result<Message, Invalid>, input: &[u8], limits: &Limits) {
    match item {
        Ok(message) => check_round_trip(message, input, limits),
        Err(invalid) => check_invalid(invalid),
    }
}

/// A decoded message re-encodes to bytes that decode to the same message.
fn check_round_trip(message: &Message, input: &[u8], limits: &Limits) {
    let bytes = message.to_bytes();
    // Params and results are copied verbatim, so a raw newline inside them (legal JSON
    // whitespace) survives re-encoding; everything the encoder writes itself is escaped. On
    // stdio an inbound line has no newline, so what it decodes to re-encodes as one line.
    if !input.contains(&b'\n') {
        assert!(
            !bytes.contains(&b'\n'),
            "re-encoding a one-line message produced a newline"
        );
    }
    // Re-encoding can lengthen a message (`1E2` in error data comes back as `100.0`), so only
    // the depth cap is kept.
    let relaxed = Limits {
        max_message_bytes: usize::MAX,
        max_depth: limits.max_depth,
    };
    let again = match decode(&bytes, &relaxed) {
        Ok(Decoded::Single(Ok(m))) => m,
        other => panic!(
            "re-encoded message does not decode to a message: {other:?}\n{}",
            String::from_utf8_lossy(&bytes)
        ),
    };
    let same = match (message, &again) {
        (Message::Request(a), Message::Request(b)) => {
            a.id == b.id && a.method == b.method && raw_eq(&a.params, &b.params)
        }
        (Message::Notification(a), Message::Notification(b)) => {
            a.method == b.method && raw_eq(&a.params, &b.params)
        }
        (Message::Response(a), Message::Response(b)) => {
            a.id == b.id && a.result.get() == b.result.get()
        }
        (Message::Error(a), Message::Error(b)) => a.id == b.id && a.error == b.error,
        _ => false,
    };
    assert!(
        same,
        "round trip changed the message: {message:?} became {again:?}"
    );
    assert_eq!(message.method(), again.method());
}

fn raw_eq(
    a: &Option<Box<serde_json::value::RawValue>>,
    b: &Option<Box<serde_json::value::RawValue>>,
) -> bool {
    a.as_ref().map(|r| r.get()) == b.as_ref().map(|r| r.get())
}

/// The error reply an invalid message earns is a valid error response with the readable id.
fn check_invalid(invalid: &Invalid) {
    let reply = invalid.reply();
    assert_eq!(
        reply.is_some(),
        invalid.needs_reply(),
        "reply() disagrees with needs_reply()"
    );
    let Some(reply) = reply else { return };
    assert_eq!(
        reply.id, invalid.id,
        "the reply must carry the id that could be read"
    );
    assert_eq!(reply.error.code, codes::INVALID_REQUEST);
    let bytes = encode_error(reply.id.as_ref(), &reply.error);
    assert!(
        !bytes.contains(&b'\n'),
        "an error reply must fit on one line"
    );
    match decode(
        &bytes,
        &Limits {
            max_message_bytes: usize::MAX,
            max_depth: 128,
        },
    ) {
        Ok(Decoded::Single(Ok(Message::Error(e)))) => {
            assert_eq!(e.id, invalid.id, "the reply's id changed on the wire");
            assert_eq!(
                e.error, reply.error,
                "the reply's error changed on the wire"
            );
        }
        other => panic!(
            "the error reply is not a valid error response: {other:?}\n{}",
            String::from_utf8_lossy(&bytes)
        ),
    }
}

/// How a stream is cut into reads: chunk sizes from a small deterministic generator (so a
/// crash reproduces from its input), optionally with a `Pending` before every read.
#[derive(Clone, Copy, Debug)]
struct ReadPlan {
    max_chunk: usize,
    seed: u32,
    pending: bool,
}

impl ReadPlan {
    fn from_byte(b: u8) -> Self {
        const MAX_CHUNK: [usize; 8] = [1, 2, 3, 5, 8, 64, 4096, usize::MAX];
        ReadPlan {
            max_chunk: MAX_CHUNK[usize::from(b >> 5)],
            seed: 0x9e37_79b9 ^ u32::from(b),
            pending: b & 0x10 != 0,
        }
    }
}

/// An in-memory `AsyncRead` that hands out the stream in planned chunks.
struct ChunkedReader<'a> {
    rest: &'a [u8],
    plan: ReadPlan,
    state: u32,
    /// Whether the next poll may return data (`Pending` plans alternate).
    ready: bool,
}

impl ChunkedReader<'_> {
    fn next_len(&mut self) -> usize {
        // xorshift32: any non-zero state cycles through every non-zero value.
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.state = x;
        if self.plan.max_chunk == usize::MAX {
            return usize::MAX;
        }
        1 + (x as usize) % self.plan.max_chunk
    }
}

impl AsyncRead for ChunkedReader<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.plan.pending && !self.ready && !self.rest.is_empty() {
            self.ready = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.ready = false;
        let n = self.next_len().min(self.rest.len()).min(buf.remaining());
        let (chunk, rest) = self.rest.split_at(n);
        buf.put_slice(chunk);
        self.rest = rest;
        Poll::Ready(Ok(()))
    }
}

/// What the reader must produce: split at every `\n`; a line ended by `\n` loses one `\r`
/// before it (CRLF), the last line (ended by the end of the stream) keeps everything; a line
/// over the cap is reported with its length, a blank one is skipped.
fn reference_frames(stream: &[u8], cap: usize) -> Vec<FrameEvent> {
    let mut lines: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    let last = lines.pop().unwrap_or_default();
    let terminated = lines
        .into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    terminated
        .chain(std::iter::once(last))
        .filter_map(|line| {
            if line.len() > cap {
                Some(FrameEvent::Oversized { len: line.len() })
            } else if line.iter().all(u8::is_ascii_whitespace) {
                None
            } else {
                Some(FrameEvent::Frame(bytes::Bytes::copy_from_slice(line)))
            }
        })
        .collect()
}

fn check_framing(stream: &[u8], cap: usize, plan: ReadPlan) {
    let reader = ChunkedReader {
        rest: stream,
        plan,
        state: plan.seed,
        ready: false,
    };
    let mut lines = LineReader::new(reader, cap);
    let mut events = Vec::new();
    futures::executor::block_on(async {
        loop {
            match lines.next().await {
                Ok(Some(event)) => events.push(event),
                Ok(None) => break,
                Err(e) => panic!("an in-memory stream cannot fail, got {e}"),
            }
            // Every event consumes at least one byte: more events than bytes is a loop.
            assert!(
                events.len() <= stream.len(),
                "the reader produced events from nothing"
            );
        }
        match lines.next().await {
            Ok(None) => {}
            other => panic!("the reader must stay at end of stream, got {other:?}"),
        }
    });

    let newlines = stream.iter().filter(|&&b| b == b'\n').count();
    let mut accounted = newlines;
    for event in &events {
        match event {
            FrameEvent::Frame(f) => {
                assert!(!f.contains(&b'\n'), "a frame contains a newline");
                assert!(
                    f.len() <= cap,
                    "a frame of {} bytes exceeds the {cap}-byte cap",
                    f.len()
                );
                assert!(
                    !f.iter().all(u8::is_ascii_whitespace),
                    "a blank line became a frame"
                );
                accounted += f.len();
            }
            FrameEvent::Oversized { len } => {
                assert!(
                    *len > cap,
                    "a line of {len} bytes was dropped under the {cap}-byte cap"
                );
                accounted += len;
            }
        }
    }
    assert!(
        accounted <= stream.len(),
        "frames, terminators and dropped lines account for {accounted} bytes of {}",
        stream.len()
    );
    let expected = reference_frames(stream, cap);
    assert_eq!(
        events,
        expected,
        "the reader (cap {cap}, {plan:?}) disagrees with the line model on {:?}",
        String::from_utf8_lossy(stream)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_model_strips_crlf_only_before_a_newline() {
        let frame = |s: &str| FrameEvent::Frame(bytes::Bytes::copy_from_slice(s.as_bytes()));
        assert_eq!(
            reference_frames(b"a\r\n \n\r\nbbbb\nc\r", 3),
            vec![frame("a"), FrameEvent::Oversized { len: 4 }, frame("c\r")]
        );
    }

    #[test]
    fn every_read_plan_reads_a_small_stream() {
        for plan in 0..=255u8 {
            check_framing(
                b"{\"a\":1}\r\n\n  \nxxxxxxxxxxxx\nlast",
                8,
                ReadPlan::from_byte(plan),
            );
        }
    }
}
