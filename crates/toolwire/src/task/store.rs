//! What a task store keeps ([`TaskRecord`]), the changes a record goes
//! through ([`Change`], applied by [`TaskRecord::apply`], the one place
//! the state machine lives), and the [`TaskStore`] trait an engine
//! implements.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::{
    DetailedTask, InputRequests, InputResponses, JsonObject, Task, TaskInfo, TaskState,
};

/// What a [`TaskStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// One task as a store keeps it: its state, who owns it, its times, and
/// the answers delivered but not yet taken by the runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task id: 128 random bits, base64url.
    pub id: String,
    /// The principal the task is bound to (issuer and subject), `None`
    /// for an unauthenticated caller.
    pub owner: Option<String>,
    /// The OAuth client the caller's token was issued to (`client_id`),
    /// when it names one: the same principal through another client does
    /// not see the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The tool the task runs.
    pub tool: String,
    /// The status and what comes with it.
    pub state: TaskState,
    /// The latest status message (progress, or why it ended).
    pub status_message: Option<String>,
    /// Creation, milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Last change, milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// Time to live from creation, in milliseconds.
    pub ttl_ms: u64,
    /// The polling interval suggested to clients, in milliseconds.
    pub poll_interval_ms: u64,
    /// Answers delivered by `tasks/update` that the runner has not taken.
    #[serde(default, skip_serializing_if = "InputResponses::is_empty")]
    pub answers: InputResponses,
    /// Whether `tasks/cancel` asked the task to stop.
    #[serde(default)]
    pub cancel_requested: bool,
    /// On a store replicas share: the replica running the task, and until
    /// when its lease holds unless renewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
    /// For a re-runnable tool on a shared store: what another replica
    /// needs to run the call again if this one stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<Rerun>,
}

/// The replica running a task, on a store replicas share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The replica's id (random, one per server).
    pub holder: String,
    /// Until when the lease holds, in milliseconds since the Unix epoch;
    /// the holder renews it by heartbeat.
    pub until_ms: u64,
}

/// A call as another replica would run it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rerun {
    /// The tool's arguments.
    pub arguments: Value,
    /// The request's `_meta`, as it came.
    pub meta: Value,
}

/// A change to a [`TaskRecord`], applied atomically by the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Change {
    /// The runner is working again (or still), with this status message.
    Working(Option<String>),
    /// The status message alone.
    Message(String),
    /// The runner needs input: these requests, under task-unique keys.
    InputRequired(InputRequests),
    /// `tasks/update`: answers; those to an outstanding key are kept and
    /// their requests are no longer outstanding, the rest is ignored.
    Answer(InputResponses),
    /// The runner takes the answers delivered so far.
    TakeAnswers,
    /// `tasks/cancel`.
    RequestCancel,
    /// The task ended.
    Finish(Ended),
    /// The lease holder renews its lease until `until_ms`; nothing if
    /// another replica holds it.
    Heartbeat {
        /// The replica renewing.
        holder: String,
        /// The new end of the lease.
        until_ms: u64,
    },
    /// A replica takes over a task whose lease lapsed (to run it again).
    Claim {
        /// The replica taking over.
        holder: String,
        /// The end of its lease.
        until_ms: u64,
    },
    /// The lease holder gives the task up (shutting down): its lease
    /// lapses at once.
    Release {
        /// The replica giving it up.
        holder: String,
    },
    /// A lapsed lease: the replica running the task stopped, so it ends
    /// `failed`, saying so. Nothing if the lease still holds.
    Abandon,
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Ended {
    /// With a result (a tool's `isError` result included).
    Completed(JsonObject),
    /// With a JSON-RPC error.
    Failed(ErrorObject),
    /// Cancelled.
    Cancelled,
}

/// What applying a [`Change`] did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Applied {
    /// Whether the record changed.
    pub changed: bool,
    /// For [`Change::Answer`]: whether every outstanding request is now
    /// answered, so the runner can go on.
    pub all_answered: bool,
    /// For [`Change::TakeAnswers`]: the answers taken.
    pub taken: InputResponses,
    /// For [`Change::Heartbeat`] and [`Change::Claim`]: whether the
    /// replica holds the lease now.
    pub held: bool,
}

