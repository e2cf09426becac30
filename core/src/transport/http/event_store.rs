//! Where a Streamable HTTP server keeps SSE events so that a client whose stream dropped can
//! resume with `Last-Event-ID` (2025-03-26 … 2025-11-25; SEP-1699).
//!
//! The server numbers every event `<stream>-<seq>` within its session and hands it to the
//! store as it goes out; a resumption asks the store for what came after the client's last
//! id. The default keeps a bounded number of events per stream in memory; a deployment that
//! wants other retention (or to inspect what was sent) plugs in its own [`EventStore`].

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use futures::future::BoxFuture;

use crate::sync::Mutex;

/// Storage for SSE events, shared by every session of a server.
///
/// `append` is called on the hot path, in order, for every event of a resumable stream: it must
/// return quickly and never block (a store that writes somewhere slow should buffer). `replay`
/// runs when a client resumes, outside any lock of the server.
pub trait EventStore: Send + Sync + 'static {
    /// Keeps event `seq` of `stream` in `session`.
    fn append(&self, session: &str, stream: u64, seq: u64, event: Bytes);

    /// The events of `stream` numbered above `after`, in order (empty when none are kept).
    fn replay(
        &self,
        session: &str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'static, Vec<(u64, Bytes)>>;

    /// A finished stream that can no longer be resumed.
    fn forget_stream(&self, session: &str, stream: u64);

    /// A session that ended: nothing of it will be asked for again.
    fn forget_session(&self, session: &str);
}

/// The kept events of one session's streams: stream → (seq, event), oldest first.
type SessionEvents = HashMap<u64, VecDeque<(u64, Bytes)>>;

/// The default store: the last `per_stream` events of each stream, in memory.
#[derive(Debug)]
pub struct InMemoryEventStore {
    per_stream: usize,
    sessions: Mutex<HashMap<String, SessionEvents>>,
}

impl InMemoryEventStore {
    /// Keeps up to `per_stream` events per stream (older ones are dropped first).
    pub fn new(per_stream: usize) -> Self {
        InMemoryEventStore {
            per_stream: per_stream.max(1),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// How many events are held, over all sessions (for tests and metrics).
    pub fn len(&self) -> usize {
        self.sessions
            .lock()
            .values()
            .flat_map(|streams| streams.values())
            .map(VecDeque::len)
            .sum()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl EventStore for InMemoryEventStore {
    fn append(&self, session: &str, stream: u64, seq: u64, event: Bytes) {
        let mut sessions = self.sessions.lock();
        let kept = sessions
            .entry(session.to_owned())
            .or_default()
            .entry(stream)
            .or_default();
        if kept.len() >= self.per_stream {
            kept.pop_front();
        }
        kept.push_back((seq, event));
    }

    fn replay(
        &self,
        session: &str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'static, Vec<(u64, Bytes)>> {
        let events: Vec<(u64, Bytes)> = self
            .sessions
            .lock()
            .get(session)
            .and_then(|streams| streams.get(&stream))
            .map(|kept| {
                kept.iter()
                    .filter(|(seq, _)| *seq > after)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        Box::pin(std::future::ready(events))
    }

    fn forget_stream(&self, session: &str, stream: u64) {
        if let Some(streams) = self.sessions.lock().get_mut(session) {
            streams.remove(&stream);
        }
    }

    fn forget_session(&self, session: &str) {
        self.sessions.lock().remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seqs(events: &[(u64, Bytes)]) -> Vec<u64> {
        events.iter().map(|(seq, _)| *seq).collect()
    }

    #[tokio::test]
    async fn replays_what_came_after_within_the_bound_and_forgets() {
        let store = InMemoryEventStore::new(3);
        for seq in 1..=5 {
            store.append("a", 1, seq, Bytes::from(format!("{seq}")));
        }
        store.append("a", 2, 1, Bytes::from_static(b"other stream"));
        store.append("b", 1, 1, Bytes::from_static(b"other session"));
        assert_eq!(seqs(&store.replay("a", 1, 0).await), [3, 4, 5]);
        assert_eq!(seqs(&store.replay("a", 1, 4).await), [5]);
        assert!(store.replay("a", 1, 5).await.is_empty());
        assert!(store.replay("a", 9, 0).await.is_empty());
        assert!(store.replay("nobody", 1, 0).await.is_empty());
        store.forget_stream("a", 1);
        assert!(store.replay("a", 1, 0).await.is_empty());
        assert_eq!(store.len(), 2);
        store.forget_session("a");
        store.forget_session("b");
        assert!(store.is_empty());
    }
}
