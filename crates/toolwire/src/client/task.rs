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
use futures_util::stream::{self, BoxStream};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use toolwire_proto::types::{
    CallToolResult, CreateTaskResult, DetailedTask, GetTaskResult, InputRequests,
    InputRequiredResult, InputResponses, RequestMethod, ResultType, TaskState, TasksCancelRequest,
    TasksGetRequest, TasksUpdateRequest,
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
        let poll = interval(created.task.info.poll_interval_ms);
        self.follow_task_id(created.task.info.task_id, poll, options, None)
            .await
    }

    /// Polls the task `id` until it ends, as [`follow_task`](Self::follow_task).
    pub(crate) async fn follow_task_id(
        &self,
        id: String,
        first_poll: Duration,
        options: &RequestOptions,
        on_status: Option<&StatusFn>,
    ) -> Result<Answer, ClientError> {
        let mut poll = first_poll;
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
            if let Some(on_status) = on_status {
                on_status(&got.task);
            }
            let requests = match got.task.state {
                TaskState::Completed { result } => return Ok(Answer::Value(Value::Object(result))),
                TaskState::Failed { error } => return Err(ClientError::Rpc(error)),
                TaskState::Cancelled => {
                    return Err(ClientError::TaskCancelled {
                        id,
                        message: got.task.info.status_message,
                    });
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

/// Called with the task each time [`TaskHandle::wait`] polls it.
type StatusFn = Arc<dyn Fn(&DetailedTask) + Send + Sync>;

fn task_params(id: &str) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("taskId".into(), Value::String(id.to_owned()));
    params
}

/// How [`Client::start_tool`] ended: the server made the call a task, or
/// answered it at once.
#[derive(Debug)]
pub enum Started {
    /// A task: follow it with the handle.
    Task(TaskHandle),
    /// The result, because the server ran the call synchronously (the tool
    /// does not run as a task).
    Done(CallToolResult),
}

/// A task on a server, by its id: its status, the input it waits for,
/// cancelling it, and waiting for its result. A handle made from a saved
/// id ([`Client::task`]) works in another process, against any replica of
/// the server.
///
/// Spec: extensions/tasks
#[derive(Clone)]
pub struct TaskHandle {
    client: Client,
    id: String,
    poll: Duration,
    /// Set by [`cancel_on_drop`](Self::cancel_on_drop): cancels the task
    /// when the last clone goes, unless it ended.
    guard: Option<Arc<CancelGuard>>,
    /// Set by [`on_status`](Self::on_status).
    on_status: Option<StatusFn>,
    /// The tool whose call became the task, when this handle was made by
    /// [`Client::start_tool`]: its result is checked against the tool's
    /// `outputSchema`, as a plain call's is.
    tool: Option<String>,
}

impl std::fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHandle")
            .field("id", &self.id)
            .field("poll", &self.poll)
            .field("cancel_on_drop", &self.guard.is_some())
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct CancelGuard {
    client: Client,
    id: String,
    ended: std::sync::atomic::AtomicBool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.ended.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (client, id) = (self.client.clone(), std::mem::take(&mut self.id));
            runtime.spawn(async move {
                let _ = client.task(id).cancel().await;
            });
        }
    }
}

impl Client {
    /// A handle on the task `id`, for instance one saved by another
    /// process (`toolwire call --task --detach` prints it).
    pub fn task(&self, id: impl Into<String>) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            id: id.into(),
            poll: DEFAULT_POLL,
            guard: None,
            on_status: None,
            tool: None,
        }
    }

    /// Calls `name` and returns as soon as the server made the call a
    /// task, with its handle, instead of following it as
    /// [`call_tool`](Self::call_tool) does; or the result, if the server
    /// answered at once. Needs [`ClientBuilder::with_tasks`](crate::ClientBuilder::with_tasks)
    /// (without it, no call becomes a task). Input asked for before the
    /// task starts is answered by the input handlers, as for any call.
    pub async fn start_tool(&self, call: super::ToolCall) -> Result<Started, ClientError> {
        let mut call = call;
        call.options.detach_task = true;
        let tool = call.name.clone();
        let (_, driven) = self.drive_call(call, false).await?;
        let answer = match driven {
            super::mrtr::Driven::Complete(answer, _) => answer,
            super::mrtr::Driven::Task(answer) => {
                let created: CreateTaskResult = answer.parse("tools/call")?;
                let mut handle = self.task(created.task.info.task_id);
                handle.poll = interval(created.task.info.poll_interval_ms);
                handle.tool = Some(tool);
                return Ok(Started::Task(handle));
            }
            super::mrtr::Driven::InputRequired(r) => {
                return Err(ClientError::InputRequired(Box::new(r)));
            }
        };
        Ok(Started::Done(answer.parse("tools/call")?))
    }
}