/// The error a task ends with when the replica running it stopped.
pub fn runner_lost() -> ErrorObject {
    ErrorObject::internal("the server replica running this task stopped before the task finished")
}

impl TaskRecord {
    /// Whether the task has ended.
    pub fn is_terminal(&self) -> bool {
        self.state.status().is_terminal()
    }

    /// When the task expires, in milliseconds since the Unix epoch.
    pub fn expires_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    /// Whether the task is running under a lease that lapsed at `now_ms`.
    pub fn lease_lapsed(&self, now_ms: u64) -> bool {
        !self.is_terminal() && self.lease.as_ref().is_some_and(|l| l.until_ms <= now_ms)
    }

    /// The lease changes: they leave `lastUpdatedAt` alone, since the
    /// task's status does not change.
    fn apply_lease(&mut self, change: Change, now_ms: u64) -> Applied {
        let mut applied = Applied::default();
        match change {
            Change::Heartbeat { holder, until_ms } => {
                // A released lease stays released.
                if let Some(lease) = &mut self.lease
                    && lease.holder == holder
                    && lease.until_ms > 0
                {
                    lease.until_ms = lease.until_ms.max(until_ms);
                    applied.changed = true;
                    applied.held = true;
                }
            }
            Change::Claim { holder, until_ms }
                if self.lease.as_ref().is_none_or(|l| l.until_ms <= now_ms) =>
            {
                self.lease = Some(Lease { holder, until_ms });
                applied.changed = true;
                applied.held = true;
            }
            Change::Release { holder } => {
                if let Some(lease) = &mut self.lease
                    && lease.holder == holder
                {
                    lease.until_ms = 0;
                    applied.changed = true;
                }
            }
            _ => {}
        }
        applied
    }

    /// Applies `change` at `now_ms`. A terminal task takes no change but
    /// [`Change::TakeAnswers`] (which finds none).
    pub fn apply(&mut self, change: Change, now_ms: u64) -> Applied {
        let mut applied = Applied::default();
        if self.is_terminal() {
            return applied;
        }
        let change = match change {
            Change::Abandon if self.lease_lapsed(now_ms) => {
                Change::Finish(Ended::Failed(runner_lost()))
            }
            Change::Abandon => return applied,
            lease @ (Change::Heartbeat { .. } | Change::Claim { .. } | Change::Release { .. }) => {
                return self.apply_lease(lease, now_ms);
            }
            change => change,
        };
        match change {
            Change::Working(message) => {
                self.state = TaskState::Working;
                self.status_message = message;
                applied.changed = true;
            }
            Change::Message(message) => {
                if self.status_message.as_deref() != Some(message.as_str()) {
                    self.status_message = Some(message);
                    applied.changed = true;
                }
            }
            Change::InputRequired(input_requests) => {
                self.state = TaskState::InputRequired { input_requests };
                self.status_message = Some("waiting for input from the client".to_owned());
                applied.changed = true;
            }
            Change::Answer(answers) => {
                let TaskState::InputRequired { input_requests } = &mut self.state else {
                    return applied;
                };
                for (key, answer) in answers {
                    // Spec: extensions/tasks#task-update-requests — a key
                    // not outstanding (never issued, answered, superseded)
                    // is ignored.
                    if input_requests.remove(&key).is_some() {
                        self.answers.insert(key, answer);
                        applied.changed = true;
                    }
                }
                if input_requests.is_empty() {
                    self.state = TaskState::Working;
                    self.status_message = None;
                    applied.all_answered = true;
                }
            }
            Change::TakeAnswers => {
                applied.taken = std::mem::take(&mut self.answers);
                applied.changed = !applied.taken.is_empty();
            }
            Change::RequestCancel => {
                applied.changed = !self.cancel_requested;
                self.cancel_requested = true;
            }
            Change::Heartbeat { .. }
            | Change::Claim { .. }
            | Change::Release { .. }
            | Change::Abandon => {}
            Change::Finish(ended) => {
                self.answers.clear();
                self.lease = None;
                self.rerun = None;
                self.state = match ended {
                    Ended::Completed(result) => TaskState::Completed { result },
                    Ended::Failed(error) => {
                        self.status_message
                            .get_or_insert_with(|| error.message.clone());
                        TaskState::Failed { error }
                    }
                    Ended::Cancelled => {
                        self.status_message = Some("cancelled by the client".to_owned());
                        TaskState::Cancelled
                    }
                };
                applied.changed = true;
            }
        }
        if applied.changed {
            self.updated_ms = self.updated_ms.max(now_ms);
        }
        applied
    }

