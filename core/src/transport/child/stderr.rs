//! A child's stderr, always drained (a chatty server must never block on a full pipe) into a
//! bounded ring whose tail is attached to the error when the child dies, and logged line by
//! line at debug level.

use std::{collections::VecDeque, sync::Arc};

use tokio::io::AsyncReadExt;

use crate::sync::Mutex;

/// The last bytes a child wrote to stderr, bounded.
#[derive(Debug)]
pub(super) struct StderrRing {
    capacity: usize,
    bytes: Mutex<VecDeque<u8>>,
}

impl StderrRing {
    pub(super) fn new(capacity: usize) -> Self {
        StderrRing {
            capacity,
            bytes: Mutex::new(VecDeque::new()),
        }
    }

    fn push(&self, chunk: &[u8]) {
        let mut bytes = self.bytes.lock();
        let chunk = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let held = bytes.len();
        let overflow = (held + chunk.len()).saturating_sub(self.capacity);
        bytes.drain(..overflow.min(held));
        bytes.extend(chunk);
    }

    pub(super) fn tail(&self, max: usize) -> String {
        let bytes = self.bytes.lock();
        let start = bytes.len().saturating_sub(max);
        let tail: Vec<u8> = bytes.range(start..).copied().collect();
        String::from_utf8_lossy(&tail).into_owned()
    }

    fn len(&self) -> usize {
        self.bytes.lock().len()
    }
}

/// Read access to a child's captured stderr.
#[derive(Clone, Debug)]
pub struct StderrHandle(pub(super) Arc<StderrRing>);

impl StderrHandle {
    /// The last `max` bytes, lossily decoded.
    pub fn tail(&self, max: usize) -> String {
        self.0.tail(max)
    }

    /// How many bytes are held (never more than the capacity).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing has been captured.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Reads the child's stderr into `ring` until the pipe closes.
pub(super) async fn drain_stderr(
    mut pipe: tokio::process::ChildStderr,
    ring: Arc<StderrRing>,
    command: String,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                ring.push(&buf[..n]);
                if tracing::enabled!(target: "oxmcp::stderr", tracing::Level::DEBUG) {
                    for line in String::from_utf8_lossy(&buf[..n]).lines() {
                        let line = crate::sanitize::line(line);
                        tracing::debug!(target: "oxmcp::stderr", server = %command, "{line}");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_only_the_tail() {
        let ring = StderrRing::new(8);
        ring.push(b"hello ");
        ring.push(b"world!");
        assert_eq!(ring.tail(100), "o world!");
        ring.push(&[b'x'; 100]);
        assert_eq!(ring.len(), 8);
        assert_eq!(ring.tail(3), "xxx");
    }
}
