//! Rate-limited `WARN` and `ERROR` lines for conditions a remote peer can
//! cause, so that no client can flood the logs: each call site logs at most
//! once per [`LOG_EVERY`], and its next line carries `suppressed`, the
//! number of lines it held back since the last one. Use
//! `log_limit::warn_limited!` and `log_limit::error_limited!` as
//! `tracing::warn!` and `tracing::error!`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often one call site may log.
pub(crate) const LOG_EVERY: Duration = Duration::from_secs(10);

/// The limit of one call site: when it last logged, and what it held back
/// since. Lock-free, and `const`, so every call site has a `static` one.
#[derive(Debug)]
pub(crate) struct LogLimit {
    /// Milliseconds since [`epoch`] at the last line, plus one; 0 = never.
    last: AtomicU64,
    suppressed: AtomicU64,
}

impl LogLimit {
    /// A call site that has not logged yet.
    pub(crate) const fn new() -> Self {
        Self {
            last: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// `Some(n)` when a line may be logged now, `n` being the lines held
    /// back since the last one; `None` (and counted) otherwise.
    pub(crate) fn admit(&self) -> Option<u64> {
        self.admit_at(now_ms(), LOG_EVERY)
    }

    fn admit_at(&self, now: u64, every: Duration) -> Option<u64> {
        let every = u64::try_from(every.as_millis()).unwrap_or(u64::MAX);
        let stamp = now.saturating_add(1);
        let last = self.last.load(Ordering::Relaxed);
        let due = last == 0 || stamp.saturating_sub(last) >= every;
        // Of the threads that find the site due, one wins the exchange and
        // logs; the others count as held back.
        if due
            && self
                .last
                .compare_exchange(last, stamp, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return Some(self.suppressed.swap(0, Ordering::Relaxed));
        }
        self.suppressed.fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// Milliseconds since the first rate-limited call in this process.
fn now_ms() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// `tracing::warn!`, at most once per [`LOG_EVERY`] per call site, with a
/// `suppressed` count.
macro_rules! warn_limited {
    ($($arg:tt)+) => {{
        static LIMIT: $crate::log_limit::LogLimit = $crate::log_limit::LogLimit::new();
        if let Some(suppressed) = LIMIT.admit() {
            ::tracing::warn!(suppressed, $($arg)+);
        }
    }};
}

/// `tracing::error!`, at most once per [`LOG_EVERY`] per call site, with a
/// `suppressed` count.
macro_rules! error_limited {
    ($($arg:tt)+) => {{
        static LIMIT: $crate::log_limit::LogLimit = $crate::log_limit::LogLimit::new();
        if let Some(suppressed) = LIMIT.admit() {
            ::tracing::error!(suppressed, $($arg)+);
        }
    }};
}

pub(crate) use {error_limited, warn_limited};

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY: Duration = Duration::from_secs(10);

    #[test]
    fn first_line_passes_then_one_per_interval_with_the_count() {
        let limit = LogLimit::new();
        assert_eq!(limit.admit_at(0, EVERY), Some(0));
        for t in 1..1000 {
            assert_eq!(limit.admit_at(t, EVERY), None, "{t}");
        }
        assert_eq!(limit.admit_at(9_999, EVERY), None);
        assert_eq!(limit.admit_at(10_000, EVERY), Some(1000));
        assert_eq!(limit.admit_at(10_001, EVERY), None);
        assert_eq!(limit.admit_at(25_000, EVERY), Some(1));
    }

    #[test]
    fn a_flood_from_many_threads_logs_once() {
        let limit = std::sync::Arc::new(LogLimit::new());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let limit = std::sync::Arc::clone(&limit);
                std::thread::spawn(move || {
                    (0..10_000)
                        .filter(|_| limit.admit_at(5, EVERY).is_some())
                        .count()
                })
            })
            .collect();
        let logged: usize = threads.into_iter().map(|t| t.join().expect("thread")).sum();
        assert_eq!(logged, 1);
        assert_eq!(limit.admit_at(20_000, EVERY), Some(79_999));
    }

    #[test]
    fn the_macros_compile_with_fields_and_formats() {
        for i in 0..3 {
            warn_limited!(i, "a warning {}", i);
            error_limited!(what = %"x", "an error");
        }
    }
}
