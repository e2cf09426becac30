//! Finding the calls in a reply: one pass over the text, no regex, no backtracking.
//!
//! The text is cut into pieces: content (what the user reads), reasoning (`<think>…</think>`,
//! never searched for calls: a model thinking about a call has not made it), and raw calls
//! (only inside the format's wrapper). A call's JSON is read by a JSON parser from its `{`,
//! so its end is where the object ends, not where the next closing tag happens to be (a
//! `</tool_call>` inside an argument string is an argument, vllm#45167).
//!
//! **Linear time.** Every marker search starts where the last one ended, and its answer is
//! remembered until the scan passes it, so each byte is searched once per marker. The JSON
//! reader runs once per candidate; it stops at the first byte that cannot continue a JSON
//! value, and serde_json stops nesting at 128 levels, so in the one format where any `{` is a
//! candidate (`json`), a byte is read by at most 128 candidates.
//!
//! **Resumable.** `at_end = false` scans a text that may continue: the scan stops before the
//! first piece that more text could change (a call whose end has not arrived, a suffix that
//! may be the start of a marker) and says how far it is sure. Whatever it returns before that
//! point is what the whole text would give, which is what lets the stream parser reuse it.

use std::ops::Range;

use memchr::memmem;
use serde_json::Value;

use super::PromptFormat;

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
const HERMES_OPEN: &str = "<tool_call>";
const HERMES_CLOSE: &str = "</tool_call>";
const XML_OPEN: &str = "<tool_use>";
const XML_CLOSE: &str = "</tool_use>";
const XML_NAME: &str = "<name>";
const XML_NAME_CLOSE: &str = "</name>";
const XML_ARGS: &str = "<arguments>";
const XML_ARGS_CLOSE: &str = "</arguments>";
const FENCE: &str = "```";
const REACT_ACTION: &str = "Action:";
const REACT_INPUT: &str = "Action Input:";
const REACT_ANSWER: &str = "Final Answer:";
const REACT_OBSERVATION: &str = "Observation:";

/// A call as written, before it is judged against the tools.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum RawCall {
    /// A `{"name": …, "arguments" | "parameters": …}` object (hermes, json).
    Object(Value),
    /// A name and an arguments value written apart (react, xml).
    Named { name: String, arguments: Value },
    /// Something inside the wrapper that is not a call: why, and the name if one was seen.
    Malformed {
        kind: Malformation,
        name: Option<String>,
    },
}

/// Why a wrapper's content is not a call.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Malformation {
    /// The JSON does not parse (serde_json's message, with line and column).
    BadJson(String),
    /// The text ends inside the call.
    CutOff,
    /// Text follows the call's object inside the wrapper.
    ExtraData,
    /// A structural problem, in words.
    Shape(&'static str),
}

/// One piece of a reply.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Piece {
    /// Byte range of the text.
    Content(Range<usize>),
    /// Byte range of the text.
    Reasoning(Range<usize>),
    Call(RawCall),
    /// ReAct: the final answer starts here (its text follows as content).
    Answer,
}

/// What a scan found.
#[derive(Debug)]
pub(super) struct Scan {
    pub pieces: Vec<Piece>,
    /// Up to where (a byte offset of the text) the pieces account for it.
    pub consumed: usize,
    /// The reply is over as far as calls go (ReAct: an `Observation:` the model wrote
    /// itself; the rest is ignored).
    pub ended: bool,
}

/// The next occurrence of a needle at or after a position, remembered while it is ahead.
struct Finder {
    needle: &'static str,
    found: Option<Option<usize>>,
    searched_from: usize,
}

impl Finder {
    fn new(needle: &'static str) -> Self {
        Finder {
            needle,
            found: None,
            searched_from: 0,
        }
    }

    fn next(&mut self, text: &str, from: usize) -> Option<usize> {
        match self.found {
            Some(Some(at)) if at >= from => return Some(at),
            // Nothing after an earlier position means nothing after this one either.
            Some(None) if from >= self.searched_from => return None,
            _ => {}
        }
        let hay = &text.as_bytes()[from..];
        let at = match self.needle.as_bytes() {
            [byte] => memchr::memchr(*byte, hay),
            needle => memmem::find(hay, needle),
        }
        .map(|i| i + from);
        self.found = Some(at);
        self.searched_from = from;
        at
    }
}

/// What reading one call gave.
enum Step {
    /// A call (or a malformed one) ending at this byte.
    Done(RawCall, usize),
    /// Not a call after all (json: a `{` in prose); content up to this byte.
    Prose(usize),
    /// More text could change the answer.
    Wait,
}

