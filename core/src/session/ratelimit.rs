//! Rate-limited logging of dropped input, so a peer spewing garbage cannot flood our logs.

use std::time::{Duration, Instant};

/// Allows `burst` log lines per `window`; the rest are counted and summarised.
#[derive(Debug)]
pub(crate) struct LogLimiter {
    window: Duration,
    burst: u32,
    window_start: Option<Instant>,
    logged: u32,
    suppressed: u64,
}

impl LogLimiter {
    pub(crate) fn new(burst: u32, window: Duration) -> Self {
        LogLimiter {
            window,
            burst,
            window_start: None,
            logged: 0,
            suppressed: 0,
        }
    }

    /// Returns `Some(previously_suppressed)` when this event may be logged.
    pub(crate) fn admit(&mut self) -> Option<u64> {
        let now = Instant::now();
        let fresh = self
            .window_start
            .is_none_or(|s| now.duration_since(s) >= self.window);
        if fresh {
            self.window_start = Some(now);
            self.logged = 0;
        }
        if self.logged < self.burst {
            self.logged += 1;
            Some(std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_then_counts() {
        let mut l = LogLimiter::new(3, Duration::from_secs(3600));
        assert_eq!((0..10).filter(|_| l.admit().is_some()).count(), 3);
        assert_eq!(l.suppressed, 7);
    }
}
