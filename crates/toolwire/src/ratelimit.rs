//! Rate limits on invocations (`tools/call`, `prompts/get`,
//! `resources/read`, `completion/complete`): [`RateLimit`], the token
//! bucket a [`ServerConfig`](crate::ServerConfig) sets, and the keyed
//! limiters the server checks each invocation against.
//!
//! The buckets are governor's GCRA. Each caller has its own: the
//! authenticated principal, else the client's IP address (HTTP under
//! `serve_http`), else the process (stdio, one client). The table of
//! callers is bounded ([`ServerConfig::with_rate_limit_keys`]): idle
//! callers are swept out when it fills, and while it is full of active
//! ones every new caller shares one overflow bucket, so a flood of
//! addresses or principals cannot grow it.
//!
//! Spec: server/tools.mdx#security-considerations — servers MUST rate
//! limit tool invocations.
//!
//! [`ServerConfig::with_rate_limit_keys`]: crate::ServerConfig::with_rate_limit_keys

use governor::clock::{Clock, MonotonicClock};
use governor::nanos::Nanos;
use governor::state::keyed::ShrinkableKeyedStateStore;
use governor::state::{InMemoryState, NotKeyed, StateStore};
use governor::{Quota, RateLimiter};
use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use toolwire_proto::{ErrorCode, ErrorObject};

/// The longest period and wait: a year (the crate's bound on time limits).
const MAX_PERIOD: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// A token bucket: `count` invocations per `period` on average, with up to
/// `burst` at once (the bucket's size; `count` unless set).
///
/// Parsed from `N/s`, `N/m` or `N/h`, optionally followed by `,BURST`:
///
/// ```
/// use std::time::Duration;
/// use toolwire::RateLimit;
///
/// let limit: RateLimit = "10/s,20".parse()?;
/// assert_eq!(limit, RateLimit::per_second(10).with_burst(20));
/// assert_eq!(limit.period(), Duration::from_secs(1));
/// assert_eq!("600/m".parse::<RateLimit>()?.burst(), 600);
/// # Ok::<(), toolwire::RateLimitParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    count: NonZeroU32,
    period: Duration,
    burst: NonZeroU32,
}

impl RateLimit {
    /// `count` invocations per `period` (a count of 0 is taken as 1, a
    /// period is kept within 1 ms and a year), with a burst of `count`.
    pub fn new(count: u32, period: Duration) -> Self {
        let count = NonZeroU32::new(count).unwrap_or(NonZeroU32::MIN);
        Self {
            count,
            period: period.clamp(Duration::from_millis(1), MAX_PERIOD),
            burst: count,
        }
    }

    /// `count` invocations per second.
    pub fn per_second(count: u32) -> Self {
        Self::new(count, Duration::from_secs(1))
    }

    /// `count` invocations per minute.
    pub fn per_minute(count: u32) -> Self {
        Self::new(count, Duration::from_secs(60))
    }

    /// Sets how many invocations may come at once (at least 1).
    #[must_use]
    pub fn with_burst(mut self, burst: u32) -> Self {
        self.burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        self
    }

    /// Invocations per [`period`](Self::period).
    pub fn count(&self) -> u32 {
        self.count.get()
    }

    /// The period [`count`](Self::count) is measured over.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Invocations allowed at once.
    pub fn burst(&self) -> u32 {
        self.burst.get()
    }

    /// governor's quota: one token every `period / count` (at least 1 ns),
    /// `burst` tokens at most.
    fn quota(&self) -> Quota {
        let every = (self.period / self.count.get()).max(Duration::from_nanos(1));
        Quota::with_period(every)
            .unwrap_or_else(|| unreachable!("the period is at least 1 ns"))
            .allow_burst(self.burst)
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.period.as_secs() {
            60 if self.period.subsec_nanos() == 0 => "m",
            3600 if self.period.subsec_nanos() == 0 => "h",
            _ if self.period == Duration::from_secs(1) => "s",
            _ => return write!(f, "{}/{:?},{}", self.count, self.period, self.burst),
        };
        write!(f, "{}/{unit},{}", self.count, self.burst)
    }
}

/// A rate limit that does not read as `N/s`, `N/m` or `N/h` with an
/// optional `,BURST` (counts from 1 to 2^32-1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid rate limit {0:?}: expected N/s, N/m or N/h, optionally followed by ,BURST (for example 10/s,20)"
)]
pub struct RateLimitParseError(String);

