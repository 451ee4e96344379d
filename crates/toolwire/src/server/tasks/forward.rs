//! Tasks another server runs, passed through this one (a gateway): the
//! `CreateTaskResult` a forwarding tool returned, under an id that seals
//! where the task lives and who asked; and `tasks/*` for such an id, opened
//! and handed to the [`TaskForwarder`](crate::task::TaskForwarder).
//!
//! Spec: extensions/tasks#security-considerations

use super::super::Server;
use super::super::accept::Prepared;
use super::super::outcome::Outcome;
use super::super::shape::Shape;
use super::not_found;
use crate::mrtr::seal;
use crate::task::{TaskReply, TaskRequest};
use serde_json::Value;
use std::time::Duration;
use toolwire_proto::types::{CreateTaskResult, GetTaskResult, Method};
use toolwire_proto::{ErrorObject, RequestId};

impl Server {
    /// A forwarding tool's task: the `CreateTaskResult` under an id that
    /// seals `route` and the caller's principal, for a request that
    /// declared the extension.
    ///
    /// Spec: extensions/tasks#capability-negotiation, #security-considerations
    pub(crate) fn forwarded_task(
        &self,
        id: &RequestId,
        declared: bool,
        (principal, client): (Option<&str>, Option<&str>),
        task: toolwire_proto::types::Task,
        route: &Value,
    ) -> Outcome {
        if !declared || self.inner.config.task_forwarder.is_none() {
            return Outcome::error(ErrorObject::internal(
                "a forwarding tool returned a task, but the request did not declare the Tasks extension or the server has no task forwarder",
            ));
        }
        let Some(keys) = self.state_keys() else {
            return Outcome::error(ErrorObject::internal(
                "the server has no requestState keyring to seal a forwarded task id with",
            ));
        };
        // The id lives as long as the task may; one without a time to live
        // gets a week.
        let ttl = task
            .info
            .ttl_ms
            .map_or(FORWARDED_MAX_TTL, Duration::from_millis)
            .min(FORWARDED_MAX_TTL);
        let binding = forwarded_binding(principal, client);
        let sealed = match seal::seal(
            keys,
            &binding,
            0,
            Vec::new(),
            route,
            ttl,
            std::time::SystemTime::now(),
        ) {
            Ok(sealed) => sealed,
            Err(e) => {
                crate::log_limit::error_limited!("sealing a forwarded task id failed: {e}");
                return Outcome::error(ErrorObject::internal("could not seal the task id"));
            }
        };
        let mut task = task;
        task.info.task_id = format!("{FORWARDED_PREFIX}{sealed}");
        self.respond_with_meta(Shape::Modern, id, &CreateTaskResult::new(task))
    }

    /// `tasks/*` for a forwarded task: the sealed route opened (or the
    /// task is unknown) and handed to the forwarder.
    pub(super) async fn forwarded_task_method(
        &self,
        mut p: Prepared,
        task_id: &str,
        sealed: &str,
    ) -> Outcome {
        let (Some(forwarder), Some(keys)) = (&self.inner.config.task_forwarder, self.state_keys())
        else {
            return not_found();
        };
        let binding = forwarded_binding(p.principal().map(|s| &**s), p.client_id().map(|c| &**c));
        let route = match seal::open(keys, &binding, sealed, std::time::SystemTime::now()) {
            Ok(opened) => opened.state,
            // Spec: extensions/tasks#security-considerations — forged,
            // expired or someone else's: all read as unknown.
            Err(why) => {
                tracing::debug!("a forwarded task id was refused: {why}");
                return not_found();
            }
        };
        let request = match p.method {
            Method::TasksGet => TaskRequest::Get,
            Method::TasksCancel => TaskRequest::Cancel,
            Method::TasksUpdate => match p.params.input_responses.take().map(|b| *b) {
                Some(Value::Object(responses)) => TaskRequest::Update(responses),
                _ => {
                    return Outcome::error(ErrorObject::invalid_params(
                        "tasks/update needs params.inputResponses, an object keyed like the task's inputRequests",
                    ));
                }
            },
            _ => return Outcome::error(ErrorObject::method_not_found(p.method.as_str())),
        };
        match forwarder.forward(&route, request, &p.meta).await {
            Ok(TaskReply::Task(mut task)) => {
                task.info.task_id = task_id.to_owned();
                self.respond_with_meta(Shape::Modern, &p.id, &GetTaskResult::new(task))
            }
            Ok(TaskReply::Ack) => self.ack(&p.id),
            Ok(TaskReply::Unknown) => not_found(),
            Err(e) => Outcome::error(e),
        }
    }
}

/// The first character of a forwarded task's id; the server's own ids
/// start with `t`.
pub(super) const FORWARDED_PREFIX: &str = "f";

/// The longest a forwarded task id stays valid: a week.
const FORWARDED_MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// What a forwarded task id is bound to: the caller alone, principal and
/// client (under its own method name, so no `requestState` opens as a
/// task id, nor one as the other).
fn forwarded_binding(principal: Option<&str>, client: Option<&str>) -> seal::Binding {
    let caller = principal.map(|p| match client {
        Some(c) => format!("{p}\u{0}{c}"),
        None => p.to_owned(),
    });
    seal::Binding::new("tasks/forwarded", "", &Value::Null, caller.as_deref())
}
