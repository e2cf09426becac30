//! Input that a host's event loop read, cut into frames for a session.
//!
//! A hosted transport does not read its pipe itself: the host's loop watches it (Node's
//! `'data'` events, an asyncio reader) and hands the bytes to a [`Feeder`], or lets the feeder
//! read the descriptor when it says it is readable. The feeder frames them with the same caps
//! as the transports' own readers (an oversized line is dropped as it arrives, never buffered)
//! and passes the frames to the session in order.
//!
//! Back-pressure: frames go straight into the session's inbound queue while it has room. When
//! it is full (the session is stuck behind a slow `initialize`, say), they wait in the
//! feeder's own backlog, which a small task on the host loop moves on as room appears;
//! [`Feeder::wants_input`] tells the host to stop reading meanwhile, and the callback given to
//! [`Feeder::on_room`] tells it to start again. Nothing is dropped.

use std::{
    collections::VecDeque,
    io,
    os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    task::Poll,
};

use futures::task::AtomicWaker;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Spawner;
use crate::{
    Error,
    jsonrpc::{FrameEvent, LineSplitter},
    sync::Mutex,
    transport::Inbound,
};

/// The most a feeder takes from the host in one piece before cutting frames out of it, and
/// the most it reads from a descriptor in one call.
const CHUNK: usize = 64 * 1024;

/// The size of one read from a descriptor.
const READ_BUF: usize = 16 * 1024;

/// Frames waiting behind a full session queue before the host is told to stop reading.
const BACKLOG_FRAMES: usize = 1024;

/// What ends the input once every frame before it has been delivered.
pub(crate) enum EndAction {
    /// Tell the session directly (a stdio server: the peer hung up, or reading failed).
    Close(Option<Error>),
    /// Tell the transport's supervisor, which speaks last (a child process).
    Signal(CancellationToken),
}

/// What [`Feeder::read_from`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// It read everything there was (a read came back short or would block); call again
    /// when the descriptor is readable.
    Drained,
    /// It stopped before the descriptor was empty (a chunk's worth, or the backlog is full):
    /// call again when [`Feeder::wants_input`] says so.
    More,
    /// End of stream, or a read error (which ends the input with that error): stop watching.
    Ended,
}

/// Cuts bytes from the host into frames and hands them to one session. Used on the host
/// thread; dropping it ends the input as end of stream does.
pub struct Feeder {
    lines: LineSplitter,
    shared: Arc<Shared>,
    tx: mpsc::Sender<Inbound>,
    /// What ends the input; parked at the end of the backlog by `finish`.
    end_action: Option<EndAction>,
    ended: bool,
    /// The descriptor the host watches, when the feeder owns it.
    input: Option<OwnedFd>,
    /// What `read_from` reads into, made on its first call.
    read_buf: Option<Box<[u8]>>,
}

impl std::fmt::Debug for Feeder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feeder")
            .field("ended", &self.ended)
            .field("backlog", &self.shared.pending.load(Ordering::Acquire))
            .finish_non_exhaustive()
    }
}

struct Shared {
    backlog: Mutex<VecDeque<Item>>,
    /// Items in the backlog plus the one the forwarder may be holding: while it is not zero,
    /// new frames queue behind them instead of overtaking.
    pending: AtomicUsize,
    forwarder: AtomicWaker,
    /// The backlog was long enough to stop the host's reads; the next drain says so.
    paused: AtomicBool,
    on_room: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
    /// The session or the transport is gone: input is refused.
    stop: CancellationToken,
}

enum Item {
    In(Inbound),
    End(EndAction),
}

impl Feeder {
    /// A feeder for a session's inbound queue `tx`; `max` caps a frame, `end` says what ends
    /// the input, `stop` (from the transport) refuses input once its side is closed. The
    /// backlog's forwarder runs on `spawner` (the host loop).
    pub(crate) fn new(
        max: usize,
        tx: mpsc::Sender<Inbound>,
        end: EndAction,
        stop: CancellationToken,
        spawner: &Spawner,
    ) -> Feeder {
        let shared = Arc::new(Shared {
            backlog: Mutex::new(VecDeque::new()),
            pending: AtomicUsize::new(0),
            forwarder: AtomicWaker::new(),
            paused: AtomicBool::new(false),
            on_room: Mutex::new(None),
            stop,
        });
        spawner.spawn(forward(shared.clone(), tx.clone()));
        Feeder {
            lines: LineSplitter::new(max),
            shared,
            tx,
            end_action: Some(end),
            ended: false,
            input: None,
            read_buf: None,
        }
    }

