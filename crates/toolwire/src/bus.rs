//! The notification bus: how list changes and resource updates reach every
//! open `subscriptions/listen` stream.
//!
//! The server publishes a [`BusEvent`] whenever a tool, prompt or resource is
//! added or removed; every listen stream subscribes and turns the events it
//! asked for into notifications. [`InMemoryBus`], the default, reaches the
//! streams of one process. Replicas behind a load balancer each hold their
//! own streams, so they need a bus every replica subscribes to: implement
//! [`NotificationBus`] over Redis pub/sub, NATS or similar (events are
//! serialisable for that) and pass it with
//! [`ServerConfig::with_bus`](crate::ServerConfig::with_bus). The server core
//! does not change.

use futures_util::stream::{self, BoxStream};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ListChanged {
    /// The tool list (`notifications/tools/list_changed`).
    Tools,
    /// The prompt list (`notifications/prompts/list_changed`).
    Prompts,
    /// The resource list (`notifications/resources/list_changed`).
    Resources,
}

impl ListChanged {
    /// Every list.
    pub const ALL: [Self; 3] = [Self::Tools, Self::Prompts, Self::Resources];
}

/// Something that happened on the server that listen streams may want to
/// hear about. Serialises as `{"event": "list_changed", "list": "tools"}` or
/// `{"event": "resource_updated", "uri": "…"}`, for buses that cross
/// process boundaries.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum BusEvent {
    /// A list changed.
    ListChanged {
        /// Which one.
        list: ListChanged,
    },
    /// The resource at `uri` changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// The task `task_id` changed (its status, or answers or a cancel
    /// for its runner, which may be on another replica).
    TaskChanged {
        /// The task's id.
        task_id: String,
    },
}

impl From<ListChanged> for BusEvent {
    fn from(list: ListChanged) -> Self {
        Self::ListChanged { list }
    }
}

/// The events a subscriber receives, in publication order.
pub type BusStream = BoxStream<'static, BusEvent>;

/// Carries [`BusEvent`]s from the code that changes the server to every
/// listen stream, on this replica or (for a networked bus) on all of them.
///
/// A networked implementation serialises events in [`publish`](Self::publish)
/// (without blocking: hand them to a background task) and delivers every
/// event, including this replica's own, to each stream from
/// [`subscribe`](Self::subscribe). A subscriber that falls behind may be
/// given a [`ListChanged`] event for every list instead of the events it
/// missed: list-changed notifications only tell the client to list again. A
/// stream that ends tells its listener the bus is gone; the listener is then
/// closed.
pub trait NotificationBus: Send + Sync + std::fmt::Debug + 'static {
    /// Publishes `event` to every subscriber.
    fn publish(&self, event: BusEvent);

    /// A stream of every event published from now on.
    fn subscribe(&self) -> BusStream;
}

/// The in-process bus: a bounded broadcast channel.
#[derive(Debug)]
pub struct InMemoryBus {
    tx: broadcast::Sender<BusEvent>,
}

impl InMemoryBus {
    /// A bus that buffers up to `capacity` events per slow subscriber before
    /// it starts to coalesce them.
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity.max(1));
        Self { tx }
    }
}

impl Default for InMemoryBus {
    fn default() -> Self {
        Self::new(256)
    }
}

impl NotificationBus for InMemoryBus {
    fn publish(&self, event: BusEvent) {
        // No subscriber is not an error.
        let _ = self.tx.send(event);
    }

    fn subscribe(&self) -> BusStream {
        let rx = self.tx.subscribe();
        Box::pin(stream::unfold(
            (rx, VecDeque::new()),
            |(mut rx, mut pending)| async move {
                loop {
                    if let Some(event) = pending.pop_front() {
                        return Some((event, (rx, pending)));
                    }
                    match rx.recv().await {
                        Ok(event) => return Some((event, (rx, pending))),
                        Err(RecvError::Lagged(missed)) => {
                            crate::log_limit::warn_limited!(
                                missed,
                                "a listener fell behind; resending list changes"
                            );
                            pending.extend(ListChanged::ALL.map(BusEvent::from));
                        }
                        Err(RecvError::Closed) => return None,
                    }
                }
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt as _;
    use serde_json::json;

    #[test]
    fn events_serialise_for_the_wire_between_replicas() {
        let e = BusEvent::from(ListChanged::Tools);
        let v = serde_json::to_value(&e).expect("serialises");
        assert_eq!(v, json!({"event": "list_changed", "list": "tools"}));
        assert_eq!(serde_json::from_value::<BusEvent>(v).expect("parses"), e);
        let u = BusEvent::ResourceUpdated {
            uri: "file:///a".into(),
        };
        let v = serde_json::to_value(&u).expect("serialises");
        assert_eq!(v, json!({"event": "resource_updated", "uri": "file:///a"}));
        assert_eq!(serde_json::from_value::<BusEvent>(v).expect("parses"), u);
    }

    #[tokio::test]
    async fn every_subscriber_gets_every_event_in_order() {
        let bus = InMemoryBus::default();
        let mut a = bus.subscribe();
        let mut b = bus.subscribe();
        bus.publish(ListChanged::Tools.into());
        bus.publish(ListChanged::Prompts.into());
        for s in [&mut a, &mut b] {
            assert_eq!(s.next().await, Some(ListChanged::Tools.into()));
            assert_eq!(s.next().await, Some(ListChanged::Prompts.into()));
        }
    }

    #[tokio::test]
    async fn a_lagging_subscriber_gets_every_list_again() {
        let bus = InMemoryBus::new(2);
        let mut s = bus.subscribe();
        for _ in 0..5 {
            bus.publish(BusEvent::ResourceUpdated { uri: "x".into() });
        }
        let mut got = Vec::new();
        for _ in 0..5 {
            got.push(s.next().await.expect("event"));
        }
        for list in ListChanged::ALL {
            assert!(got.contains(&list.into()), "{got:?}");
        }
    }

    #[tokio::test]
    async fn the_stream_ends_when_the_bus_is_dropped() {
        let bus = InMemoryBus::default();
        let mut s = bus.subscribe();
        drop(bus);
        assert_eq!(s.next().await, None);
    }
}
