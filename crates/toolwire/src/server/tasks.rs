//! The Tasks extension on the server (`io.modelcontextprotocol/tasks`):
//! whether a call becomes a task ([`Server::task_wanted`]), creating it
//! ([`Server::start_task`], or the handler's own
//! [`RequestContext::continue_as_task`] through [`Server::call_deferred`]),
//! the runner that drives its handler round after round
//! ([`Server::drive`]), and `tasks/get`, `tasks/update` and `tasks/cancel`
//! ([`Server::task_method`]); tasks passed through from another server are
//! in [`forward`].
//!
//! The handler is the same code as for a plain call. A round that answers
//! [`InputRequired`] moves the task to `input_required` with the requests
//! under keys unique over the task's lifetime; once `tasks/update` has
//! answered every one, the handler runs again with the answers and its
//! state, as an MRTR retry would bring them (the state stays here, so it
//! is not sealed). Progress reports become the status message, and
//! `tasks/cancel` fires the handler's cancellation token.
//!
//! Spec: extensions/tasks

mod forward;
mod replicas;

use super::Server;
use super::accept::{Prepared, RawParams};
use super::era::Era;
use super::outcome::{Outcome, RpcError};
use super::rounds::Mrtr;
use super::shape::Shape;
use super::tools::{Answer, checked_result};
use crate::bus::BusEvent;
use crate::context::{Outbound, RequestContext, StatusSlot};
use crate::handler::{HandlerError, HandlerOutput, wire_millis};
use crate::mrtr::{self, InputRequired, RoundInput};
use crate::task::time::now_ms;
use crate::task::{Change, Ended, Lease, Rerun, StoreError, TaskOptions, TaskRecord, TaskSupport};
use crate::tool::{Forwarded, ToolInner};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, oneshot};
use tokio::task::{JoinError, JoinHandle};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;
use toolwire_proto::types::{
    CallToolResult, ClientCapabilities, CreateTaskResult, GetTaskResult, InputRequests,
    InputResponses, JsonObject, Method, RequestMeta, ResultType, TASKS_EXTENSION, TaskAck,
    TaskState,
};
use toolwire_proto::{ErrorCode, ErrorObject, RequestId};

/// The most rounds of input one task may ask for.
const MAX_TASK_ROUNDS: u32 = 64;

/// How long a cancelled handler has to stop before it is aborted.
const CANCEL_GRACE: Duration = Duration::from_secs(10);

/// The server's tasks: how they are kept, and the runners on this replica.
pub(crate) struct Tasks {
    pub(crate) options: TaskOptions,
    /// The tasks this replica runs, by id: at most as many as the store
    /// holds.
    runners: Mutex<HashMap<String, Arc<Runner>>>,
    /// This server's id as a lease holder: 128 random bits.
    replica: String,
    /// Whether the watcher (pokes from other replicas, the sweep of lapsed
    /// leases) runs.
    watching: AtomicBool,
    /// Shutting down: no new task is taken.
    closing: AtomicBool,
}

impl Tasks {
    pub(crate) fn new(options: TaskOptions) -> Self {
        Self {
            options,
            runners: Mutex::new(HashMap::new()),
            replica: crate::task::new_id().unwrap_or_else(|| format!("{:x}", now_ms())),
            watching: AtomicBool::new(false),
            closing: AtomicBool::new(false),
        }
    }

    fn runner(&self, id: &str) -> Option<Arc<Runner>> {
        self.runners.lock().ok()?.get(id).cloned()
    }

