//! `Client.stdio` with the session on the JavaScript thread.
//!
//! On tokio, a call made on the JavaScript thread is handed to a tokio thread and its answer
//! handed back: two hops per call. Hosted, the request is written by the host loop on the
//! JavaScript thread, the child's stdout is watched by Node's own loop (`watch.rs`), and the
//! answer settles the call's Promise in the run that read it. The child itself is supervised
//! on tokio as always (exit watch, stderr ring, the shutdown ladder).

use std::rc::Rc;

use napi::bindgen_prelude::PromiseRaw;
use oxmcp::{
    client::{Client, ClientOptions},
    embed::Spawner,
    transport::child::{ChildCommand, ChildTransport},
};

use super::NativeClient;
use crate::{
    embed::{Host, host_of, spawn_promise},
    error::to_js,
    watch,
};

/// Spawns the child and connects, with the session on `host`'s loop.
pub(super) fn connect_hosted<'env>(
    host: &Rc<Host>,
    command: ChildCommand,
    mut options: ClientOptions,
) -> napi::Result<PromiseRaw<'env, NativeClient>> {
    let host_loop = host.host_loop().clone();
    options.spawner = Spawner::Host(host_loop.clone());
    spawn_promise(host, async move {
        let child = ChildTransport::spawn(command).await.map_err(to_js)?;
        let (child, feeder) = child.hosted(&host_loop).map_err(to_js)?;
        let watch = {
            // This task runs on the host's thread, so its host is there.
            let host = host_of(&host_loop)
                .ok_or_else(|| napi::Error::from_reason("the host loop is gone"))?;
            watch::start(&host, feeder)?
        };
        let client = match Client::connect(child, options).await {
            Ok(client) => client,
            Err(e) => {
                watch::close(watch);
                return Err(to_js(e));
            }
        };
        // The watch ends with the session even if the pipe stays open (a grandchild may hold
        // the child's stdout), so a closed client never keeps Node alive.
        let session = client.session().clone();
        host_loop.spawn(async move {
            session.closed().await;
            watch::close(watch);
        });
        Ok(NativeClient { inner: client })
    })
}
