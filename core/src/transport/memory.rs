//! An in-process duplex: two linked transports, for tests and for embedding a server in the
//! same process as its client.

use bytes::Bytes;
use tokio::sync::mpsc;

use super::{Inbound, Link, OUTBOUND_QUEUE, Outbound, Transport};

/// One end of an in-memory duplex. Create both ends with [`pair`].
#[derive(Debug)]
pub struct MemoryTransport {
    out_rx: mpsc::Receiver<Outbound>,
    out_tx: mpsc::Sender<Outbound>,
    own_in_tx: mpsc::Sender<Inbound>,
    own_in_rx: mpsc::Receiver<Inbound>,
    peer_in_tx: mpsc::Sender<Inbound>,
}

/// Two transports wired to each other: what one sends, the other receives.
pub fn pair() -> (MemoryTransport, MemoryTransport) {
    let (a_out_tx, a_out_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (b_out_tx, b_out_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (a_in_tx, a_in_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let (b_in_tx, b_in_rx) = mpsc::channel(OUTBOUND_QUEUE);
    let a = MemoryTransport {
        out_rx: a_out_rx,
        out_tx: a_out_tx,
        own_in_tx: a_in_tx.clone(),
        own_in_rx: a_in_rx,
        peer_in_tx: b_in_tx.clone(),
    };
    let b = MemoryTransport {
        out_rx: b_out_rx,
        out_tx: b_out_tx,
        own_in_tx: b_in_tx,
        own_in_rx: b_in_rx,
        peer_in_tx: a_in_tx,
    };
    (a, b)
}

impl Transport for MemoryTransport {
    fn into_link(self) -> Link {
        let MemoryTransport {
            mut out_rx,
            out_tx,
            own_in_tx,
            own_in_rx,
            peer_in_tx,
        } = self;
        tokio::spawn(async move {
            while let Some(out) = out_rx.recv().await {
                match out {
                    Outbound::Frame(f) => {
                        if peer_in_tx
                            .send(Inbound::Frame(Bytes::from(f.bytes)))
                            .await
                            .is_err()
                        {
                            break;
                        }
                    }
                    Outbound::CloseStream(_) => {}
                    Outbound::Close => break,
                }
            }
            // Our side is closed: the peer sees end of stream, and so does our own reader.
            let _ = peer_in_tx.send(Inbound::Closed(None)).await;
            let _ = own_in_tx.send(Inbound::Closed(None)).await;
        });
        Link {
            inbound: own_in_rx,
            outbound: out_tx,
        }
    }
}
