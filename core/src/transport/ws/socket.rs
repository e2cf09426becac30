//! An open WebSocket as a transport [`Link`]: text frames in and out, pings, the closing
//! handshake. Both sides run this once the upgrade is done.
//!
//! Two tasks share the socket: a reader (this connection's main task) and a writer, so a
//! peer that sends while we write never deadlocks against us. The reader hands each text
//! frame to the session as [`Inbound::Message`]; when the peer breaks a rule (a binary frame,
//! a message over the cap, text that is not UTF-8) it asks the writer to close with the
//! matching code. The writer sends what the session queues, pings on an interval and closes
//! a peer that stays silent.
//!
//! Closing is where sockets usually go wrong, so it is done in full: our close frame goes out,
//! then the reader waits (briefly) for the peer's, and only then is the socket dropped. When
//! the framing library can no longer read (the peer broke the framing itself, or sent a
//! message over the cap, whose payload is still on the wire), what the peer still sends is
//! read and discarded until it stops: closing a TCP socket with unread input makes the kernel
//! answer with a reset, which can destroy our close frame before the peer reads it.
//! The writer ends (dropping the session's outbound queue) before the session hears that the
//! connection closed, so handlers still running are cancelled at once: no answer could reach
//! the peer any more.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use futures::{
    SinkExt, StreamExt,
    stream::{SplitSink, SplitStream},
};
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWrite},
    sync::mpsc,
    time::Instant,
};
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{
        Error as WsError, Message,
        error::ProtocolError,
        protocol::{CloseFrame, frame::coding::CloseCode},
    },
};
use tokio_util::sync::CancellationToken;

use super::WsSettings;
use crate::{
    Error,
    transport::{Inbound, Link, OUTBOUND_QUEUE, Outbound},
};

/// How long each step of the closing handshake may take: our close frame going out, the
/// peer's answer coming back.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(3);
/// While discarding what a peer still sends after we closed on it: a pause this long means
/// nothing more is in flight.
const DRAIN_QUIET: Duration = Duration::from_millis(250);
/// Most bytes of queued frames written before one flush.
const WRITE_BATCH: usize = 1 << 20;
/// Keepalive intervals and timeouts are held to this, so no deadline overflows the clock.
const LONGEST_WAIT: Duration = Duration::from_secs(365 * 24 * 3600);

/// A close frame we send: its code and reason.
#[derive(Clone, Copy, Debug)]
struct Closing {
    code: CloseCode,
    reason: &'static str,
}

impl Closing {
    const NORMAL: Closing = Closing::new(CloseCode::Normal, "");
    const BINARY: Closing = Closing::new(
        CloseCode::Unsupported,
        "binary frames are not MCP messages: send JSON-RPC as text",
    );
    const TOO_BIG: Closing = Closing::new(CloseCode::Size, "message too big");
    const NOT_UTF8: Closing = Closing::new(CloseCode::Invalid, "a text frame that is not UTF-8");
    const BROKEN_FRAMING: Closing = Closing::new(CloseCode::Protocol, "WebSocket protocol error");
    const SILENT: Closing = Closing::new(CloseCode::Error, "keepalive ping timeout");

    const fn new(code: CloseCode, reason: &'static str) -> Closing {
        Closing { code, reason }
    }

    fn frame(self) -> Message {
        Message::Close(Some(CloseFrame {
            code: self.code,
            reason: self.reason.into(),
        }))
    }
}

/// When the peer was last heard from (any frame: data, ping, pong, close).
struct Heard {
    start: Instant,
    millis: AtomicU64,
}

