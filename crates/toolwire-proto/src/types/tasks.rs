//! The Tasks extension (`io.modelcontextprotocol/tasks`): a request the
//! server answers with a task handle instead of its result, and the
//! methods that follow the task to its end (schema `Task`, `DetailedTask`,
//! `CreateTaskResult`, `GetTaskRequest`/`Result`, `UpdateTaskRequest`/`Result`,
//! `CancelTaskRequest`/`Result`, `TaskStatusNotification`).
//!
//! A task's state and what comes with it are one enum, [`TaskState`],
//! tagged by `status` on the wire: an `input_required` task always carries
//! its `inputRequests`, a `completed` one its `result`, a `failed` one its
//! `error`, and no other combination can be built.
//!
//! Spec: extensions/tasks (SEP-2663).

use super::common::{JsonObject, Meta, RequestMeta, ResultType};
use super::mrtr::{InputRequests, InputResponses};
use crate::ErrorObject;
use serde::{Deserialize, Deserializer, Serialize};

/// The extension's identifier: the key of its (empty) capability under
/// `extensions`, in the client's per-request capabilities and in the
/// server's `server/discover` result.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The status of a task (schema `TaskStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// `"working"`: the request is being processed.
    Working,
    /// `"input_required"`: the task waits for answers to its input requests.
    InputRequired,
    /// `"completed"`: the result is available (a tool's `isError` result
    /// included).
    Completed,
    /// `"failed"`: the request ended with a JSON-RPC error.
    Failed,
    /// `"cancelled"`: the request was cancelled before it completed.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended: `completed`, `failed` or `cancelled`.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// A task's operational metadata without its status (the members every
/// variant of `DetailedTask` shares with `Task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskInfo {
    /// The task's identifier.
    pub task_id: String,
    /// A human-readable account of the current state, which may be shown
    /// to the user or the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created (ISO 8601).
    pub created_at: String,
    /// When the task last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long after creation the server may discard the task, in
    /// milliseconds; `None` (`null` on the wire, where the member is
    /// required) for unlimited.
    #[serde(deserialize_with = "nullable")]
    pub ttl_ms: Option<u64>,
    /// How often the client should poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

/// A required member that may be `null` (serde would take a missing
/// `Option` member as `None`).
fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Option::<u64>::deserialize(d)
}

/// A task as the result that creates it describes it (schema `Task`): its
/// status, without the status's details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// The current status.
    pub status: TaskStatus,
    /// Identifier, times and polling hints.
    #[serde(flatten)]
    pub info: TaskInfo,
}

/// A task's status with what comes with it (the variants of schema
/// `DetailedTask`, tagged by `status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TaskState {
    /// `working`.
    Working,
    /// `input_required`, with every input request still outstanding.
    #[serde(rename_all = "camelCase")]
    InputRequired {
        /// The outstanding requests, keyed as `tasks/update` answers them.
        /// A key is never reused over the task's lifetime.
        input_requests: InputRequests,
    },
    /// `completed`, with the result of the original request (for
    /// `tools/call`, a `CallToolResult`).
    Completed {
        /// The final result.
        result: JsonObject,
    },
    /// `failed`, with the JSON-RPC error the request ended with.
    Failed {
        /// The error.
        error: ErrorObject,
    },
    /// `cancelled`.
    Cancelled,
}

impl TaskState {
    /// The status this state has.
    pub fn status(&self) -> TaskStatus {
        match self {
            Self::Working => TaskStatus::Working,
            Self::InputRequired { .. } => TaskStatus::InputRequired,
            Self::Completed { .. } => TaskStatus::Completed,
            Self::Failed { .. } => TaskStatus::Failed,
            Self::Cancelled => TaskStatus::Cancelled,
        }
    }
}

/// A task with its status's details (schema `DetailedTask`): what
/// `tasks/get` and `notifications/tasks` carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetailedTask {
    /// The status and its details.
    #[serde(flatten)]
    pub state: TaskState,
    /// Identifier, times and polling hints.
    #[serde(flatten)]
    pub info: TaskInfo,
}

impl DetailedTask {
    /// The task without its status's details.
    pub fn task(&self) -> Task {
        Task {
            status: self.state.status(),
            info: self.info.clone(),
        }
    }
}

/// The result a server gives in place of the request's own when it runs
/// the request as a task (schema `CreateTaskResult`): `resultType: "task"`
/// and the task, flat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// Always [`ResultType::Task`].
    #[serde(deserialize_with = "task_result_type")]
    pub result_type: ResultType,
    /// The task's seed state.
    #[serde(flatten)]
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CreateTaskResult {
    /// The handle of `task`.
    pub fn new(task: Task) -> Self {
        Self {
            result_type: ResultType::Task,
            task,
            meta: None,
        }
    }
}

/// `resultType`, which must be `"task"`.
fn task_result_type<'de, D: Deserializer<'de>>(d: D) -> Result<ResultType, D::Error> {
    exactly(d, ResultType::Task, "a task handle")
}

/// `resultType` of a standard result of the task methods: `"complete"`,
/// the default when absent.
fn complete_result_type<'de, D: Deserializer<'de>>(d: D) -> Result<ResultType, D::Error> {
    exactly(d, ResultType::Complete, "the result of a task method")
}

/// `resultType`, refused unless it is `want`.
fn exactly<'de, D: Deserializer<'de>>(
    d: D,
    want: ResultType,
    what: &str,
) -> Result<ResultType, D::Error> {
    let got = ResultType::deserialize(d)?;
    if got == want {
        Ok(got)
    } else {
        Err(serde::de::Error::custom(format_args!(
            "{what} has resultType {want:?}, not {got:?}"
        )))
    }
}

