//! [`Relay`]: the [`NotificationBus`] over a [`Backend`].

use crate::backend::{Backend, Backoff, BoxFuture};
use crate::envelope::{Body, Envelope};
use crate::warn::Warner;
use futures_util::StreamExt as _;
use futures_util::stream::{self, BoxStream};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio::task::AbortHandle;
use toolwire::{BusEvent, BusStream, ListChanged, NotificationBus};

/// The largest message a replica accepts from the bus; larger ones are
/// dropped with a warning.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// Events waiting to be published; past this, events are dropped and a
/// [`Body::Resync`] is published instead.
const QUEUE: usize = 1024;
/// Events buffered per local listener before it is resynced instead.
const LOCAL: usize = 256;
/// How long one publish may take before it is retried.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(5);

/// What the relay calls when another replica changes the shared tools (set
/// by [`SharedTools`](crate::SharedTools)).
pub(crate) trait Apply: Send + Sync {
    fn defined(&self, name: &str, definition: &serde_json::Value);
    fn undefined(&self, name: &str);
    fn reload(&self) -> BoxFuture<'_, ()>;
}

pub(crate) struct Shared {
    pub(crate) backend: Arc<dyn Backend>,
    replica: String,
    local: broadcast::Sender<BusEvent>,
    outgoing: mpsc::Sender<Body>,
    overflowed: AtomicBool,
    pub(crate) applier: Mutex<Option<Weak<dyn Apply>>>,
    resyncs: AtomicU64,
    warner: Warner,
}

/// A [`NotificationBus`] shared by every replica through a [`Backend`].
///
/// [`publish`](NotificationBus::publish) hands the event to this replica's
/// listeners at once and queues it for the others; it never waits and never
/// fails. A background task publishes the queue in order (so each replica's
/// events arrive in the order it published them) and retries with
/// [`Backoff`] while the engine is away; a second task receives the other
/// replicas' events. After a reconnection, or a [`Body::Resync`] from a
/// replica that had to drop events, every local listener is sent a
/// `list_changed` for every list. Dropping the relay stops both tasks and
/// ends the listeners' streams.
pub struct Relay {
    shared: Arc<Shared>,
    tasks: [AbortHandle; 2],
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("replica", &self.shared.replica)
            .finish_non_exhaustive()
    }
}

impl Relay {
    /// Starts relaying over `backend`, as a replica with a random id.
    /// Spawns two tasks: call it within a Tokio runtime.
    pub fn start(backend: Arc<dyn Backend>) -> Self {
        let id = getrandom::u64().unwrap_or_else(|_| u64::from(std::process::id()));
        Self::start_as(backend, format!("{id:016x}"))
    }

    /// [`start`](Self::start) with a chosen replica id (unique per replica).
    pub fn start_as(backend: Arc<dyn Backend>, replica: impl Into<String>) -> Self {
        let (outgoing, queue) = mpsc::channel(QUEUE);
        let (local, _) = broadcast::channel(LOCAL);
        let incoming = backend.incoming();
        let shared = Arc::new(Shared {
            backend,
            replica: replica.into(),
            local,
            outgoing,
            overflowed: AtomicBool::new(false),
            applier: Mutex::new(None),
            resyncs: AtomicU64::new(0),
            warner: Warner::default(),
        });
        let tasks = [
            tokio::spawn(publishing(Arc::clone(&shared), queue)).abort_handle(),
            tokio::spawn(receiving(Arc::clone(&shared), incoming)).abort_handle(),
        ];
        Self { shared, tasks }
    }

    /// This replica's id, the tag on everything it publishes.
    pub fn replica(&self) -> &str {
        &self.shared.replica
    }

