//! The response streams of one Streamable HTTP session, and the task that routes the engine's
//! outbound messages to them.
//!
//! Every POST that carries requests gets a stream; the engine tags each outbound message with
//! the request it belongs to ([`Route`]), so the router puts a response and the progress and
//! log messages about its request on that request's stream, and ends the stream once every
//! request on it is answered. Messages about nothing in particular go to the session's GET
//! stream. Each event gets an id (`<stream>-<seq>`, unique within the session) and is kept for
//! a while, so a client whose connection dropped can resume with `Last-Event-ID` and lose
//! nothing; the server can also end a stream on purpose (SEP-1699 polling) and the answer
//! then arrives on the resumed stream.

use std::{collections::HashMap, sync::Arc};

use bytes::Bytes;
use tokio::sync::mpsc;

use super::event_store::EventStore;
use crate::{
    jsonrpc::{ErrorObject, RequestId},
    sync::Mutex,
    transport::{Inbound, OutFrame, Outbound, Route},
};

/// What a stream carries to its HTTP response.
#[derive(Clone, Debug)]
pub(crate) struct Delivery {
    /// `<stream>-<seq>`.
    pub(crate) event_id: String,
    /// One JSON-RPC message (or a batch response).
    pub(crate) json: Bytes,
    /// Whether this answers the last request on the stream.
    pub(crate) is_final: bool,
}

struct Stream {
    /// The live HTTP response, if one is attached.
    live: Option<mpsc::UnboundedSender<Delivery>>,
    /// Requests on this stream still to be answered.
    pending: usize,
    next_seq: u64,
    /// The sequence number of the event that answered the last request.
    final_seq: Option<u64>,
    finished: bool,
}

struct Table {
    next_stream: u64,
    by_request: HashMap<RequestId, u64>,
    streams: HashMap<u64, Stream>,
    standalone: Option<u64>,
}

/// Where a session's events go for resumption: the server's store and the session's id.
pub(crate) struct Resumable {
    pub(crate) store: Arc<dyn EventStore>,
    pub(crate) session: String,
}

/// Takes the messages no stream of this replica can carry (a scaled-out session: another
/// replica may hold the GET stream).
pub(crate) type Spill = Arc<dyn Fn(Bytes) + Send + Sync>;

/// Copies every event of a local stream elsewhere (`stream`, `seq`, the message, whether it
/// ends the stream), so another replica can resume the stream.
pub(crate) type Mirror = Arc<dyn Fn(u64, u64, &Bytes, bool) + Send + Sync>;

/// The streams of one session.
pub(crate) struct Streams {
    table: Mutex<Table>,
    /// `None`: nothing is resumable (stateless requests, or resumption turned off).
    resumable: Option<Resumable>,
    /// Responses are plain JSON bodies, which carry nothing before the answer.
    json_only: bool,
    /// Set for a session shared by several replicas: what has no local stream goes here.
    spill: Option<Spill>,
    mirror: Option<Mirror>,
}

/// A stream picked up again: the events the client missed, then (unless the stream had
/// finished) the live ones.
pub(crate) struct Resumed {
    pub(crate) replayed: Vec<Delivery>,
    pub(crate) live: Option<mpsc::UnboundedReceiver<Delivery>>,
}

impl Drop for Streams {
    fn drop(&mut self) {
        if let Some(r) = &self.resumable {
            r.store.forget_session(&r.session);
        }
    }
}

/// A stream just opened: its id and the receiver its HTTP response reads.
pub(crate) struct Opened {
    pub(crate) stream: u64,
    pub(crate) rx: mpsc::UnboundedReceiver<Delivery>,
}

impl Streams {
    pub(crate) fn new(resumable: Option<Resumable>, json_only: bool) -> Arc<Self> {
        Self::shared(resumable, json_only, 1, None, None)
    }

    /// Streams of a session that other replicas serve too: stream numbers start at
    /// `first_stream` (so event ids of different replicas never collide), messages without
    /// a local stream go to `spill`, and the events of local streams are copied to `mirror`.
    pub(crate) fn shared(
        resumable: Option<Resumable>,
        json_only: bool,
        first_stream: u64,
        spill: Option<Spill>,
        mirror: Option<Mirror>,
    ) -> Arc<Self> {
        Arc::new(Streams {
            table: Mutex::new(Table {
                next_stream: first_stream.max(1),
                by_request: HashMap::new(),
                streams: HashMap::new(),
                standalone: None,
            }),
            resumable,
            json_only,
            spill,
            mirror,
        })
    }

    /// Whether any request on `ids` is already waiting for an answer (a client reusing an id
    /// in flight; its answer would be misrouted).
    pub(crate) fn any_in_flight(&self, ids: &[RequestId]) -> bool {
        let table = self.table.lock();
        ids.iter().any(|id| table.by_request.contains_key(id))
    }

