//! NATS for toolwire replicas: a notification bus, a shared tool registry
//! and a task store.
//!
//! [`NatsBackend`] is a [`Backend`] on NATS: events go over the core subject
//! `PREFIX.events`, and shared tool definitions live in the JetStream
//! key-value bucket `PREFIX_tools` (created on first use, file storage, one
//! revision per key), so the server must run with JetStream enabled
//! (`nats-server -js`). [`connect`] gives the [`Relay`] to pass to
//! [`ServerConfig::with_bus`](toolwire::ServerConfig::with_bus); see
//! `toolwire-replica` for what the relay guarantees (at-least-once for
//! "something changed") and for [`SharedTools`].
//!
//! [`NatsTaskStore`] keeps tasks (the `io.modelcontextprotocol/tasks`
//! extension) in the bucket `PREFIX_tasks`, so that any replica answers for
//! any task; pass it to
//! [`TaskOptions::store`](toolwire::task::TaskOptions::store).
//!
//! The NATS client reconnects by itself (with this crate's backoff, forever)
//! and resubscribes; after each reconnection the replica resyncs.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolwire::{Server, ServerConfig};
//!
//! let relay = Arc::new(toolwire_nats::connect("nats://127.0.0.1:4222").await?);
//! let server = Server::new(ServerConfig::new("svc", "1.0").with_bus(relay));
//! # let _ = server; Ok(()) }
//! ```

mod tasks;

use async_nats::jetstream::{self, kv};
use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::{self, BoxStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;
pub use tasks::NatsTaskStore;
use tokio::sync::mpsc;
pub use toolwire_replica::{Backend, BusError, Relay, SharedTools};
use toolwire_replica::{Backoff, BoxFuture, Definitions, Incoming, Warner};

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Connects to the NATS server at `url` (`nats://HOST:PORT`, with
/// `nats://USER:PASSWORD@HOST:PORT` if it needs one) and starts a [`Relay`]
/// on it with the default prefix. Fails if NATS (or its JetStream) cannot
/// be reached.
pub async fn connect(url: &str) -> Result<Relay, BusError> {
    Ok(Relay::start(Arc::new(
        NatsBackend::connect(url, "toolwire").await?,
    )))
}

/// A [`Backend`] on a NATS subject and a JetStream key-value bucket.
pub struct NatsBackend {
    client: async_nats::Client,
    subject: String,
    store: kv::Store,
    /// The subscription and connection events, until `incoming` takes them.
    first: Mutex<Option<(async_nats::Subscriber, mpsc::Receiver<async_nats::Event>)>>,
    warner: Arc<Warner>,
}

impl std::fmt::Debug for NatsBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsBackend")
            .field("subject", &self.subject)
            .finish_non_exhaustive()
    }
}

pub(crate) fn nats_error(what: &str, e: impl std::fmt::Display) -> BusError {
    BusError::new(format!("NATS: {what}: {e}"))
}

impl NatsBackend {
    /// Connects to `url`, opens (or creates) the bucket `PREFIX_tools` and
    /// subscribes to `PREFIX.events`; fails if NATS or JetStream cannot be
    /// reached within 5 seconds.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, BusError> {
        let (events, events_rx) = mpsc::channel(64);
        let client = connect_client(url, Some(events)).await?;
        let js = jetstream::new(client.clone());
        let store = open_bucket(&js, bucket_config(&format!("{prefix}_tools"))).await?;
        let subject = format!("{prefix}.events");
        let subscriber = client
            .subscribe(subject.clone())
            .await
            .map_err(|e| nats_error("subscribing", e))?;
        Ok(Self {
            client,
            subject,
            store,
            first: Mutex::new(Some((subscriber, events_rx))),
            warner: Arc::new(Warner::default()),
        })
    }
}

/// Connects a client to `url` that reconnects by itself, forever, with
/// this crate's backoff, passing connection events to `events` if given.
pub(crate) async fn connect_client(
    url: &str,
    events: Option<mpsc::Sender<async_nats::Event>>,
) -> Result<async_nats::Client, BusError> {
    let mut options = async_nats::ConnectOptions::new()
        .connection_timeout(CONNECT_TIMEOUT)
        .max_reconnects(None)
        .reconnect_delay_callback(|attempts| {
            let mut b = Backoff::new();
            let mut delay = b.next_delay();
            for _ in 0..attempts.min(16) {
                delay = b.next_delay();
            }
            delay
        });
    if let Some(events) = events {
        options = options.event_callback(move |event| {
            let events = events.clone();
            async move {
                // Only connection changes matter; a full channel means one
                // is pending already.
                let _ = events.try_send(event);
            }
        });
    }
    let client = options
        .connect(url)
        .await
        .map_err(|e| nats_error("connecting", e))?;
    Ok(client)
}

/// The stream of a key-value bucket `bucket` with one revision per key,
/// on file. The stream is made here, with the key-value conventions,
/// rather than by `create_key_value`, which first asks for account details
/// that older servers (such as Debian's 2.9) describe in a form this
/// client refuses.
pub(crate) fn bucket_config(bucket: &str) -> jetstream::stream::Config {
    jetstream::stream::Config {
        name: format!("KV_{bucket}"),
        subjects: vec![format!("$KV.{bucket}.>")],
        max_messages_per_subject: 1,
        storage: jetstream::stream::StorageType::File,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: jetstream::stream::DiscardPolicy::New,
        num_replicas: 1,
        ..Default::default()
    }
}

