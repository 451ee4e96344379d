//! What a message engine provides: a broadcast channel and a small
//! key-value store of definitions.

use futures_util::stream::BoxStream;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Stored definitions, as `(name, value)` pairs.
pub type Definitions = Vec<(String, Vec<u8>)>;

/// An engine operation that failed: the engine is unreachable, timed out,
/// or refused. The text never contains credentials from the URL.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct BusError(String);

impl BusError {
    /// An error saying `message`.
    pub fn new(message: impl std::fmt::Display) -> Self {
        Self(message.to_string())
    }
}

/// What arrives on the broadcast channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// One payload, as published by some replica (this one included).
    Message(Vec<u8>),
    /// The connection was lost and is back: messages published meanwhile
    /// may have been missed.
    Reconnected,
}

/// A message engine as the [`Relay`](crate::Relay) and
/// [`SharedTools`](crate::SharedTools) use it.
///
/// An implementation connects in its constructor, so that an unreachable
/// engine is a start-up error, and then survives connection loss by itself:
/// operations fail (with a timeout, never hanging) while the engine is
/// away, and [`incoming`](Self::incoming) reconnects with [`Backoff`] and
/// says so with [`Incoming::Reconnected`].
pub trait Backend: Send + Sync + 'static {
    /// Publishes `payload` to every replica's [`incoming`](Self::incoming).
    fn publish<'a>(&'a self, payload: &'a [u8]) -> BoxFuture<'a, Result<(), BusError>>;

    /// Everything published from now on, in order per publisher; called
    /// once. The stream ends only when the backend is shut down.
    fn incoming(&self) -> BoxStream<'static, Incoming>;

    /// Every stored definition, as `(name, value)`.
    fn load(&self) -> BoxFuture<'_, Result<Definitions, BusError>>;

    /// Stores `value` under `name` unless the name is taken (atomically, for
    /// every replica); `false` if it was.
    fn create<'a>(
        &'a self,
        name: &'a str,
        value: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, BusError>>;

    /// Removes `name`; `false` if it was not stored.
    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<bool, BusError>>;
}

/// Exponential backoff with jitter for reconnecting: 100 ms doubling up to
/// 5 s, each delay between half and all of its step.
#[derive(Debug, Clone)]
pub struct Backoff {
    step: Duration,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(100);
    const MAX: Duration = Duration::from_secs(5);

    /// A backoff at its first step.
    pub fn new() -> Self {
        Self { step: Self::FIRST }
    }

    /// The delay before the next attempt; each call doubles the step.
    pub fn next_delay(&mut self) -> Duration {
        let step = self.step;
        self.step = (self.step * 2).min(Self::MAX);
        let jitter = f64::from(getrandom::u32().unwrap_or(0)) / f64::from(u32::MAX);
        step.mul_f64(0.5 + jitter / 2.0)
    }

    /// Back to the first step, after a success.
    pub fn reset(&mut self) {
        self.step = Self::FIRST;
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_resets() {
        let mut b = Backoff::new();
        let first = b.next_delay();
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
        for _ in 0..20 {
            assert!(b.next_delay() <= Duration::from_secs(5));
        }
        assert!(b.next_delay() >= Duration::from_millis(2500));
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(100));
    }
}
