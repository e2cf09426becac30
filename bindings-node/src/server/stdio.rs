//! `runStdio` with the session on the JavaScript thread.
//!
//! On tokio, every request would cross from a tokio thread to the JavaScript thread and its
//! answer back again. Hosted, the JavaScript thread reads stdin itself (a libuv watch,
//! `watch.rs`), runs the session's driver and writer (`embed.rs`) and calls the handler in
//! the same run, so a synchronous handler's answer is written before the callback returns.
//!
//! Only a pipe or a socket can be watched this way; a terminal or a regular file on stdin
//! (someone typing, `node server.mjs < requests.jsonl`) stays on the tokio path, which
//! reads those on its blocking pool.

use std::{
    io,
    os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
    rc::Rc,
};

use napi::bindgen_prelude::PromiseRaw;
use oxmcp::{embed::Spawner, server::Server, transport::stdio::StdioTransport};
use tokio_util::sync::CancellationToken;

use crate::{
    embed::{Host, spawn_promise},
    error::to_js,
    watch,
};

/// How a stdio session's end reaches JavaScript: the peer hanging up is a normal end; an
/// I/O failure rejects.
pub(super) fn outcome(closed: Option<oxmcp::Error>) -> napi::Result<()> {
    match closed {
        Some(oxmcp::Error::Io(e)) => Err(to_js(oxmcp::Error::Io(e))),
        _ => Ok(()),
    }
}

/// Serves stdin/stdout on `host`'s thread; `None` when stdin cannot be watched there (the
/// caller then serves on tokio).
pub(super) fn serve_hosted<'env>(
    server: &Server,
    host: &Rc<Host>,
    stop: CancellationToken,
) -> napi::Result<Option<PromiseRaw<'env, ()>>> {
    let Ok(input) = dup_cloexec(0) else {
        return Ok(None);
    };
    if !is_pipe_or_socket(&input) {
        return Ok(None);
    }
    let output = dup_cloexec(1).map_err(|e| to_js(e.into()))?;
    // Stray native writes to fd 1 go to stderr, as the tokio path's transport does; the
    // JavaScript layer routes `console.log` and `process.stdout.write` there too.
    redirect_stdout_to_stderr();
    let host_loop = host.host_loop().clone();
    let (transport, feeder) = StdioTransport::from_fds(input, output).hosted(&host_loop);
    let session = host.run(|| server.serve_on(transport, Spawner::Host(host_loop.clone())));
    let watch = match watch::start(host, feeder) {
        Ok(watch) => watch,
        Err(e) => {
            // The feeder is gone with the failed watch: the session sees end of input.
            session.request_close();
            return Err(e);
        }
    };
    spawn_promise(host, async move {
        let out = tokio::select! {
            closed = session.closed() => outcome(closed),
            _ = stop.cancelled() => {
                session.close().await;
                Ok(())
            }
        };
        // Nothing of this session may keep Node alive once it is over (stdin may still be
        // open after `close()`).
        watch::close(watch);
        out
    })
    .map(Some)
}

fn dup_cloexec(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor number has no memory-safety preconditions.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just returned by fcntl and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

fn is_pipe_or_socket(fd: &OwnedFd) -> bool {
    // SAFETY: fstat writes into a zeroed stat buffer we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return false;
    }
    let kind = st.st_mode & libc::S_IFMT;
    kind == libc::S_IFIFO || kind == libc::S_IFSOCK
}

fn redirect_stdout_to_stderr() {
    // SAFETY: dup2 on descriptor numbers has no memory-safety preconditions. Without a
    // stderr, fd 1 points at /dev/null so stray writes still go nowhere harmful.
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
