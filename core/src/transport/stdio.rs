//! The stdio server transport: newline-delimited JSON on fd 0 and fd 1.
//!
//! Two things matter here beyond framing:
//!
//! - **Nothing but protocol on stdout.** By default the transport takes a private duplicate of
//!   fd 1 for its own writes and points fd 1 at stderr, so a stray `println!` (or a Python
//!   `print`, or a native library's chatter) lands in the log instead of corrupting the
//!   stream.
//! - **No thread hops.** When the descriptors are pipes or sockets (the normal case: a host
//!   spawned us), they are switched to non-blocking mode and driven by the reactor directly:
//!   one wake-up per message instead of a round trip through the blocking pool. Terminals and
//!   regular files fall back to blocking I/O on the pool.
//!
//! The server exits cleanly on stdin EOF: the session lets in-flight handlers finish within a
//! grace period, flushes, and ends.

use std::{
    io,
    os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
    pin::Pin,
};

use tokio::{
    io::{AsyncRead, AsyncWrite, AsyncWriteExt},
    sync::mpsc,
};
use tokio_util::sync::CancellationToken;

use super::{Inbound, Link, OUTBOUND_QUEUE, Outbound, Transport};
use crate::{
    Error,
    embed::{EndAction, Feeder, HostLoop, Spawner},
    jsonrpc::{FrameEvent, Limits, LineReader},
};

/// Largest write batch assembled from queued frames before it is written out.
const WRITE_BATCH: usize = 1 << 20;

/// Serves over this process's stdin and stdout.
#[derive(Debug)]
pub struct StdioTransport {
    input: Option<OwnedFd>,
    output: Option<OwnedFd>,
    max_message_bytes: usize,
    redirect_stdout: bool,
    hosted: Option<Hosted>,
}

/// A transport whose input a host's event loop reads (see [`StdioTransport::hosted`]).
#[derive(Debug)]
struct Hosted {
    host: HostLoop,
    in_tx: mpsc::Sender<Inbound>,
    in_rx: mpsc::Receiver<Inbound>,
    stop: CancellationToken,
}

impl Default for StdioTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl StdioTransport {
    /// fd 0 and fd 1, a 4 MiB inbound cap, and stray stdout writes redirected to stderr.
    pub fn new() -> Self {
        StdioTransport {
            input: None,
            output: None,
            max_message_bytes: Limits::SERVER.max_message_bytes,
            redirect_stdout: true,
            hosted: None,
        }
    }

    /// Serves over the given descriptors instead of fd 0 and fd 1.
    pub fn from_fds(input: OwnedFd, output: OwnedFd) -> Self {
        StdioTransport {
            input: Some(input),
            output: Some(output),
            redirect_stdout: false,
            ..Self::new()
        }
    }

    /// Sets the inbound message cap.
    pub fn max_message_bytes(mut self, max: usize) -> Self {
        self.max_message_bytes = max;
        self
    }

    /// Leaves fd 1 alone (stray writes to stdout then corrupt the protocol stream).
    pub fn keep_stdout(mut self) -> Self {
        self.redirect_stdout = false;
        self
    }

    /// Hands the input to a host's event loop: the host reads it (fd 0, or the input given
    /// to [`StdioTransport::from_fds`], which the feeder then owns: see
    /// [`Feeder::input_fd`]) and passes the bytes to the returned [`Feeder`]; the writer runs
    /// on `host`'s thread, so a reply the session makes there is written there too. Start the
    /// session with [`crate::embed::Spawner::Host`] on the same loop. Set the cap first.
    pub fn hosted(mut self, host: &HostLoop) -> (StdioTransport, Feeder) {
        let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let stop = CancellationToken::new();
        let spawner = Spawner::Host(host.clone());
        let mut feeder = Feeder::new(
            self.max_message_bytes,
            in_tx.clone(),
            EndAction::Close(None),
            stop.clone(),
            &spawner,
        );
        if let Some(input) = self.input.take() {
            feeder.own_input(input);
        }
        self.hosted = Some(Hosted {
            host: host.clone(),
            in_tx,
            in_rx,
            stop,
        });
        (self, feeder)
    }

    /// [`StdioTransport::hosted`] when the input is one a host's loop can watch: a pipe or a
    /// socket. `None` for a terminal or a regular file, which the tokio path reads on its
    /// blocking pool (serve with the transport as it was, that is, a new one).
    pub fn hosted_if_pollable(
        mut self,
        host: &HostLoop,
    ) -> io::Result<Option<(StdioTransport, Feeder)>> {
        let input = match self.input.take() {
            Some(fd) => fd,
            None => dup_cloexec(0)?,
        };
        if !is_pollable(&input) {
            return Ok(None);
        }
        self.input = Some(input);
        Ok(Some(self.hosted(host)))
    }

    fn open(self) -> io::Result<(Reader, Writer)> {
        let input = match self.input {
            Some(fd) => fd,
            None => dup_cloexec(0)?,
        };
        let output = match self.output {
            Some(fd) => fd,
            None => {
                let out = dup_cloexec(1)?;
                if self.redirect_stdout {
                    redirect_stdout_to_stderr();
                }
                out
            }
        };
        Ok((async_reader(input)?, async_writer(output)?))
    }
}

type Reader = Pin<Box<dyn AsyncRead + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

