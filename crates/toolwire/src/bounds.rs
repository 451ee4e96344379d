//! The bounds every time limit of the crate is kept within: the server's
//! settings, the HTTP transport's and the client's all clamp to them.
//!
//! Below every module that takes a time limit, so that none of them borrows
//! the bounds from another.

use std::time::Duration;

/// The longest time limit kept: deadlines are computed as `now + limit`,
/// and a year is "never" in practice while staying far from overflow.
pub(crate) const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// The shortest time limit kept: a limit of zero would expire before the
/// work it bounds could start.
pub(crate) const MIN_TIMEOUT: Duration = Duration::from_millis(1);

/// A time limit within [`MIN_TIMEOUT`]..=[`MAX_DURATION`].
pub(crate) fn timeout_within_bounds(d: Duration) -> Duration {
    d.clamp(MIN_TIMEOUT, MAX_DURATION)
}