impl Heard {
    fn new() -> Self {
        Heard {
            start: Instant::now(),
            millis: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let millis = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.millis.store(millis, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.start + Duration::from_millis(self.millis.load(Ordering::Relaxed))
    }
}

/// Runs `socket` as a link; `peer` names the other side in messages ("the server").
pub(super) fn link<S>(socket: WebSocketStream<S>, settings: &WsSettings, peer: &'static str) -> Link
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
    tokio::spawn(run(socket, settings.clone(), peer, in_tx, out_rx));
    Link {
        inbound: in_rx,
        outbound: out_tx,
    }
}

async fn run<S>(
    socket: WebSocketStream<S>,
    settings: WsSettings,
    peer: &'static str,
    inbound: mpsc::Sender<Inbound>,
    outbound: mpsc::Receiver<Outbound>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sink, mut stream) = socket.split();
    let heard = Arc::new(Heard::new());
    let (close_tx, close_rx) = mpsc::channel(1);
    let stop = CancellationToken::new();
    let writer_done = CancellationToken::new();
    let writer = tokio::spawn(write(
        sink,
        outbound,
        close_rx,
        Keepalive::new(&settings, heard.clone()),
        stop.clone(),
        writer_done.clone(),
    ));
    let reader = Reader {
        inbound: &inbound,
        close: close_tx,
        heard: &heard,
        writer_done: &writer_done,
        peer,
    };
    let ended = reader.read(&mut stream).await;
    // Nothing more is read: the writer sends nothing more either.
    stop.cancel();
    let (sink, write_error) = match writer.await {
        Ok((sink, error)) => (Some(sink), error),
        Err(_) => (None, Some(Error::closed("the WebSocket writer failed"))),
    };
    if ended.drain
        && let Some(sink) = sink
        && let Ok(mut socket) = stream.reunite(sink)
    {
        drain(socket.get_mut()).await;
    }
    // A writer that failed (a silent peer, a broken pipe) ended the connection first.
    let _ = inbound
        .send(Inbound::Closed(write_error.or(ended.reason)))
        .await;
}

/// How the reading ended.
struct Ended {
    /// Why, for the session (`None`: a normal close).
    reason: Option<Error>,
    /// The framing library gave up mid-stream: discard the rest by hand.
    drain: bool,
}

struct Reader<'a> {
    inbound: &'a mpsc::Sender<Inbound>,
    close: mpsc::Sender<Closing>,
    heard: &'a Heard,
    writer_done: &'a CancellationToken,
    peer: &'static str,
}