/// What reading a JSON value gave.
enum Json {
    Value(Value, usize),
    Eof,
    Bad(String),
}

fn read_json(text: &str, at: usize) -> Json {
    let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
    match values.next() {
        Some(Ok(v)) => Json::Value(v, at + values.byte_offset()),
        Some(Err(e)) if e.is_eof() => Json::Eof,
        Some(Err(e)) => Json::Bad(e.to_string()),
        None => Json::Eof,
    }
}

fn skip_ws(text: &str, mut at: usize) -> usize {
    let bytes = text.as_bytes();
    while at < bytes.len() && bytes[at].is_ascii_whitespace() {
        at += 1;
    }
    at
}

/// Whether `rest` is a proper, non-empty start of `marker` (more text could complete it).
fn partial(rest: &str, marker: &str) -> bool {
    !rest.is_empty() && rest.len() < marker.len() && marker.starts_with(rest)
}

/// How many trailing bytes of `text` could begin one of `markers`.
fn held_back(text: &str, markers: &[&str]) -> usize {
    let longest = markers.iter().map(|m| m.len()).max().unwrap_or(0);
    for k in (1..longest.min(text.len() + 1)).rev() {
        let start = text.len() - k;
        if text.is_char_boundary(start) && markers.iter().any(|m| partial(&text[start..], m)) {
            return k;
        }
    }
    0
}

struct Scanner<'a> {
    text: &'a str,
    at_end: bool,
    format: PromptFormat,
    think: Finder,
    open: Finder,
    close: Finder,
}

/// Scans `text` from byte `from` (see the module doc); earlier bytes are only looked at to
/// know whether `from` starts a line.
pub(super) fn scan(format: PromptFormat, text: &str, from: usize, at_end: bool) -> Scan {
    let (open, close) = match format {
        PromptFormat::Hermes => (HERMES_OPEN, HERMES_CLOSE),
        PromptFormat::Xml => (XML_OPEN, XML_CLOSE),
        PromptFormat::Json => ("{", "\n"),
        PromptFormat::React => (REACT_ACTION, "\n"),
    };
    let mut s = Scanner {
        text,
        at_end,
        format,
        think: Finder::new(THINK_OPEN),
        open: Finder::new(open),
        close: Finder::new(close),
    };
    if format == PromptFormat::React {
        return s.react(from);
    }
    s.tagged(from)
}

impl<'a> Scanner<'a> {
    /// Hermes, xml and json: content with calls (and reasoning) in it.
    fn tagged(&mut self, from: usize) -> Scan {
        let text = self.text;
        let mut pieces = Vec::new();
        let mut pos = from;
        loop {
            let think = self.think.next(text, pos);
            let call = self.open.next(text, pos);
            let next = match (think, call) {
                (Some(t), Some(c)) => Some((t.min(c), t <= c)),
                (Some(t), None) => Some((t, true)),
                (None, Some(c)) => Some((c, false)),
                (None, None) => None,
            };
            let Some((at, is_think)) = next else {
                let end = if self.at_end {
                    text.len()
                } else {
                    let markers: &[&str] = match self.format {
                        PromptFormat::Hermes => &[THINK_OPEN, HERMES_OPEN],
                        PromptFormat::Xml => &[THINK_OPEN, XML_OPEN],
                        _ => &[THINK_OPEN],
                    };
                    text.len() - held_back(&text[pos..], markers)
                };
                push_content(&mut pieces, pos..end);
                return Scan {
                    pieces,
                    consumed: end,
                    ended: false,
                };
            };
            push_content(&mut pieces, pos..at);
            let step = if is_think {
                let body = at + THINK_OPEN.len();
                match memmem::find(&text.as_bytes()[body..], THINK_CLOSE.as_bytes()) {
                    Some(i) => {
                        pieces.push(Piece::Reasoning(body..body + i));
                        pos = body + i + THINK_CLOSE.len();
                        continue;
                    }
                    None if self.at_end => {
                        pieces.push(Piece::Reasoning(body..text.len()));
                        pos = text.len();
                        continue;
                    }
                    None => Step::Wait,
                }
            } else {
                match self.format {
                    PromptFormat::Hermes => self.hermes(at),
                    PromptFormat::Xml => self.xml(at),
                    _ => self.json(at),
                }
            };
            match step {
                Step::Done(call, end) => {
                    pieces.push(Piece::Call(call));
                    pos = end;
                }
                Step::Prose(end) => {
                    push_content(&mut pieces, at..end);
                    pos = end;
                }
                Step::Wait => {
                    return Scan {
                        pieces,
                        consumed: at,
                        ended: false,
                    };
                }
            }
        }
    }

