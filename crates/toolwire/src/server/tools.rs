//! `tools/list` and `tools/call`.

use super::accept::{Prepared, RawParams};
use super::outcome::{Outcome, RpcError};
use super::rounds::Mrtr;
use super::shape::Shape;
use super::tasks::{DeferredCall, TaskStart};
use super::{Server, paging};
use crate::context::{Outbound, RequestContext};
use crate::handler::BoxFuture;
use crate::handler::{HandlerError, HandlerOutput, missing_capabilities_error};
use crate::mrtr::RoundInput;
use crate::server::middleware;
use crate::tool::{Forwarded, Tool, ToolInner};
use futures_util::FutureExt;
use futures_util::future::CatchUnwind;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::SERVER_INFO_KEY;
use toolwire_proto::types::{
    CallToolRequest, CallToolResult, ContentBlock, ListToolsResult, ResultType,
};
use toolwire_proto::{ErrorObject, RequestId};

impl Server {
    pub(crate) fn list_tools(&self, p: &Prepared) -> Outcome {
        let snapshot = self.inner.tools.snapshot();
        let cursor = p.params.cursor.as_deref();
        let build = |items: &[Tool], next_cursor, cache_scope, meta| ListToolsResult {
            result_type: ResultType::Complete,
            tools: items.iter().map(|t| t.definition().clone()).collect(),
            next_cursor,
            ttl_ms: self.ttl_ms(),
            cache_scope,
            meta: Some(meta),
        };
        paging::list_page(self, p, &snapshot, cursor, build)
    }

    /// `tools/call`: the checks, then the handler's future, or an answer
    /// at once.
    ///
    /// Not an `async fn`: the checks run here, before anything is awaited,
    /// and what waits is [`Calling`], which holds only what the answer
    /// needs. As an `async fn`, every local of the checks kept a place in
    /// the future (a moved-from local keeps its storage until its scope
    /// ends), and the future of every request, with each level of the
    /// pipeline around it, was some 650 bytes larger.
    pub(crate) fn call_tool(
        &self,
        mut p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> CallTool<'_> {
        let id = p.id.clone();
        let shape = p.era.shape();
        let Some(name) = p.params.name.take() else {
            return CallTool::done(Outcome::error(ErrorObject::invalid_params(
                "tools/call needs params.name",
            )));
        };
        let Some(handle) = self.inner.tools.snapshot().get(&name).cloned() else {
            return CallTool::done(Outcome::error(match self.unknown_tool_reason(&name) {
                Some(reason) => {
                    ErrorObject::invalid_params(format!("unknown tool: {name} ({reason})"))
                        .with_data(json!({ "name": name, "reason": reason }))
                }
                None => ErrorObject::invalid_params(format!("unknown tool: {name}"))
                    .with_data(json!({ "name": name })),
            }));
        };
        let tool = &handle.inner;
        if !tool.required_capabilities.is_empty() {
            let declared = p
                .meta
                .client_capabilities
                .as_ref()
                .and_then(|c| serde_json::to_value(c).ok())
                .unwrap_or(Value::Null);
            let missing: Vec<&String> = tool
                .required_capabilities
                .iter()
                .filter(|c| declared.get(c.as_str()).is_none())
                .collect();
            if !missing.is_empty() {
                return CallTool::done(Outcome::error(missing_capabilities_error(&missing)));
            }
        }
        // Spec: extensions/tasks#capability-negotiation — the server decides
        // per request: a task when the request declared the extension and
        // the tool supports one.
        let as_task = match self.task_wanted(&p, tool, &name) {
            Ok(wanted) => wanted,
            Err(outcome) => return CallTool::done(outcome),
        };
        // Spec: server/tools.mdx — a missing `arguments` means no arguments.
        let args = p
            .params
            .arguments
            .take()
            .unwrap_or_else(|| Value::Object(Map::new()));
        // A retry's state is checked before anything runs: a state that
        // fails verification is an error, whatever the arguments.
        let (round, input) = match self.begin_round::<CallToolRequest>(&mut p, &name, &args) {
            Ok(r) => r,
            Err(outcome) => return CallTool::done(outcome),
        };
        // The handler takes the arguments; sealing an `input_required`
        // state binds them, so it reads them back from the raw params (or
        // from a copy, for params built in-process).
        let raw = p.params.raw.take();
        let kept = raw.is_none().then(|| args.clone());
        if let Err(why) = tool.input.check(&args) {
            let text = format!(
                "Invalid arguments for tool {name:?}:{why}\nFix the arguments to match the tool's inputSchema and call again."
            );
            return CallTool::done(self.complete(shape, &id, CallToolResult::error_text(text)));
        }
        // The tool's own limits: a place under its concurrency limit
        // (refused at once past it), its handler under its time limit.
        let place = match &tool.limits.concurrency {
            None => None,
            Some((places, n)) => match Arc::clone(places).try_acquire_owned() {
                Ok(place) => Some(place),
                Err(_) => {
                    return CallTool::done(Outcome::error(RpcError::Busy(ErrorObject::internal(
                        middleware::at_limit_text(&name, *n),
                    ))));
                }
            },
        };
        // A reference count, not a copy: every call passes here.
        let client = p.client_id().cloned();
        let caller = p.who.caller_token();
        let principal = p.who.into_principal();
        if as_task {
            // A deferred call's handler runs this round as a plain call
            // first; its task's later rounds count on from it.
            let (first, deferred) = if tool.task.deferred {
                let first = RoundInput {
                    round: input.round,
                    ..RoundInput::default()
                };
                (first, Some(input))
            } else {
                (input, None)
            };
            let start = TaskStart {
                tool: Arc::clone(&handle.inner),
                name,
                id,
                args,
                meta: p.meta,
                principal,
                client,
                input: first,
                place,
            };
            // Boxed: a task's creation would otherwise size every call's
            // future (and be copied with it).
            return CallTool::Later(match deferred {
                None => Box::pin(self.start_task(start, None)),
                Some(input) => {
                    let call = DeferredCall {
                        start,
                        round,
                        input,
                        cancel,
                        outbound,
                        kept,
                        raw,
                    };
                    Box::pin(self.call_deferred(call))
                }
            });
        }
        let timed = tool.limits.timeout.map(|limit| Timed {
            limit,
            // Taken before the handler's first poll, as a timer made then
            // would take it.
            at: Instant::now() + limit,
            own: cancel.child_token(),
            sleep: None,
        });
        let cancel = match &timed {
            Some(timed) => timed.own.clone(),
            None => cancel,
        };
        let cx = RequestContext::new(id.clone(), p.meta, cancel, outbound)
            .with_principal(principal)
            .with_caller_token(caller)
            .with_round(input);
        // A panic is answered here, where the tool and the server's
        // settings are known, rather than by the transport's last resort.
        let handler = AssertUnwindSafe((tool.handler)(args, cx.clone())).catch_unwind();
        CallTool::Running(Calling {
            server: self,
            handler,
            timed,
            handle,
            shape,
            name,
            id,
            round: Some(round),
            kept,
            raw,
            client,
            cx,
            _place: place,
        })
    }