impl Reader<'_> {
    async fn read<S>(self, stream: &mut SplitStream<WebSocketStream<S>>) -> Ended
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        // Set once our close frame is out (or the writer gave up): the peer has until then to
        // answer with its own.
        let mut deadline: Option<Instant> = None;
        // Why we are closing on the peer, when it broke a rule.
        let mut fault: Option<Error> = None;
        let mut peer_close: Option<Option<CloseFrame>> = None;
        loop {
            let next = tokio::select! {
                biased;
                _ = self.writer_done.cancelled(), if deadline.is_none() => {
                    deadline = Some(Instant::now() + CLOSE_TIMEOUT);
                    continue;
                }
                // We closed and the peer never answered: nothing more to learn from it.
                _ = sleep_until(deadline) => return Ended { reason: fault, drain: false },
                next = stream.next() => next,
            };
            let message = match next {
                None => break,
                Some(Ok(message)) => message,
                Some(Err(error)) => {
                    let (closing, reason) = self.broken(error);
                    return self.give_up(closing, fault.or(reason)).await;
                }
            };
            self.heard.touch();
            match message {
                Message::Text(text) if deadline.is_none() && fault.is_none() => {
                    if self
                        .inbound
                        .send(Inbound::Message(Bytes::from(text)))
                        .await
                        .is_err()
                    {
                        // The session is gone without closing us first; close for it.
                        let _ = self.close.try_send(Closing::NORMAL);
                    }
                }
                Message::Binary(_) if fault.is_none() => {
                    fault = Some(Error::Protocol(format!(
                        "{} sent a binary frame; MCP messages are text frames",
                        self.peer
                    )));
                    let _ = self.close.try_send(Closing::BINARY);
                }
                Message::Close(frame) => {
                    peer_close = Some(frame);
                    // The library answers it; a client then waits for the server to hang up,
                    // which a broken server may never do.
                    deadline.get_or_insert(Instant::now() + CLOSE_TIMEOUT);
                }
                // Closing: what the peer still sends is dropped.
                Message::Text(_) | Message::Binary(_) => {}
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
        Ended {
            reason: fault.or_else(|| self.peer_closed(peer_close)),
            drain: false,
        }
    }

    /// The close frame and the session's reason for an error the framing library cannot read
    /// past.
    fn broken(&self, error: WsError) -> (Option<Closing>, Option<Error>) {
        let peer = self.peer;
        match error {
            // The connection went away under us: nothing to close, nothing to drain.
            WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
                (None, self.peer_closed(None))
            }
            WsError::Io(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::BrokenPipe
                        | std::io::ErrorKind::UnexpectedEof
                ) =>
            {
                (None, self.peer_closed(None))
            }
            WsError::Capacity(e) => (
                Some(Closing::TOO_BIG),
                Some(Error::Protocol(format!(
                    "{peer} sent a message too big: {e}"
                ))),
            ),
            WsError::Utf8(_) => (
                Some(Closing::NOT_UTF8),
                Some(Error::Protocol(format!(
                    "{peer} sent a text frame that is not UTF-8"
                ))),
            ),
            WsError::Protocol(e) => (
                Some(Closing::BROKEN_FRAMING),
                Some(Error::Protocol(format!(
                    "{peer} broke the WebSocket protocol: {e}"
                ))),
            ),
            WsError::Io(e) => (None, Some(Error::from(e))),
            other => (
                None,
                Some(Error::closed(format!("the WebSocket failed: {other}"))),
            ),
        }
    }

    /// Closes (when a frame is due) once the library stopped reading, and has what the peer
    /// still sends discarded.
    async fn give_up(self, closing: Option<Closing>, reason: Option<Error>) -> Ended {
        if let Some(closing) = closing {
            let _ = self.close.try_send(closing);
            // The close frame goes out before the reading side is torn down.
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, self.writer_done.cancelled()).await;
        }
        Ended {
            reason,
            drain: closing.is_some(),
        }
    }

    /// The session's reason for the peer's close frame: none for a normal close.
    fn peer_closed(&self, frame: Option<Option<CloseFrame>>) -> Option<Error> {
        match frame {
            Some(Some(frame)) if frame.code != CloseCode::Normal => {
                let code = u16::from(frame.code);
                let reason = frame.reason.as_str();
                Some(Error::closed(if reason.is_empty() {
                    format!("{} closed the WebSocket with {code}", self.peer)
                } else {
                    format!("{} closed the WebSocket with {code} ({reason})", self.peer)
                }))
            }
            Some(_) => None,
            None => Some(Error::closed(format!(
                "{} dropped the connection without closing the WebSocket",
                self.peer
            ))),
        }
    }
}

/// The writer's pings and its rule for a silent peer.
struct Keepalive {
    /// `None`: no pings, and silence is never held against the peer.
    interval: Option<Duration>,
    /// How long the peer may stay silent.
    silence: Duration,
    heard: Arc<Heard>,
}

impl Keepalive {
    fn new(settings: &WsSettings, heard: Arc<Heard>) -> Self {
        let interval = settings.ping_interval.min(LONGEST_WAIT);
        Keepalive {
            interval: (!interval.is_zero()).then_some(interval),
            silence: interval + settings.ping_timeout.min(LONGEST_WAIT),
            heard,
        }
    }

    /// Resolves once the peer has been silent too long (never without keepalive).
    async fn silenced(&self) {
        if self.interval.is_none() {
            return std::future::pending().await;
        }
        loop {
            let gone_at = self.heard.last() + self.silence;
            if gone_at <= Instant::now() {
                return;
            }
            tokio::time::sleep_until(gone_at).await;
        }
    }

    fn gone(&self) -> Error {
        Error::closed(format!(
            "the peer answered no ping for {:?}: taken for gone",
            self.silence
        ))
    }
}

type Sink<S> = SplitSink<WebSocketStream<S>, Message>;