    /// Opens a stream for the requests `ids`, answered as one unit (`batch`) or one by one.
    pub(crate) fn open(&self, ids: &[RequestId], batch: bool) -> Opened {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut table = self.table.lock();
        self.compact(&mut table);
        let stream = table.next_stream;
        table.next_stream += 1;
        for id in ids {
            table.by_request.insert(id.clone(), stream);
        }
        let pending = if batch { 1 } else { ids.len() };
        if let Some(mirror) = &self.mirror {
            // Marks the stream as opened (event 0 is the priming event, which carries nothing),
            // so a resumption elsewhere finds it even before its first message.
            mirror(stream, 0, &Bytes::new(), false);
        }
        table.streams.insert(
            stream,
            Stream {
                live: Some(tx),
                pending,
                next_seq: 1,
                final_seq: None,
                finished: false,
            },
        );
        Opened { stream, rx }
    }

    /// Opens the session's GET stream; `None` if one is already attached.
    pub(crate) fn open_standalone(&self) -> Option<Opened> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut table = self.table.lock();
        if let Some(id) = table.standalone
            && let Some(s) = table.streams.get_mut(&id)
        {
            if s.live.as_ref().is_some_and(|l| !l.is_closed()) {
                return None;
            }
            s.live = Some(tx);
            return Some(Opened { stream: id, rx });
        }
        let stream = table.next_stream;
        table.next_stream += 1;
        table.standalone = Some(stream);
        table.streams.insert(
            stream,
            Stream {
                live: Some(tx),
                pending: 0,
                next_seq: 1,
                final_seq: None,
                finished: false,
            },
        );
        Some(Opened { stream, rx })
    }

    /// Reattaches a dropped stream after `last_event_id`: what the client missed (replayed from
    /// the store), and the live stream from there on unless it already finished. `None` if the
    /// id names no stream of this session, or the session keeps nothing to resume.
    pub(crate) async fn resume(&self, last_event_id: &str) -> Option<Resumed> {
        let (stream, seq) = parse_event_id(last_event_id)?;
        let resumable = self.resumable.as_ref()?;
        let (tx, rx) = mpsc::unbounded_channel();
        // Live delivery starts right after `upto`; the store supplies everything up to it, so
        // nothing is lost or sent twice whatever arrives meanwhile.
        let (upto, final_seq, finished) = {
            let mut table = self.table.lock();
            let s = table.streams.get_mut(&stream)?;
            if !s.finished {
                s.live = Some(tx);
            }
            (s.next_seq - 1, s.final_seq, s.finished)
        };
        let replayed = resumable
            .store
            .replay(&resumable.session, stream, seq)
            .await
            .into_iter()
            .filter(|(n, _)| *n <= upto)
            .map(|(n, json)| Delivery {
                event_id: format!("{stream}-{n}"),
                json,
                is_final: Some(n) == final_seq,
            })
            .collect();
        Some(Resumed {
            replayed,
            live: if finished { None } else { Some(rx) },
        })
    }

    /// Whether the stream has sent its last answer.
    pub(crate) fn is_finished(&self, stream: u64) -> bool {
        self.table
            .lock()
            .streams
            .get(&stream)
            .is_none_or(|s| s.finished)
    }

    /// Routes one outbound message. Returns the id of a server request that no stream can
    /// carry, so the caller can fail it at once instead of letting its handler wait.
    pub(crate) fn route(&self, frame: OutFrame) -> Option<RequestId> {
        let json = Bytes::from(frame.bytes);
        let mut table = self.table.lock();
        let (stream, answers) = match &frame.route {
            Route::Response(id) => (table.by_request.remove(id), true),
            Route::BatchResponse(ids) => {
                let mut found = None;
                for id in ids {
                    found = found.or(table.by_request.remove(id));
                }
                (found, true)
            }
            // A JSON response has room only for the answer; a shared session's GET stream
            // carries the rest (progress and logs included), wherever it is held.
            Route::Related(_) if self.json_only && self.spill.is_some() => (None, false),
            // A JSON response has room only for the answer, so a request the server asks while
            // working (sampling, elicitation, roots) goes to the GET stream, if one is open.
            Route::Related(_) if self.json_only => match server_request_id(&json) {
                Some(asked) => match table.standalone {
                    Some(standalone) => (Some(standalone), false),
                    None => return Some(asked),
                },
                None => (None, false),
            },
            Route::Related(id) => (
                table.by_request.get(id).copied().or(table.standalone),
                false,
            ),
            Route::Unrelated => (table.standalone, false),
        };
        if stream.is_none()
            && !answers
            && let Some(spill) = &self.spill
        {
            spill(json);
            return None;
        }
        let Some(stream) = stream else {
            tracing::debug!(target: "oxmcp::http", "no stream for an outbound message ({:?}); dropped", frame.route);
            return server_request_id(&json);
        };
        let Some(s) = table.streams.get_mut(&stream) else {
            return server_request_id(&json);
        };
        if answers {
            s.pending = s.pending.saturating_sub(1);
        }
        let is_final = answers && s.pending == 0;
        let seq = s.next_seq;
        s.next_seq += 1;
        let delivery = Delivery {
            event_id: format!("{stream}-{seq}"),
            json,
            is_final,
        };
        if let Some(r) = &self.resumable {
            r.store
                .append(&r.session, stream, seq, delivery.json.clone());
        }
        if let Some(mirror) = &self.mirror {
            mirror(stream, seq, &delivery.json, is_final);
        }
        if let Some(live) = &s.live
            && live.send(delivery).is_err()
        {
            // The client went away; keep the events for its resumption.
            s.live = None;
        }
        if is_final {
            s.finished = true;
            s.final_seq = Some(seq);
            s.live = None;
            if self.resumable.is_none() {
                table.streams.remove(&stream);
            }
        }
        None
    }

    /// Ends the live response of the stream carrying `id`, keeping the stream resumable.
    pub(crate) fn cut(&self, id: &RequestId) {
        let mut table = self.table.lock();
        if let Some(stream) = table.by_request.get(id).copied()
            && let Some(s) = table.streams.get_mut(&stream)
        {
            s.live = None;
        }
    }

    /// Ends every live response (the session is closing).
    pub(crate) fn end_all(&self) {
        let mut table = self.table.lock();
        for s in table.streams.values_mut() {
            s.live = None;
        }
        table.by_request.clear();
    }

    /// Forgets old finished streams: a client resumes within moments or not at all.
    fn compact(&self, table: &mut Table) {
        if table.streams.len() as u64 <= FINISHED_KEPT * 2 {
            return;
        }
        let horizon = table.next_stream.saturating_sub(FINISHED_KEPT);
        let standalone = table.standalone;
        let old: Vec<u64> = table
            .streams
            .iter()
            .filter(|(id, s)| s.finished && **id < horizon && Some(**id) != standalone)
            .map(|(id, _)| *id)
            .collect();
        for id in old {
            table.streams.remove(&id);
            if let Some(r) = &self.resumable {
                r.store.forget_stream(&r.session, id);
            }
        }
    }

    /// Whether any HTTP response is attached (an idle session has none).
    pub(crate) fn any_live(&self) -> bool {
        self.table
            .lock()
            .streams
            .values()
            .any(|s| s.live.as_ref().is_some_and(|l| !l.is_closed()))
    }
}