    /// A handler's outcome as the answer to its `tools/call`.
    pub(crate) fn answer_call(
        &self,
        a: Answer<'_>,
        outcome: Result<Forwarded, HandlerError>,
    ) -> Outcome {
        let Answer {
            tool,
            shape,
            name,
            id,
            round,
            kept,
            raw,
        } = a;
        let outcome = match outcome {
            Ok(Forwarded::Output(output)) => Ok(output),
            // Spec: basic/patterns/mrtr.mdx — a forwarded result is already
            // whole (`resultType` included); only a legacy client needs it
            // read and re-encoded.
            Ok(Forwarded::Json(json)) => match shape {
                Shape::Modern => {
                    let outcome = match self.respond(shape, id, &json) {
                        Outcome::Complete(body) if forwarded_is_error(&json) => {
                            Outcome::Failed(body)
                        }
                        outcome => outcome,
                    };
                    return self.capped(outcome, tool.limits.result_bytes, shape, id, name);
                }
                Shape::Legacy(_) => serde_json::from_str::<CallToolResult>(json.get())
                    .map(HandlerOutput::Complete)
                    .map_err(|e| {
                        HandlerError::Protocol(ErrorObject::internal(format!(
                            "tool {name:?} forwarded a result that is not a CallToolResult: {e}"
                        )))
                    }),
            },
            // Only a plain call forwards a task (`Server::call_tool` took
            // it); a deferred call's first round is not one.
            Ok(Forwarded::Task { .. }) => Err(HandlerError::Protocol(ErrorObject::internal(
                format!("tool {name:?} forwarded a task where none can be"),
            ))),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(HandlerOutput::InputRequired(ir)) => {
                let args = match (kept, raw) {
                    (Some(args), _) => args,
                    (None, raw) => raw.as_ref().map(RawParams::arguments).unwrap_or_default(),
                };
                self.input_required(round, ir, name, &args)
            }
            Ok(HandlerOutput::Complete(result)) => {
                let result = match checked_result(tool, name, result) {
                    Ok(result) => result,
                    Err(e) => return Outcome::error(e),
                };
                let outcome = self.complete(shape, id, result);
                self.capped(outcome, tool.limits.result_bytes, shape, id, name)
            }
            Err(HandlerError::Failed(text)) => {
                self.complete(shape, id, CallToolResult::error_text(text))
            }
            Err(e) => Outcome::error(e.into_error_object()),
        }
    }

