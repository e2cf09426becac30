//! A wire tap: observes every frame crossing a link, in both directions.
//!
//! Used by the tests to validate everything both sides emit against the official schemas, and
//! useful for debugging a live session.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::{Inbound, Link, OUTBOUND_QUEUE, Outbound};

/// Which way a frame was going.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the peer to us.
    Inbound,
    /// From us to the peer.
    Outbound,
}

/// Called with every frame, in order per direction.
pub type Observer = Arc<dyn Fn(Direction, &[u8]) + Send + Sync>;

/// Wraps `link` so that `observer` sees every frame.
pub fn tap(link: Link, observer: Observer) -> Link {
    let Link {
        mut inbound,
        outbound,
    } = link;
    let (in_tx, in_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (out_tx, mut out_rx) = mpsc::channel::<Outbound>(OUTBOUND_QUEUE);
    let seen_in = observer.clone();
    tokio::spawn(async move {
        while let Some(item) = inbound.recv().await {
            match &item {
                Inbound::Frame(bytes) | Inbound::Message(bytes) => {
                    seen_in(Direction::Inbound, bytes)
                }
                Inbound::FrameWithHeaders(frame) => seen_in(Direction::Inbound, &frame.bytes),
                _ => {}
            }
            if in_tx.send(item).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        while let Some(item) = out_rx.recv().await {
            if let Outbound::Frame(f) = &item {
                observer(Direction::Outbound, &f.bytes);
            }
            if outbound.send(item).await.is_err() {
                break;
            }
        }
    });
    Link {
        inbound: in_rx,
        outbound: out_tx,
    }
}
