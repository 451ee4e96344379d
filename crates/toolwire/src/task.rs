//! Tasks: tool calls that outlive the request (the
//! `io.modelcontextprotocol/tasks` extension).
//!
//! A tool declares whether it may run as a task ([`TaskSupport`], with
//! [`ToolBuilder::task`](crate::ToolBuilder::task) or
//! `#[tool(task = "optional")]`). When a request declares the extension and
//! calls such a tool, the server answers at once with a task handle
//! (`resultType: "task"`) and runs the handler in the background; the
//! client polls `tasks/get`, answers input requests with `tasks/update`,
//! and may `tasks/cancel`. The handler is the same code as for a plain
//! call: asking for input through
//! [`InputRequired`](crate::InputRequired) moves the task to
//! `input_required`, progress reports become its `statusMessage`, and
//! `tasks/cancel` fires its cancellation token.
//!
//! Tasks live in a [`TaskStore`]; [`MemoryTaskStore`] is the default.
//!
//! Spec: extensions/tasks

mod forward;
mod memory;
mod store;
pub(crate) mod time;

pub use forward::{ForwardFuture, TaskForwarder, TaskReply, TaskRequest};
pub use memory::MemoryTaskStore;
pub use store::{
    Applied, Change, CreateLimits, Ended, Lease, Rerun, StoreError, StoreFuture, TaskRecord,
    TaskStore, runner_lost,
};
pub use time::now_ms;

use base64::Engine as _;
use std::sync::Arc;
use std::time::Duration;

/// Whether a tool may run as a task.
///
/// Spec: extensions/tasks#capability-negotiation
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Never: every call is answered synchronously (the default).
    #[default]
    Forbidden,
    /// A task when the request declared the extension, a plain call
    /// otherwise.
    Optional,
    /// Only as a task: a request that did not declare the extension gets
    /// `-32021` naming it.
    Required,
}

/// How the server keeps tasks: the store, their time to live and
/// polling interval, and the bounds.
#[derive(Clone)]
pub struct TaskOptions {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) limits: CreateLimits,
    pub(crate) max_result_bytes: usize,
    pub(crate) lease: Duration,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("limits", &self.limits)
            .field("max_result_bytes", &self.max_result_bytes)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

/// A task's time to live by default: one hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);
/// The polling interval suggested by default: one second.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Tasks one principal may hold at once by default.
pub const DEFAULT_TASKS_PER_PRINCIPAL: usize = 100;
/// Tasks the server holds at once by default.
pub const DEFAULT_MAX_TASKS: usize = 10_000;
/// The largest result a task stores by default: 1 MiB.
pub const DEFAULT_MAX_TASK_RESULT_BYTES: usize = 1 << 20;
/// How long a replica's lease on a task it runs holds without a
/// heartbeat, by default (on a shared store): five seconds.
pub const DEFAULT_TASK_LEASE: Duration = Duration::from_secs(5);

impl Default for TaskOptions {
    fn default() -> Self {
        Self {
            store: Arc::new(MemoryTaskStore::new()),
            ttl: DEFAULT_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            limits: CreateLimits {
                per_owner: DEFAULT_TASKS_PER_PRINCIPAL,
                total: DEFAULT_MAX_TASKS,
            },
            max_result_bytes: DEFAULT_MAX_TASK_RESULT_BYTES,
            lease: DEFAULT_TASK_LEASE,
        }
    }
}

impl TaskOptions {
    /// The defaults: in memory, one hour to live, polled every second, 100
    /// tasks per principal and 10,000 in all, results up to 1 MiB.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps tasks in `store`.
    #[must_use]
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self
    }

    /// How long a task lives from its creation (kept within 1 ms to a
    /// year). A tool may set its own ([`ToolBuilder::task_ttl`](crate::ToolBuilder::task_ttl)).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = crate::bounds::timeout_within_bounds(ttl);
        self
    }

    /// The polling interval suggested to clients.
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = crate::bounds::timeout_within_bounds(interval);
        self
    }

    /// Tasks one principal (or, without authentication, all anonymous
    /// callers together) may hold at once, and tasks in all. At least 1.
    #[must_use]
    pub fn max_tasks(mut self, per_principal: usize, total: usize) -> Self {
        self.limits = CreateLimits {
            per_owner: per_principal.max(1),
            total: total.max(1),
        };
        self
    }

    /// On a store replicas share, how long the lease of the replica
    /// running a task holds without a heartbeat (renewed every third of
    /// it). When it lapses, another replica notices within about a second
    /// and ends the task `failed`, or runs it again for a
    /// [re-runnable](crate::ToolBuilder::rerun) tool. Kept within 300 ms
    /// to 10 minutes.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.clamp(Duration::from_millis(300), Duration::from_secs(600));
        self
    }

    /// The largest result a task stores; a larger one ends the task
    /// `failed`, saying so.
    #[must_use]
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }
}

/// A new task id: 128 bits from the operating system's random source,
/// base64url without padding (22 characters) after a `t`, so that an id
/// never starts with `-`, which a command line would take for an option.
///
/// Spec: extensions/tasks#security-considerations — ids are unguessable.
pub(crate) fn new_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    let mut id = String::with_capacity(23);
    id.push('t');
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode_string(bytes, &mut id);
    Some(id)
}
