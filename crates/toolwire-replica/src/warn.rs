//! Rate-limited warnings: a bus that is down would otherwise log on every
//! reconnection attempt and every event.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Logs a warning at most once per interval, counting the ones it held back.
#[derive(Debug)]
pub struct Warner {
    every: Duration,
    state: Mutex<(Option<Instant>, u64)>,
}

impl Warner {
    /// A warner that logs at most once per `every`.
    pub fn new(every: Duration) -> Self {
        Self {
            every,
            state: Mutex::new((None, 0)),
        }
    }

    /// Logs `message` (with `error`) unless a warning was logged less than
    /// the interval ago; `true` if it logged.
    pub fn warn(&self, message: &str, error: &dyn std::fmt::Display) -> bool {
        let mut state = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let now = Instant::now();
        if state
            .0
            .is_some_and(|last| now.duration_since(last) < self.every)
        {
            state.1 += 1;
            return false;
        }
        let held_back = std::mem::take(&mut state.1);
        state.0 = Some(now);
        drop(state);
        tracing::warn!(%error, held_back, "{message}");
        true
    }
}

impl Default for Warner {
    /// At most one warning every 10 seconds.
    fn default() -> Self {
        Self::new(Duration::from_secs(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_once_per_interval() {
        let w = Warner::new(Duration::from_secs(3600));
        assert!(w.warn("bus down", &"refused"));
        assert!(!w.warn("bus down", &"refused"));
        let w = Warner::new(Duration::ZERO);
        assert!(w.warn("bus down", &"refused"));
        assert!(w.warn("bus down", &"refused"));
    }
}
