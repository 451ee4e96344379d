//! Watching a cancellation token from a future that is polled often.
//!
//! A token's wait future locks the token's mutex and then its notifier's
//! each time it is polled, even when nothing changed. A future that races
//! it against other work (a connection against the server's stop, a
//! forwarded call against the request's cancellation) is woken for every
//! step of that work, and paid both locks at each wake. [`Watch`] polls the
//! wait once, to register the task's waker, and again only if the waker
//! changes; in between, the token's flag says whether it fired, and it is
//! set before the registered waker is woken.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Waker};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// A token's wait, pinned by its owner, and the waker it registered.
pub(crate) struct Watch<'t, 'w> {
    token: &'t CancellationToken,
    wait: Pin<&'w mut WaitForCancellationFuture<'t>>,
    registered: Option<Waker>,
}

impl<'t, 'w> Watch<'t, 'w> {
    /// `wait` is `token.cancelled()`, pinned.
    pub(crate) fn new(
        token: &'t CancellationToken,
        wait: Pin<&'w mut WaitForCancellationFuture<'t>>,
    ) -> Self {
        Self {
            token,
            wait,
            registered: None,
        }
    }

    /// Whether the token fired. When not, the task is woken when it does.
    pub(crate) fn fired(&mut self, cx: &mut Context<'_>) -> bool {
        if self.token.is_cancelled() {
            return true;
        }
        if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return false;
        }
        if self.wait.as_mut().poll(cx).is_ready() {
            return true;
        }
        self.registered = Some(cx.waker().clone());
        false
    }
}

/// Resolves when `token` fires, polling its wait as [`Watch`] does.
pub(crate) async fn fired(token: &CancellationToken) {
    let wait = std::pin::pin!(token.cancelled());
    let mut watch = Watch::new(token, wait);
    std::future::poll_fn(|cx| {
        if watch.fired(cx) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn a_task_woken_often_with_one_waker_still_sees_the_token_fire() {
        let token = CancellationToken::new();
        let wakes = Arc::new(AtomicUsize::new(0));
        let watching = tokio::spawn({
            let (token, wakes) = (token.clone(), Arc::clone(&wakes));
            async move {
                let wait = std::pin::pin!(token.cancelled());
                let mut watch = Watch::new(&token, wait);
                std::future::poll_fn(|cx| {
                    if watch.fired(cx) {
                        return std::task::Poll::Ready(());
                    }
                    // Busy: the task wakes itself, as other work would.
                    wakes.fetch_add(1, Ordering::Relaxed);
                    cx.waker().wake_by_ref();
                    std::task::Poll::Pending
                })
                .await;
            }
        });
        while wakes.load(Ordering::Relaxed) < 100 {
            tokio::task::yield_now().await;
        }
        token.cancel();
        tokio::time::timeout(Duration::from_secs(5), watching)
            .await
            .expect("the firing is seen")
            .expect("joined");
    }

    #[tokio::test]
    async fn an_idle_task_is_woken_when_the_token_fires() {
        let token = CancellationToken::new();
        let waiting = tokio::spawn({
            let token = token.clone();
            async move { fired(&token).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        token.cancel();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken by the token")
            .expect("joined");
    }
}