    /// The task as `tasks/get` and `notifications/tasks` show it, the
    /// record consumed (its result is moved, not copied).
    pub fn into_detailed(self) -> DetailedTask {
        let info = self.info();
        DetailedTask {
            state: self.state,
            info,
        }
    }

    /// The task as `tasks/get` and `notifications/tasks` show it.
    pub fn detailed(&self) -> DetailedTask {
        DetailedTask {
            state: self.state.clone(),
            info: self.info(),
        }
    }

    /// The task without its status's details, as `CreateTaskResult`
    /// carries it.
    pub fn task(&self) -> Task {
        Task {
            status: self.state.status(),
            info: self.info(),
        }
    }

    fn info(&self) -> TaskInfo {
        TaskInfo {
            task_id: self.id.clone(),
            status_message: self.status_message.clone(),
            created_at: super::time::rfc3339(self.created_ms),
            last_updated_at: super::time::rfc3339(self.updated_ms),
            ttl_ms: Some(self.ttl_ms),
            poll_interval_ms: Some(self.poll_interval_ms),
        }
    }
}

/// The bounds a store enforces when a task is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateLimits {
    /// Tasks one owner may hold at once (until they expire).
    pub per_owner: usize,
    /// Tasks the store holds at once.
    pub total: usize,
}

/// Why a store refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The owner holds as many tasks as it may.
    #[error("this caller already holds {0} tasks, the most it may; wait for one to expire")]
    OwnerFull(usize),
    /// The store holds as many tasks as it may.
    #[error("the server holds {0} tasks, the most it may; try again later")]
    Full(usize),
    /// The engine behind the store failed or is unreachable.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// Where tasks live: an engine every replica that may answer for a task
/// can reach.
///
/// Creation is strongly consistent: once [`create`](Self::create)
/// returns, a [`get`](Self::get) on any replica finds the task (the
/// extension's MUST). Every change is applied atomically with
/// [`TaskRecord::apply`], so that the state machine is the same in every
/// engine. A record whose time to live has passed is gone: `get` does not
/// return it, and the store deletes it when it can.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task, refusing it past `limits`.
    fn create(&self, record: TaskRecord, limits: CreateLimits) -> StoreFuture<'_, ()>;

    /// The task `id`, unless it is unknown or expired.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Applies `change` to the task `id` at `now_ms`: the record after it
    /// and what it did, or `None` for an unknown or expired task.
    fn change<'a>(
        &'a self,
        id: &'a str,
        change: Change,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<(TaskRecord, Applied)>>;

    /// As [`change`](Self::change), for a caller that needs only what the
    /// change did, not the record after it (an engine that keeps records
    /// in this process can skip copying one out).
    fn apply_change<'a>(
        &'a self,
        id: &'a str,
        change: Change,
        now_ms: u64,
    ) -> StoreFuture<'a, Option<Applied>> {
        let changed = self.change(id, change, now_ms);
        Box::pin(async move { Ok(changed.await?.map(|(_, applied)| applied)) })
    }

    /// Deletes every task expired at `now_ms`; how many went.
    fn purge(&self, now_ms: u64) -> StoreFuture<'_, usize>;

    /// Whether several replicas share this store. The server then keeps a
    /// lease on each task it runs, renews it by heartbeat, and takes over
    /// (fails or re-runs) tasks whose lease lapsed. `false` by default.
    fn shared(&self) -> bool {
        false
    }

    /// Up to `max` ids of tasks not ended whose lease lapsed at `now_ms`
    /// (for a shared store; none by default).
    fn lapsed(&self, now_ms: u64, max: usize) -> StoreFuture<'_, Vec<String>> {
        let _ = (now_ms, max);
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
}
