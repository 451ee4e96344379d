//! The context a handler receives: cancellation, progress, logging, what
//! the client said about itself on this request, and (on a retried MRTR
//! request) the client's answers and the handler's unsealed state.

use crate::handler::HandlerError;
use crate::mrtr::{self, RoundInput};
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::Notify;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::mpsc::error::SendError;
use tokio_util::sync::CancellationToken;
use toolwire_proto::types::{
    ClientCapabilities, Implementation, InputRequest, InputResponses, LoggingLevel,
    LoggingMessageNotification, NotificationMethod, ProgressNotification, ProgressToken,
    RequestMeta,
};
use toolwire_proto::{ErrorObject, RequestId, encode_notification};

/// Where a request's notifications go: the stdio writer, or the HTTP
/// response stream of this request. Each item is one encoded JSON-RPC message.
///
/// On stdio the queue is counted in bytes ([`OutputGauge`]), so that the
/// reader can stop taking requests while the client does not read.
#[derive(Debug, Clone)]
pub(crate) struct Outbound {
    tx: UnboundedSender<Bytes>,
    gauge: Option<Arc<OutputGauge>>,
}

impl From<UnboundedSender<Bytes>> for Outbound {
    fn from(tx: UnboundedSender<Bytes>) -> Self {
        Self { tx, gauge: None }
    }
}

impl Outbound {
    /// A sender whose queued bytes `gauge` counts.
    pub(crate) fn gauged(tx: UnboundedSender<Bytes>, gauge: Arc<OutputGauge>) -> Self {
        Self {
            tx,
            gauge: Some(gauge),
        }
    }

    /// Queues one message; gives it back if the receiver is gone.
    pub(crate) fn send(&self, msg: Bytes) -> Result<(), SendError<Bytes>> {
        let Some(gauge) = &self.gauge else {
            return self.tx.send(msg);
        };
        // Counted before it is queued, so the writer never takes away
        // more than was added.
        let len = msg.len();
        gauge.bytes.fetch_add(len, Ordering::AcqRel);
        self.tx.send(msg).inspect_err(|_| {
            gauge.taken(len);
        })
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Resolves once the receiver is gone.
    pub(crate) async fn closed(&self) {
        self.tx.closed().await;
    }
}

/// The bytes queued for one writer and not yet taken by it.
#[derive(Debug, Default)]
pub(crate) struct OutputGauge {
    bytes: AtomicUsize,
    drained: Notify,
}

impl OutputGauge {
    /// Bytes queued.
    pub(crate) fn queued(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// The writer took `len` bytes; returns how many were queued before.
    pub(crate) fn taken(&self, len: usize) -> usize {
        self.bytes.fetch_sub(len, Ordering::AcqRel)
    }

    /// Wakes a waiter of [`drained`](Self::drained) (or the next one).
    pub(crate) fn wake(&self) {
        self.drained.notify_one();
    }

    /// Resolves after the writer's next [`wake`](Self::wake).
    pub(crate) async fn drained(&self) {
        self.drained.notified().await;
    }
}

/// Per-request context handed to handlers (tools, prompts, resource reads).
///
/// Cloning is cheap; clones share the same request.
///
/// # Example
///
/// A long tool that reports progress, logs, and stops when the call is
/// cancelled (the client went away, or sent `notifications/cancelled`):
///
/// ```
/// use std::time::Duration;
/// use toolwire::proto::types::LoggingLevel;
/// use toolwire::{RequestContext, Tool, ToolError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Crawl {
///     pages: u32,
/// }
///
/// async fn crawl(input: Crawl, cx: RequestContext) -> Result<String, ToolError> {
///     for page in 1..=input.pages {
///         tokio::select! {
///             () = cx.cancelled() => return Err(ToolError::failed("cancelled")),
///             () = tokio::time::sleep(Duration::from_millis(100)) => {}
///         }
///         // Sent only when the request carried a `progressToken`.
///         cx.report_progress(f64::from(page), Some(f64::from(input.pages)), None);
///         // Sent only when `_meta` asked for this level or a lower one.
///         cx.log(LoggingLevel::Debug, Some("crawl"), serde_json::json!({ "page": page }));
///     }
///     let client = cx.client_info().map_or("an unnamed client", |info| info.name.as_str());
///     Ok(format!("crawled {} pages for {client}", input.pages))
/// }
///
/// let tool = Tool::builder("crawl").input::<Crawl>().handler(crawl).unwrap();
/// # drop(tool);
/// ```
#[derive(Clone, Debug)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    id: RequestId,
    meta: Arc<RequestMeta>,
    cancel: CancellationToken,
    outbound: Option<Outbound>,
    last_progress: Mutex<Option<f64>>,
    /// Set once the response is on its way: no more notifications.
    finished: AtomicBool,
    principal: OnceLock<Arc<str>>,
    caller: OnceLock<CallerToken>,
    round: OnceLock<RoundInput>,
    /// Set while the handler runs inside a task: its progress becomes the
    /// task's status message.
    task: OnceLock<Arc<StatusSlot>>,
    /// Set for a deferred task tool whose request may become a task
    /// ([`RequestContext::continue_as_task`]).
    defer: Mutex<Option<DeferHook>>,
}

/// Asks the server to turn the request into a task; the server answers
/// on the inner sender once the task exists (or could not be created).
pub(crate) type DeferHook = tokio::sync::oneshot::Sender<tokio::sync::oneshot::Sender<bool>>;

/// The latest status message of a running task, taken by its runner.
#[derive(Debug, Default)]
pub(crate) struct StatusSlot {
    latest: Mutex<Option<String>>,
    pub(crate) changed: Notify,
}

impl StatusSlot {
    fn report(&self, message: String) {
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some(message);
        }
        self.changed.notify_one();
    }