/// Parameters of `tasks/get` and `tasks/cancel` (schema
/// `GetTaskRequest.params`, `CancelTaskRequest.params`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
    /// The request `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// Parameters of `tasks/update` (schema `UpdateTaskRequest.params`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskRequestParams {
    /// The task.
    pub task_id: String,
    /// Answers to outstanding input requests, keyed as they were asked. A
    /// server ignores keys that are not outstanding.
    pub input_responses: InputResponses,
    /// The request `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The result of `tasks/get` (schema `GetTaskResult`): the task in detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskResult {
    /// Always [`ResultType::Complete`].
    #[serde(default, deserialize_with = "complete_result_type")]
    pub result_type: ResultType,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl GetTaskResult {
    /// The result that describes `task`.
    pub fn new(task: DetailedTask) -> Self {
        Self {
            result_type: ResultType::Complete,
            task,
            meta: None,
        }
    }
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel` (schema
/// `UpdateTaskResult`, `CancelTaskResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAck {
    /// Always [`ResultType::Complete`].
    #[serde(default, deserialize_with = "complete_result_type")]
    pub result_type: ResultType,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Parameters of `notifications/tasks` (schema
/// `TaskStatusNotificationParams`): the task in detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatusNotificationParams {
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::mrtr::InputRequest;
    use crate::types::roots::ListRootsRequestParams;
    use serde_json::json;

    fn info() -> TaskInfo {
        TaskInfo {
            task_id: "t-1".into(),
            status_message: None,
            created_at: "2026-12-02T10:00:00Z".into(),
            last_updated_at: "2026-12-02T10:00:01Z".into(),
            ttl_ms: Some(60_000),
            poll_interval_ms: Some(500),
        }
    }

    #[test]
    fn a_task_handle_is_flat_and_typed_task() {
        let handle = CreateTaskResult::new(Task {
            status: TaskStatus::Working,
            info: info(),
        });
        let v = serde_json::to_value(&handle).expect("serialises");
        assert_eq!(
            v,
            json!({"resultType": "task", "status": "working", "taskId": "t-1",
                "createdAt": "2026-12-02T10:00:00Z", "lastUpdatedAt": "2026-12-02T10:00:01Z",
                "ttlMs": 60000, "pollIntervalMs": 500})
        );
        assert_eq!(
            serde_json::from_value::<CreateTaskResult>(v).expect("parses"),
            handle
        );
        // A complete result is not a task handle.
        let complete = json!({"resultType": "complete", "status": "working", "taskId": "t",
            "createdAt": "x", "lastUpdatedAt": "x", "ttlMs": null});
        assert!(serde_json::from_value::<CreateTaskResult>(complete).is_err());
    }

    #[test]
    fn ttl_is_required_and_null_is_unlimited() {
        let unlimited = json!({"status": "working", "taskId": "t",
            "createdAt": "x", "lastUpdatedAt": "x", "ttlMs": null});
        let task: Task = serde_json::from_value(unlimited.clone()).expect("parses");
        assert_eq!(task.info.ttl_ms, None);
        assert_eq!(serde_json::to_value(&task).expect("serialises"), unlimited);
        let missing = json!({"status": "working", "taskId": "t",
            "createdAt": "x", "lastUpdatedAt": "x"});
        assert!(serde_json::from_value::<Task>(missing).is_err());
    }

    #[test]
    fn each_status_carries_its_details() {
        let input = DetailedTask {
            state: TaskState::InputRequired {
                input_requests: [(
                    "roots-1".to_owned(),
                    InputRequest::ListRoots(ListRootsRequestParams::default()),
                )]
                .into(),
            },
            info: info(),
        };
        let v = serde_json::to_value(GetTaskResult::new(input.clone())).expect("serialises");
        assert_eq!(v["status"], "input_required");
        assert_eq!(v["resultType"], "complete");
        assert_eq!(v["inputRequests"]["roots-1"]["method"], "roots/list");
        let back: GetTaskResult = serde_json::from_value(v).expect("parses");
        assert_eq!(back.task, input);
        assert_eq!(back.task.task().status, TaskStatus::InputRequired);

        // `completed` without its result, or `failed` without its error,
        // is not a task.
        for status in ["completed", "failed", "input_required"] {
            let v = json!({"status": status, "taskId": "t", "createdAt": "x",
                "lastUpdatedAt": "x", "ttlMs": null});
            assert!(
                serde_json::from_value::<DetailedTask>(v).is_err(),
                "{status}"
            );
        }
        let failed = json!({"status": "failed", "taskId": "t", "createdAt": "x",
            "lastUpdatedAt": "x", "ttlMs": null,
            "error": {"code": -32603, "message": "the replica running it stopped"}});
        let failed: DetailedTask = serde_json::from_value(failed).expect("parses");
        assert!(failed.task().status.is_terminal());
        assert!(!TaskStatus::InputRequired.is_terminal());
    }

    #[test]
    fn acknowledgements_are_complete_and_empty() {
        let ack: TaskAck = serde_json::from_value(json!({})).expect("absent is complete");
        assert_eq!(ack.result_type, ResultType::Complete);
        assert_eq!(
            serde_json::to_value(&ack).expect("serialises"),
            json!({"resultType": "complete"})
        );
        assert!(serde_json::from_value::<TaskAck>(json!({"resultType": "task"})).is_err());
    }
}