    /// `outcome`, unless it is a result over the tool's own size limit:
    /// then an `isError` result that gives both sizes.
    fn capped(
        &self,
        outcome: Outcome,
        limit: Option<usize>,
        shape: Shape,
        id: &RequestId,
        name: &str,
    ) -> Outcome {
        let size = match (&outcome, limit) {
            (Outcome::Complete(body) | Outcome::Failed(body), Some(limit))
                if body.len() > limit =>
            {
                body.len()
            }
            _ => return outcome,
        };
        let text = middleware::too_large_text(name, size, limit.unwrap_or_default());
        self.complete(shape, id, CallToolResult::error_text(text))
    }

    pub(crate) fn complete(
        &self,
        shape: Shape,
        id: &RequestId,
        mut result: CallToolResult,
    ) -> Outcome {
        result.result_type = ResultType::Complete;
        let failed = result.is_error == Some(true);
        #[cfg(feature = "otel")]
        if failed {
            crate::otel::tool_failed();
        }
        let outcome = match result.meta.as_mut() {
            None => self.respond_call_with_meta(shape, id, &result),
            Some(meta) => {
                meta.entry(SERVER_INFO_KEY)
                    .or_insert_with(|| self.inner.server_info.clone());
                self.respond(shape, id, &result)
            }
        };
        match outcome {
            Outcome::Complete(body) if failed => Outcome::Failed(body),
            outcome => outcome,
        }
    }
}

/// What [`Server::answer_call`] needs of the call besides the outcome.
pub(crate) struct Answer<'a> {
    pub(crate) tool: &'a ToolInner,
    pub(crate) shape: Shape,
    pub(crate) name: &'a str,
    pub(crate) id: &'a RequestId,
    pub(crate) round: Mrtr,
    /// The arguments, when they were not read from bytes (`raw`).
    pub(crate) kept: Option<Value>,
    pub(crate) raw: Option<RawParams>,
}

/// What [`Server::call_tool`] made of a call: an answer at once, a
/// task's start (boxed: rare, and large), or the handler running.
#[allow(
    clippy::large_enum_variant,
    reason = "the running call is the usual one, and boxing it would cost an allocation a call"
)]
pub(crate) enum CallTool<'a> {
    Done(Option<Outcome>),
    Later(Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>),
    Running(Calling<'a>),
}

impl CallTool<'_> {
    fn done(outcome: Outcome) -> Self {
        Self::Done(Some(outcome))
    }
}

impl Future for CallTool<'_> {
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let this = self.get_mut();
        match this {
            // Taken once: a future is not polled again after it is ready.
            Self::Done(outcome) => Poll::Ready(outcome.take().unwrap_or_else(|| {
                Outcome::error(ErrorObject::internal("a call polled after its answer"))
            })),
            Self::Later(start) => start.as_mut().poll(cx),
            Self::Running(calling) => {
                let handled = std::task::ready!(calling.poll_handler(cx));
                let outcome = calling.answer(handled);
                // The handler's future, then its place, dropped here: in
                // place, not moved out to be taken apart.
                *this = Self::Done(None);
                Poll::Ready(outcome)
            }
        }
    }
}

/// A tool's handler at work, and what its answer needs.
pub(crate) struct Calling<'a> {
    server: &'a Server,
    /// The handler's own future (boxed by the tool), a panic caught.
    handler: CatchUnwind<AssertUnwindSafe<BoxFuture<Result<Forwarded, HandlerError>>>>,
    timed: Option<Timed>,
    handle: Tool,
    shape: Shape,
    name: String,
    id: RequestId,
    /// Taken by the answer.
    round: Option<Mrtr>,
    kept: Option<Value>,
    raw: Option<RawParams>,
    client: Option<Arc<str>>,
    cx: RequestContext,
    /// The tool's concurrency place, held until the answer is made (a
    /// field after `handler`: dropped after it). Only ever dropped.
    _place: Option<OwnedSemaphorePermit>,
}

/// A tool's time limit on its handler.
struct Timed {
    limit: Duration,
    at: Instant,
    /// The handler's token, a child of the request's: cancelled when the
    /// limit passes.
    own: CancellationToken,
    /// Made only for a handler that waits: most answer on their first poll.
    sleep: Option<Pin<Box<Sleep>>>,
}