    /// The message reported since the last take, if any.
    pub(crate) fn take(&self) -> Option<String> {
        self.latest.lock().ok().and_then(|mut l| l.take())
    }
}

static EMPTY_CAPS: std::sync::OnceLock<ClientCapabilities> = std::sync::OnceLock::new();

impl RequestContext {
    pub(crate) fn new(
        id: RequestId,
        meta: Arc<RequestMeta>,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id,
                meta,
                cancel,
                outbound,
                last_progress: Mutex::new(None),
                finished: AtomicBool::new(false),
                principal: OnceLock::new(),
                caller: OnceLock::new(),
                round: OnceLock::new(),
                task: OnceLock::new(),
                defer: Mutex::new(None),
            }),
        }
    }

    /// Attaches the authenticated principal, if the transport knows one.
    pub(crate) fn with_principal(self, principal: Option<Arc<str>>) -> Self {
        if let Some(p) = principal {
            let _ = self.inner.principal.set(p);
        }
        self
    }

    /// Attaches the caller's access token, when the server lets handlers
    /// see it.
    pub(crate) fn with_caller_token(self, caller: Option<CallerToken>) -> Self {
        if let Some(c) = caller {
            let _ = self.inner.caller.set(c);
        }
        self
    }

    /// Attaches what an MRTR retry brought. A first attempt brings
    /// nothing, which is what an empty slot reads as: it is left empty,
    /// sparing every plain call the slot's initialisation.
    pub(crate) fn with_round(self, input: RoundInput) -> Self {
        if !input.is_first() {
            let _ = self.inner.round.set(input);
        }
        self
    }

    /// Runs the handler inside a task: progress reports go to `slot`.
    pub(crate) fn in_task(self, slot: Arc<StatusSlot>) -> Self {
        let _ = self.inner.task.set(slot);
        self
    }

    /// Lets the handler turn the request into a task.
    pub(crate) fn with_defer(self, hook: DeferHook) -> Self {
        if let Ok(mut defer) = self.inner.defer.lock() {
            *defer = Some(hook);
        }
        self
    }

    /// Whether the handler runs inside a task (the Tasks extension): the
    /// client polls for the result, progress reports become the task's
    /// status message, and only `tasks/cancel` cancels it.
    pub fn is_task(&self) -> bool {
        self.inner.task.get().is_some()
    }

    /// For a tool built with [`ToolBuilder::defer_task`](crate::ToolBuilder::defer_task):
    /// turns this call into a task, now. The server answers the request
    /// with the task handle and the handler goes on in the background;
    /// `true` once the task exists, and at once when the handler already
    /// runs in one. `false` when the call cannot become a task (the request
    /// did not declare the extension, the tool is not deferred, or the
    /// request was cancelled): the handler goes on as a plain call. When
    /// the task cannot be stored (a bound, the store down), the request is
    /// answered with that error and the handler is stopped.
    ///
    /// Spec: extensions/tasks#task-creation — resolve MRTR rounds
    /// synchronously first, then create the task.
    pub async fn continue_as_task(&self) -> bool {
        if self.is_task() {
            return true;
        }
        let hook = self.inner.defer.lock().ok().and_then(|mut d| d.take());
        let Some(hook) = hook else {
            return false;
        };
        let (done, created) = tokio::sync::oneshot::channel();
        if hook.send(done).is_err() {
            return false;
        }
        created.await.unwrap_or(false)
    }

    /// Marks the request answered: progress and log notifications stop.
    ///
    /// Spec: basic/patterns/progress.mdx#implementation-notes — progress
    /// notifications MUST stop after completion.
    pub(crate) fn finish(&self) {
        self.inner.finished.store(true, Ordering::Release);
    }

    fn live(&self) -> bool {
        !self.is_cancelled() && !self.inner.finished.load(Ordering::Acquire)
    }

    /// The authenticated principal the transport attached, if any. With
    /// the HTTP transport's OAuth resource server (feature `auth`), it is
    /// the token's issuer and subject, separated by one space
    /// (`"https://auth.example.com user-42"`); `None` without it.
    pub fn principal(&self) -> Option<&str> {
        self.inner.principal.get().map(|p| &**p)
    }

    /// The access token the caller presented, and the audiences it names:
    /// only on a server whose resource server was built with
    /// [`AuthConfig::with_caller_tokens`](crate::AuthConfig::with_caller_tokens),
    /// for a handler that forwards it on purpose (a gateway's passthrough
    /// to an upstream the token is also for). `None` otherwise.
    pub fn caller_token(&self) -> Option<&CallerToken> {
        self.inner.caller.get()
    }

    /// Which attempt at this request this is: 1 for a first call, 2 for the
    /// retry that answers the first `input_required`, and so on. The round
    /// travels in the sealed `requestState`; a retry without one counts as 1.
    pub fn input_round(&self) -> u32 {
        self.inner.round.get().map_or(1, |r| r.round)
    }

    /// The answers of a retried request: the members of `inputResponses`
    /// that answer an input request the previous round sent, as its
    /// verified `requestState` records. Members under other keys, and every
    /// member of a request without `requestState`, are left out (see
    /// [`unsolicited_input`](Self::unsolicited_input)).
    ///
    /// Spec: basic/patterns/mrtr.mdx#error-handling
    pub fn input_responses(&self) -> Option<&InputResponses> {
        self.inner.round.get().and_then(|r| r.responses.as_ref())
    }

    /// The client's answer to the input request under `key`, deserialised as
    /// `T`: [`ElicitAnswer<F>`](crate::ElicitAnswer) for an elicitation,
    /// `CreateMessageResult` for sampling, `ListRootsResult` for roots.
    ///
    /// Only an answer to a request the previous round sent counts: the
    /// retry must echo that round's `requestState`, which records the keys
    /// asked and binds them to this tool (prompt, resource), these
    /// arguments and this principal, until it expires.
    ///
    /// `Ok(None)` when there is no such answer under `key` (a first call, a
    /// retry that missed the key, or answers sent without `requestState`):
    /// ask again by returning [`InputRequired`](crate::InputRequired). Keys
    /// the handler does not read are ignored.
    ///
    /// # Errors
    ///
    /// `-32602` when the answer is present but malformed, for example a
    /// number where an elicitation result belongs.
    ///
    /// Spec: basic/patterns/mrtr.mdx#error-handling
    pub fn input<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, HandlerError> {
        read_answer(self.input_responses(), key)
    }

    /// An answer under `key` that no verified `requestState` asked for: a
    /// member of `inputResponses` sent without `requestState`, or under a
    /// key the previous round did not ask. Deserialised as in
    /// [`input`](Self::input).
    ///
    /// Nothing vouches for it: it is not bound to this request, its
    /// arguments or its principal, and it never expires. Read it only where
    /// a forged answer can do no harm (a greeting, not a confirmation), for
    /// a server that accepts answers to questions it has not sent.
    ///
    /// # Errors
    ///
    /// `-32602` when the answer is present but malformed.
    pub fn unsolicited_input<T: DeserializeOwned>(
        &self,
        key: &str,
    ) -> Result<Option<T>, HandlerError> {
        let unsolicited = self.inner.round.get().and_then(|r| r.unsolicited.as_ref());
        read_answer(unsolicited, key)
    }

    /// The state the handler attached to its last
    /// [`InputRequired`](crate::InputRequired), unsealed and verified.
    /// `Ok(None)` on a first call or when it attached none.
    ///
    /// # Errors
    ///
    /// `-32602` when the state does not deserialise as `S` (for example
    /// after a deployment changed its type).
    pub fn state<S: DeserializeOwned>(&self) -> Result<Option<S>, HandlerError> {
        let state = self.inner.round.get().map_or(&Value::Null, |r| &r.state);
        if state.is_null() {
            return Ok(None);
        }
        S::deserialize(state).map(Some).map_err(|e| {
            HandlerError::Protocol(ErrorObject::invalid_params(format!(
                "requestState does not hold the state this request expects: {e}"
            )))
        })
    }

    /// Whether the client declared the capability `request` needs, so an
    /// [`InputRequired`](crate::InputRequired) carrying it would be sent.
    pub fn supports_input(&self, request: &InputRequest) -> bool {
        mrtr::supports(self.client_capabilities(), request)
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The request's `_meta`, including keys toolwire does not interpret.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The capabilities the client declared on this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        self.inner
            .meta
            .client_capabilities
            .as_ref()
            .unwrap_or_else(|| EMPTY_CAPS.get_or_init(ClientCapabilities::default))
    }

    /// The client's self-reported identity, if it sent one.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.meta.client_info.as_ref()
    }

    /// Fires when the client cancels the request or goes away.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the request is cancelled. Cheap to race against other
    /// work (`select!`): polled again with the same waker, it reads a flag.
    pub async fn cancelled(&self) {
        crate::watch::fired(&self.inner.cancel).await;
    }

    /// Whether progress reports reach the client: only when it sent a
    /// `progressToken` and the transport can carry notifications.
    pub fn progress_enabled(&self) -> bool {
        self.is_task()
            || (self.inner.outbound.is_some() && self.inner.meta.progress_token.is_some())
    }

    /// Reports progress. A no-op without a `progressToken`, after
    /// cancellation, or when `progress` would go backwards.
    ///
    /// Spec: basic/patterns/progress.mdx — progress MUST increase.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(slot) = self.inner.task.get() {
            // Spec: extensions/tasks#task-status-notifications — a task
            // sends no progress notifications; its status message says it.
            if !self.is_cancelled() && progress.is_finite() && self.advances(progress) {
                slot.report(status_text(progress, total, message));
            }
            return;
        }
        let (Some(out), Some(token)) = (&self.inner.outbound, &self.inner.meta.progress_token)
        else {
            return;
        };
        if !self.live() || !progress.is_finite() || !self.advances(progress) {
            return;
        }
        let params = progress_params(token, progress, total, message);
        let msg = encode_notification(ProgressNotification::METHOD, Some(&params));
        let _ = out.send(Bytes::from(msg));
    }

    /// Whether `progress` is past the last one reported (recording it).
    fn advances(&self, progress: f64) -> bool {
        let Ok(mut last) = self.inner.last_progress.lock() else {
            return false;
        };
        if last.is_some_and(|l| progress <= l) {
            return false;
        }
        *last = Some(progress);
        true
    }

    /// The level the client opted into, if any.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.inner.meta.log_level
    }

    /// Whether a message at `level` would be sent.
    ///
    /// Spec: server/utilities/logging.mdx — without a `logLevel` in `_meta`,
    /// the server MUST NOT send log notifications for the request.
    pub fn log_enabled(&self, level: LoggingLevel) -> bool {
        self.inner.outbound.is_some() && self.log_level().is_some_and(|min| level >= min)
    }

    /// Sends a `notifications/message` if `level` is at or above the client's level.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        if !self.log_enabled(level) || !self.live() {
            return;
        }
        let Some(out) = &self.inner.outbound else {
            return;
        };
        let mut params = json!({ "level": level, "data": data.into() });
        if let (Some(logger), Some(obj)) = (logger, params.as_object_mut()) {
            obj.insert("logger".into(), Value::String(logger.into()));
        }
        let msg = encode_notification(LoggingMessageNotification::METHOD, Some(&params));
        let _ = out.send(Bytes::from(msg));
    }
}