impl Transport for StdioTransport {
    fn into_link(mut self) -> Link {
        if let Some(hosted) = self.hosted.take() {
            return self.into_hosted_link(hosted);
        }
        let max = self.max_message_bytes;
        let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
        match self.open() {
            Ok((reader, writer)) => {
                let stop = CancellationToken::new();
                tokio::spawn(read_frames(reader, max, in_tx.clone(), stop.clone()));
                tokio::spawn(write_frames(writer, out_rx, in_tx, stop));
            }
            Err(e) => {
                // Report the failure through the link so the session ends with a reason.
                let _ = in_tx.try_send(Inbound::Closed(Some(Error::from(e))));
            }
        }
        Link {
            inbound: in_rx,
            outbound: out_tx,
        }
    }
}

impl StdioTransport {
    /// The writer on the host loop; the input comes from the feeder.
    fn into_hosted_link(self, hosted: Hosted) -> Link {
        let Hosted {
            host,
            in_tx,
            in_rx,
            stop,
        } = hosted;
        let (out_tx, out_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let output = match self.output {
            Some(fd) => Ok(fd),
            None => dup_cloexec(1).inspect(|_| {
                if self.redirect_stdout {
                    redirect_stdout_to_stderr();
                }
            }),
        };
        match output.and_then(async_writer) {
            Ok(writer) => {
                host.spawn(write_frames(writer, out_rx, in_tx, stop));
            }
            Err(e) => {
                stop.cancel();
                let _ = in_tx.try_send(Inbound::Closed(Some(Error::from(e))));
            }
        }
        Link {
            inbound: in_rx,
            outbound: out_tx,
        }
    }
}

/// Reads frames until EOF or until told to stop.
pub(crate) async fn read_frames<R: AsyncRead + Unpin>(
    input: R,
    max: usize,
    tx: mpsc::Sender<Inbound>,
    stop: CancellationToken,
) {
    let mut reader = LineReader::new(input, max);
    // Registered with the token once, not once per message.
    let mut stopped = std::pin::pin!(stop.cancelled());
    let reason = loop {
        let event = tokio::select! {
            _ = &mut stopped => return,
            event = reader.next() => event,
        };
        let item = match event {
            Ok(Some(FrameEvent::Frame(bytes))) => Inbound::Frame(bytes),
            Ok(Some(FrameEvent::Oversized { len })) => Inbound::Oversized { len },
            Ok(None) => break None,
            Err(e) => break Some(Error::from(e)),
        };
        if tx.send(item).await.is_err() {
            return;
        }
    };
    let _ = tx.send(Inbound::Closed(reason)).await;
}

/// Writes frames, coalescing whatever is queued into one write, until `Close` or a broken pipe.
pub(crate) async fn write_frames<W: AsyncWrite + Unpin>(
    mut output: W,
    mut rx: mpsc::Receiver<Outbound>,
    inbound: mpsc::Sender<Inbound>,
    stop: CancellationToken,
) {
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut error = None;
    'outer: while let Some(first) = rx.recv().await {
        let mut close = false;
        let mut next = Some(first);
        while let Some(item) = next.take() {
            match item {
                Outbound::Frame(frame) => {
                    crate::jsonrpc::push_line(&mut buf, &frame.bytes);
                }
                Outbound::CloseStream(_) => {}
                Outbound::Close => {
                    close = true;
                    break;
                }
            }
            if buf.len() < WRITE_BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !buf.is_empty() {
            let written = async {
                output.write_all(&buf).await?;
                output.flush().await
            }
            .await;
            buf.clear();
            if let Err(e) = written {
                error = Some(Error::from(e));
                break 'outer;
            }
        }
        if close {
            break;
        }
    }
    let _ = output.shutdown().await;
    drop(output);
    stop.cancel();
    let _ = inbound.send(Inbound::Closed(error)).await;
}

fn dup_cloexec(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor number has no memory-safety preconditions; the
    // result is a fresh descriptor we own.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just returned by fcntl and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

fn redirect_stdout_to_stderr() {
    // SAFETY: dup2 on two descriptor numbers has no memory-safety preconditions. If fd 2 is
    // not open, fd 1 is pointed at /dev/null instead so stray writes still go nowhere harmful.
    unsafe {
        if libc::dup2(2, 1) < 0 {
            let devnull = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if devnull >= 0 {
                libc::dup2(devnull, 1);
                libc::close(devnull);
            }
        }
    }
}

/// Whether the descriptor is a pipe or socket, which the reactor can drive directly.
fn is_pollable(fd: &OwnedFd) -> bool {
    // SAFETY: fstat writes into a zeroed stat buffer we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return false;
    }
    let kind = st.st_mode & libc::S_IFMT;
    kind == libc::S_IFIFO || kind == libc::S_IFSOCK
}

pub(crate) fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL on an open descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

pub(crate) fn async_reader(fd: OwnedFd) -> io::Result<Reader> {
    if is_pollable(&fd) {
        set_nonblocking(&fd)?;
        let pipe = tokio::net::unix::pipe::Receiver::from_file_unchecked(std::fs::File::from(fd))?;
        Ok(Box::pin(pipe))
    } else {
        Ok(Box::pin(tokio::fs::File::from_std(std::fs::File::from(fd))))
    }
}

pub(crate) fn async_writer(fd: OwnedFd) -> io::Result<Writer> {
    if is_pollable(&fd) {
        set_nonblocking(&fd)?;
        let pipe = tokio::net::unix::pipe::Sender::from_file_unchecked(std::fs::File::from(fd))?;
        Ok(Box::pin(pipe))
    } else {
        Ok(Box::pin(tokio::fs::File::from_std(std::fs::File::from(fd))))
    }
}