    /// The end of a malformed call's region: after the next closing marker, or the text's end.
    fn region_end(&mut self, from: usize) -> Option<usize> {
        let close_len = match self.format {
            PromptFormat::Hermes => HERMES_CLOSE.len(),
            PromptFormat::Xml => XML_CLOSE.len(),
            _ => 1,
        };
        match self.close.next(self.text, from) {
            Some(at) => Some(at + close_len),
            None if self.at_end => Some(self.text.len()),
            None => None,
        }
    }

    fn malformed(&mut self, from: usize, kind: Malformation, name: Option<String>) -> Step {
        match self.region_end(from) {
            Some(end) => Step::Done(RawCall::Malformed { kind, name }, end),
            None => Step::Wait,
        }
    }

    /// A JSON object at `at`, maybe in a code fence, followed by `close` (or the text's end,
    /// for a call the model did not close). `Ok` is the value and the byte after `close`.
    fn wrapped_json(&mut self, at: usize, close: &str) -> Result<(Value, usize), Step> {
        let text = self.text;
        let mut i = skip_ws(text, at);
        let fenced = text[i..].starts_with(FENCE);
        if fenced {
            // ```json and the like: the fence's line is skipped whole.
            match memchr::memchr(b'\n', &text.as_bytes()[i..]) {
                Some(n) => i = skip_ws(text, i + n + 1),
                None if self.at_end => return Err(self.cut_off()),
                None => return Err(Step::Wait),
            }
        } else if !self.at_end && (i == text.len() || partial(&text[i..], FENCE)) {
            return Err(Step::Wait);
        }
        if i == text.len() {
            return Err(if self.at_end {
                self.cut_off()
            } else {
                Step::Wait
            });
        }
        if text.as_bytes()[i] != b'{' {
            return Err(self.malformed(i, Malformation::Shape("not a JSON object"), None));
        }
        let (value, end) = match read_json(text, i) {
            Json::Value(v, end) => (v, end),
            Json::Eof if self.at_end => return Err(self.cut_off()),
            Json::Eof => return Err(Step::Wait),
            Json::Bad(why) => return Err(self.malformed(i, Malformation::BadJson(why), None)),
        };
        let mut j = skip_ws(text, end);
        if fenced && text[j..].starts_with(FENCE) {
            j = skip_ws(text, j + FENCE.len());
        }
        let rest = &text[j..];
        if rest.starts_with(close) {
            return Ok((value, j + close.len()));
        }
        if rest.is_empty() {
            return if self.at_end {
                Ok((value, j))
            } else {
                Err(Step::Wait)
            };
        }
        if !self.at_end && (partial(rest, close) || (fenced && partial(rest, FENCE))) {
            return Err(Step::Wait);
        }
        Err(self.malformed(j, Malformation::ExtraData, name_of(&value)))
    }

    fn cut_off(&self) -> Step {
        Step::Done(
            RawCall::Malformed {
                kind: Malformation::CutOff,
                name: None,
            },
            self.text.len(),
        )
    }

    fn hermes(&mut self, at: usize) -> Step {
        match self.wrapped_json(at + HERMES_OPEN.len(), HERMES_CLOSE) {
            Ok((value, end)) => Step::Done(RawCall::Object(value), end),
            Err(step) => step,
        }
    }

