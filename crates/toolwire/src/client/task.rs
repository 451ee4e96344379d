//! Following a task (the Tasks extension) to its end: a `tools/call` that
//! became a task is polled with `tasks/get` at the interval the server
//! suggests, its input requests are answered through the same input
//! handlers MRTR uses (`tasks/update`), and its final result is returned
//! as the call's. To the caller, `call_tool` just works.
//!
//! Spec: extensions/tasks#task-polling

use super::Client;
use super::answer::Answer;
use super::error::ClientError;
use super::method::MethodInfo;
use super::options::RequestOptions;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::time::Duration;
use toolwire_proto::types::{
    CreateTaskResult, GetTaskResult, InputRequests, InputRequiredResult, RequestMethod, ResultType,
    TaskState, TasksGetRequest, TasksUpdateRequest,
};

/// The polling interval when the server suggests none, and the bounds of
/// one it suggests.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
const MIN_POLL: Duration = Duration::from_millis(10);
const MAX_POLL: Duration = Duration::from_secs(60);

fn interval(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL, |ms| {
        Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL)
    })
}

impl Client {
    /// Polls the task `answer` created until it ends: its result, the
    /// JSON-RPC error it failed with, or an error saying it was cancelled.
    pub(crate) async fn follow_task(
        &self,
        answer: Answer,
        options: &RequestOptions,
    ) -> Result<Answer, ClientError> {
        let created: CreateTaskResult = answer.parse("tools/call")?;
        let id = created.task.info.task_id;
        let mut poll = interval(created.task.info.poll_interval_ms);
        let mut params = Map::new();
        params.insert("taskId".into(), Value::String(id.clone()));
        // Spec: extensions/tasks#task-update-requests — a key is answered
        // once, however many polls show it.
        let mut answered: HashSet<String> = HashSet::new();
        let mut rounds = 0;
        loop {
            tokio::time::sleep(poll).await;
            let raw = self
                .request_raw(MethodInfo::of::<TasksGetRequest>(), &params, options)
                .await?;
            let got: GetTaskResult = Answer::Raw(raw).parse(TasksGetRequest::METHOD)?;
            poll = interval(got.task.info.poll_interval_ms);
            let requests = match got.task.state {
                TaskState::Completed { result } => return Ok(Answer::Value(Value::Object(result))),
                TaskState::Failed { error } => return Err(ClientError::Rpc(error)),
                TaskState::Cancelled => {
                    return Err(ClientError::Protocol(format!(
                        "the task {id} was cancelled{}",
                        got.task
                            .info
                            .status_message
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    )));
                }
                TaskState::Working => continue,
                TaskState::InputRequired { input_requests } => input_requests,
            };
            let fresh: InputRequests = requests
                .into_iter()
                .filter(|(key, _)| !answered.contains(key))
                .collect();
            if fresh.is_empty() {
                continue;
            }
            if !self.has_input_handlers() {
                return Err(ClientError::Protocol(format!(
                    "the task {id} needs input, and this client has no input handler"
                )));
            }
            if rounds == self.inner.max_rounds {
                return Err(ClientError::TooManyRounds(rounds));
            }
            rounds += 1;
            let asked = InputRequiredResult {
                result_type: ResultType::InputRequired,
                input_requests: Some(fresh),
                request_state: None,
                meta: None,
            };
            let Some(responses) = self.answer(&asked).await? else {
                continue;
            };
            answered.extend(responses.keys().cloned());
            let mut update = params.clone();
            update.insert("inputResponses".into(), Value::Object(responses));
            self.request_raw(MethodInfo::of::<TasksUpdateRequest>(), &update, options)
                .await?;
            // The answers are in: look again soon.
            poll = poll.min(Duration::from_millis(100));
        }
    }
}