    /// How many resyncs this replica's listeners were sent (reconnections
    /// and other replicas' [`Body::Resync`]).
    pub fn resyncs(&self) -> u64 {
        self.shared.resyncs.load(Ordering::Relaxed)
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Shared {
    /// Queues `body` for the other replicas without waiting; when the queue
    /// is full, drops it and asks for a resync instead.
    pub(crate) fn enqueue(&self, body: Body) {
        if self.outgoing.try_send(body).is_err() && !self.overflowed.swap(true, Ordering::AcqRel) {
            self.warner.warn(
                "the bus publish queue is full; dropping events, the other replicas will resync",
                &format!("{QUEUE} events queued"),
            );
        }
    }

    fn applier(&self) -> Option<Arc<dyn Apply>> {
        let guard = match self.applier.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        guard.as_ref().and_then(Weak::upgrade)
    }

    /// Reloads the shared tools, then tells every local listener that every
    /// list changed.
    async fn resync(&self) {
        if let Some(applier) = self.applier() {
            applier.reload().await;
        }
        self.resyncs.fetch_add(1, Ordering::Relaxed);
        for list in ListChanged::ALL {
            let _ = self.local.send(list.into());
        }
    }

    fn receive(&self, payload: &[u8]) -> Option<Envelope> {
        if payload.len() > MAX_MESSAGE_BYTES {
            self.warner.warn(
                "dropped an oversized message from the bus",
                &format!("{} bytes", payload.len()),
            );
            return None;
        }
        match serde_json::from_slice::<Envelope>(payload) {
            Ok(envelope) if envelope.replica == self.replica => None,
            Ok(envelope) => Some(envelope),
            Err(e) => {
                self.warner
                    .warn("dropped an undecodable message from the bus", &e);
                None
            }
        }
    }
}

impl NotificationBus for Relay {
    fn publish(&self, event: BusEvent) {
        // No local subscriber is not an error.
        let _ = self.shared.local.send(event.clone());
        self.shared.enqueue(Body::Event { event });
    }

    fn subscribe(&self) -> BusStream {
        let rx = self.shared.local.subscribe();
        Box::pin(stream::unfold(
            (rx, VecDeque::new()),
            |(mut rx, mut pending)| async move {
                use broadcast::error::RecvError;
                loop {
                    if let Some(event) = pending.pop_front() {
                        return Some((event, (rx, pending)));
                    }
                    match rx.recv().await {
                        Ok(event) => return Some((event, (rx, pending))),
                        Err(RecvError::Lagged(_)) => {
                            pending.extend(ListChanged::ALL.map(BusEvent::from));
                        }
                        Err(RecvError::Closed) => return None,
                    }
                }
            },
        ))
    }
}

/// Publishes the queue in order, holding each message until the engine
/// takes it.
async fn publishing(shared: Arc<Shared>, mut queue: mpsc::Receiver<Body>) {
    let mut seq = 0u64;
    let mut backoff = Backoff::new();
    loop {
        let body = if shared.overflowed.swap(false, Ordering::AcqRel) {
            Body::Resync
        } else {
            match queue.recv().await {
                Some(body) => body,
                None => return,
            }
        };
        seq += 1;
        let envelope = Envelope {
            replica: shared.replica.clone(),
            seq,
            body,
        };
        let payload = match serde_json::to_vec(&envelope) {
            Ok(p) => p,
            Err(e) => {
                shared.warner.warn("could not encode a bus message", &e);
                continue;
            }
        };
        loop {
            let error =
                match tokio::time::timeout(PUBLISH_TIMEOUT, shared.backend.publish(&payload)).await
                {
                    Ok(Ok(())) => break,
                    Ok(Err(e)) => e.to_string(),
                    Err(_) => "timed out".to_owned(),
                };
            shared.warner.warn(
                "could not publish to the bus; retrying (serving goes on)",
                &error,
            );
            tokio::time::sleep(backoff.next_delay()).await;
        }
        backoff.reset();
    }
}

/// Applies what the other replicas publish, in order.
async fn receiving(shared: Arc<Shared>, mut incoming: BoxStream<'static, crate::Incoming>) {
    while let Some(item) = incoming.next().await {
        let payload = match item {
            crate::Incoming::Reconnected => {
                tracing::info!("bus connection restored; resyncing listeners");
                shared.resync().await;
                continue;
            }
            crate::Incoming::Message(payload) => payload,
        };
        let Some(envelope) = shared.receive(&payload) else {
            continue;
        };
        match envelope.body {
            Body::Event { event } => {
                let _ = shared.local.send(event);
            }
            Body::Defined { name, definition } => {
                if let Some(applier) = shared.applier() {
                    applier.defined(&name, &definition);
                }
            }
            Body::Undefined { name } => {
                if let Some(applier) = shared.applier() {
                    applier.undefined(&name);
                }
            }
            Body::Resync => shared.resync().await,
        }
    }
}
