//! [`MemoryTaskStore`]: tasks in this process, bounded, for a server that
//! runs as one replica.

use super::store::{Applied, Change, CreateLimits, StoreError, StoreFuture, TaskRecord, TaskStore};
use super::time::now_ms;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

/// Tasks kept in this process: the default store.
///
/// Every table is bounded by the [`CreateLimits`] creation is given; an
/// expired task is never returned, and is deleted by the next creation or
/// [`purge`](TaskStore::purge). A lookup
/// costs the same at one task as at a hundred thousand (a hash map).
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    inner: Mutex<Tables>,
    /// Whether servers in this process share the store (leases kept).
    shared: bool,
}

#[derive(Debug, Default)]
struct Tables {
    records: HashMap<String, TaskRecord>,
    /// (expiry, id), soonest first.
    expiry: BTreeSet<(u64, String)>,
    /// Tasks held per owner.
    owners: HashMap<Option<String>, usize>,
}

impl Tables {
    fn purge(&mut self, now: u64) -> usize {
        let mut gone = 0;
        while let Some((at, _)) = self.expiry.first()
            && *at <= now
        {
            let Some((_, id)) = self.expiry.pop_first() else {
                break;
            };
            if let Some(record) = self.records.remove(&id) {
                gone += 1;
                if let Some(n) = self.owners.get_mut(&record.owner) {
                    *n -= 1;
                    if *n == 0 {
                        self.owners.remove(&record.owner);
                    }
                }
            }
        }
        gone
    }

    fn live(&self, id: &str, now: u64) -> Option<&TaskRecord> {
        self.records.get(id).filter(|r| r.expires_ms() > now)
    }
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store for several servers in this process that stand in
    /// for one another, as replicas on a shared engine do: each keeps a
    /// lease on the tasks it runs, and the others take over those whose
    /// lease lapsed. Finding lapsed leases scans the table.
    pub fn for_replicas() -> Self {
        Self {
            shared: true,
            ..Self::default()
        }
    }

    /// How many tasks the store holds, expired ones not yet purged
    /// included.
    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |t| t.records.len())
    }

    /// Whether the store holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn tables(&self) -> Result<std::sync::MutexGuard<'_, Tables>, StoreError> {
        self.inner
            .lock()
            .map_err(|_| StoreError::Unavailable("the in-memory task table is poisoned".into()))
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord, limits: CreateLimits) -> StoreFuture<'_, ()> {
        let result = self.tables().and_then(|mut t| {
            t.purge(now_ms());
            if t.records.len() >= limits.total {
                return Err(StoreError::Full(limits.total));
            }
            let held = t.owners.get(&record.owner).copied().unwrap_or(0);
            if held >= limits.per_owner {
                return Err(StoreError::OwnerFull(limits.per_owner));
            }
            *t.owners.entry(record.owner.clone()).or_default() += 1;
            t.expiry.insert((record.expires_ms(), record.id.clone()));
            t.records.insert(record.id.clone(), record);
            Ok(())
        });
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        let result = self.tables().map(|t| t.live(id, now_ms()).cloned());
        Box::pin(std::future::ready(result))
    }

    fn change<'a>(
        &'a self,
        id: &'a str,
        change: Change,
        now: u64,
    ) -> StoreFuture<'a, Option<(TaskRecord, Applied)>> {
        let result = self.tables().map(|mut t| {
            t.live(id, now)?;
            let record = t.records.get_mut(id)?;
            let applied = record.apply(change, now);
            Some((record.clone(), applied))
        });
        Box::pin(std::future::ready(result))
    }

    fn apply_change<'a>(
        &'a self,
        id: &'a str,
        change: Change,
        now: u64,
    ) -> StoreFuture<'a, Option<Applied>> {
        let result = self.tables().map(|mut t| {
            t.live(id, now)?;
            Some(t.records.get_mut(id)?.apply(change, now))
        });
        Box::pin(std::future::ready(result))
    }

    fn purge(&self, now: u64) -> StoreFuture<'_, usize> {
        let result = self.tables().map(|mut t| t.purge(now));
        Box::pin(std::future::ready(result))
    }

    fn shared(&self) -> bool {
        self.shared
    }

    fn lapsed(&self, now: u64, max: usize) -> StoreFuture<'_, Vec<String>> {
        let result = self.tables().map(|t| {
            t.records
                .values()
                .filter(|r| r.expires_ms() > now && r.lease_lapsed(now))
                .take(max)
                .map(|r| r.id.clone())
                .collect()
        });
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire_proto::types::{InputResponses, TaskState};

    fn record(id: &str, owner: &str, created_ms: u64, ttl_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.to_owned(),
            owner: Some(owner.to_owned()),
            client: None,
            tool: "t".to_owned(),
            state: TaskState::Working,
            status_message: None,
            created_ms,
            updated_ms: created_ms,
            ttl_ms,
            poll_interval_ms: 1000,
            answers: InputResponses::new(),
            cancel_requested: false,
            lease: None,
            rerun: None,
        }
    }

    fn run<T>(f: StoreFuture<'_, T>) -> Result<T, StoreError> {
        futures_util::FutureExt::now_or_never(f).expect("the memory store never waits")
    }

    #[test]
    fn purging_frees_the_owners_places_and_an_expired_task_is_never_returned() {
        let store = MemoryTaskStore::new();
        let limits = CreateLimits {
            per_owner: 1,
            total: 10,
        };
        // Expired already (created at the epoch, one second to live).
        run(store.create(record("old", "alice", 0, 1000), limits)).expect("create");
        assert_eq!(run(store.get("old")).expect("get"), None);
        assert!(
            run(store.change("old", Change::RequestCancel, now_ms()))
                .expect("change")
                .is_none()
        );
        assert_eq!(
            run(store.apply_change("old", Change::RequestCancel, now_ms())),
            Ok(None)
        );
        // The next creation purges it, so alice has a place again.
        let now = now_ms();
        run(store.create(record("new", "alice", now, 60_000), limits)).expect("create");
        assert_eq!(store.len(), 1);
        assert_eq!(
            run(store.create(record("more", "alice", now, 60_000), limits)),
            Err(StoreError::OwnerFull(1))
        );
        run(store.create(record("bobs", "bob", now, 60_000), limits)).expect("bob has his own");
        let applied = run(store.apply_change("bobs", Change::RequestCancel, now)).expect("change");
        assert!(applied.is_some_and(|a| a.changed));
        let bobs = run(store.get("bobs")).expect("get").expect("live");
        assert!(
            bobs.cancel_requested,
            "the change reached the stored record"
        );
        assert_eq!(run(store.purge(now + 60_000)).expect("purge"), 2);
        assert!(store.is_empty());
    }
}
