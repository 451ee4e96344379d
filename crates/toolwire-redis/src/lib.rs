//! Redis for toolwire replicas: a notification bus, a shared tool registry
//! and a task store.
//!
//! [`RedisBackend`] is a [`Backend`] on Redis: events go over pub/sub on the
//! channel `PREFIX:events`, and shared tool definitions live in the hash
//! `PREFIX:tools` (the prefix is `toolwire` unless you choose one, so
//! several deployments can share one Redis). [`connect`] gives the
//! [`Relay`] to pass to
//! [`ServerConfig::with_bus`](toolwire::ServerConfig::with_bus); see
//! `toolwire-replica` for what the relay guarantees (at-least-once for
//! "something changed") and for [`SharedTools`].
//!
//! [`RedisTaskStore`] keeps tasks (the `io.modelcontextprotocol/tasks`
//! extension) for every replica: pass it to
//! [`TaskOptions::store`](toolwire::task::TaskOptions::store).
//!
//! Redis pub/sub keeps nothing: a replica that is disconnected misses what
//! is published meanwhile, and is resynced when it reconnects. The hash is
//! the durable part; run Redis with persistence (AOF or RDB) if the shared
//! tools must survive a restart of Redis itself.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolwire::{Server, ServerConfig};
//!
//! let relay = Arc::new(toolwire_redis::connect("redis://127.0.0.1:6379").await?);
//! let server = Server::new(ServerConfig::new("svc", "1.0").with_bus(relay));
//! # let _ = server; Ok(()) }
//! ```

mod conn;
mod tasks;

pub use tasks::RedisTaskStore;

use conn::{Commands, lock, within};
use futures_util::StreamExt as _;
use futures_util::stream::{self, BoxStream};
use redis::aio::PubSubStream;
use std::sync::{Arc, Mutex};
pub use toolwire_replica::{Backend, BusError, Relay, SharedTools};
use toolwire_replica::{Backoff, BoxFuture, Definitions, Incoming, Warner};

/// Connects to the Redis at `url` (`redis://HOST:PORT[/DB]`, with
/// `redis://:PASSWORD@HOST:PORT` if it needs one) and starts a [`Relay`] on
/// it with the default prefix. Fails if Redis cannot be reached.
pub async fn connect(url: &str) -> Result<Relay, BusError> {
    Ok(Relay::start(Arc::new(
        RedisBackend::connect(url, "toolwire").await?,
    )))
}

/// A [`Backend`] on Redis pub/sub and a hash.
pub struct RedisBackend {
    commands: Commands,
    channel: String,
    hash: String,
    /// The subscription made at connect time, until `incoming` takes it.
    first: Mutex<Option<PubSubStream>>,
    warner: Arc<Warner>,
}

impl std::fmt::Debug for RedisBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the client: its connection info holds the password.
        f.debug_struct("RedisBackend")
            .field("channel", &self.channel)
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

impl RedisBackend {
    /// Connects to `url` and subscribes to `PREFIX:events`; fails if Redis
    /// cannot be reached within 5 seconds.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, BusError> {
        let commands = Commands::connect(url).await?;
        let channel = format!("{prefix}:events");
        let first = subscribe(&commands.client, &channel).await?;
        Ok(Self {
            commands,
            channel,
            hash: format!("{prefix}:tools"),
            first: Mutex::new(Some(first)),
            warner: Arc::new(Warner::default()),
        })
    }

    async fn run<T: redis::FromRedisValue>(&self, cmd: redis::Cmd) -> Result<T, BusError> {
        self.commands.run(cmd).await
    }
}

async fn subscribe(client: &redis::Client, channel: &str) -> Result<PubSubStream, BusError> {
    let mut pubsub = within(client.get_async_pubsub()).await?;
    within(pubsub.subscribe(channel)).await?;
    Ok(pubsub.into_on_message())
}

/// The subscription's state between messages.
enum Link {
    Up(PubSubStream),
    Down(Backoff),
}

impl Backend for RedisBackend {
    fn publish<'a>(&'a self, payload: &'a [u8]) -> BoxFuture<'a, Result<(), BusError>> {
        Box::pin(async move {
            self.run::<i64>(
                redis::cmd("PUBLISH")
                    .arg(&self.channel)
                    .arg(payload)
                    .clone(),
            )
            .await
            .map(drop)
        })
    }

    fn incoming(&self) -> BoxStream<'static, Incoming> {
        let link = match lock(&self.first).take() {
            Some(s) => Link::Up(s),
            None => Link::Down(Backoff::new()),
        };
        let (client, channel, warner) = (
            self.commands.client.clone(),
            self.channel.clone(),
            Arc::clone(&self.warner),
        );
        Box::pin(stream::unfold(link, move |mut link| {
            let (client, channel, warner) = (client.clone(), channel.clone(), Arc::clone(&warner));
            async move {
                loop {
                    link = match link {
                        Link::Up(mut messages) => match messages.next().await {
                            Some(msg) => {
                                let payload = msg.get_payload_bytes().to_vec();
                                return Some((Incoming::Message(payload), Link::Up(messages)));
                            }
                            None => {
                                warner.warn(
                                    "lost the Redis bus; reconnecting (serving goes on)",
                                    &"the subscription closed",
                                );
                                Link::Down(Backoff::new())
                            }
                        },
                        Link::Down(mut backoff) => {
                            tokio::time::sleep(backoff.next_delay()).await;
                            match subscribe(&client, &channel).await {
                                Ok(messages) => {
                                    return Some((Incoming::Reconnected, Link::Up(messages)));
                                }
                                Err(e) => {
                                    warner.warn("the Redis bus is still unreachable; retrying", &e);
                                    Link::Down(backoff)
                                }
                            }
                        }
                    };
                }
            }
        }))
    }

    fn load(&self) -> BoxFuture<'_, Result<Definitions, BusError>> {
        Box::pin(self.run(redis::cmd("HGETALL").arg(&self.hash).clone()))
    }

    fn create<'a>(
        &'a self,
        name: &'a str,
        value: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, BusError>> {
        Box::pin(
            self.run(
                redis::cmd("HSETNX")
                    .arg(&self.hash)
                    .arg(name)
                    .arg(value)
                    .clone(),
            ),
        )
    }

    fn delete<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<bool, BusError>> {
        Box::pin(async move {
            let removed: i64 = self
                .run(redis::cmd("HDEL").arg(&self.hash).arg(name).clone())
                .await?;
            Ok(removed > 0)
        })
    }
}