    fn xml(&mut self, at: usize) -> Step {
        let text = self.text;
        let mut i = at + XML_OPEN.len();
        let mut name: Option<String> = None;
        let mut arguments: Option<Value> = None;
        loop {
            i = skip_ws(text, i);
            let rest = &text[i..];
            let finished = rest.starts_with(XML_CLOSE);
            if finished || (rest.is_empty() && self.at_end) {
                let end = if finished { i + XML_CLOSE.len() } else { i };
                let call = match (name, arguments) {
                    (Some(name), Some(arguments)) => RawCall::Named { name, arguments },
                    (name, _) if rest.is_empty() => RawCall::Malformed {
                        kind: Malformation::CutOff,
                        name,
                    },
                    (None, _) => RawCall::Malformed {
                        kind: Malformation::Shape("no <name>"),
                        name: None,
                    },
                    (name, None) => RawCall::Malformed {
                        kind: Malformation::Shape("no <arguments>"),
                        name,
                    },
                };
                return Step::Done(call, end);
            }
            if !self.at_end
                && (rest.is_empty()
                    || [XML_NAME, XML_ARGS, XML_CLOSE]
                        .iter()
                        .any(|m| partial(rest, m)))
            {
                return Step::Wait;
            }
            if rest.starts_with(XML_NAME) {
                let body = i + XML_NAME.len();
                match memmem::find(&text.as_bytes()[body..], XML_NAME_CLOSE.as_bytes()) {
                    Some(n) => {
                        name = Some(text[body..body + n].trim().to_owned());
                        i = body + n + XML_NAME_CLOSE.len();
                    }
                    None if self.at_end => {
                        return Step::Done(
                            RawCall::Malformed {
                                kind: Malformation::CutOff,
                                name: None,
                            },
                            text.len(),
                        );
                    }
                    None => return Step::Wait,
                }
            } else if rest.starts_with(XML_ARGS) {
                let body = i + XML_ARGS.len();
                let j = skip_ws(text, body);
                if text[j..].starts_with(XML_ARGS_CLOSE) {
                    arguments = Some(Value::Object(Default::default()));
                    i = j + XML_ARGS_CLOSE.len();
                    continue;
                }
                match self.wrapped_json(body, XML_ARGS_CLOSE) {
                    Ok((value, end)) => {
                        arguments = Some(value);
                        i = end;
                    }
                    Err(Step::Done(RawCall::Malformed { kind, .. }, end)) => {
                        return Step::Done(RawCall::Malformed { kind, name }, end);
                    }
                    Err(step) => return step,
                }
            } else {
                return self.malformed(
                    i,
                    Malformation::Shape("text other than <name> and <arguments>"),
                    name,
                );
            }
        }
    }

    /// A bare object in the reply: a call only when it has a `name` and `arguments` or
    /// `parameters` (anything else is prose, llama.cpp#18183).
    fn json(&mut self, at: usize) -> Step {
        let text = self.text;
        // A call's object starts with a key; anything else is prose, decided without a parse.
        // A run of `{` (a reply of a million of them) is passed over in one go: only the last
        // `{` of a run can be followed by a key.
        let mut last = at;
        loop {
            let key = skip_ws(text, last + 1);
            match text.as_bytes().get(key) {
                Some(b'{') => last = key,
                Some(b'"') if last == at => break,
                Some(b'"') => return Step::Prose(last),
                None if !self.at_end => {
                    return if last == at {
                        Step::Wait
                    } else {
                        Step::Prose(last)
                    };
                }
                _ => return Step::Prose(key.min(text.len())),
            }
        }
        let attempted = looks_like_call(&text[at..]);
        match read_json(text, at) {
            Json::Value(v, end) => {
                let shaped = v.get("name").is_some_and(Value::is_string)
                    && (v.get("arguments").is_some() || v.get("parameters").is_some());
                if shaped {
                    Step::Done(RawCall::Object(v), end)
                } else {
                    Step::Prose(end)
                }
            }
            Json::Eof if !self.at_end => Step::Wait,
            Json::Eof if attempted => self.cut_off(),
            Json::Bad(why) if attempted => {
                // The call's end is unknown: the rest of its line goes with it.
                self.malformed(at, Malformation::BadJson(why), None)
            }
            _ => Step::Prose(at + 1),
        }
    }

    /// ReAct: line-oriented, markers only at the start of a line.
    fn react(&mut self, from: usize) -> Scan {
        let text = self.text;
        let mut pieces = Vec::new();
        let mut pos = from;
        let mut search = from;
        loop {
            // The next line that starts with a marker.
            let mut found = None;
            let mut from = search;
            while let Some(nl) = next_line(text, from) {
                let lead = skip_blank(text, nl);
                let rest = &text[lead..];
                if let Some(m) = [REACT_ACTION, REACT_ANSWER, REACT_OBSERVATION]
                    .into_iter()
                    .find(|m| rest.starts_with(m))
                {
                    found = Some((nl, lead, m));
                    break;
                }
                match memchr::memchr(b'\n', &text.as_bytes()[nl..]) {
                    Some(n) => from = nl + n + 1,
                    None => break,
                }
            }
            let Some((line, lead, marker)) = found else {
                // Hold back the last line until it is whole: it may still become a marker.
                let end = if self.at_end {
                    text.len()
                } else {
                    text.rfind('\n').map_or(0, |n| n + 1).max(pos)
                };
                push_content(&mut pieces, pos..end);
                return Scan {
                    pieces,
                    consumed: end,
                    ended: false,
                };
            };
            push_content(&mut pieces, pos..line);
            if marker == REACT_OBSERVATION {
                return Scan {
                    pieces,
                    consumed: text.len(),
                    ended: true,
                };
            }
            if marker == REACT_ANSWER {
                pieces.push(Piece::Answer);
                // The blanks after the marker stay content: the stream may not have them yet.
                let after = lead + REACT_ANSWER.len();
                pos = after;
                search = after;
                continue;
            }
            match self.react_action(lead) {
                Step::Done(call, end) => {
                    pieces.push(Piece::Call(call));
                    pos = end;
                    search = end;
                }
                Step::Prose(end) => {
                    push_content(&mut pieces, line..end);
                    pos = end;
                    search = end;
                }
                Step::Wait => {
                    return Scan {
                        pieces,
                        consumed: line,
                        ended: false,
                    };
                }
            }
        }
    }

