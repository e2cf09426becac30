//! A child server whose stdout a host's event loop reads.
//!
//! The host (Node's main thread, an asyncio loop) watches the child's stdout itself and hands
//! the bytes to a [`Feeder`]; the writer to the child's stdin runs on the host loop, so a
//! request a caller makes on the host thread is written there and its answer is read there,
//! with no tokio thread in between. Supervision (the exit watch, the shutdown ladder, stderr)
//! stays on tokio, as for every child.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ChildTransport, Parts, Reading};
use crate::{
    Error,
    embed::{EndAction, Feeder, HostLoop, Spawner},
    transport::{Inbound, Link, OUTBOUND_QUEUE},
};

/// What `hosted` sets up for `into_link`.
#[derive(Debug)]
pub(super) struct HostedInput {
    host: HostLoop,
    in_tx: mpsc::Sender<Inbound>,
    in_rx: mpsc::Receiver<Inbound>,
    stop_reading: CancellationToken,
    stdout_eof: CancellationToken,
}

impl ChildTransport {
    /// Hands the child's stdout to a host's event loop: the returned [`Feeder`] owns the
    /// (non-blocking) descriptor, which the host watches and reads through the feeder (or
    /// takes with [`Feeder::take_input_fd`] and reads itself); the writer runs on `host`.
    /// Start the session with [`Spawner::Host`] on the same loop. Must be called within the
    /// runtime the child was spawned on (the descriptor leaves its reactor).
    pub fn hosted(mut self, host: &HostLoop) -> Result<(ChildTransport, Feeder), Error> {
        let parts = self
            .parts
            .as_mut()
            .ok_or_else(|| Error::closed("child transport already used"))?;
        let stdout = parts
            .stdout
            .take()
            .ok_or_else(|| Error::closed("child transport already hosted"))?;
        // Back in blocking mode after the conversion: `own_input` makes it non-blocking.
        let fd = stdout.into_owned_fd()?;
        let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let stop_reading = CancellationToken::new();
        let stdout_eof = CancellationToken::new();
        let mut feeder = Feeder::new(
            parts.max_message_bytes,
            in_tx.clone(),
            // The supervisor speaks last: it hears that every frame was delivered.
            EndAction::Signal(stdout_eof.clone()),
            stop_reading.clone(),
            &Spawner::Host(host.clone()),
        );
        feeder.own_input(fd);
        self.hosted = Some(HostedInput {
            host: host.clone(),
            in_tx,
            in_rx,
            stop_reading,
            stdout_eof,
        });
        Ok((self, feeder))
    }
}

/// The link of a hosted child: frames come from the feeder, the writer runs on the host loop.
pub(super) fn link(child: &ChildTransport, parts: Parts, hosted: HostedInput) -> Link {
    let HostedInput {
        host,
        in_tx,
        in_rx,
        stop_reading,
        stdout_eof,
    } = hosted;
    child.link_supervised(
        parts,
        &Spawner::Host(host),
        Reading {
            reader: None,
            stop_reading,
            stdout_eof,
        },
        (in_tx, in_rx),
    )
}
