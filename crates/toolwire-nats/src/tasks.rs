//! [`NatsTaskStore`]: tasks in a JetStream key-value bucket, for replicas
//! that answer for one another's tasks.
//!
//! The bucket `PREFIX_tasks` (one revision per key) holds:
//! - `t.ID`: the task, as JSON;
//! - `l.ID`: the end of its lease, while a replica runs it under one (so
//!   finding lapsed leases reads only running tasks);
//! - `o.OWNER` (the owner hex-encoded, `o._` for anonymous callers): the
//!   owner's tasks and when each expires, for the per-owner bound;
//! - `n`: how many tasks the store holds, for the total bound.
//!
//! Every write is a compare-and-set on the key's revision, retried on a
//! conflict, so replicas never overwrite one another; a change reads the
//! task, applies it with [`TaskRecord::apply`] (the one state machine) and
//! writes it back only if nobody wrote it meanwhile. Creation takes its
//! slot in the owner's index and the count first and writes the task
//! last, undoing the slot if it fails, so a refused or failed creation
//! leaves no task behind; `create` returns once JetStream acknowledged the
//! write, so every replica finds the task from then on. A task that
//! expired is gone for `get` and `change` at once, and [`purge`] deletes
//! it (the server purges every minute).
//!
//! [`purge`]: TaskStore::purge

use crate::{BusError, connect_client, nats_error, open_bucket};
use async_nats::jetstream::{self, kv};
use bytes::Bytes;
use futures_util::StreamExt as _;
use std::collections::BTreeMap;
use std::time::Duration;
use toolwire::task::{
    Applied, Change, CreateLimits, StoreError, StoreFuture, TaskRecord, TaskStore,
};

/// How often a write is retried when another replica wrote the key in
/// between.
const CONFLICT_RETRIES: usize = 32;

/// How long a scan of the bucket may take.
const SCAN_TIMEOUT: Duration = Duration::from_secs(5);

/// A [`TaskStore`] on a NATS JetStream key-value bucket, shared by every
/// replica that connects to the same NATS with the same prefix.
pub struct NatsTaskStore {
    client: async_nats::Client,
    store: kv::Store,
}

impl std::fmt::Debug for NatsTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsTaskStore")
            .field("bucket", &self.store.name)
            .finish_non_exhaustive()
    }
}

/// An owner's tasks, by id, with when each expires.
type OwnerIndex = BTreeMap<String, u64>;

/// Why a compare-and-set did not write.
enum Cas {
    /// Another replica wrote the key first.
    Conflict,
    /// NATS failed.
    Failed(StoreError),
}