/// The answer under `key` in `answers`, deserialised as `T`.
fn read_answer<T: DeserializeOwned>(
    answers: Option<&InputResponses>,
    key: &str,
) -> Result<Option<T>, HandlerError> {
    let Some(value) = answers.and_then(|r| r.get(key)) else {
        return Ok(None);
    };
    T::deserialize(value).map(Some).map_err(|e| {
        HandlerError::Protocol(ErrorObject::invalid_params(format!(
            "inputResponses.{key} is not a valid answer: {e}"
        )))
    })
}

/// A progress report as a task's status message: the handler's message,
/// else how far it is.
fn status_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    match (message, total) {
        (Some(message), _) => message.to_owned(),
        (None, Some(total)) => format!("{progress} of {total}"),
        (None, None) => format!("progress {progress}"),
    }
}

fn progress_params(
    token: &ProgressToken,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Value {
    let mut params = json!({ "progressToken": token, "progress": progress });
    if let Some(obj) = params.as_object_mut() {
        if let Some(total) = total {
            obj.insert("total".into(), json!(total));
        }
        if let Some(message) = message {
            obj.insert("message".into(), Value::String(message.into()));
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrtr::ElicitAnswer;
    use tokio::sync::mpsc;

    fn context(meta: Value) -> (RequestContext, mpsc::UnboundedReceiver<Bytes>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let meta: RequestMeta = serde_json::from_value(meta).expect("meta");
        let cx = RequestContext::new(
            RequestId::from(1),
            Arc::new(meta),
            CancellationToken::new(),
            Some(tx.into()),
        );
        (cx, rx)
    }

    fn sent(rx: &mut mpsc::UnboundedReceiver<Bytes>) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(b) = rx.try_recv() {
            out.push(serde_json::from_slice(&b).expect("json"));
        }
        out
    }

    #[test]
    fn progress_carries_the_token_only_increases_and_stops_when_finished() {
        let (cx, mut rx) = context(json!({"progressToken": "t"}));
        cx.report_progress(1.0, Some(3.0), None);
        cx.report_progress(1.0, None, None);
        cx.report_progress(0.5, None, None);
        cx.report_progress(2.0, None, Some("two"));
        cx.finish();
        cx.report_progress(3.0, None, None);
        let got = sent(&mut rx);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got.iter().all(|m| m["params"]["progressToken"] == "t"));
        assert_eq!(got[1]["params"]["progress"], 2.0);
        assert_eq!(got[1]["params"]["message"], "two");
    }

    #[test]
    fn logs_need_a_level_and_respect_it() {
        let (cx, mut rx) = context(json!({}));
        cx.log(LoggingLevel::Emergency, None, "x");
        assert!(sent(&mut rx).is_empty());
        let (cx, mut rx) = context(json!({"io.modelcontextprotocol/logLevel": "warning"}));
        cx.log(LoggingLevel::Info, None, "quiet");
        cx.log(LoggingLevel::Error, Some("db"), "loud");
        let got = sent(&mut rx);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0]["params"]["logger"], "db");
        cx.cancellation().cancel();
        cx.log(LoggingLevel::Error, None, "after cancel");
        assert!(sent(&mut rx).is_empty());
    }

    #[test]
    fn a_first_round_leaves_the_slot_empty_and_anything_more_is_kept() {
        let (cx, _rx) = context(json!({}));
        let cx = cx.with_round(RoundInput {
            round: 1,
            ..RoundInput::default()
        });
        assert!(cx.inner.round.get().is_none());
        assert_eq!(cx.input_round(), 1);
        // A rerun's default input (round 0) reads as a first attempt too.
        let (cx, _rx) = context(json!({}));
        let cx = cx.with_round(RoundInput::default());
        assert_eq!(cx.input_round(), 1);
        // Round 1 with answers nothing vouches for still brings them.
        let (cx, _rx) = context(json!({}));
        let cx = cx.with_round(RoundInput {
            round: 1,
            unsolicited: Some(
                serde_json::from_value(json!({"extra": {"action": "cancel"}})).expect("map"),
            ),
            ..RoundInput::default()
        });
        assert_eq!(
            cx.unsolicited_input::<ElicitAnswer>("extra")
                .expect("valid"),
            Some(ElicitAnswer::Cancel)
        );
        let (cx, _rx) = context(json!({}));
        let cx = cx.with_round(RoundInput {
            round: 1,
            state: json!({"n": 1}),
            ..RoundInput::default()
        });
        assert_eq!(cx.state::<Value>().expect("ok"), Some(json!({"n": 1})));
    }

    #[test]
    fn inputs_and_state_read_typed_from_the_round() {
        let (cx, _rx) = context(json!({}));
        assert_eq!(cx.input_round(), 1);
        assert!(cx.input::<Value>("k").expect("ok").is_none());
        assert!(cx.state::<u32>().expect("ok").is_none());
        let responses: InputResponses = serde_json::from_value(json!({
            "ok": {"action": "decline"},
            "bad": 12345
        }))
        .expect("map");
        let cx = cx.with_round(RoundInput {
            round: 3,
            responses: Some(responses),
            unsolicited: Some(
                serde_json::from_value(json!({"extra": {"action": "cancel"}})).expect("map"),
            ),
            state: json!({"n": 7}),
        });
        assert!(cx.input::<ElicitAnswer>("extra").expect("ok").is_none());
        assert_eq!(
            cx.unsolicited_input::<ElicitAnswer>("extra")
                .expect("valid"),
            Some(ElicitAnswer::Cancel)
        );
        assert!(
            cx.unsolicited_input::<ElicitAnswer>("ok")
                .expect("ok")
                .is_none()
        );
        assert_eq!(cx.input_round(), 3);
        assert_eq!(
            cx.input::<ElicitAnswer>("ok").expect("valid"),
            Some(ElicitAnswer::Decline)
        );
        assert!(cx.input::<ElicitAnswer>("missing").expect("ok").is_none());
        let err = cx.input::<ElicitAnswer>("bad").expect_err("malformed");
        assert!(
            matches!(&err, HandlerError::Protocol(e) if e.code.0 == -32602),
            "{err}"
        );
        #[derive(serde::Deserialize, PartialEq, Debug)]
        struct S {
            n: u32,
        }
        assert_eq!(cx.state::<S>().expect("typed"), Some(S { n: 7 }));
        assert!(cx.state::<String>().is_err());
    }
}

