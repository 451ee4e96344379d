//! hyper's head-read timeout at one timer-wheel entry per connection.
//!
//! hyper asks its timer for a new deadline each time it starts reading a
//! request head (also while a kept-alive connection waits for the next
//! one) and drops it as soon as the head is in. With tokio's timer each of
//! those is a wheel entry: inserted when hyper first waits on it, removed
//! when the head arrives, for every request.
//!
//! Here a connection owns one tokio `Sleep`. A head's deadline is only an
//! `Instant`, compared with the clock when hyper polls it; the connection's
//! `Sleep` is moved only when it would fire after that deadline. Deadlines
//! only grow on a connection, so the `Sleep` stays armed at an earlier one:
//! when it fires, the connection's task is woken, the deadline still
//! waiting (if any) is not yet due, and the `Sleep` is re-armed for it. The
//! wheel sees a connection about once per read timeout, whatever its
//! request rate; a head that does not arrive in time is still cut at its
//! own deadline, as with hyper's own timer.

use hyper::rt::{Sleep, Timer};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The timer of one HTTP/1 connection (give each its own).
#[derive(Clone)]
pub(super) struct HeadTimer {
    wake: Arc<Mutex<Wake>>,
}

/// The connection's one wheel entry, and the waker it was last polled
/// with: polling a registered `Sleep` again with the same waker changes
/// nothing, so it is skipped.
struct Wake {
    sleep: Pin<Box<tokio::time::Sleep>>,
    waker: Option<Waker>,
}

impl HeadTimer {
    /// Must be made inside the runtime (the `Sleep` belongs to its timer).
    pub(super) fn new() -> Self {
        // Not in the wheel until first polled: a connection that never
        // waits for a head never touches it.
        let idle = tokio::time::Instant::now() + Duration::from_secs(86_400);
        Self {
            wake: Arc::new(Mutex::new(Wake {
                sleep: Box::pin(tokio::time::sleep_until(idle)),
                waker: None,
            })),
        }
    }
}

impl Timer for HeadTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    /// tokio's clock, which a test may pause.
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(Deadline {
            at: deadline,
            wake: Arc::clone(&self.wake),
        })
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<Deadline>() {
            Some(deadline) => deadline.get_mut().at = new_deadline,
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// One head's deadline.
struct Deadline {
    at: Instant,
    wake: Arc<Mutex<Wake>>,
}

impl Sleep for Deadline {}

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let at = tokio::time::Instant::from_std(self.at);
        if tokio::time::Instant::now() >= at {
            return Poll::Ready(());
        }
        // Poisoned only by a panic while held, which nothing here can
        // cause; the timer is still sound then.
        let mut wake = self
            .wake
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let wake = &mut *wake;
        loop {
            // Armed later than this deadline (it was set for another), or
            // fired for an earlier one: set it for this one. Armed earlier
            // and still pending, it wakes the task first, and this is polled
            // (and re-arms it) then.
            if wake.sleep.deadline() > at || wake.sleep.is_elapsed() {
                wake.sleep.as_mut().reset(at);
                wake.waker = None;
            } else if wake.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                return Poll::Pending;
            }
            match wake.sleep.as_mut().poll(cx) {
                Poll::Pending => {
                    wake.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Poll::Ready(()) if wake.sleep.deadline() >= at => return Poll::Ready(()),
                // It fired for an earlier deadline: re-armed above.
                Poll::Ready(()) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn each_deadline_fires_at_its_own_time_on_one_sleep() {
        let timer = HeadTimer::new();
        let start = timer.now();
        // A later deadline first, then an earlier one: each fires at its
        // own time.
        let late = timer.sleep_until(start + Duration::from_secs(30));
        let early = timer.sleep_until(start + Duration::from_secs(10));
        let t = tokio::time::Instant::now();
        early.await;
        assert_eq!(t.elapsed(), Duration::from_secs(10));
        late.await;
        assert_eq!(t.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn a_reset_deadline_moves_and_a_past_one_is_ready() {
        let timer = HeadTimer::new();
        let t = tokio::time::Instant::now();
        let mut sleep = timer.sleep(Duration::from_secs(5));
        // Waits for the armed deadline, then for the moved one.
        assert!(
            tokio::time::timeout(Duration::from_secs(1), sleep.as_mut())
                .await
                .is_err()
        );
        timer.reset(&mut sleep, timer.now() + Duration::from_secs(20));
        sleep.as_mut().await;
        assert_eq!(t.elapsed(), Duration::from_secs(21));
        let past = timer.sleep_until(timer.now() - Duration::from_millis(1));
        assert!(futures_util::poll!(past).is_ready());
    }
}