    fn react_action(&mut self, at: usize) -> Step {
        let text = self.text;
        let name_at = at + REACT_ACTION.len();
        let Some(nl) = memchr::memchr(b'\n', &text.as_bytes()[name_at..]).map(|n| name_at + n)
        else {
            if !self.at_end {
                return Step::Wait;
            }
            let name = text[name_at..].trim().to_owned();
            return Step::Done(
                RawCall::Malformed {
                    kind: Malformation::Shape("no Action Input"),
                    name: Some(name),
                },
                text.len(),
            );
        };
        let name = text[name_at..nl].trim().to_owned();
        let input = skip_ws(text, nl + 1);
        let rest = &text[input..];
        if !self.at_end && (rest.is_empty() || partial(rest, REACT_INPUT)) {
            return Step::Wait;
        }
        if !rest.starts_with(REACT_INPUT) {
            return Step::Done(
                RawCall::Malformed {
                    kind: Malformation::Shape("no Action Input"),
                    name: Some(name),
                },
                nl + 1,
            );
        }
        let value_at = skip_blank(text, input + REACT_INPUT.len());
        let line_end = memchr::memchr(b'\n', &text.as_bytes()[value_at..]).map(|n| value_at + n);
        if text.as_bytes().get(value_at) != Some(&b'{') {
            let Some(end) = line_end.or(self.at_end.then_some(text.len())) else {
                return Step::Wait;
            };
            let raw = text[value_at..end].trim();
            let call = if raw.is_empty() || raw == "{}" {
                RawCall::Named {
                    name,
                    arguments: Value::Object(Default::default()),
                }
            } else {
                RawCall::Malformed {
                    kind: Malformation::Shape("Action Input is not a JSON object"),
                    name: Some(name),
                }
            };
            return Step::Done(call, end);
        }
        match read_json(text, value_at) {
            Json::Value(arguments, end) => Step::Done(RawCall::Named { name, arguments }, end),
            Json::Eof if !self.at_end => Step::Wait,
            Json::Eof => Step::Done(
                RawCall::Malformed {
                    kind: Malformation::CutOff,
                    name: Some(name),
                },
                text.len(),
            ),
            Json::Bad(why) => match line_end.or(self.at_end.then_some(text.len())) {
                Some(end) => Step::Done(
                    RawCall::Malformed {
                        kind: Malformation::BadJson(why),
                        name: Some(name),
                    },
                    end,
                ),
                None => Step::Wait,
            },
        }
    }
}

/// The start of the first line at or after `from` (`from` itself when it starts one).
fn next_line(text: &str, from: usize) -> Option<usize> {
    if from > text.len() {
        return None;
    }
    if from == 0 || text.as_bytes()[from - 1] == b'\n' {
        return Some(from);
    }
    memchr::memchr(b'\n', &text.as_bytes()[from..]).map(|n| from + n + 1)
}

/// Skips spaces and tabs (not newlines).
fn skip_blank(text: &str, mut at: usize) -> usize {
    let bytes = text.as_bytes();
    while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b'\t') {
        at += 1;
    }
    at
}

/// Whether a `{` starts what is plainly meant as a call: `{"name"` then `:`.
fn looks_like_call(text: &str) -> bool {
    let mut i = skip_ws(text, 1);
    if !text[i..].starts_with("\"name\"") {
        return false;
    }
    i = skip_ws(text, i + 6);
    text[i..].starts_with(':')
}

fn name_of(value: &Value) -> Option<String> {
    value.get("name").and_then(Value::as_str).map(String::from)
}

/// Adds content, joined to the content just before it (a `{` of prose in the json format
/// would otherwise make a piece of its own).
fn push_content(pieces: &mut Vec<Piece>, range: Range<usize>) {
    if range.is_empty() {
        return;
    }
    if let Some(Piece::Content(last)) = pieces.last_mut()
        && last.end == range.start
    {
        last.end = range.end;
        return;
    }
    pieces.push(Piece::Content(range));
}