impl FromStr for RateLimit {
    type Err = RateLimitParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || RateLimitParseError(s.to_owned());
        let (rate, burst) = match s.split_once(',') {
            Some((rate, burst)) => (rate, Some(burst)),
            None => (s, None),
        };
        let (count, unit) = rate.trim().split_once('/').ok_or_else(bad)?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        let period = match unit.trim() {
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => return Err(bad()),
        };
        if count == 0 {
            return Err(bad());
        }
        let mut limit = Self::new(count, period);
        if let Some(burst) = burst {
            let burst: u32 = burst.trim().parse().map_err(|_| bad())?;
            if burst == 0 {
                return Err(bad());
            }
            limit = limit.with_burst(burst);
        }
        Ok(limit)
    }
}

/// Who an invocation is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Caller {
    /// The authenticated principal.
    Principal(Arc<str>),
    /// An unauthenticated client, by IP address.
    Addr(IpAddr),
    /// Neither is known: the process's one client (stdio), or every
    /// unauthenticated caller of an `HttpService` mounted elsewhere.
    Process,
}

/// The keyed bucket table: governor's state per caller, at most `max`
/// callers; once full, new callers share `overflow`.
struct BoundedStore {
    map: Mutex<HashMap<Caller, InMemoryState>>,
    max: usize,
    overflow: InMemoryState,
    /// Set when a new caller found the table full, which wants a sweep;
    /// shared with the [`Bucket`], which cannot reach the store.
    full: Arc<AtomicBool>,
}

impl BoundedStore {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<Caller, InMemoryState>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The theoretical arrival time a state holds (0 for a fresh state).
fn arrival(state: &InMemoryState) -> Nanos {
    state
        .measure_and_replace(&NotKeyed::NonKey, |prev| {
            Err::<((), Nanos), Nanos>(prev.unwrap_or_default())
        })
        .err()
        .unwrap_or_default()
}

impl StateStore for BoundedStore {
    type Key = Caller;

    fn measure_and_replace<T, F, E>(&self, key: &Caller, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let mut map = self.map();
        if let Some(state) = map.get(key) {
            return state.measure_and_replace(&NotKeyed::NonKey, f);
        }
        if map.len() >= self.max {
            self.full.store(true, Ordering::Relaxed);
            drop(map);
            return self.overflow.measure_and_replace(&NotKeyed::NonKey, f);
        }
        map.entry(key.clone())
            .or_default()
            .measure_and_replace(&NotKeyed::NonKey, f)
    }
}

impl ShrinkableKeyedStateStore<Caller> for BoundedStore {
    fn retain_recent(&self, drop_below: Nanos) {
        let mut map = self.map();
        // A state whose arrival time has passed by a whole bucket is the
        // same as a fresh one: forgetting it changes no decision.
        map.retain(|_, state| arrival(state) > drop_below);
        self.full.store(map.len() >= self.max, Ordering::Relaxed);
        if map.capacity() > 2 * map.len().max(16) {
            map.shrink_to_fit();
        }
    }

    fn len(&self) -> usize {
        self.map().len()
    }

    fn is_empty(&self) -> bool {
        self.map().is_empty()
    }
}

/// A full table is swept of idle callers at most this often.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// One limit, one bucket per caller.
struct Bucket {
    limit: RateLimit,
    limiter: RateLimiter<Caller, BoundedStore, MonotonicClock>,
    clock: MonotonicClock,
    /// The store's "full" flag.
    full: Arc<AtomicBool>,
    /// When the table was last swept, in ms since `born` (0: never).
    last_sweep: AtomicU64,
    born: Instant,
}

impl Bucket {
    fn new(limit: RateLimit, max_callers: usize) -> Self {
        let full = Arc::new(AtomicBool::new(false));
        let store = BoundedStore {
            map: Mutex::new(HashMap::new()),
            max: max_callers.max(1),
            overflow: InMemoryState::default(),
            full: Arc::clone(&full),
        };
        Self {
            limit,
            limiter: RateLimiter::new(limit.quota(), store, MonotonicClock),
            clock: MonotonicClock,
            full,
            last_sweep: AtomicU64::new(0),
            born: Instant::now(),
        }
    }

