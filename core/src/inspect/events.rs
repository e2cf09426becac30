//! What happened, in order, for the page to show live: every JSON-RPC message (the trace),
//! log notifications, other notifications, progress of running calls, and the questions a
//! server asks the person.
//!
//! The page long-polls `GET /api/events?after=N`: it gets every event after sequence number
//! `N`, or waits (up to [`MAX_WAIT`]) for the next one. Plain request/response keeps the
//! guard in one place (the same checks as every API call) and needs no second protocol. The
//! log is bounded ([`KEPT`] events, each trace frame cut at [`FRAME_CAP`] bytes), so a chatty
//! server cannot grow the inspector without limit; a page that fell behind is told how many
//! it missed.

use std::{collections::VecDeque, sync::Mutex, time::Duration};

use serde_json::{Value, json};
use tokio::sync::Notify;

/// Events kept for the page; older ones are dropped.
pub(crate) const KEPT: usize = 5000;
/// The longest trace frame kept whole; a longer one is cut (and says so).
pub(crate) const FRAME_CAP: usize = 64 * 1024;
/// The most bytes of events kept (their JSON size): big frames push old events out sooner.
pub(crate) const KEPT_BYTES: usize = 32 * 1024 * 1024;
/// How long one poll waits for something new.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(20);

#[derive(Default)]
struct Inner {
    next: u64,
    /// Each event with its JSON size.
    events: VecDeque<(Value, usize)>,
    bytes: usize,
}

/// The inspector's event log.
#[derive(Default)]
pub(crate) struct Events {
    inner: Mutex<Inner>,
    changed: Notify,
}

impl Events {
    /// Appends an event of `kind` with its fields (an object); stamps `seq` and `time` (ms
    /// since the Unix epoch).
    pub(crate) fn push(&self, kind: &str, fields: Value) {
        let time = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default();
        let mut event = match fields {
            Value::Object(m) => m,
            other => {
                let mut m = serde_json::Map::new();
                m.insert("data".into(), other);
                m
            }
        };
        if let Ok(mut inner) = self.inner.lock() {
            inner.next += 1;
            event.insert("seq".into(), json!(inner.next));
            event.insert("kind".into(), json!(kind));
            event.insert("time".into(), json!(time));
            let event = Value::Object(event);
            let size = serde_json::to_string(&event).map_or(0, |t| t.len());
            inner.bytes += size;
            inner.events.push_back((event, size));
            while inner.events.len() > KEPT || inner.bytes > KEPT_BYTES {
                match inner.events.pop_front() {
                    Some((_, n)) => inner.bytes -= n,
                    None => break,
                }
            }
        }
        self.changed.notify_waiters();
    }

    /// One JSON-RPC frame, `out` (to the server) or `in`. Kept as text: a frame that is
    /// not JSON (or cut) is still shown as what it was.
    pub(crate) fn frame(&self, server: &str, outbound: bool, bytes: &[u8]) {
        let cut = bytes.len() > FRAME_CAP;
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(FRAME_CAP)]);
        self.push(
            "trace",
            json!({
                "server": server,
                "dir": if outbound { "out" } else { "in" },
                "text": text,
                "truncated": cut,
            }),
        );
    }

    /// Every event after `after`, waiting up to `wait` for one when there is none yet.
    /// `missed` counts the events after `after` that were already dropped.
    pub(crate) async fn since(&self, after: u64, wait: Duration) -> Value {
        let deadline = tokio::time::Instant::now() + wait.min(MAX_WAIT);
        loop {
            // Registered before looking, so an event pushed in between is not missed.
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(found) = self.collect(after) {
                return found;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self
                    .collect(after)
                    .unwrap_or_else(|| json!({ "events": [], "next": after, "missed": 0 }));
            }
        }
    }

    fn collect(&self, after: u64) -> Option<Value> {
        let inner = self.inner.lock().ok()?;
        let first = inner
            .events
            .front()
            .and_then(|(e, _)| e.get("seq"))
            .and_then(Value::as_u64)
            .unwrap_or(inner.next + 1);
        let found: Vec<&Value> = inner
            .events
            .iter()
            .map(|(e, _)| e)
            .filter(|e| e.get("seq").and_then(Value::as_u64) > Some(after))
            .collect();
        if found.is_empty() {
            return None;
        }
        Some(json!({
            "events": found,
            "next": inner.next,
            "missed": first.saturating_sub(after + 1),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn a_poll_returns_what_is_new_or_waits_for_it() {
        let events = Arc::new(Events::default());
        events.push("log", json!({"server": "s", "level": "info"}));
        let got = events.since(0, Duration::from_secs(1)).await;
        assert_eq!(got["events"].as_array().unwrap().len(), 1);
        assert_eq!(got["next"], 1);
        let later = {
            let events = events.clone();
            tokio::spawn(async move { events.since(1, Duration::from_secs(10)).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        events.push("notification", json!({"method": "x"}));
        let got = later.await.unwrap();
        assert_eq!(got["events"][0]["kind"], "notification");
        assert_eq!(got["events"][0]["seq"], 2);
        // Nothing new: an empty answer when the wait is over.
        let empty = events.since(2, Duration::from_millis(20)).await;
        assert_eq!(empty["events"].as_array().unwrap().len(), 0);
    }

    #[tokio::test]
    async fn the_log_is_bounded_and_says_what_was_missed() {
        let events = Events::default();
        for _ in 0..KEPT + 10 {
            events.push("log", json!({}));
        }
        let got = events.since(0, Duration::ZERO).await;
        assert_eq!(got["events"].as_array().unwrap().len(), KEPT);
        assert_eq!(got["missed"], 10);
        let huge = vec![b'x'; FRAME_CAP * 2];
        events.frame("s", true, &huge);
        let got = events.since((KEPT + 10) as u64, Duration::ZERO).await;
        assert_eq!(got["events"][0]["truncated"], true);
        assert_eq!(got["events"][0]["text"].as_str().unwrap().len(), FRAME_CAP);
    }

    #[tokio::test]
    async fn big_frames_are_bounded_by_bytes_too() {
        let events = Events::default();
        let frame = vec![b'y'; FRAME_CAP];
        let n = KEPT_BYTES / FRAME_CAP + 50;
        for _ in 0..n {
            events.frame("s", false, &frame);
        }
        let got = events.since(0, Duration::ZERO).await;
        let kept = got["events"].as_array().unwrap().len();
        assert!(kept < KEPT_BYTES / FRAME_CAP && kept > 0, "{kept}");
        assert_eq!(got["missed"].as_u64().unwrap() as usize, n - kept);
    }
}
