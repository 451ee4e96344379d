//! [`RedisTaskStore`]: tasks in Redis, for replicas that answer for one
//! another's tasks.
//!
//! Each task is a JSON string under `PREFIX:task:ID` that expires with
//! the task (`PX`), so Redis itself purges it. Three sorted sets index
//! them: `PREFIX:tasks` and `PREFIX:owner:OWNER` (by expiry, for the
//! bounds) and `PREFIX:leases` (running tasks by the end of their lease,
//! for finding lapsed ones). Creation is one Lua script, so it is one
//! round trip and atomic with the bounds; a change reads the record,
//! applies it with [`TaskRecord::apply`] (the one state machine) and
//! writes it back with a compare-and-set script, retried on a conflict.

use crate::conn::Commands;
use redis::Script;
use std::sync::Arc;
use toolwire::task::{
    Applied, Change, CreateLimits, StoreError, StoreFuture, TaskRecord, TaskStore,
};

/// How often a change is retried when another replica changed the task in
/// between.
const CONFLICT_RETRIES: usize = 32;

/// Creates a task within the bounds. KEYS: task, all tasks, the owner's
/// tasks, leases. ARGV: id, record, now, expiry, total, per owner, lease
/// end (or empty).
const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 'full' end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return 'owner' end
local ttl = tonumber(ARGV[4]) - tonumber(ARGV[3])
if ttl < 1 then ttl = 1 end
if not redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl, 'NX') then return 'exists' end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[4], ARGV[7], ARGV[1]) end
return 'ok'
";

/// Replaces a record if it is still the one read. KEYS: task, leases.
/// ARGV: record read, new record, lease end (or empty: not running), id.
/// 1 written, 0 gone, -1 changed meanwhile.
const SWAP: &str = r"
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('ZREM', KEYS[2], ARGV[4])
  return 0
end
if cur ~= ARGV[1] then return -1 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[2], ARGV[4])
else
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
end
return 1
";

/// A [`TaskStore`] on Redis, shared by every replica that connects to the
/// same Redis with the same prefix.
pub struct RedisTaskStore {
    commands: Arc<Commands>,
    prefix: String,
    create: Script,
    swap: Script,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the client: its connection info holds the password.
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisTaskStore {
    /// Connects to the Redis at `url` (`redis://HOST:PORT[/DB]`); keys
    /// start with `PREFIX:`. Fails if Redis cannot be reached within 5
    /// seconds.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, toolwire_replica::BusError> {
        Ok(Self {
            commands: Arc::new(Commands::connect(url).await?),
            prefix: prefix.to_owned(),
            create: Script::new(CREATE),
            swap: Script::new(SWAP),
        })
    }

    fn task_key(&self, id: &str) -> String {
        format!("{}:task:{id}", self.prefix)
    }

    fn owner_key(&self, owner: Option<&str>) -> String {
        match owner {
            Some(owner) => format!("{}:owner:{owner}", self.prefix),
            None => format!("{}:anonymous", self.prefix),
        }
    }

    fn index_key(&self, name: &str) -> String {
        format!("{}:{name}", self.prefix)
    }

    async fn read(&self, id: &str) -> Result<Option<(String, TaskRecord)>, StoreError> {
        let raw: Option<String> = self
            .commands
            .run(redis::cmd("GET").arg(self.task_key(id)).clone())
            .await
            .map_err(unavailable)?;
        let Some(raw) = raw else {
            return Ok(None);
        };
        let record = serde_json::from_str(&raw)
            .map_err(|e| StoreError::Unavailable(format!("a stored task does not parse: {e}")))?;
        Ok(Some((raw, record)))
    }
}

fn unavailable(e: toolwire_replica::BusError) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

fn encode(record: &TaskRecord) -> Result<String, StoreError> {
    serde_json::to_string(record)
        .map_err(|e| StoreError::Unavailable(format!("a task does not serialise: {e}")))
}

/// The score of a record in the lease index: the end of its lease, if it
/// is running under one.
fn lease_score(record: &TaskRecord) -> String {
    match &record.lease {
        Some(lease) if !record.is_terminal() => lease.until_ms.to_string(),
        _ => String::new(),
    }
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord, limits: CreateLimits) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let raw = encode(&record)?;
            let now = toolwire::task::now_ms();
            let keys = [
                self.task_key(&record.id),
                self.index_key("tasks"),
                self.owner_key(record.owner.as_deref()),
                self.index_key("leases"),
            ];
            let args = [
                record.id.clone(),
                raw,
                now.to_string(),
                record.expires_ms().to_string(),
                limits.total.to_string(),
                limits.per_owner.to_string(),
                lease_score(&record),
            ];
            let script = &self.create;
            let answer: String = self
                .commands
                .with(|mut c| {
                    let mut call = script.prepare_invoke();
                    call.key(&keys).arg(&args);
                    async move { call.invoke_async(&mut c).await }
                })
                .await
                .map_err(unavailable)?;
            match answer.as_str() {
                "ok" => Ok(()),
                "full" => Err(StoreError::Full(limits.total)),
                "owner" => Err(StoreError::OwnerFull(limits.per_owner)),
                other => Err(StoreError::Unavailable(format!(
                    "creating the task answered {other:?}"
                ))),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
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
            let keys = [self.task_key(id), self.index_key("leases")];
            for _ in 0..CONFLICT_RETRIES {
                let Some((raw, mut record)) = self.read(id).await? else {
                    return Ok(None);
                };
                if record.expires_ms() <= now_ms {
                    return Ok(None);
                }
                let applied = record.apply(change.clone(), now_ms);
                if !applied.changed {
                    return Ok(Some((record, applied)));
                }
                let args = [raw, encode(&record)?, lease_score(&record), id.to_owned()];
                let script = &self.swap;
                let written: i64 = self
                    .commands
                    .with(|mut c| {
                        let mut call = script.prepare_invoke();
                        call.key(&keys).arg(&args);
                        async move { call.invoke_async(&mut c).await }
                    })
                    .await
                    .map_err(unavailable)?;
                match written {
                    1 => return Ok(Some((record, applied))),
                    0 => return Ok(None),
                    _ => {}
                }
            }
            Err(StoreError::Unavailable(format!(
                "the task changed {CONFLICT_RETRIES} times while this change was applied"
            )))
        })
    }

    fn purge(&self, now_ms: u64) -> StoreFuture<'_, usize> {
        Box::pin(async move {
            // The records expire by themselves; the index forgets them.
            let gone: usize = self
                .commands
                .run(
                    redis::cmd("ZREMRANGEBYSCORE")
                        .arg(self.index_key("tasks"))
                        .arg("-inf")
                        .arg(now_ms)
                        .clone(),
                )
                .await
                .map_err(unavailable)?;
            Ok(gone)
        })
    }

    fn shared(&self) -> bool {
        true
    }

    fn lapsed(&self, now_ms: u64, max: usize) -> StoreFuture<'_, Vec<String>> {
        Box::pin(async move {
            self.commands
                .run(
                    redis::cmd("ZRANGE")
                        .arg(self.index_key("leases"))
                        .arg("-inf")
                        .arg(now_ms)
                        .arg("BYSCORE")
                        .arg("LIMIT")
                        .arg(0)
                        .arg(max)
                        .clone(),
                )
                .await
                .map_err(unavailable)
        })
    }
}
