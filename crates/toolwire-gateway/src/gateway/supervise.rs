//! One supervisor task per upstream: takes over its first listing if
//! start-up did not wait for it, follows its list changes, and brings it
//! back with backoff when it goes down.

use super::{First, Inner};
use crate::upstream::{Link, backoff};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use toolwire::proto::types::SubscriptionFilter;

/// How often a supervisor checks that a stdio upstream is still alive.
const LIVENESS_TICK: Duration = Duration::from_millis(250);

/// The least time between two listings of one upstream that its change
/// notifications ask for. A change after a quiet spell is listed at once;
/// the changes that come while one listing runs, or within this gap of
/// it, are coalesced into one more listing at the gap's end. So an
/// upstream that floods `list_changed` is listed about once a second, and
/// a change is never left unlisted.
const RELIST_GAP: Duration = Duration::from_secs(1);

/// Counts the upstream's first listing as settled, once.
struct Settle(Option<Weak<Inner>>);

impl Settle {
    fn done(&mut self) {
        if let Some(inner) = self.0.take().and_then(|w| w.upgrade()) {
            inner.settled.send_modify(|n| *n += 1);
        }
    }
}

impl Drop for Settle {
    fn drop(&mut self) {
        self.done();
    }
}

/// Keeps upstream `i` current until the gateway stops. `ready` is told
/// once its change relay is open (at once if it is not up).
pub(super) async fn supervise(
    gateway: Weak<Inner>,
    i: usize,
    link: Arc<Link>,
    first: First,
    ready: oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let mut up = matches!(first, First::Listed(_));
    if !up && let Some(r) = ready.take() {
        let _ = r.send(());
    }
    let mut attempt: u32 = 0;
    if let First::Pending(task) = first {
        // Start-up stopped waiting for this one: its first listing joins
        // the merged lists when it comes (publishing `list_changed`).
        let mut settle = Settle(Some(gateway.clone()));
        let stop = match gateway.upgrade() {
            Some(g) => g.stop.clone(),
            None => return,
        };
        let outcome = tokio::select! {
            r = task => r,
            () = stop.cancelled() => return,
        };
        match outcome {
            Ok(Ok(listing)) => {
                tracing::info!(
                    upstream = link.name(),
                    "upstream answered; its entries join the lists"
                );
                let Some(g) = gateway.upgrade() else { return };
                g.refresh(i, &listing);
                up = true;
            }
            Ok(Err(e)) => link.mark_down(&e.to_string()).await,
            Err(e) => link.mark_down(&e.to_string()).await,
        }
        settle.done();
    }
    loop {
        let Some(stop) = gateway.upgrade().map(|g| g.stop.clone()) else {
            return;
        };
        if stop.is_cancelled() {
            return;
        }
        if !up {
            tokio::select! {
                () = tokio::time::sleep(backoff(attempt)) => {}
                () = stop.cancelled() => return,
            }
            attempt = attempt.saturating_add(1);
            match link.connect().await {
                Ok(listing) => {
                    link.note_restart();
                    tracing::info!(upstream = link.name(), "upstream is back");
                    let Some(g) = gateway.upgrade() else { return };
                    g.refresh(i, &listing);
                    up = true;
                }
                Err(e) => {
                    link.mark_down(&e.to_string()).await;
                    continue;
                }
            }
        }
        if link.is_rest() {
            // A REST API announces no changes: its document was read, and
            // is read again only when the gateway restarts.
            if let Some(r) = ready.take() {
                let _ = r.send(());
            }
            stop.cancelled().await;
            return;
        }
        // Up: follow the upstream's list changes until the relay breaks.
        let why = follow(&gateway, i, &link, &stop, ready.take()).await;
        let Some(why) = why else { return };
        let stdio_lost = link.client().and_then(|c| c.connection_lost());
        match stdio_lost {
            Some(lost) => {
                // The stdio process is gone: its tools go until it is back.
                let why = if why == lost {
                    why
                } else {
                    format!("{why} ({lost})")
                };
                link.mark_down(&why).await;
                if let Some(g) = gateway.upgrade() {
                    g.clear(i);
                }
                up = false;
            }
            None => {
                // The relay broke but the upstream may still serve: list it
                // again when the relay is back.
                tracing::info!(upstream = link.name(), "change relay lost: {why}");
                tokio::select! {
                    () = tokio::time::sleep(backoff(attempt)) => {}
                    () = stop.cancelled() => return,
                }
                attempt = attempt.saturating_add(1);
                match link.relist().await {
                    Ok(listing) => {
                        attempt = 0;
                        let Some(g) = gateway.upgrade() else { return };
                        g.refresh(i, &listing);
                    }
                    Err(e) => {
                        link.mark_down(&e.to_string()).await;
                        if let Some(g) = gateway.upgrade() {
                            g.clear(i);
                        }
                        up = false;
                    }
                }
            }
        }
    }
}

/// Follows one upstream's change notifications; returns why it stopped, or
/// `None` when the gateway stopped.
async fn follow(
    gateway: &Weak<Inner>,
    i: usize,
    link: &Link,
    stop: &CancellationToken,
    ready: Option<oneshot::Sender<()>>,
) -> Option<String> {
    let client = link.client()?;
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        resources_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let mut subscription = match client.listen(filter).await {
        Ok(s) => Some(s),
        Err(e) => {
            // An upstream without subscriptions still gets supervised.
            tracing::debug!(upstream = link.name(), "no change relay: {e}");
            None
        }
    };
    // What changed before the relay opened (since the listing that
    // brought the upstream up) is caught by listing once more.
    match link.relist().await {
        Ok(listing) => gateway.upgrade()?.refresh(i, &listing),
        Err(e) => return Some(format!("listing after the relay opened failed: {e}")),
    }
    if let Some(r) = ready {
        let _ = r.send(());
    }
    let mut tick = tokio::time::interval(LIVENESS_TICK);
    // A change notified and not listed yet, and when it may be.
    let mut pending = false;
    let mut next_listing = Instant::now();
    loop {
        // While a listing is pending the relay is left unread: what comes
        // meanwhile waits in the subscription, coalesced.
        let next = async {
            match subscription.as_mut() {
                Some(s) if !pending => s.next().await,
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            () = stop.cancelled() => return None,
            () = link.broken.notified() => {
                if let Some(lost) = client.connection_lost() {
                    return Some(lost);
                }
            }
            _ = tick.tick() => {
                if let Some(lost) = client.connection_lost() {
                    return Some(lost);
                }
            }
            () = tokio::time::sleep_until(next_listing), if pending => {
                pending = false;
                let listing = match link.relist().await {
                    Ok(l) => l,
                    Err(e) => return Some(format!("listing after a change failed: {e}")),
                };
                next_listing = Instant::now() + RELIST_GAP;
                let g = gateway.upgrade()?;
                g.refresh(i, &listing);
            }
            n = next => match n {
                Some(Ok(_change)) => pending = true,
                Some(Err(e)) => return Some(format!("the change relay failed: {e}")),
                None => return Some("the upstream closed the change relay".into()),
            },
        }
    }
}
