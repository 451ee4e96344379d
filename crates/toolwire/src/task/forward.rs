//! Tasks another server runs, passed through this one (a gateway): a
//! [`TaskForwarder`] answers `tasks/get`, `tasks/update` and `tasks/cancel`
//! for them.
//!
//! A forwarding tool handler that got a task from its upstream returns
//! [`Forwarded::Task`](crate::Forwarded::Task) with a *route*, a small JSON
//! value saying where the task lives (which upstream, its id there). The
//! server seals the route, bound to the caller's principal, into the task
//! id the client sees, with its `requestState` keyring; the client's later
//! `tasks/*` requests bring that id back, the server opens it (any replica
//! with the same keyring can) and hands the route to the forwarder. An id
//! that does not open, or belongs to another principal, reads exactly like
//! an unknown task, so a forged or stolen id reaches no upstream.
//!
//! Spec: extensions/tasks#security-considerations

use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::{DetailedTask, InputResponses, RequestMeta};

/// What a forwarded task request asks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskRequest {
    /// `tasks/get`.
    Get,
    /// `tasks/update`, with the answers by key.
    Update(InputResponses),
    /// `tasks/cancel`.
    Cancel,
}

/// How the server answers a forwarded task request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskReply {
    /// The task, for `tasks/get` (its `taskId` is replaced with the one the
    /// client knows).
    Task(DetailedTask),
    /// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
    Ack,
    /// No such task where the route leads (or not any more): the client
    /// gets the same `-32602` as for an unknown task.
    Unknown,
}

/// What [`TaskForwarder::forward`] returns: the reply, or a JSON-RPC error
/// for the client (an upstream's own error passes through).
pub type ForwardFuture<'a> =
    Pin<Box<dyn Future<Output = Result<TaskReply, ErrorObject>> + Send + 'a>>;

/// Answers the `tasks/*` requests for tasks that forwarding tools passed
/// through ([`ServerConfig::with_task_forwarder`](crate::ServerConfig::with_task_forwarder)).
pub trait TaskForwarder: std::fmt::Debug + Send + Sync + 'static {
    /// Whether tasks may come through now (some upstream offers the
    /// extension): `server/discover` then declares it.
    fn offers_tasks(&self) -> bool;

    /// Forwards `request` for the task at `route` (as the forwarding
    /// handler gave it), made with the request's `_meta`.
    fn forward<'a>(
        &'a self,
        route: &'a Value,
        request: TaskRequest,
        meta: &'a RequestMeta,
    ) -> ForwardFuture<'a>;
}