/// Finished streams kept for resumption, beyond which the oldest are forgotten.
const FINISHED_KEPT: u64 = 64;

/// `"<stream>-<seq>"` → `(stream, seq)`.
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

/// The id of a server-to-client request, or `None` for notifications and answers.
fn server_request_id(json: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Probe {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    let probe: Probe = serde_json::from_slice(json).ok()?;
    probe.method.and(probe.id)
}

/// What marks the error a server's own request gets when no stream can carry it to the
/// client (`data.reason`), so a caller that can wait for one (a task) tells it apart.
pub(crate) const STRANDED: &str = "no-stream-to-the-client";

/// The error a request the server makes gets when no stream can carry it: answered on the
/// client's behalf, so the handler sees a clear error now rather than a timeout later.
pub(crate) fn stranded_error() -> ErrorObject {
    ErrorObject::internal(
        "the server cannot reach the client: no stream is open to carry its request (the \
         request it belongs to was answered or answers in plain JSON, and no GET stream is open)",
    )
    .with_data(serde_json::json!({ "reason": STRANDED }))
}

/// Whether `error` is [`stranded_error`]'s.
pub(crate) fn is_stranded(error: &ErrorObject) -> bool {
    error
        .data
        .as_ref()
        .and_then(|d| d.get("reason"))
        .and_then(|r| r.as_str())
        == Some(STRANDED)
}

/// Moves the engine's outbound messages onto streams until the engine closes.
pub(crate) async fn route(
    streams: Arc<Streams>,
    mut outbound: mpsc::Receiver<Outbound>,
    inbound: mpsc::Sender<Inbound>,
) {
    while let Some(item) = outbound.recv().await {
        match item {
            Outbound::Frame(frame) => {
                if let Some(stranded) = streams.route(frame) {
                    // Answer on the client's behalf, so the handler sees a clear error now
                    // rather than a timeout much later.
                    let error = stranded_error();
                    let reply = crate::jsonrpc::encode_error(Some(&stranded), &error);
                    if inbound
                        .send(Inbound::Frame(Bytes::from(reply)))
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
            Outbound::CloseStream(id) => streams.cut(&id),
            Outbound::Close => break,
        }
    }
    streams.end_all();
    let _ = inbound.send(Inbound::Closed(None)).await;
}