/// Sends what the session queues and the pings, until a close; returns the sink (for a
/// drain) and why writing stopped, when it failed.
async fn write<S>(
    mut sink: Sink<S>,
    mut outbound: mpsc::Receiver<Outbound>,
    mut close: mpsc::Receiver<Closing>,
    keepalive: Keepalive,
    stop: CancellationToken,
    done: CancellationToken,
) -> (Sink<S>, Option<Error>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // A first tick one interval from now; no ticks at all without keepalive.
    let period = keepalive.interval.unwrap_or(LONGEST_WAIT);
    let mut pings = tokio::time::interval_at(Instant::now() + period, period);
    pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let error = loop {
        let closing = tokio::select! {
            biased;
            _ = stop.cancelled() => break None,
            Some(closing) = close.recv() => closing,
            item = outbound.recv() => match item {
                Some(Outbound::Frame(frame)) => {
                    let sent = tokio::select! {
                        sent = write_batch(&mut sink, frame.bytes, &mut outbound) => sent,
                        _ = stop.cancelled() => break None,
                        _ = keepalive.silenced() => break Some(keepalive.gone()),
                    };
                    match sent {
                        Ok(None) => continue,
                        Ok(Some(closing)) => closing,
                        Err(e) => break Some(write_failed(e)),
                    }
                }
                Some(Outbound::CloseStream(_)) => continue,
                Some(Outbound::Close) | None => Closing::NORMAL,
            },
            _ = pings.tick(), if keepalive.interval.is_some() => {
                let ping = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(Message::Ping(Bytes::new())));
                match ping.await {
                    Ok(Ok(())) => continue,
                    Ok(Err(e)) => break Some(write_failed(e)),
                    Err(_) => break Some(keepalive.gone()),
                }
            }
            _ = keepalive.silenced() => {
                send_close(&mut sink, Closing::SILENT).await;
                break Some(keepalive.gone());
            }
        };
        send_close(&mut sink, closing).await;
        break None;
    };
    done.cancel();
    (sink, error)
}

/// Writes `first` and whatever else is queued, then flushes once. `Some(closing)`: the
/// session asked to close after these.
async fn write_batch<S>(
    sink: &mut Sink<S>,
    first: Vec<u8>,
    outbound: &mut mpsc::Receiver<Outbound>,
) -> Result<Option<Closing>, WsError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut batch = 0;
    let mut next = Some(first);
    let mut closing = None;
    while let Some(bytes) = next.take() {
        batch += bytes.len();
        match String::from_utf8(bytes) {
            Ok(text) => sink.feed(Message::text(text)).await?,
            // Our own encoder writes UTF-8 only; a frame that is not is a bug, not the peer's.
            Err(_) => {
                tracing::error!(target: "oxmcp::ws", "dropped an outbound frame that is not UTF-8")
            }
        }
        if batch >= WRITE_BATCH {
            break;
        }
        match outbound.try_recv() {
            Ok(Outbound::Frame(frame)) => next = Some(frame.bytes),
            Ok(Outbound::CloseStream(_)) | Err(mpsc::error::TryRecvError::Empty) => {}
            Ok(Outbound::Close) | Err(mpsc::error::TryRecvError::Disconnected) => {
                closing = Some(Closing::NORMAL)
            }
        }
    }
    sink.flush().await?;
    Ok(closing)
}

/// Sends a close frame, giving up on a peer that does not take it in time.
async fn send_close<S>(sink: &mut Sink<S>, closing: Closing)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let sent = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(closing.frame())).await;
    if let Ok(Err(e)) = sent {
        tracing::debug!(target: "oxmcp::ws", "close frame not sent: {e}");
    }
}

fn write_failed(error: WsError) -> Error {
    match error {
        WsError::Io(e) => Error::from(e),
        other => Error::closed(format!("the WebSocket failed: {other}")),
    }
}

/// Reads and discards until the peer closes, goes quiet, or the closing time is up.
async fn drain<S: AsyncRead + Unpin>(socket: &mut S) {
    let deadline = Instant::now() + CLOSE_TIMEOUT;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let quiet = (Instant::now() + DRAIN_QUIET).min(deadline);
        match tokio::time::timeout_at(quiet, socket.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return,
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
