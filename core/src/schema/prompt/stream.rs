//! A reply as it arrives: content as soon as it cannot be part of a call, each call once it is
//! whole.
//!
//! The stream runs the same resumable scanner as [`parse`](super::parse) on what has arrived,
//! keeps back only what more text could change (a call whose end has not come, a suffix that
//! may begin a marker), and at [`finish`](StreamParser::finish) reads the rest as the end of
//! the text. So for any split of a reply the calls are those of the whole reply, the content
//! deltas add up to its content, and a delta never holds part of a marker. No argument deltas:
//! an agent loop acts on whole calls, and half-parsed arguments caused most of the streaming
//! bugs in other parsers (vllm#10395, #32152).
//!
//! ReAct calls are released at the end: a `Final Answer:` later in the same reply turns them
//! into errors, and a call once given out cannot be taken back.

use super::{
    Catalog, PromptCall, PromptFormat,
    parse::judge_all,
    scan::{Piece, RawCall, scan},
};

/// Above this many undecided bytes, the text is scanned again only once it has doubled, so a
/// huge unclosed call fed a byte at a time stays linear.
const RESCAN_EVERY_FEED: usize = 4096;

/// What the stream gives.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// Text for the user.
    Content(String),
    /// Text inside `<think>…</think>`.
    Reasoning(String),
    /// A whole call (or a malformed one), judged.
    Call(PromptCall),
}

/// The streaming parser (see the module doc).
#[derive(Debug)]
pub struct StreamParser {
    format: PromptFormat,
    text: String,
    consumed: usize,
    calls: usize,
    ended: bool,
    answered: bool,
    held_calls: Vec<RawCall>,
    next_scan_at: usize,
}

impl StreamParser {
    /// A parser for one reply in `format`.
    pub fn new(format: PromptFormat) -> Self {
        StreamParser {
            format,
            text: String::new(),
            consumed: 0,
            calls: 0,
            ended: false,
            answered: false,
            held_calls: Vec::new(),
            next_scan_at: 0,
        }
    }

    /// Takes the next chunk of the reply.
    pub fn feed(&mut self, chunk: &str, catalog: &dyn Catalog) -> Vec<StreamEvent> {
        if self.ended {
            return Vec::new();
        }
        self.text.push_str(chunk);
        if self.text.len() < self.next_scan_at {
            return Vec::new();
        }
        self.step(false, catalog)
    }

    /// The end of the reply: everything still held back, read as the end of the text.
    pub fn finish(mut self, catalog: &dyn Catalog) -> Vec<StreamEvent> {
        let mut out = if self.ended {
            Vec::new()
        } else {
            self.step(true, catalog)
        };
        let held = std::mem::take(&mut self.held_calls);
        out.extend(
            judge_all(self.format, held, self.calls, self.answered, catalog)
                .into_iter()
                .map(StreamEvent::Call),
        );
        out
    }

    fn step(&mut self, at_end: bool, catalog: &dyn Catalog) -> Vec<StreamEvent> {
        let found = scan(self.format, &self.text, self.consumed, at_end);
        let mut out = Vec::new();
        let mut raw = Vec::new();
        for piece in found.pieces {
            match piece {
                Piece::Content(r) => out.push(StreamEvent::Content(self.text[r].to_owned())),
                Piece::Reasoning(r) => out.push(StreamEvent::Reasoning(self.text[r].to_owned())),
                Piece::Answer => self.answered = true,
                Piece::Call(call) if self.format == PromptFormat::React => {
                    self.held_calls.push(call)
                }
                Piece::Call(call) => {
                    // Judged one by one to keep them in place between the content events.
                    raw.clear();
                    raw.push(call);
                    let judged = judge_all(
                        self.format,
                        std::mem::take(&mut raw),
                        self.calls,
                        false,
                        catalog,
                    );
                    self.calls += judged.len();
                    out.extend(judged.into_iter().map(StreamEvent::Call));
                }
            }
        }
        self.consumed = found.consumed;
        self.ended = found.ended;
        let undecided = self.text.len() - self.consumed;
        self.next_scan_at = if undecided > RESCAN_EVERY_FEED {
            self.text.len() + undecided
        } else {
            0
        };
        out
    }
}