    /// Makes the feeder own the descriptor its input comes from (closed with the feeder),
    /// switched to non-blocking mode: the host must never block on it. If that fails, the
    /// input ends with the error.
    pub(crate) fn own_input(&mut self, fd: OwnedFd) {
        match crate::transport::stdio::set_nonblocking(&fd) {
            Ok(()) => self.input = Some(fd),
            Err(e) => self.fail(Error::from(e)),
        }
    }

    /// The descriptor the host should watch for readability, if the feeder owns one; call
    /// [`Feeder::read_available`] when it is readable.
    pub fn input_fd(&self) -> Option<BorrowedFd<'_>> {
        self.input.as_ref().map(|fd| fd.as_fd())
    }

    /// Gives the owned descriptor to the host, which then reads it itself and passes the
    /// bytes to [`Feeder::feed`] (Node wraps it in a stream, say). It is non-blocking.
    pub fn take_input_fd(&mut self) -> Option<OwnedFd> {
        self.input.take()
    }

    /// Reads the owned descriptor (see [`Feeder::read_from`]); `Ended` if there is none. The
    /// descriptor stays open until the feeder is dropped, so the host can stop watching it
    /// first.
    pub fn read_available(&mut self) -> Result<ReadOutcome, Error> {
        let Some(fd) = self.input.take() else {
            return Ok(ReadOutcome::Ended);
        };
        let outcome = self.read_from(fd.as_fd());
        self.input = Some(fd);
        outcome
    }

    /// Takes bytes the host read. Fails once the session no longer takes input (the host
    /// should stop reading and close its end).
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        self.check_open()?;
        while !bytes.is_empty() {
            let (chunk, rest) = bytes.split_at(bytes.len().min(CHUNK));
            bytes = rest;
            self.lines.extend(chunk);
            while let Some(event) = self.lines.next_frame() {
                self.deliver(event);
            }
        }
        self.check_open()
    }

    /// Reads what the descriptor has (it must be non-blocking), at most a chunk's worth.
    /// A read error ends the input with that error.
    ///
    /// A read that returns less than it asked for emptied the pipe or socket at that moment,
    /// so it ends with `Drained` without another read to see `EAGAIN` (one syscall less per
    /// message when requests come one at a time). Bytes that arrive meanwhile leave the
    /// descriptor readable, so the host's watch, which must be level-triggered (libuv's
    /// `uv_poll`, asyncio's readers and `poll(2)` all are), calls again.
    pub fn read_from(&mut self, fd: BorrowedFd<'_>) -> Result<ReadOutcome, Error> {
        self.check_open()?;
        // Kept between calls: a fresh buffer would be zeroed on every read.
        let mut buf = self
            .read_buf
            .take()
            .unwrap_or_else(|| vec![0u8; READ_BUF].into_boxed_slice());
        let outcome = self.read_into(fd, &mut buf);
        self.read_buf = Some(buf);
        outcome
    }

    fn read_into(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> Result<ReadOutcome, Error> {
        let mut total = 0;
        while total < CHUNK {
            if !self.wants_input() {
                return Ok(ReadOutcome::More);
            }
            // SAFETY: reading into a buffer we own, of the length we pass.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            match n {
                0 => {
                    self.end();
                    return Ok(ReadOutcome::Ended);
                }
                n if n > 0 => {
                    let n = n as usize;
                    total += n;
                    self.feed(&buf[..n])?;
                    // With a full backlog, go round once more to say `More` instead.
                    if n < buf.len() && self.wants_input() {
                        return Ok(ReadOutcome::Drained);
                    }
                }
                _ => {
                    let e = io::Error::last_os_error();
                    match e.kind() {
                        io::ErrorKind::WouldBlock => return Ok(ReadOutcome::Drained),
                        io::ErrorKind::Interrupted => continue,
                        _ => {
                            self.fail(Error::from(e));
                            return Ok(ReadOutcome::Ended);
                        }
                    }
                }
            }
        }
        Ok(ReadOutcome::More)
    }

    /// End of stream: a last line without a newline still counts, then the input ends.
    /// Later calls do nothing.
    pub fn end(&mut self) {
        self.finish(None);
    }

    /// Reading failed: the input ends with `error` (after the frames already taken).
    pub fn fail(&mut self, error: Error) {
        self.finish(Some(error));
    }

    /// Whether the host should keep reading: false while the backlog is long, or once the
    /// input is over.
    pub fn wants_input(&self) -> bool {
        !self.ended
            && !self.shared.stop.is_cancelled()
            && self.shared.pending.load(Ordering::Acquire) < BACKLOG_FRAMES
    }

    /// Whether the session no longer takes input.
    pub fn is_stopped(&self) -> bool {
        self.shared.stop.is_cancelled() || self.tx.is_closed()
    }

    /// Called on the host thread when a backlog that stopped the host's reads has drained.
    pub fn on_room(&self, callback: impl Fn() + Send + Sync + 'static) {
        *self.shared.on_room.lock() = Some(Box::new(callback));
    }

    fn check_open(&self) -> Result<(), Error> {
        if self.is_stopped() {
            return Err(Error::closed("the session no longer takes input"));
        }
        Ok(())
    }

    fn deliver(&mut self, event: FrameEvent) {
        let item = match event {
            FrameEvent::Frame(bytes) => Inbound::Frame(bytes),
            FrameEvent::Oversized { len } => Inbound::Oversized { len },
        };
        let shared = &self.shared;
        // Straight into the session's queue while nothing waits ahead of it.
        let item = if shared.pending.load(Ordering::Acquire) == 0 {
            match self.tx.try_send(item) {
                Ok(()) => return,
                Err(mpsc::error::TrySendError::Closed(_)) => return,
                Err(mpsc::error::TrySendError::Full(item)) => item,
            }
        } else {
            item
        };
        self.push(Item::In(item));
        if shared.pending.load(Ordering::Acquire) >= BACKLOG_FRAMES {
            shared.paused.store(true, Ordering::Release);
        }
    }

    fn push(&self, item: Item) {
        self.shared.pending.fetch_add(1, Ordering::AcqRel);
        self.shared.backlog.lock().push_back(item);
        self.shared.forwarder.wake();
    }

    fn finish(&mut self, error: Option<Error>) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Some(event) = self.lines.finish() {
            self.deliver(event);
        }
        // The end always goes through the backlog, behind every frame.
        let action = match self.end_action.take() {
            Some(EndAction::Close(_)) => EndAction::Close(error),
            Some(signal) => {
                if let Some(error) = error {
                    tracing::warn!(target: "oxmcp", "reading from the peer failed: {error}");
                }
                signal
            }
            None => return,
        };
        self.push(Item::End(action));
    }
}

