//! The command connection both the bus and the task store use: one
//! multiplexed connection, replaced when it fails, every operation bounded
//! in time.

use redis::aio::MultiplexedConnection;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;
use toolwire_replica::BusError;

/// How long connecting, or one command, may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// A Redis client and its cached command connection.
pub(crate) struct Commands {
    pub(crate) client: redis::Client,
    /// `None` after it failed, until the next use reconnects.
    connection: Mutex<Option<MultiplexedConnection>>,
}

impl Commands {
    /// Opens `url` and connects once; fails if Redis cannot be reached
    /// within [`TIMEOUT`].
    pub(crate) async fn connect(url: &str) -> Result<Self, BusError> {
        let client = redis::Client::open(url)
            .map_err(|e| BusError::new(format!("invalid Redis URL: {e}")))?;
        let connection = within(client.get_multiplexed_async_connection()).await?;
        Ok(Self {
            client,
            connection: Mutex::new(Some(connection)),
        })
    }

    /// Runs `op` on the command connection. A connection that failed is
    /// replaced, and a cached one that turns out broken (Redis restarted
    /// since its last use) is replaced once and the operation retried.
    pub(crate) async fn with<T, F, Fut>(&self, op: F) -> Result<T, BusError>
    where
        F: Fn(MultiplexedConnection) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        let cached = lock(&self.connection).clone();
        if let Some(cached) = cached {
            match within(op(cached)).await {
                Ok(v) => return Ok(v),
                Err(_) => *lock(&self.connection) = None,
            }
        }
        let fresh = within(self.client.get_multiplexed_async_connection()).await?;
        let result = within(op(fresh.clone())).await;
        if result.is_ok() {
            *lock(&self.connection) = Some(fresh);
        }
        result
    }

    /// Runs `cmd`, as [`with`](Self::with) does.
    pub(crate) async fn run<T: redis::FromRedisValue>(
        &self,
        cmd: redis::Cmd,
    ) -> Result<T, BusError> {
        self.with(|mut c| {
            let cmd = cmd.clone();
            async move { cmd.query_async(&mut c).await }
        })
        .await
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

pub(crate) async fn within<T>(
    op: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, BusError> {
    match tokio::time::timeout(TIMEOUT, op).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(BusError::new(format!("Redis: {e}"))),
        Err(_) => Err(BusError::new("Redis: timed out")),
    }
}