    fn running(&self) -> Vec<Arc<Runner>> {
        self.runners
            .lock()
            .map(|r| r.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether replicas share the store, so leases are kept.
    fn shared(&self) -> bool {
        self.options.store.shared()
    }

    fn lease_until(&self) -> u64 {
        now_ms().saturating_add(wire_millis(self.options.lease))
    }

    /// How often a runner renews its lease, and re-reads its task in case
    /// a poke from another replica was lost.
    fn beat_every(&self) -> Duration {
        self.options.lease / 3
    }
}

/// What reaches the runner of a task on this replica.
#[derive(Debug, Default)]
struct Runner {
    /// Answers arrived.
    wake: Notify,
    /// `tasks/cancel`: the handler's cancellation token.
    cancel: CancellationToken,
    /// The replica hands the task over (shutting down) or lost its lease:
    /// the runner stops without recording an end.
    handover: CancellationToken,
}

/// What a task runs: the tool, its arguments and the request it came from.
pub(crate) struct TaskStart {
    pub(crate) tool: Arc<ToolInner>,
    pub(crate) name: String,
    pub(crate) id: RequestId,
    pub(crate) args: Value,
    pub(crate) meta: Arc<RequestMeta>,
    pub(crate) principal: Option<Arc<str>>,
    /// The OAuth client of the caller's token, if it names one.
    pub(crate) client: Option<Arc<str>>,
    /// The first round's input; for a deferred call, only its round.
    pub(crate) input: RoundInput,
    /// The tool's concurrency place, held while the task runs.
    pub(crate) place: Option<OwnedSemaphorePermit>,
}

/// A deferred task tool's call, before it knows whether it becomes a task.
pub(crate) struct DeferredCall {
    pub(crate) start: TaskStart,
    pub(crate) round: Mrtr,
    pub(crate) input: RoundInput,
    pub(crate) cancel: CancellationToken,
    pub(crate) outbound: Option<Outbound>,
    pub(crate) kept: Option<Value>,
    pub(crate) raw: Option<RawParams>,
}

type Handled = Result<Forwarded, HandlerError>;

/// A handler already running when its call becomes a task.
pub(crate) struct Started {
    running: JoinHandle<Handled>,
    cx: RequestContext,
    created: oneshot::Sender<bool>,
}

/// Whether `meta` declares the Tasks extension.
pub(crate) fn declares_tasks(meta: &RequestMeta) -> bool {
    meta.client_capabilities
        .as_ref()
        .and_then(|c| c.extensions.as_ref())
        .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

/// `-32021` naming the extension.
///
/// Spec: extensions/tasks#capability-negotiation
pub(crate) fn tasks_required(message: String) -> ErrorObject {
    ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, message).with_data(json!({
        "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } }
    }))
}

/// The error for an unknown, expired or someone else's task: the same for
/// all three.
///
/// Spec: extensions/tasks#protocol-errors, #security-considerations
fn not_found() -> Outcome {
    Outcome::error(ErrorObject::invalid_params(
        "Failed to retrieve task: Task not found (unknown, expired, or not yours)",
    ))
}

fn expired() -> Ended {
    Ended::Failed(ErrorObject::internal(
        "the task's time to live ran out before it finished",
    ))
}

fn store_failed(e: &StoreError) -> Outcome {
    crate::log_limit::warn_limited!("task store: {e}");
    Outcome::error(ErrorObject::internal(format!("{e}")))
}

/// What a runner's heartbeat found.
enum Beat {
    /// The lease holds; the task as stored.
    Held(Box<TaskRecord>),
    /// Another replica holds the task now, or it is gone.
    Lost,
    /// The store did not answer; the runner goes on.
    Unknown,
}

impl Server {
    /// Tells every listen stream and runner, on every replica, that the
    /// task changed.
    fn task_changed(&self, task_id: &str) {
        self.publish(BusEvent::TaskChanged {
            task_id: task_id.to_owned(),
        });
    }

    /// Whether this `tools/call` runs as a task: the tool supports one and
    /// the request declared the extension. `-32021` for a tool that runs
    /// only as a task, called without it (and always in a legacy session,
    /// whose revisions have no such tasks).
    pub(crate) fn task_wanted(
        &self,
        p: &Prepared,
        tool: &ToolInner,
        name: &str,
    ) -> Result<bool, Outcome> {
        let support = tool.task.support;
        if support == TaskSupport::Forbidden {
            return Ok(false);
        }
        let declared = matches!(p.era, Era::Modern) && declares_tasks(&p.meta);
        match (declared, support) {
            (true, _) => Ok(true),
            (false, TaskSupport::Required) => Err(Outcome::error(tasks_required(format!(
                "Missing required client capability: tool {name:?} runs only as a task; declare the {TASKS_EXTENSION} extension in the request's client capabilities"
            )))),
            (false, _) => Ok(false),
        }
    }

    /// Stores a new task and starts its runner; the `CreateTaskResult`
    /// once the task is stored, so that a `tasks/get` anywhere finds it.
    /// `started` is a deferred call's handler, already running.
    pub(crate) async fn start_task(&self, start: TaskStart, started: Option<Started>) -> Outcome {
        let tasks = &self.inner.tasks;
        let options = &tasks.options;
        if tasks.closing.load(Ordering::Relaxed) {
            if let Some(started) = started {
                let _ = started.created.send(false);
                started.running.abort();
            }
            return Outcome::error(RpcError::Busy(ErrorObject::internal(
                "this server replica is shutting down and takes no new task; try again",
            )));
        }
        self.watch_tasks();
        let Some(task_id) = crate::task::new_id() else {
            return Outcome::error(ErrorObject::internal(
                "the operating system's random source failed; no task id could be made",
            ));
        };
        let now = now_ms();
        let ttl = start.tool.task.ttl.unwrap_or(options.ttl);
        let poll = start
            .tool
            .task
            .poll_interval
            .unwrap_or(options.poll_interval);
        let record = TaskRecord {
            id: task_id.clone(),
            owner: start.principal.as_deref().map(str::to_owned),
            client: start.client.as_deref().map(str::to_owned),
            tool: start.name.clone(),
            state: TaskState::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: wire_millis(ttl),
            poll_interval_ms: wire_millis(poll).max(1),
            answers: InputResponses::new(),
            cancel_requested: false,
            lease: tasks.shared().then(|| Lease {
                holder: tasks.replica.clone(),
                until_ms: tasks.lease_until(),
            }),
            rerun: (tasks.shared() && start.tool.task.rerun).then(|| Rerun {
                arguments: start.args.clone(),
                meta: serde_json::to_value(&*start.meta).unwrap_or(Value::Null),
            }),
        };
        // Made now, as the record goes into the store; sent only once it
        // is there.
        let result = CreateTaskResult::new(record.task());
        // Spec: extensions/tasks#task-creation — not before the task is
        // durably created.
        if let Err(e) = options.store.create(record, options.limits).await {
            if let Some(started) = started {
                let _ = started.created.send(false);
                // The handler goes on as a plain call; it is awaited by
                // nobody, so it is stopped.
                started.running.abort();
            }
            return match e {
                StoreError::OwnerFull(_) => Outcome::error(RpcError::RateLimited(
                    ErrorObject::new(ErrorCode::RATE_LIMITED, e.to_string()),
                    poll.as_secs().max(1),
                )),
                StoreError::Full(_) => {
                    Outcome::error(RpcError::Busy(ErrorObject::internal(e.to_string())))
                }
                StoreError::Unavailable(_) => store_failed(&e),
            };
        }
        let runner = self.add_runner(&task_id);
        let id = start.id.clone();
        let deadline = Instant::now() + ttl;
        let first = started.map(|s| {
            let slot = Arc::new(StatusSlot::default());
            let cx = s.cx.in_task(Arc::clone(&slot));
            let _ = s.created.send(true);
            (s.running, cx, slot)
        });
        tokio::spawn(self.clone().drive(task_id, start, runner, first, deadline));
        self.respond_with_meta(Shape::Modern, &id, &result)
    }

    fn add_runner(&self, task_id: &str) -> Arc<Runner> {
        let runner = Arc::new(Runner::default());
        if let Ok(mut runners) = self.inner.tasks.runners.lock() {
            runners.insert(task_id.to_owned(), Arc::clone(&runner));
        }
        runner
    }

    /// A deferred task tool's call: the handler runs as a plain call until
    /// it asks to continue as a task, then the request is answered with
    /// the task and the handler goes on under its runner.
    pub(crate) async fn call_deferred(&self, d: DeferredCall) -> Outcome {
        let DeferredCall {
            start,
            round,
            input,
            cancel,
            outbound,
            kept,
            raw,
        } = d;
        let (hook, mut asked) = oneshot::channel();
        // The handler's own token: once the call is a task, only
        // `tasks/cancel` stops it, not the request going away.
        let own = CancellationToken::new();
        let cx = RequestContext::new(
            start.id.clone(),
            Arc::clone(&start.meta),
            own.clone(),
            outbound,
        )
        .with_principal(start.principal.clone())
        .with_round(input)
        .with_defer(hook);
        // Stopped with the request, as a plain call's handler is, until it
        // becomes a task.
        let mut running = AbortOnDropHandle::new(tokio::spawn((start.tool.handler)(
            start.args.clone(),
            cx.clone(),
        )));
        let (mut request_gone, mut hook_closed) = (false, false);
        let joined = loop {
            tokio::select! {
                joined = &mut running => break joined,
                created = &mut asked, if !hook_closed => {
                    hook_closed = true;
                    let Ok(created) = created else {
                        // The handler dropped its context: it is finishing.
                        continue;
                    };
                    if request_gone {
                        // Nobody is left to answer with the task: the
                        // handler goes on as the cancelled plain call.
                        let _ = created.send(false);
                        continue;
                    }
                    cx.finish();
                    let started = Started { running: running.detach(), cx, created };
                    return self.start_task(start, Some(started)).await;
                }
                () = cancel.cancelled(), if !request_gone => {
                    request_gone = true;
                    own.cancel();
                }
            }
        };
        cx.finish();
        let tool = Arc::clone(&start.tool);
        self.answer_call(
            Answer {
                tool: &tool,
                shape: Shape::Modern,
                name: &start.name,
                id: &start.id,
                round,
                kept,
                raw,
            },
            joined.unwrap_or_else(|e| Err(self.handler_stopped(e, &start.name))),
        )
    }

    /// Runs a task to its end: each round of its handler, the input it
    /// asks for, its status messages, the heartbeat of its lease on a
    /// shared store; then records how it ended and forgets the runner.
    async fn drive(
        self,
        task_id: String,
        start: TaskStart,
        runner: Arc<Runner>,
        first: Option<(JoinHandle<Handled>, RequestContext, Arc<StatusSlot>)>,
        deadline: Instant,
    ) {
        let TaskStart {
            tool,
            name,
            id,
            args,
            meta,
            principal,
            client: _,
            input,
            place,
        } = start;
        let _place = place;
        let store = Arc::clone(&self.inner.tasks.options.store);
        let mut beat = self.beats();
        let mut round = input.round.max(1);
        let mut keys = Keys::default();
        let spawn_round = |input: RoundInput, slot: &Arc<StatusSlot>| {
            let cx =
                RequestContext::new(id.clone(), Arc::clone(&meta), runner.cancel.clone(), None)
                    .with_principal(principal.clone())
                    .with_round(input)
                    .in_task(Arc::clone(slot));
            tokio::spawn((tool.handler)(args.clone(), cx))
        };
        let (mut running, slot) = match first {
            Some((running, _cx, slot)) => (running, slot),
            None => {
                let slot = Arc::new(StatusSlot::default());
                (spawn_round(input, &slot), slot)
            }
        };
        let mut cancel_seen = false;
        // The tool's own time limit bounds each round, as for a plain
        // call; the task's time to live bounds them all.
        let limit = tool.limits.timeout;
        let mut round_ends = limit.map(|l| Instant::now() + l);
        let ended = loop {
            // Until the task expires, or a cancelled handler's grace ends.
            let mut stop_at = deadline;
            let joined = loop {
                tokio::select! {
                    joined = &mut running => break Ok(joined),
                    () = slot.changed.notified() => {
                        if let Some(message) = slot.take()
                            && let Ok(Some(_)) = store.apply_change(&task_id, Change::Message(message), now_ms()).await
                        {
                            self.task_changed(&task_id);
                        }
                    }
                    () = runner.cancel.cancelled(), if !cancel_seen => {
                        cancel_seen = true;
                        stop_at = deadline.min(Instant::now() + CANCEL_GRACE);
                    }
                    _ = beat.tick() => match Box::pin(self.beat(&task_id)).await {
                        Beat::Held(record) if record.cancel_requested => runner.cancel.cancel(),
                        Beat::Lost => break Err(None),
                        Beat::Held(_) | Beat::Unknown => {}
                    },
                    () = runner.handover.cancelled() => break Err(None),
                    () = sleep_until_some(round_ends), if !cancel_seen => {
                        let text = super::middleware::timed_out_text(&name, limit.unwrap_or_default());
                        break Err(Some(completed(
                            serde_json::to_value(CallToolResult::error_text(text)),
                            self.inner.tasks.options.max_result_bytes,
                        )));
                    }
                    () = tokio::time::sleep_until(stop_at) => break Err(Some(if cancel_seen {
                        Ended::Cancelled
                    } else {
                        expired()
                    })),
                }
            };
            let joined = match joined {
                Ok(joined) => joined,
                Err(ended) => {
                    runner.cancel.cancel();
                    running.abort();
                    break ended;
                }
            };
            // The round's last status message, before what follows it (an
            // input request would otherwise be overwritten by it).
            if let Some(message) = slot.take()
                && let Ok(Some(_)) = store
                    .apply_change(&task_id, Change::Message(message), now_ms())
                    .await
            {
                self.task_changed(&task_id);
            }
            let cancelled = runner.cancel.is_cancelled();
            let output = joined.unwrap_or_else(|e| Err(self.handler_stopped(e, &name)));
            match output {
                Ok(Forwarded::Output(HandlerOutput::InputRequired(ir))) if !cancelled => {
                    if round >= MAX_TASK_ROUNDS {
                        break Some(Ended::Failed(ErrorObject::internal(format!(
                            "tool {name:?} asked for input more than {MAX_TASK_ROUNDS} times"
                        ))));
                    }
                    let wait = Waiting {
                        task_id: &task_id,
                        runner: &runner,
                        deadline,
                    };
                    // Boxed, as the other rare waits: a live task's future
                    // stays small.
                    match Box::pin(self.task_input(wait, &meta, ir, &mut keys, &mut beat)).await {
                        Ok((responses, state)) => {
                            round += 1;
                            let input = RoundInput {
                                round,
                                responses: Some(responses),
                                unsolicited: None,
                                state,
                            };
                            running = spawn_round(input, &slot);
                            round_ends = limit.map(|l| Instant::now() + l);
                        }
                        Err(ended) => break ended,
                    }
                }
                output => break Some(self.task_ended(&tool, &name, output, cancelled)),
            }
        };
        if let Some(ended) = ended {
            Box::pin(self.record_end(&task_id, ended, deadline)).await;
        }
        if let Ok(mut runners) = self.inner.tasks.runners.lock() {
            runners.remove(&task_id);
        }
    }

    /// Records how a task ended, the store being down or not: retried
    /// until the task would expire.
    ///
    /// Spec: extensions/tasks#task-status
    async fn record_end(&self, task_id: &str, ended: Ended, deadline: Instant) {
        let store = &self.inner.tasks.options.store;
        let mut pause = Duration::from_millis(100);
        loop {
            match store
                .apply_change(task_id, Change::Finish(ended.clone()), now_ms())
                .await
            {
                Ok(_) => break,
                Err(e) if Instant::now() + pause < deadline => {
                    crate::log_limit::warn_limited!(task = %task_id, "recording the task's end failed: {e}; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
                Err(e) => {
                    crate::log_limit::error_limited!(task = %task_id, "the task's end was not recorded: {e}");
                    break;
                }
            }
        }
        self.task_changed(task_id);
    }

    /// The runner's heartbeat: every third of the lease on a shared
    /// store, never otherwise.
    fn beats(&self) -> Heartbeat {
        let tasks = &self.inner.tasks;
        if !tasks.shared() {
            return Heartbeat(None);
        }
        let every = tasks.beat_every();
        let mut interval = tokio::time::interval_at(Instant::now() + every, every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Heartbeat(Some(interval))
    }

    /// Renews this replica's lease on the task.
    async fn beat(&self, task_id: &str) -> Beat {
        let tasks = &self.inner.tasks;
        let renew = Change::Heartbeat {
            holder: tasks.replica.clone(),
            until_ms: tasks.lease_until(),
        };
        match tasks.options.store.change(task_id, renew, now_ms()).await {
            Ok(Some((record, applied))) if applied.held => Beat::Held(Box::new(record)),
            Ok(_) => {
                crate::log_limit::warn_limited!(task = %task_id, "this replica lost its lease on a task it ran (paused too long?); another replica has taken it over");
                Beat::Lost
            }
            Err(e) => {
                crate::log_limit::warn_limited!(task = %task_id, "renewing a task's lease failed: {e}; the task goes on");
                Beat::Unknown
            }
        }
    }

    /// A round that asked for input: the task is `input_required` until
    /// every request is answered; the answers (under the handler's keys)
    /// and its state, or how the task ended meanwhile (`None`: handed
    /// over).
    async fn task_input(
        &self,
        wait: Waiting<'_>,
        meta: &RequestMeta,
        ir: InputRequired,
        keys: &mut Keys,
        beat: &mut Heartbeat,
    ) -> Result<(InputResponses, Value), Option<Ended>> {
        let Waiting {
            task_id,
            runner,
            deadline,
        } = wait;
        if let Some(why) = ir.error {
            crate::log_limit::error_limited!("a handler built an invalid input_required: {why}");
            return Err(Some(Ended::Failed(ErrorObject::internal(
                "the server built an invalid input request",
            ))));
        }
        let none = ClientCapabilities::default();
        let caps = meta.client_capabilities.as_ref().unwrap_or(&none);
        let requests = mrtr::admit(caps, ir.requests).map_err(|e| Some(Ended::Failed(e)))?;
        let wire = keys.issue(requests);
        let store = &self.inner.tasks.options.store;
        match store
            .apply_change(task_id, Change::InputRequired(wire), now_ms())
            .await
        {
            Ok(Some(_)) => self.task_changed(task_id),
            Ok(None) => return Err(Some(expired())),
            Err(e) => return Err(Some(Ended::Failed(ErrorObject::internal(e.to_string())))),
        }
        loop {
            // Woken by an answer (here, or from another replica), or by
            // the heartbeat, which re-reads the task in case a poke was
            // lost.
            let record = tokio::select! {
                () = runner.wake.notified() => match store.get(task_id).await {
                    Ok(Some(record)) => record,
                    _ => continue,
                },
                _ = beat.tick() => match self.beat(task_id).await {
                    Beat::Held(record) => *record,
                    Beat::Lost => return Err(None),
                    Beat::Unknown => continue,
                },
                () = runner.cancel.cancelled() => return Err(Some(Ended::Cancelled)),
                () = runner.handover.cancelled() => return Err(None),
                () = tokio::time::sleep_until(deadline) => return Err(Some(expired())),
            };
            if record.cancel_requested {
                return Err(Some(Ended::Cancelled));
            }
            if matches!(record.state, TaskState::InputRequired { .. }) {
                // Partial answers: the rest are still outstanding.
                continue;
            }
            let Ok(Some(applied)) = store
                .apply_change(task_id, Change::TakeAnswers, now_ms())
                .await
            else {
                continue;
            };
            return Ok((keys.answers(applied.taken), ir.state.unwrap_or(Value::Null)));
        }
    }

    /// How a handler's last round ends its task. After `tasks/cancel`,
    /// anything but a successful result is `cancelled`.
    fn task_ended(&self, tool: &ToolInner, name: &str, output: Handled, cancelled: bool) -> Ended {
        let max = self.inner.tasks.options.max_result_bytes;
        match output {
            Ok(Forwarded::Output(HandlerOutput::Complete(result))) => {
                match checked_result(tool, name, result) {
                    Ok(result) if cancelled && result.is_error == Some(true) => Ended::Cancelled,
                    Ok(result) => completed(serde_json::to_value(result), max),
                    Err(_) if cancelled => Ended::Cancelled,
                    Err(e) => Ended::Failed(e),
                }
            }
            Ok(Forwarded::Json(json)) => completed(serde_json::from_str(json.get()), max),
            Ok(Forwarded::Output(HandlerOutput::InputRequired(_))) => Ended::Cancelled,
            Ok(Forwarded::Task { .. }) => Ended::Failed(ErrorObject::internal(format!(
                "tool {name:?} forwarded a task from inside a task"
            ))),
            Err(_) if cancelled => Ended::Cancelled,
            // Spec: extensions/tasks#task-execution-errors — a tool error
            // is `completed` with `isError`; `failed` is for JSON-RPC errors.
            Err(HandlerError::Failed(text)) => {
                completed(serde_json::to_value(CallToolResult::error_text(text)), max)
            }
            Err(e) => Ended::Failed(e.into_error_object()),
        }
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel`, for a request that
    /// declared the extension (`Server::step` checked).
    ///
    /// The record read from the store is taken apart by
    /// [`task_change`](Self::task_change), not held here: a value kept
    /// across the store's next wait would size the future of every request.
    pub(crate) async fn task_method(&self, mut p: Prepared) -> Outcome {
        let Some(task_id) = p.params.task_id.take() else {
            return Outcome::error(ErrorObject::invalid_params(format!(
                "{} needs params.taskId",
                p.method
            )));
        };
        if let Some(sealed) = task_id.strip_prefix(forward::FORWARDED_PREFIX) {
            // Boxed: rare, and its state would size every request's future.
            return Box::pin(self.forwarded_task_method(p, &task_id, sealed)).await;
        }
        self.watch_tasks();
        let store = &self.inner.tasks.options.store;
        let found = match store.get(&task_id).await {
            Ok(found) => found,
            Err(e) => return store_failed(&e),
        };
        let change = match self.task_change(&mut p, found) {
            Ok(change) => change,
            Err(outcome) => return outcome,
        };
        let cancel = matches!(change, Change::RequestCancel);
        match store.apply_change(&task_id, change, now_ms()).await {
            Ok(Some(applied)) if !cancel && applied.changed => {
                if applied.all_answered
                    && let Some(runner) = self.inner.tasks.runner(&task_id)
                {
                    runner.wake.notify_one();
                }
                // The runner may be on another replica.
                self.task_changed(&task_id);
            }
            Ok(_) if cancel => match self.inner.tasks.runner(&task_id) {
                Some(runner) => runner.cancel.cancel(),
                // The runner is on another replica.
                None => self.task_changed(&task_id),
            },
            Ok(_) => {}
            Err(e) => return store_failed(&e),
        }
        self.ack(&p.id)
    }

    /// What a task method does with the task's record: the answer at once
    /// (`tasks/get`, a refusal, an ack with nothing to change), or the
    /// change to apply before the ack.
    fn task_change(&self, p: &mut Prepared, found: Option<TaskRecord>) -> Result<Change, Outcome> {
        let record = match found {
            // Spec: extensions/tasks#security-considerations — another
            // principal's task reads exactly like an unknown one.
            Some(record)
                if record.owner.as_deref() == p.principal().map(|s| &**s)
                    && record.client.as_deref() == p.client_id().map(|c| &**c) =>
            {
                record
            }
            _ => return Err(not_found()),
        };
        match p.method {
            Method::TasksGet => {
                let result = GetTaskResult::new(record.into_detailed());
                Err(self.respond_with_meta(Shape::Modern, &p.id, &result))
            }
            Method::TasksUpdate => {
                let Some(Value::Object(responses)) = p.params.input_responses.take().map(|b| *b)
                else {
                    return Err(Outcome::error(ErrorObject::invalid_params(
                        "tasks/update needs params.inputResponses, an object keyed like the task's inputRequests",
                    )));
                };
                if matches!(record.state, TaskState::InputRequired { .. }) {
                    Ok(Change::Answer(responses))
                } else {
                    Err(self.ack(&p.id))
                }
            }
            // Spec: extensions/tasks#task-cancellation — cooperative: the
            // ack at once, whatever the task then does; a terminal task
            // gets the same ack.
            Method::TasksCancel if record.is_terminal() => Err(self.ack(&p.id)),
            Method::TasksCancel => Ok(Change::RequestCancel),
            _ => Err(Outcome::error(ErrorObject::method_not_found(
                p.method.as_str(),
            ))),
        }
    }

    fn ack(&self, id: &RequestId) -> Outcome {
        let ack = TaskAck {
            result_type: ResultType::Complete,
            meta: None,
        };
        self.respond_with_meta(Shape::Modern, id, &ack)
    }
}

/// Sleeps until `at`, or forever without one.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A runner's heartbeat timer; never fires on a store of one replica.
struct Heartbeat(Option<tokio::time::Interval>);

impl Heartbeat {
    async fn tick(&mut self) -> Instant {
        match &mut self.0 {
            Some(interval) => interval.tick().await,
            None => std::future::pending().await,
        }
    }
}

/// The task a runner waits on for input.
#[derive(Clone, Copy)]
struct Waiting<'a> {
    task_id: &'a str,
    runner: &'a Runner,
    deadline: Instant,
}

/// A result as a completed task keeps it: the object without
/// `resultType`, within the store's size limit.
fn completed(result: serde_json::Result<Value>, max: usize) -> Ended {
    let mut object: JsonObject = match result {
        Ok(Value::Object(object)) => object,
        Ok(_) | Err(_) => {
            return Ended::Failed(ErrorObject::internal("the tool's result is not an object"));
        }
    };
    object.remove("resultType");
    // Measured without writing it out.
    let mut size = ByteCount(0);
    let size = match serde_json::to_writer(&mut size, &object) {
        Ok(()) => size.0,
        Err(_) => usize::MAX,
    };
    if size > max {
        return Ended::Failed(ErrorObject::internal(format!(
            "the tool's result is {size} bytes, over the {max} bytes a task may store"
        )));
    }
    Ended::Completed(object)
}

/// Counts the bytes written to it.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Server {
    /// The error of a tool's handler task that ended without an outcome:
    /// it panicked (see [`super::panics::panicked`]) or was stopped.
    fn handler_stopped(&self, e: JoinError, tool: &str) -> HandlerError {
        match e.try_into_panic() {
            Ok(payload) => {
                super::panics::panicked(tool, &*payload, self.inner.config.exposed_panic_messages)
            }
            Err(_) => {
                HandlerError::Protocol(ErrorObject::internal("the tool's handler was stopped"))
            }
        }
    }
}

/// The input request keys of one task: each handler key gets a task key
/// never used before in the task, so that a key answered once is never
/// asked again.
///
/// Spec: extensions/tasks#task-update-requests — keys are unique over the
/// task's lifetime.
#[derive(Debug, Default)]
struct Keys {
    used: HashSet<String>,
    /// This round's task keys, to the handler's keys.
    current: HashMap<String, String>,
}

impl Keys {
    fn issue(&mut self, requests: InputRequests) -> InputRequests {
        self.current.clear();
        let mut wire = InputRequests::new();
        for (key, request) in requests {
            let mut task_key = key.clone();
            let mut n = 2u32;
            while self.used.contains(&task_key) {
                task_key = format!("{key}.{n}");
                n += 1;
            }
            self.used.insert(task_key.clone());
            self.current.insert(task_key.clone(), key);
            wire.insert(task_key, request);
        }
        wire
    }

    /// Answers under task keys, under the handler's keys.
    fn answers(&self, taken: InputResponses) -> InputResponses {
        let mut answers = Map::new();
        for (task_key, answer) in taken {
            if let Some(key) = self.current.get(&task_key) {
                answers.insert(key.clone(), answer);
            }
        }
        answers
    }
}

#[cfg(test)]
mod tests {
    use super::Keys;
    use toolwire_proto::types::{InputRequest, InputRequests};

    fn roots() -> InputRequest {
        serde_json::from_value(serde_json::json!({"method": "roots/list", "params": {}}))
            .expect("request")
    }

    #[test]
    fn a_key_is_never_issued_twice_in_a_task() {
        let mut keys = Keys::default();
        let first: InputRequests = [("confirm".to_owned(), roots())].into();
        assert_eq!(keys.issue(first).keys().collect::<Vec<_>>(), ["confirm"]);
        let again: InputRequests = [
            ("confirm".to_owned(), roots()),
            ("confirm.2".to_owned(), roots()),
        ]
        .into();
        let issued: Vec<String> = keys.issue(again).into_keys().collect();
        assert_eq!(issued.len(), 2);
        assert!(!issued.contains(&"confirm".to_owned()), "{issued:?}");
        let answers: serde_json::Map<_, _> = issued
            .iter()
            .map(|k| (k.clone(), serde_json::json!({})))
            .collect();
        let mut back: Vec<String> = keys.answers(answers).into_iter().map(|(k, _)| k).collect();
        back.sort();
        assert_eq!(back, ["confirm", "confirm.2"]);
    }
}