    /// Takes one token of `caller`'s bucket, or says how long until one is
    /// there.
    fn check(&self, caller: &Caller) -> Result<(), Duration> {
        let result = self
            .limiter
            .check_key(caller)
            .map(drop)
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()));
        if self.full.load(Ordering::Relaxed) {
            self.sweep();
        }
        result
    }

    /// Forgets idle callers, at most once per [`SWEEP_EVERY`].
    fn sweep(&self) {
        // 0 is "never"; a sweep stores at least 1.
        let now = u64::try_from(self.born.elapsed().as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let last = self.last_sweep.load(Ordering::Relaxed);
        let every = u64::try_from(SWEEP_EVERY.as_millis()).unwrap_or(u64::MAX);
        if (last != 0 && now.saturating_sub(last) < every)
            || self
                .last_sweep
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        self.limiter.retain_recent();
    }
}

/// The limits of one server: the default for every invocation, and the
/// tools that have their own.
pub(crate) struct RateLimits {
    default: Option<Bucket>,
    tools: HashMap<String, Bucket>,
}

impl fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimits")
            .field("default", &self.default.as_ref().map(|b| b.limit))
            .field("tools", &self.tools.len())
            .finish()
    }
}

impl RateLimits {
    /// The limiters for a configuration; `None` when it sets no limit, so
    /// an unlimited server pays one branch per invocation.
    pub(crate) fn new(
        default: Option<RateLimit>,
        tools: &[(String, RateLimit)],
        max_callers: usize,
    ) -> Option<Box<Self>> {
        if default.is_none() && tools.is_empty() {
            return None;
        }
        Some(Box::new(Self {
            default: default.map(|l| Bucket::new(l, max_callers)),
            tools: tools
                .iter()
                .map(|(name, l)| (name.clone(), Bucket::new(*l, max_callers)))
                .collect(),
        }))
    }

    /// Counts one invocation by `caller`, of the tool `tool` when it is a
    /// `tools/call`: a tool with its own limit is counted against it, any
    /// other invocation against the default.
    pub(crate) fn check(&self, caller: &Caller, tool: Option<&str>) -> Result<(), Limited> {
        let bucket = tool
            .and_then(|t| self.tools.get(t))
            .or(self.default.as_ref());
        match bucket {
            Some(bucket) => bucket
                .check(caller)
                .map_err(|wait| Limited::new(wait, bucket.limit)),
            None => Ok(()),
        }
    }

    /// How many callers `tool`'s bucket (the default's for `None`) holds.
    #[cfg(test)]
    fn callers(&self, tool: Option<&str>) -> usize {
        let bucket = tool
            .and_then(|t| self.tools.get(t))
            .or(self.default.as_ref());
        bucket.map_or(0, |b| b.limiter.len())
    }
}

/// An invocation over its caller's limit: the JSON-RPC error and the
/// `Retry-After` an HTTP response carries.
#[derive(Debug, Clone)]
pub(crate) struct Limited {
    /// [`ErrorCode::RATE_LIMITED`] with `data.retryAfterMs`.
    pub(crate) error: ErrorObject,
    /// `retryAfterMs` rounded up to whole seconds (at least 1).
    pub(crate) retry_after_secs: u64,
}