impl Drop for Feeder {
    fn drop(&mut self) {
        self.end();
    }
}

/// Moves the backlog into the session's queue as room appears, in order, and ends the input.
async fn forward(shared: Arc<Shared>, tx: mpsc::Sender<Inbound>) {
    loop {
        let item = std::future::poll_fn(|cx| {
            shared.forwarder.register(cx.waker());
            match shared.backlog.lock().pop_front() {
                Some(item) => Poll::Ready(Some(item)),
                None if shared.stop.is_cancelled() => Poll::Ready(None),
                None => Poll::Pending,
            }
        });
        let item = tokio::select! {
            item = item => item,
            _ = shared.stop.cancelled() => None,
        };
        let Some(item) = item else { return };
        match item {
            Item::In(inbound) => {
                let sent = tx.send(inbound).await;
                shared.pending.fetch_sub(1, Ordering::AcqRel);
                if sent.is_err() {
                    return;
                }
                if shared.pending.load(Ordering::Acquire) < BACKLOG_FRAMES / 2
                    && shared.paused.swap(false, Ordering::AcqRel)
                    && let Some(room) = shared.on_room.lock().as_ref()
                {
                    room();
                }
            }
            Item::End(EndAction::Close(reason)) => {
                let _ = tx.send(Inbound::Closed(reason)).await;
                shared.pending.fetch_sub(1, Ordering::AcqRel);
                return;
            }
            Item::End(EndAction::Signal(token)) => {
                shared.pending.fetch_sub(1, Ordering::AcqRel);
                token.cancel();
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, atomic::AtomicUsize};

    use super::*;
    use crate::embed::HostLoop;

    /// A host loop on the test's own thread, run by hand.
    fn local_loop() -> (tokio::runtime::Runtime, HostLoop) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let host = HostLoop::new(runtime.handle().clone(), || {});
        (runtime, host)
    }

    fn frames(rx: &mut mpsc::Receiver<Inbound>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(item) = rx.try_recv() {
            out.push(match item {
                Inbound::Frame(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Inbound::Oversized { len } => format!("oversized {len}"),
                Inbound::Closed(reason) => format!("closed {}", reason.is_some()),
                Inbound::FrameWithHeaders(..) => "headers".into(),
                Inbound::Message(_) => "message".into(),
            });
        }
        out
    }

    #[test]
    fn a_full_session_queue_holds_frames_back_in_order_and_the_host_is_told_to_pause_and_resume() {
        let (_runtime, host) = local_loop();
        let (tx, mut rx) = mpsc::channel(2);
        let stop = CancellationToken::new();
        let spawner = Spawner::Host(host.clone());
        let mut feeder = Feeder::new(64, tx, EndAction::Close(None), stop, &spawner);
        let resumed = Arc::new(AtomicUsize::new(0));
        let seen = resumed.clone();
        feeder.on_room(move || {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        // Nobody reads the queue: two frames go in, the rest wait in the backlog.
        let mut input = String::new();
        for i in 0..(BACKLOG_FRAMES + 10) {
            input.push_str(&format!("{i}\n"));
        }
        feeder.feed(input.as_bytes()).unwrap();
        host.run_ready();
        assert!(!feeder.wants_input(), "a long backlog must pause the host");
        // Drain as the session would; the forwarder moves the backlog on as room appears.
        let mut got = Vec::new();
        while got.len() < BACKLOG_FRAMES + 10 {
            got.extend(frames(&mut rx));
            host.run_ready();
        }
        assert_eq!(
            got,
            (0..BACKLOG_FRAMES + 10)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
        );
        assert!(feeder.wants_input());
        assert_eq!(resumed.load(Ordering::SeqCst), 1);
        // End of input comes after every frame, with a last line that had no newline.
        feeder.feed(b"last").unwrap();
        feeder.end();
        host.run_ready();
        let mut tail = frames(&mut rx);
        host.run_ready();
        tail.extend(frames(&mut rx));
        assert_eq!(tail, vec!["last".to_owned(), "closed false".to_owned()]);
        assert!(!feeder.wants_input());
    }

    /// A non-blocking pipe: (read end, write end).
    fn pipe() -> (OwnedFd, std::fs::File) {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: `pipe` fills both descriptors, which we then own.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: fresh descriptors from `pipe`, owned once each.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        crate::transport::stdio::set_nonblocking(&read).unwrap();
        (read, std::fs::File::from(write))
    }

    #[test]
    fn reading_a_descriptor_stops_at_a_short_read_and_takes_later_bytes_on_the_next_call() {
        use std::io::Write;
        let (_runtime, host) = local_loop();
        let (tx, mut rx) = mpsc::channel(64);
        let spawner = Spawner::Host(host.clone());
        let stop = CancellationToken::new();
        let mut feeder = Feeder::new(1 << 20, tx, EndAction::Close(None), stop, &spawner);
        let (read, mut write) = pipe();
        // Nothing written yet: the read would block.
        assert_eq!(
            feeder.read_from(read.as_fd()).unwrap(),
            ReadOutcome::Drained
        );
        // A whole line, then half of one: each read comes back short.
        write.write_all(b"one\n").unwrap();
        assert_eq!(
            feeder.read_from(read.as_fd()).unwrap(),
            ReadOutcome::Drained
        );
        write.write_all(b"tw").unwrap();
        assert_eq!(
            feeder.read_from(read.as_fd()).unwrap(),
            ReadOutcome::Drained
        );
        host.run_ready();
        assert_eq!(frames(&mut rx), vec!["one".to_owned()]);
        // The rest of the line, written after the short read, is read on the next call.
        write.write_all(b"o\n").unwrap();
        assert_eq!(
            feeder.read_from(read.as_fd()).unwrap(),
            ReadOutcome::Drained
        );
        // Exactly one buffer's worth: the full read is followed by another, which would block.
        let mut line = vec![b'x'; READ_BUF - 1];
        line.push(b'\n');
        write.write_all(&line).unwrap();
        assert_eq!(
            feeder.read_from(read.as_fd()).unwrap(),
            ReadOutcome::Drained
        );
        host.run_ready();
        let got = frames(&mut rx);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], "two");
        assert_eq!(got[1].len(), READ_BUF - 1);
        // The writer hangs up: end of input.
        drop(write);
        assert_eq!(feeder.read_from(read.as_fd()).unwrap(), ReadOutcome::Ended);
        host.run_ready();
        assert_eq!(frames(&mut rx), vec!["closed false".to_owned()]);
    }

    #[test]
    fn oversized_and_blank_lines_and_a_stopped_session() {
        let (_runtime, host) = local_loop();
        let (tx, mut rx) = mpsc::channel(64);
        let stop = CancellationToken::new();
        let spawner = Spawner::Host(host.clone());
        let mut feeder = Feeder::new(8, tx, EndAction::Close(None), stop.clone(), &spawner);
        // An oversized line fed in pieces is counted, not kept; blank lines are skipped.
        feeder.feed(b"0123456789").unwrap();
        feeder.feed(b"abcdef\n\n  \r\nok\r\n").unwrap();
        host.run_ready();
        assert_eq!(
            frames(&mut rx),
            vec!["oversized 16".to_owned(), "ok".to_owned()]
        );
        // The transport closed its side: input is refused, and the host told to stop.
        stop.cancel();
        assert!(feeder.feed(b"late\n").is_err());
        assert!(feeder.is_stopped());
        assert!(!feeder.wants_input());
    }
}