impl NatsTaskStore {
    /// Connects to the NATS at `url` (`nats://HOST:PORT`, with
    /// `nats://USER:PASSWORD@HOST:PORT` if it needs one) and opens (or
    /// creates) the bucket `PREFIX_tasks`; fails if NATS or its JetStream
    /// cannot be reached within 5 seconds.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, BusError> {
        let client = connect_client(url, None).await?;
        let js = jetstream::new(client.clone());
        let config = jetstream::stream::Config {
            // Tasks are deleted one by one (purged), so unlike the tool
            // bucket this one allows it.
            deny_delete: false,
            ..crate::bucket_config(&format!("{prefix}_tasks"))
        };
        let store = open_bucket(&js, config).await?;
        Ok(Self { client, store })
    }

    /// Whether the client is connected now. While it is not, writes are
    /// refused at once rather than queued: a queued write could land after
    /// the caller was told it failed.
    fn connected(&self) -> Result<(), StoreError> {
        match self.client.connection_state() {
            async_nats::connection::State::Connected => Ok(()),
            _ => Err(StoreError::Unavailable(
                "NATS: not connected (reconnecting)".to_owned(),
            )),
        }
    }

    /// The latest value under `key` and its revision (`None` for a key
    /// never written or deleted, with the revision to write over).
    async fn entry(&self, key: &str) -> Result<(Option<Bytes>, Option<u64>), StoreError> {
        let entry = self
            .store
            .entry(key)
            .await
            .map_err(|e| unavailable("reading", e))?;
        Ok(match entry {
            Some(e) if e.operation == kv::Operation::Put => (Some(e.value), Some(e.revision)),
            Some(e) => (None, Some(e.revision)),
            None => (None, None),
        })
    }

    /// Writes `value` under `key` if its revision is still `revision`
    /// (`None`: if it was never written).
    async fn swap(&self, key: &str, revision: Option<u64>, value: Bytes) -> Result<(), Cas> {
        match revision {
            Some(revision) => match self.store.update(key, value, revision).await {
                Ok(_) => Ok(()),
                Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => Err(Cas::Conflict),
                Err(e) => Err(Cas::Failed(unavailable("writing", e))),
            },
            None => match self.store.create(key, value).await {
                Ok(_) => Ok(()),
                Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Err(Cas::Conflict),
                Err(e) => Err(Cas::Failed(unavailable("writing", e))),
            },
        }
    }

    /// Removes `key` and its history from the bucket, leaving no marker.
    async fn remove(&self, key: &str) -> Result<(), StoreError> {
        self.store
            .stream
            .purge()
            .filter(format!("{}{key}", self.store.prefix))
            .await
            .map(|_| ())
            .map_err(|e| unavailable("deleting", e))
    }

    async fn read(&self, id: &str) -> Result<Option<(u64, TaskRecord)>, StoreError> {
        let (Some(raw), Some(revision)) = self.entry(&task_key(id)).await? else {
            return Ok(None);
        };
        let record = serde_json::from_slice(&raw)
            .map_err(|e| StoreError::Unavailable(format!("a stored task does not parse: {e}")))?;
        Ok(Some((revision, record)))
    }

    /// Changes the owner's index with `edit` (given the index without its
    /// expired tasks, which it may refuse), retried on conflicts; the ids
    /// of the expired tasks it dropped.
    async fn edit_owner(
        &self,
        key: &str,
        now_ms: u64,
        mut edit: impl FnMut(&mut OwnerIndex) -> Result<(), StoreError>,
    ) -> Result<Vec<String>, StoreError> {
        for _ in 0..CONFLICT_RETRIES {
            let (raw, revision) = self.entry(key).await?;
            let mut index: OwnerIndex = match raw {
                Some(raw) => serde_json::from_slice(&raw).unwrap_or_default(),
                None => OwnerIndex::new(),
            };
            let expired: Vec<String> = index
                .iter()
                .filter(|(_, expires)| **expires <= now_ms)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                index.remove(id);
            }
            edit(&mut index)?;
            let value = Bytes::from(serde_json::to_vec(&index).unwrap_or_default());
            match self.swap(key, revision, value).await {
                Ok(()) => return Ok(expired),
                Err(Cas::Conflict) => {}
                Err(Cas::Failed(e)) => return Err(e),
            }
        }
        Err(busy())
    }

    /// Adds `delta` to the count of tasks, refusing to go past `total`
    /// when it grows.
    async fn count(&self, delta: i64, total: usize) -> Result<(), StoreError> {
        for _ in 0..CONFLICT_RETRIES {
            let (raw, revision) = self.entry(COUNT_KEY).await?;
            let held: i64 = raw
                .and_then(|raw| std::str::from_utf8(&raw).ok()?.parse().ok())
                .unwrap_or(0);
            let next = (held + delta).max(0);
            if delta > 0 && next > i64::try_from(total).unwrap_or(i64::MAX) {
                return Err(StoreError::Full(total));
            }
            match self
                .swap(COUNT_KEY, revision, Bytes::from(next.to_string()))
                .await
            {
                Ok(()) => return Ok(()),
                Err(Cas::Conflict) => {}
                Err(Cas::Failed(e)) => return Err(e),
            }
        }
        Err(busy())
    }

    /// Deletes the tasks an owner index no longer holds.
    async fn forget(&self, ids: &[String]) {
        for id in ids {
            let _ = self.remove(&task_key(id)).await;
            let _ = self.remove(&lease_key(id)).await;
        }
    }

    /// The latest value of every key under `prefix` (`"l."`), deleted ones
    /// left out: one ordered consumer over those keys alone.
    async fn scan(&self, prefix: &str) -> Result<Vec<(String, Bytes)>, StoreError> {
        let scan = async {
            let stream_prefix = format!("{}{prefix}", self.store.prefix);
            let consumer = self
                .store
                .stream
                .create_consumer(jetstream::consumer::push::OrderedConfig {
                    deliver_subject: self.client.new_inbox(),
                    filter_subject: format!("{stream_prefix}>"),
                    deliver_policy: jetstream::consumer::DeliverPolicy::LastPerSubject,
                    replay_policy: jetstream::consumer::ReplayPolicy::Instant,
                    ..Default::default()
                })
                .await
                .map_err(|e| unavailable("scanning", e))?;
            let mut found = Vec::new();
            if consumer.cached_info().num_pending == 0 {
                return Ok(found);
            }
            let mut messages = consumer
                .messages()
                .await
                .map_err(|e| unavailable("scanning", e))?;
            while let Some(message) = messages.next().await {
                let message = message.map_err(|e| unavailable("scanning", e))?;
                let info = message.info().map_err(|e| unavailable("scanning", e))?;
                let pending = info.pending;
                let deleted = message
                    .headers
                    .as_ref()
                    .and_then(|h| h.get("KV-Operation"))
                    .is_some();
                if !deleted && let Some(key) = message.subject.strip_prefix(&stream_prefix) {
                    found.push((key.to_owned(), message.payload.clone()));
                }
                if pending == 0 {
                    break;
                }
            }
            Ok(found)
        };
        tokio::time::timeout(SCAN_TIMEOUT, scan)
            .await
            .map_err(|_| StoreError::Unavailable("NATS: scanning the bucket timed out".into()))?
    }

    /// Sets or clears the lease key of a task after a change from `before`
    /// to `after`. A lease that starts or is renewed is written before the
    /// task, one that ends after it, so the key never says less than the
    /// task: at worst a replica looks at a task whose lease holds.
    async fn lease_before(
        &self,
        before: &TaskRecord,
        after: &TaskRecord,
    ) -> Result<(), StoreError> {
        match lease_end(after) {
            Some(until) if lease_end(before) != Some(until) => self
                .store
                .put(lease_key(&after.id), Bytes::from(until.to_string()))
                .await
                .map(|_| ())
                .map_err(|e| unavailable("writing", e)),
            _ => Ok(()),
        }
    }

    async fn lease_after(&self, before: &TaskRecord, after: &TaskRecord) {
        if lease_end(before).is_some() && lease_end(after).is_none() {
            let _ = self.remove(&lease_key(&after.id)).await;
        }
    }
}

