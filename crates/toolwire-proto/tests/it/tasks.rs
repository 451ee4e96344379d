//! The Tasks extension's types against the extension's own JSON Schema
//! (vendored in `tests/data/ext-tasks/`): what they write is valid there,
//! and what the schema refuses does not read.

use serde::Serialize;
use serde_json::{Value, json};
use std::sync::OnceLock;
use toolwire_proto::types::NotificationMethod;
use toolwire_proto::types::{
    CreateTaskResult, DetailedTask, GetTaskResult, InputRequest, ListRootsRequestParams,
    RequestMethod, SubscriptionFilter, Task, TaskAck, TaskIdParams, TaskInfo, TaskState,
    TaskStatus, TaskStatusNotification, TaskStatusNotificationParams, TasksCancelRequest,
    TasksGetRequest, TasksUpdateRequest, UpdateTaskRequestParams,
};
use toolwire_proto::{ErrorCode, ErrorObject};

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text = include_str!("../data/ext-tasks/schema.json");
        serde_json::from_str(text).expect("the vendored schema is JSON")
    })
}

/// The schema document, validating as its definition `name`.
fn validator(name: &str) -> jsonschema::Validator {
    let mut doc = schema().clone();
    assert!(doc["$defs"].get(name).is_some(), "no definition {name}");
    doc["$ref"] = json!(format!("#/$defs/{name}"));
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&doc)
        .expect("the schema compiles")
}

fn valid_as(name: &str, v: &Value) -> Result<(), String> {
    let errors: Vec<String> = validator(name)
        .iter_errors(v)
        .map(|e| e.to_string())
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{v} is not a {name}: {errors:?}"))
    }
}

fn written<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serialises")
}

fn info(id: &str) -> TaskInfo {
    TaskInfo {
        task_id: id.into(),
        status_message: Some("in progress".into()),
        created_at: "2026-12-02T10:30:00Z".into(),
        last_updated_at: "2026-12-02T10:40:00Z".into(),
        ttl_ms: Some(60_000),
        poll_interval_ms: Some(5_000),
    }
}

fn every_state() -> Vec<TaskState> {
    vec![
        TaskState::Working,
        TaskState::InputRequired {
            input_requests: [(
                "roots".to_owned(),
                InputRequest::ListRoots(ListRootsRequestParams::default()),
            )]
            .into(),
        },
        TaskState::Completed {
            result: json!({"content": [{"type": "text", "text": "done"}], "isError": true})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        },
        TaskState::Failed {
            error: ErrorObject::new(ErrorCode::INTERNAL_ERROR, "the replica running it stopped"),
        },
        TaskState::Cancelled,
    ]
}

#[test]
fn every_written_task_value_is_valid_in_the_extension_schema() -> Result<(), String> {
    for state in every_state() {
        let task = DetailedTask {
            state,
            info: info("786512e2-9e0d-44bd-8f29-789f320fe840"),
        };
        valid_as("DetailedTask", &written(&task))?;
        valid_as("GetTaskResult", &written(&GetTaskResult::new(task.clone())))?;
        let params = TaskStatusNotificationParams {
            task: task.clone(),
            meta: None,
        };
        valid_as(
            "TaskStatusNotification",
            &json!({"jsonrpc": "2.0", "method": TaskStatusNotification::METHOD,
                "params": written(&params)}),
        )?;
        let handle = CreateTaskResult::new(task.task());
        valid_as("CreateTaskResult", &written(&handle))?;
        valid_as("Task", &written(&task.task()))?;
    }
    valid_as("UpdateTaskResult", &written(&TaskAck::default()))?;
    valid_as("CancelTaskResult", &written(&TaskAck::default()))?;
    Ok(())
}

#[test]
fn the_task_requests_are_valid_with_their_method_names() -> Result<(), String> {
    let id = TaskIdParams {
        task_id: "t-1".into(),
        meta: None,
    };
    let update = UpdateTaskRequestParams {
        task_id: "t-1".into(),
        input_responses: json!({"roots": {"roots": []}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        meta: None,
    };
    let request = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    valid_as(
        "GetTaskRequest",
        &request(TasksGetRequest::METHOD, written(&id)),
    )?;
    valid_as(
        "CancelTaskRequest",
        &request(TasksCancelRequest::METHOD, written(&id)),
    )?;
    valid_as(
        "UpdateTaskRequest",
        &request(TasksUpdateRequest::METHOD, written(&update)),
    )?;
    // The schema ties each request to its name: a swapped name is refused.
    let swapped = request(TasksCancelRequest::METHOD, written(&id));
    if valid_as("GetTaskRequest", &swapped).is_ok() {
        return Err("tasks/cancel validated as a GetTaskRequest".into());
    }
    Ok(())
}

#[test]
fn what_the_schema_refuses_does_not_read() -> Result<(), String> {
    let base = json!({"taskId": "t", "createdAt": "x", "lastUpdatedAt": "x", "ttlMs": null});
    let with = |extra: Value| {
        let mut v = base.clone();
        if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            v.extend(extra.clone());
        }
        v
    };
    let refused = [
        // Each status's required details.
        with(json!({"status": "completed"})),
        with(json!({"status": "failed"})),
        with(json!({"status": "input_required"})),
        // A status the extension does not define.
        with(json!({"status": "paused"})),
    ];
    for v in refused {
        if valid_as("DetailedTask", &v).is_ok() {
            return Err(format!("the schema accepts {v}"));
        }
        if serde_json::from_value::<DetailedTask>(v.clone()).is_ok() {
            return Err(format!("{v} reads as a DetailedTask"));
        }
    }
    // ttlMs is required (null for unlimited).
    let no_ttl =
        json!({"taskId": "t", "status": "working", "createdAt": "x", "lastUpdatedAt": "x"});
    if valid_as("Task", &no_ttl).is_ok() || serde_json::from_value::<Task>(no_ttl).is_ok() {
        return Err("a task without ttlMs was accepted".into());
    }
    // A handle is `resultType: "task"`, and nothing else is.
    let handle = with(json!({"status": "working", "resultType": "complete"}));
    if serde_json::from_value::<CreateTaskResult>(handle).is_ok() {
        return Err("a complete result read as a task handle".into());
    }
    let task = with(json!({"status": "working", "resultType": "task"}));
    valid_as("CreateTaskResult", &task)?;
    let read: CreateTaskResult = serde_json::from_value(task).map_err(|e| e.to_string())?;
    if read.task.status != TaskStatus::Working || read.task.info.ttl_ms.is_some() {
        return Err(format!("read {read:?}"));
    }
    Ok(())
}

#[test]
fn a_listen_filter_names_the_tasks_it_follows() -> Result<(), String> {
    let filter = SubscriptionFilter {
        task_ids: Some(vec!["t-1".into(), "t-2".into()]),
        ..SubscriptionFilter::default()
    };
    let v = written(&filter);
    if v != json!({"taskIds": ["t-1", "t-2"]}) {
        return Err(format!("wrote {v}"));
    }
    valid_as("TaskSubscriptionNotifications", &v)?;
    valid_as("TaskSubscriptionAcknowledgedNotifications", &v)?;
    let back: SubscriptionFilter = serde_json::from_value(v).map_err(|e| e.to_string())?;
    if back != filter {
        return Err(format!("read back {back:?}"));
    }
    Ok(())
}