/// A caller's access token as a handler may see it
/// ([`RequestContext::caller_token`]): never shown by `Debug`.
#[derive(Clone)]
pub struct CallerToken {
    token: Arc<str>,
    audiences: Arc<[String]>,
}

impl CallerToken {
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) fn new(token: &str, audiences: Vec<String>) -> Self {
        Self {
            token: token.into(),
            audiences: audiences.into(),
        }
    }

    /// The token, as the caller sent it.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The audiences it names (`aud`).
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// Whether `audience` is one of them (compared exactly).
    pub fn is_for(&self, audience: &str) -> bool {
        self.audiences.iter().any(|a| a == audience)
    }
}

impl std::fmt::Debug for CallerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerToken")
            .field("token", &"<redacted>")
            .field("audiences", &self.audiences)
            .finish()
    }
}

#[cfg(test)]
mod caller_token_tests {
    use super::CallerToken;

    #[test]
    fn debug_never_shows_the_token() {
        let t = CallerToken::new("s3kret.token", vec!["https://up.example/mcp".into()]);
        let shown = format!("{t:?}");
        assert!(!shown.contains("s3kret"), "{shown}");
        assert!(shown.contains("https://up.example/mcp"), "{shown}");
        assert!(t.is_for("https://up.example/mcp") && !t.is_for("https://up.example"));
    }
}