impl TaskHandle {
    /// The task id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Cancels the task when the last clone of this handle is dropped
    /// before it ended (by [`wait`](Self::wait) or a terminal
    /// [`get`](Self::get)). Off by default: a task outlives its client.
    #[must_use]
    pub fn cancel_on_drop(mut self) -> Self {
        self.guard = Some(Arc::new(CancelGuard {
            client: self.client.clone(),
            id: self.id.clone(),
            ended: std::sync::atomic::AtomicBool::new(false),
        }));
        self
    }

    /// Calls `f` with the task each time [`wait`](Self::wait) polls it
    /// (its status, `statusMessage` and what comes with them): for a
    /// progress display.
    #[must_use]
    pub fn on_status(mut self, f: impl Fn(&DetailedTask) + Send + Sync + 'static) -> Self {
        self.on_status = Some(Arc::new(f));
        self
    }

    fn ended(&self) {
        if let Some(guard) = &self.guard {
            guard
                .ended
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The task now (`tasks/get`): its status, and its result, error or
    /// input requests.
    pub async fn get(&self) -> Result<DetailedTask, ClientError> {
        let raw = self
            .client
            .request_raw(
                MethodInfo::of::<TasksGetRequest>(),
                &task_params(&self.id),
                &RequestOptions::default(),
            )
            .await?;
        let got: GetTaskResult = Answer::Raw(raw).parse(TasksGetRequest::METHOD)?;
        if got.task.state.status().is_terminal() {
            self.ended();
        }
        Ok(got.task)
    }

    /// Answers the task's input requests (`tasks/update`), by key.
    pub async fn update(&self, responses: InputResponses) -> Result<(), ClientError> {
        let mut params = task_params(&self.id);
        params.insert("inputResponses".into(), Value::Object(responses));
        self.client
            .request_raw(
                MethodInfo::of::<TasksUpdateRequest>(),
                &params,
                &RequestOptions::default(),
            )
            .await
            .map(drop)
    }

    /// Asks the server to cancel the task (`tasks/cancel`): acknowledged at
    /// once; the task may still complete.
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.client
            .request_raw(
                MethodInfo::of::<TasksCancelRequest>(),
                &task_params(&self.id),
                &RequestOptions::default(),
            )
            .await
            .map(drop)
    }

    /// Follows the task to its end as [`Client::call_tool`] does (input
    /// answered through the client's input handlers): its result, the
    /// JSON-RPC error it failed with, or [`ClientError::TaskCancelled`]. A
    /// handle from [`Client::start_tool`] checks the result against the
    /// tool's `outputSchema`, as a plain call does; one made from a bare id
    /// does not know the tool.
    pub async fn wait(&self) -> Result<CallToolResult, ClientError> {
        let answer = self
            .client
            .follow_task_id(
                self.id.clone(),
                self.poll.min(MIN_POLL * 10),
                &RequestOptions::default(),
                self.on_status.as_ref(),
            )
            .await;
        self.ended();
        let result: CallToolResult = answer?.parse("tools/call")?;
        if let Some(name) = &self.tool
            && let Some(tool) = self.client.known_tool(name).await?
        {
            super::engine::check_output(&tool, &result)?;
        }
        Ok(result)
    }

    /// The task's status each time it changes, polled at the interval the
    /// server suggests, ending after the terminal one (or the first
    /// error).
    pub fn statuses(&self) -> BoxStream<'static, Result<DetailedTask, ClientError>> {
        let handle = self.clone();
        Box::pin(stream::unfold(
            (handle, None::<Value>, false, true),
            |(handle, last, over, first)| async move {
                if over {
                    return None;
                }
                let mut handle = handle;
                let mut first = first;
                loop {
                    if !first {
                        tokio::time::sleep(handle.poll).await;
                    }
                    first = false;
                    let task = match handle.get().await {
                        Ok(task) => task,
                        Err(e) => return Some((Err(e), (handle, last, true, false))),
                    };
                    handle.poll = interval(task.info.poll_interval_ms);
                    let mut seen = serde_json::to_value(&task).unwrap_or(Value::Null);
                    // The same status, message and payload: not a change.
                    if let Value::Object(m) = &mut seen {
                        m.remove("lastUpdatedAt");
                    }
                    if last.as_ref() == Some(&seen) {
                        continue;
                    }
                    let terminal = task.state.status().is_terminal();
                    return Some((Ok(task), (handle, Some(seen), terminal, false)));
                }
            },
        ))
    }
}
