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

use std::rc::Rc;

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
    let host_loop = host.host_loop().clone();
    // Stray native writes to fd 1 go to stderr (the transport redirects it), and the
    // JavaScript layer routes `console.log` and `process.stdout.write` there too.
    let Ok(Some((transport, feeder))) = StdioTransport::new().hosted_if_pollable(&host_loop) else {
        return Ok(None);
    };
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
