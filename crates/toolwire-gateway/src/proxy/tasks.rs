//! Tasks passed through: an upstream's `CreateTaskResult` goes downstream
//! as [`Forwarded::Task`], with a route naming the upstream and its task
//! id there; the server seals the route and the caller's principal into
//! the id the client gets (with the gateway's keyring, so every replica
//! opens it and none can be forged to reach another upstream), and the
//! client's `tasks/get`, `tasks/update` and `tasks/cancel` come back to the
//! [`Forwarder`] with the route alone. The upstream's requests carry its
//! own id (and so its own `Mcp-Name`); the gateway keeps nothing.
//!
//! Spec: extensions/tasks

use crate::upstream::Link;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Arc;
use toolwire::proto::types::{CreateTaskResult, RequestMeta};
use toolwire::proto::{ErrorCode, ErrorObject};
use toolwire::task::{ForwardFuture, TaskForwarder, TaskReply, TaskRequest};
use toolwire::{ClientError, Forwarded, HandlerError};

/// Where a passed-through task lives.
#[derive(Debug, Serialize, Deserialize)]
struct Route {
    /// The upstream's configuration key.
    u: String,
    /// The task's id on the upstream.
    t: String,
}

/// An upstream's task handle (`resultType: "task"`, as the client's scan
/// found) as a task to pass on; an error if it is not a `CreateTaskResult`.
pub(super) fn created(link: &Link, json: &RawValue) -> Result<Forwarded, HandlerError> {
    match serde_json::from_str::<CreateTaskResult>(json.get()) {
        Ok(created) => {
            let route = Route {
                u: link.name().to_owned(),
                t: created.task.info.task_id.clone(),
            };
            Ok(Forwarded::Task {
                task: created.task,
                route: serde_json::to_value(route).unwrap_or(Value::Null),
            })
        }
        Err(e) => Err(HandlerError::Protocol(ErrorObject::internal(format!(
            "upstream {:?} answered with a malformed CreateTaskResult: {e}",
            link.name()
        )))),
    }
}

/// Answers `tasks/*` for the tasks passed through, by their route.
pub(crate) struct Forwarder {
    links: Vec<Arc<Link>>,
}

impl std::fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwarder")
            .field("upstreams", &self.links.len())
            .finish()
    }
}

impl Forwarder {
    pub(crate) fn new(links: Vec<Arc<Link>>) -> Self {
        Self { links }
    }
}

impl TaskForwarder for Forwarder {
    fn offers_tasks(&self) -> bool {
        self.links.iter().any(|l| l.offers_tasks())
    }

    fn forward<'a>(
        &'a self,
        route: &'a Value,
        request: TaskRequest,
        _meta: &'a RequestMeta,
    ) -> ForwardFuture<'a> {
        Box::pin(async move {
            // Sealed by this gateway (or a replica with its keyring): a
            // route that does not read, or names an upstream no longer
            // configured, is simply an unknown task.
            let Ok(route) = serde_json::from_value::<Route>(route.clone()) else {
                return Ok(TaskReply::Unknown);
            };
            let Some(link) = self.links.iter().find(|l| l.name() == route.u) else {
                return Ok(TaskReply::Unknown);
            };
            let Some(client) = link.client() else {
                return Err(ErrorObject::internal(link.down_reason()));
            };
            let task = client.task(route.t);
            let answered = match request {
                TaskRequest::Get => task.get().await.map(TaskReply::Task),
                TaskRequest::Update(responses) => {
                    task.update(responses).await.map(|()| TaskReply::Ack)
                }
                TaskRequest::Cancel => task.cancel().await.map(|()| TaskReply::Ack),
                _ => return Err(ErrorObject::method_not_found("this task request")),
            };
            match answered {
                Ok(reply) => Ok(reply),
                // The upstream no longer knows it (expired): unknown here too.
                Err(ClientError::Rpc(e)) if e.code == ErrorCode::INVALID_PARAMS => {
                    Ok(TaskReply::Unknown)
                }
                Err(ClientError::Rpc(e)) => Err(e),
                Err(e) => {
                    if client.connection_lost().is_some() {
                        link.broken.notify_one();
                    }
                    Err(ErrorObject::internal(format!(
                        "upstream {:?} failed: {e}",
                        link.name()
                    )))
                }
            }
        })
    }
}