/// Opens the key-value bucket whose stream is `config`, creating the
/// stream first if need be, within 5 seconds.
pub(crate) async fn open_bucket(
    js: &jetstream::Context,
    config: jetstream::stream::Config,
) -> Result<kv::Store, BusError> {
    let opening = |e: &dyn std::fmt::Display| {
        nats_error(
            "opening the JetStream bucket (is JetStream enabled, nats-server -js?)",
            e,
        )
    };
    let bucket = config.name.trim_start_matches("KV_").to_owned();
    let open = async {
        js.get_or_create_stream(config)
            .await
            .map_err(|e| opening(&e))?;
        js.get_key_value(bucket).await.map_err(|e| opening(&e))
    };
    tokio::time::timeout(CONNECT_TIMEOUT, open)
        .await
        .map_err(|_| BusError::new("NATS: opening the JetStream bucket: timed out"))?
}

/// Key-value keys allow fewer characters than tool names: hex-encode.
pub(crate) fn key(name: &str) -> String {
    name.bytes().map(|b| format!("{b:02x}")).collect()
}

fn name(key: &str) -> Option<String> {
    let bytes = (0..key.len())
        .step_by(2)
        .map(|i| {
            key.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

struct Link {
    messages: async_nats::Subscriber,
    /// For a round trip after a reconnection (see `incoming`).
    store: kv::Store,
    events: mpsc::Receiver<async_nats::Event>,
    down: bool,
    warner: Arc<Warner>,
}

impl Backend for NatsBackend {
    fn publish<'a>(&'a self, payload: &'a [u8]) -> BoxFuture<'a, Result<(), BusError>> {
        Box::pin(async move {
            self.client
                .publish(self.subject.clone(), Bytes::copy_from_slice(payload))
                .await
                .map_err(|e| nats_error("publishing", e))
        })
    }

    fn incoming(&self) -> BoxStream<'static, Incoming> {
        let Some((messages, events)) = self.first.lock().ok().and_then(|mut g| g.take()) else {
            return Box::pin(stream::empty());
        };
        let link = Link {
            messages,
            store: self.store.clone(),
            events,
            down: false,
            warner: Arc::clone(&self.warner),
        };
        Box::pin(stream::unfold(link, |mut link| async move {
            loop {
                tokio::select! {
                    message = link.messages.next() => {
                        // `None`: the client was closed for good.
                        let message = message?;
                        return Some((Incoming::Message(message.payload.to_vec()), link));
                    }
                    Some(event) = link.events.recv() => match event {
                        async_nats::Event::Disconnected => {
                            link.down = true;
                            link.warner.warn(
                                "lost the NATS bus; reconnecting (serving goes on)",
                                &event,
                            );
                        }
                        async_nats::Event::Connected if link.down => {
                            link.down = false;
                            // The client resubscribes right after it says
                            // "connected"; one round trip on the same
                            // connection makes sure the server has the
                            // subscription before listeners are resynced, so
                            // nothing published after the resync is missed.
                            let _ = tokio::time::timeout(
                                CONNECT_TIMEOUT,
                                link.store.get(key("resubscribed")),
                            )
                            .await;
                            return Some((Incoming::Reconnected, link));
                        }
                        _ => {}
                    },
                }
            }
        }))
    }

    fn load(&self) -> BoxFuture<'_, Result<Definitions, BusError>> {
        Box::pin(async move {
            let mut keys = self
                .store
                .keys()
                .await
                .map_err(|e| nats_error("listing the bucket", e))?;
            let mut all = Vec::new();
            while let Some(k) = keys.next().await {
                let k = k.map_err(|e| nats_error("listing the bucket", e))?;
                let Some(tool) = name(&k) else { continue };
                if let Some(value) = self
                    .store
                    .get(k)
                    .await
                    .map_err(|e| nats_error("reading the bucket", e))?
                {
                    all.push((tool, value.to_vec()));
                }
            }
            Ok(all)
        })
    }

    fn create<'a>(
        &'a self,
        name: &'a str,
        value: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, BusError>> {
        Box::pin(async move {
            match self
                .store
                .create(key(name), Bytes::copy_from_slice(value))
                .await
            {
                Ok(_) => Ok(true),
                Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(nats_error("writing the bucket", e)),
            }
        })
    }

    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<bool, BusError>> {
        Box::pin(async move {
            let k = key(name);
            let existed = self
                .store
                .get(k.clone())
                .await
                .map_err(|e| nats_error("reading the bucket", e))?
                .is_some();
            if existed {
                self.store
                    .delete(k)
                    .await
                    .map_err(|e| nats_error("writing the bucket", e))?;
            }
            Ok(existed)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{key, name};

    #[test]
    fn tool_names_survive_the_key_encoding() {
        for n in ["greet", "a.b-c_d", "ünï", ".dot."] {
            let k = key(n);
            assert!(k.bytes().all(|b| b.is_ascii_hexdigit()), "{k}");
            assert_eq!(name(&k).as_deref(), Some(n));
        }
        assert_eq!(name("zz"), None);
    }
}