const COUNT_KEY: &str = "n";

fn task_key(id: &str) -> String {
    format!("t.{id}")
}

fn lease_key(id: &str) -> String {
    format!("l.{id}")
}

fn owner_key(owner: Option<&str>) -> String {
    match owner {
        Some(owner) => format!("o.{}", crate::key(owner)),
        None => "o._".to_owned(),
    }
}

/// Whether `id` can be a key: task ids are base64url, and anything else a
/// client sends is simply unknown (never a subject wildcard).
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The end of the lease a record runs under, if it runs under one.
fn lease_end(record: &TaskRecord) -> Option<u64> {
    match &record.lease {
        Some(lease) if !record.is_terminal() => Some(lease.until_ms),
        _ => None,
    }
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(nats_error(what, e).to_string())
}

fn busy() -> StoreError {
    StoreError::Unavailable(format!(
        "NATS: the key changed {CONFLICT_RETRIES} times while this change was applied"
    ))
}

fn encode(record: &TaskRecord) -> Result<Bytes, StoreError> {
    serde_json::to_vec(record)
        .map(Bytes::from)
        .map_err(|e| StoreError::Unavailable(format!("a task does not serialise: {e}")))
}

impl TaskStore for NatsTaskStore {
    fn create(&self, record: TaskRecord, limits: CreateLimits) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            self.connected()?;
            if !valid_id(&record.id) {
                return Err(StoreError::Unavailable(format!(
                    "NATS: {:?} cannot be a task id",
                    record.id
                )));
            }
            let raw = encode(&record)?;
            let now = toolwire::task::now_ms();
            let owner = owner_key(record.owner.as_deref());
            let id = record.id.clone();
            let expires = record.expires_ms();
            let expired = self
                .edit_owner(&owner, now, |index| {
                    if index.len() >= limits.per_owner {
                        return Err(StoreError::OwnerFull(limits.per_owner));
                    }
                    index.insert(id.clone(), expires);
                    Ok(())
                })
                .await?;
            self.forget(&expired).await;
            let gone = i64::try_from(expired.len()).unwrap_or(0);
            let written = async {
                self.count(1 - gone, limits.total).await?;
                let stored = async {
                    if let Some(until) = lease_end(&record) {
                        self.store
                            .put(lease_key(&id), Bytes::from(until.to_string()))
                            .await
                            .map_err(|e| unavailable("writing", e))?;
                    }
                    match self.store.create(task_key(&id), raw).await {
                        Ok(_) => Ok(()),
                        Err(e) => Err(unavailable("writing", e)),
                    }
                };
                match stored.await {
                    Ok(()) => Ok(()),
                    Err(e) => {
                        let _ = self.count(-1, limits.total).await;
                        let _ = self.remove(&lease_key(&id)).await;
                        Err(e)
                    }
                }
            };
            match written.await {
                Ok(()) => Ok(()),
                Err(e) => {
                    // Give the slot back; if NATS is gone, the slot expires
                    // with the task that never was.
                    let _ = self
                        .edit_owner(&owner, now, |index| {
                            index.remove(&id);
                            Ok(())
                        })
                        .await;
                    Err(e)
                }
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            if !valid_id(id) {
                return Ok(None);
            }
            let now = toolwire::task::now_ms();
            Ok(self
                .read(id)
                .await?
                .map(|(_, r)| r)
                .filter(|r| r.expires_ms() > now))
        })
    }

    fn change<'a>(
        &'a self,
        id: &'a str,
        change: Change,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<(TaskRecord, Applied)>> {
        Box::pin(async move {
            if !valid_id(id) {
                return Ok(None);
            }
            for _ in 0..CONFLICT_RETRIES {
                let Some((revision, before)) = self.read(id).await? else {
                    // A lease key can outlive its task only by a crash in
                    // between; this is where it goes.
                    let _ = self.remove(&lease_key(id)).await;
                    return Ok(None);
                };
                if before.expires_ms() <= now_ms {
                    return Ok(None);
                }
                let mut after = before.clone();
                let applied = after.apply(change.clone(), now_ms);
                if !applied.changed {
                    return Ok(Some((after, applied)));
                }
                self.connected()?;
                self.lease_before(&before, &after).await?;
                match self
                    .swap(&task_key(id), Some(revision), encode(&after)?)
                    .await
                {
                    Ok(()) => {
                        self.lease_after(&before, &after).await;
                        return Ok(Some((after, applied)));
                    }
                    Err(Cas::Conflict) => {}
                    Err(Cas::Failed(e)) => return Err(e),
                }
            }
            Err(busy())
        })
    }

    fn purge(&self, now_ms: u64) -> StoreFuture<'_, usize> {
        Box::pin(async move {
            let mut gone = 0;
            for (key, _) in self.scan("o.").await? {
                let owner = format!("o.{key}");
                let expired = self.edit_owner(&owner, now_ms, |_| Ok(())).await?;
                if expired.is_empty() {
                    continue;
                }
                self.forget(&expired).await;
                let count = i64::try_from(expired.len()).unwrap_or(0);
                self.count(-count, usize::MAX).await?;
                gone += expired.len();
            }
            Ok(gone)
        })
    }

    fn shared(&self) -> bool {
        true
    }

    fn lapsed(&self, now_ms: u64, max: usize) -> StoreFuture<'_, Vec<String>> {
        Box::pin(async move {
            if max == 0 {
                // Only whether NATS answers.
                self.store
                    .status()
                    .await
                    .map_err(|e| unavailable("reading", e))?;
                return Ok(Vec::new());
            }
            let mut lapsed: Vec<(u64, String)> = self
                .scan("l.")
                .await?
                .into_iter()
                .filter_map(|(id, until)| {
                    let until: u64 = std::str::from_utf8(&until).ok()?.parse().ok()?;
                    (until <= now_ms).then_some((until, id))
                })
                .collect();
            lapsed.sort_unstable();
            Ok(lapsed.into_iter().take(max).map(|(_, id)| id).collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::valid_id;

    #[test]
    fn only_base64url_ids_become_keys() {
        assert!(valid_id("tAbc-_09"));
        for bad in ["", "a.b", "a*", ">", "a b", &"x".repeat(129)] {
            assert!(!valid_id(bad), "{bad}");
        }
    }
}