/// How a handler ended: its outcome, or the tool's time limit first.
enum Handled {
    Outcome(Result<Forwarded, HandlerError>),
    TimedOut(Duration),
}

impl Calling<'_> {
    fn poll_handler(&mut self, cx: &mut Context<'_>) -> Poll<Handled> {
        match Pin::new(&mut self.handler).poll(cx) {
            Poll::Ready(Ok(outcome)) => Poll::Ready(Handled::Outcome(outcome)),
            Poll::Ready(Err(payload)) => {
                let expose = self.server.inner.config.exposed_panic_messages;
                let error = super::panics::panicked(&self.name, &*payload, expose);
                Poll::Ready(Handled::Outcome(Err(error)))
            }
            Poll::Pending => {
                let Some(timed) = &mut self.timed else {
                    return Poll::Pending;
                };
                let at = timed.at;
                let sleep = timed
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                timed.own.cancel();
                Poll::Ready(Handled::TimedOut(timed.limit))
            }
        }
    }

    /// The call's answer, once its handler ended. Its parts are read in
    /// place; the caller drops what is left.
    fn answer(&mut self, handled: Handled) -> Outcome {
        let server = self.server;
        self.cx.finish();
        let outcome = match handled {
            Handled::Outcome(outcome) => outcome,
            Handled::TimedOut(limit) => {
                let text = middleware::timed_out_text(&self.name, limit);
                return server.complete(self.shape, &self.id, CallToolResult::error_text(text));
            }
        };
        if let Ok(Forwarded::Task { task, route }) = outcome {
            let declared =
                matches!(self.shape, Shape::Modern) && super::tasks::declares_tasks(self.cx.meta());
            let caller = (self.cx.principal(), self.client.as_deref());
            return server.forwarded_task(&self.id, declared, caller, task, &route);
        }
        let Some(round) = self.round.take() else {
            return Outcome::error(ErrorObject::internal("a call answered twice"));
        };
        let answer = Answer {
            tool: &self.handle.inner,
            shape: self.shape,
            name: &self.name,
            id: &self.id,
            round,
            kept: self.kept.take(),
            raw: self.raw.take(),
        };
        server.answer_call(answer, outcome)
    }
}

/// A tool's complete result as the client gets it: `structuredContent`
/// checked against the output schema (`-32603` if the tool broke its
/// promise) and mirrored as text.
pub(crate) fn checked_result(
    tool: &ToolInner,
    name: &str,
    mut result: CallToolResult,
) -> Result<CallToolResult, ErrorObject> {
    if let Some(schema) = &tool.output
        && result.is_error != Some(true)
    {
        let checked = match &result.structured_content {
            None => Err("the tool returned no structuredContent".to_owned()),
            Some(v) => schema.check(v),
        };
        if let Err(why) = checked {
            crate::log_limit::error_limited!(tool = %name, "structuredContent does not match outputSchema:{why}");
            return Err(ErrorObject::internal(format!(
                "tool {name:?} produced output that does not match its outputSchema"
            )));
        }
    }
    // Spec (ext-apps): apps.mdx#server-behavior — a tool with an interface
    // MUST still return meaningful content for hosts without one. Only
    // checked in debug builds: it costs a look at the meta of every call.
    #[cfg(debug_assertions)]
    if result.structured_content.is_none()
        && !result
            .content
            .iter()
            .any(|c| matches!(c, ContentBlock::Text(t) if !t.text.trim().is_empty()))
        && crate::apps::ToolUi::of(tool.definition.meta.as_ref()).is_some()
    {
        crate::log_limit::error_limited!(
            tool = %name,
            "a tool with an app interface returned no text content: MCP Apps requires \
             meaningful content for hosts that do not render the interface"
        );
    }
    if let Some(structured) = &result.structured_content {
        // Spec: server/tools.mdx#structured-content — mirror as text.
        let has_text = result
            .content
            .iter()
            .any(|c| matches!(c, ContentBlock::Text(_)));
        if !has_text {
            result
                .content
                .push(ContentBlock::text(structured.to_string()));
        }
    }
    Ok(result)
}

/// Whether a forwarded result says `isError: true`. Read only when the
/// member name occurs at all, so the usual result costs one scan for it.
fn forwarded_is_error(json: &serde_json::value::RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    memchr::memmem::find(json.get().as_bytes(), b"\"isError\"").is_some()
        && serde_json::from_str::<Flag>(json.get()).is_ok_and(|f| f.is_error == Some(true))
}