impl Limited {
    /// The error for a wait of `wait` under `limit`.
    fn new(wait: Duration, limit: RateLimit) -> Self {
        // Whole milliseconds, rounded up, so that a client that waits
        // exactly this long is served.
        let ms = u64::try_from(wait.as_nanos().div_ceil(1_000_000))
            .unwrap_or(u64::MAX)
            .max(1);
        let error = ErrorObject::new(
            ErrorCode::RATE_LIMITED,
            format!("Too Many Requests: over the rate limit of {limit}; retry after {ms} ms"),
        )
        .with_data(serde_json::json!({ "retryAfterMs": ms }));
        Self {
            error,
            retry_after_secs: ms.div_ceil(1000).clamp(1, MAX_PERIOD.as_secs()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u8) -> Caller {
        Caller::Addr(IpAddr::from([10, 0, 0, n]))
    }

    #[test]
    fn limits_parse_from_the_flag_syntax() {
        let l: RateLimit = "10/s".parse().expect("10/s");
        assert_eq!(
            (l.count(), l.period(), l.burst()),
            (10, Duration::from_secs(1), 10)
        );
        let l: RateLimit = " 5/m , 7 ".parse().expect("with burst");
        assert_eq!(
            (l.count(), l.period(), l.burst()),
            (5, Duration::from_secs(60), 7)
        );
        assert_eq!(
            "2/h".parse::<RateLimit>().expect("h").period(),
            Duration::from_secs(3600)
        );
        for bad in [
            "", "10", "10/d", "0/s", "10/s,0", "x/s", "10/s,", "-1/s", "10/s,2,3",
        ] {
            assert!(bad.parse::<RateLimit>().is_err(), "{bad:?}");
        }
        assert_eq!(RateLimit::per_second(3).with_burst(9).to_string(), "3/s,9");
        assert_eq!(
            "3/s,9".parse::<RateLimit>(),
            Ok(RateLimit::per_second(3).with_burst(9))
        );
    }

    #[test]
    fn constructors_keep_values_that_serve() {
        let l = RateLimit::new(0, Duration::ZERO).with_burst(0);
        assert_eq!(
            (l.count(), l.period(), l.burst()),
            (1, Duration::from_millis(1), 1)
        );
        // A token every period / count, never a zero interval.
        let fast = RateLimit::new(u32::MAX, Duration::from_millis(1));
        let limits = RateLimits::new(Some(fast), &[], 8).expect("on");
        assert!(limits.check(&Caller::Process, None).is_ok());
        let slow = RateLimit::new(1, Duration::MAX);
        assert_eq!(slow.period(), MAX_PERIOD);
    }

    #[test]
    fn no_limit_builds_nothing() {
        assert!(RateLimits::new(None, &[], 8).is_none());
    }

    #[test]
    fn a_burst_over_the_limit_is_refused_with_the_wait() {
        let limits =
            RateLimits::new(Some(RateLimit::per_minute(60).with_burst(2)), &[], 8).expect("on");
        let a = addr(1);
        assert!(limits.check(&a, None).is_ok());
        assert!(limits.check(&a, None).is_ok());
        let limited = limits.check(&a, None).expect_err("third in a burst of 2");
        assert_eq!(limited.error.code, ErrorCode::RATE_LIMITED);
        let ms = limited.error.data.as_ref().expect("data")["retryAfterMs"]
            .as_u64()
            .expect("retryAfterMs");
        assert!((900..=1000).contains(&ms), "one token a second: {ms}");
        assert_eq!(limited.retry_after_secs, 1);
        // Another caller has its own bucket.
        assert!(limits.check(&addr(2), None).is_ok());
        assert!(
            limits
                .check(&Caller::Principal("alice".into()), None)
                .is_ok()
        );
    }

    #[test]
    fn a_tool_with_its_own_limit_is_counted_against_it_alone() {
        let limits = RateLimits::new(
            Some(RateLimit::per_minute(1)),
            &[("search".to_owned(), RateLimit::per_minute(3))],
            8,
        )
        .expect("on");
        let a = addr(1);
        for _ in 0..3 {
            assert!(limits.check(&a, Some("search")).is_ok());
        }
        assert!(limits.check(&a, Some("search")).is_err());
        // The default bucket is untouched by the three searches.
        assert!(limits.check(&a, Some("echo")).is_ok());
        assert!(
            limits.check(&a, None).is_err(),
            "echo took the default's one token"
        );
    }

    #[test]
    fn the_caller_table_is_bounded_and_new_callers_share_the_overflow() {
        let limits = RateLimits::new(Some(RateLimit::per_minute(1)), &[], 2).expect("on");
        assert!(limits.check(&addr(1), None).is_ok());
        assert!(limits.check(&addr(2), None).is_ok());
        // Full of active callers: the rest share one bucket.
        assert!(limits.check(&addr(3), None).is_ok());
        for n in 4..=200 {
            assert!(
                limits.check(&addr(n), None).is_err(),
                "{n} shares the overflow"
            );
        }
        assert_eq!(limits.callers(None), 2);
        // The tracked callers keep their own buckets.
        assert!(limits.check(&addr(1), None).is_err());
    }

    #[test]
    fn idle_callers_are_swept_out_when_the_table_fills() {
        let limit = RateLimit::new(1, Duration::from_millis(20));
        let limits = RateLimits::new(Some(limit), &[], 2).expect("on");
        assert!(limits.check(&addr(1), None).is_ok());
        assert!(limits.check(&addr(2), None).is_ok());
        std::thread::sleep(Duration::from_millis(60));
        // Finds the table full, is served from the overflow, and sweeps
        // out the two idle callers.
        assert!(limits.check(&addr(3), None).is_ok());
        assert_eq!(limits.callers(None), 0);
        assert!(limits.check(&addr(4), None).is_ok());
        assert_eq!(limits.callers(None), 1, "a new caller is tracked again");
    }
}
