//! `tools/list` and `tools/call`.

use super::accept::{Prepared, RawParams};
use super::outcome::{Outcome, RpcError};
use super::rounds::Mrtr;
use super::shape::Shape;
use super::tasks::{DeferredCall, TaskStart};
use super::{Server, paging};
use crate::context::{Outbound, RequestContext};
use crate::handler::{HandlerError, HandlerOutput, missing_capabilities_error};
use crate::mrtr::RoundInput;
use crate::server::middleware;
use crate::tool::{Forwarded, Tool, ToolInner};
use serde_json::{Map, Value, json};
use std::sync::Arc;
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

    pub(crate) async fn call_tool(
        &self,
        mut p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Outcome {
        let id = p.id.clone();
        let shape = p.era.shape();
        let Some(name) = p.params.name.take() else {
            return Outcome::error(ErrorObject::invalid_params("tools/call needs params.name"));
        };
        let Some(handle) = self.inner.tools.snapshot().get(&name).cloned() else {
            return Outcome::error(match self.unknown_tool_reason(&name) {
                Some(reason) => {
                    ErrorObject::invalid_params(format!("unknown tool: {name} ({reason})"))
                        .with_data(json!({ "name": name, "reason": reason }))
                }
                None => ErrorObject::invalid_params(format!("unknown tool: {name}"))
                    .with_data(json!({ "name": name })),
            });
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
                return Outcome::error(missing_capabilities_error(&missing));
            }
        }
        // Spec: extensions/tasks#capability-negotiation — the server decides
        // per request: a task when the request declared the extension and
        // the tool supports one.
        let as_task = match self.task_wanted(&p, tool, &name) {
            Ok(wanted) => wanted,
            Err(outcome) => return outcome,
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
            Err(outcome) => return outcome,
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
            return self.complete(shape, &id, CallToolResult::error_text(text));
        }
        // The tool's own limits: a place under its concurrency limit
        // (refused at once past it), its handler under its time limit.
        let place = match &tool.limits.concurrency {
            None => None,
            Some((places, n)) => match Arc::clone(places).try_acquire_owned() {
                Ok(place) => Some(place),
                Err(_) => {
                    return Outcome::error(RpcError::Busy(ErrorObject::internal(
                        middleware::at_limit_text(&name, *n),
                    )));
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
            return match deferred {
                None => Box::pin(self.start_task(start, None)).await,
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
                    Box::pin(self.call_deferred(call)).await
                }
            };
        }
        let timed = tool
            .limits
            .timeout
            .map(|limit| (limit, cancel.child_token()));
        let cancel = match &timed {
            Some((_, child)) => child.clone(),
            None => cancel,
        };
        let cx = RequestContext::new(id.clone(), p.meta, cancel, outbound)
            .with_principal(principal)
            .with_caller_token(caller)
            .with_round(input);
        // A panic is answered here, where the tool and the server's
        // settings are known, rather than by the transport's last resort.
        let expose = self.inner.config.exposed_panic_messages;
        let handler = super::panics::guarded((tool.handler)(args, cx.clone()), &name, expose);
        let outcome = match timed {
            None => handler.await,
            // Boxed: the timer would otherwise size every call's future.
            Some((limit, child)) => {
                let run = Box::pin(tokio::time::timeout(limit, handler));
                match run.await {
                    Ok(outcome) => outcome,
                    Err(_) => {
                        child.cancel();
                        cx.finish();
                        let text = middleware::timed_out_text(&name, limit);
                        return self.complete(shape, &id, CallToolResult::error_text(text));
                    }
                }
            }
        };
        cx.finish();
        if let Ok(Forwarded::Task { task, route }) = outcome {
            let declared =
                matches!(shape, Shape::Modern) && super::tasks::declares_tasks(cx.meta());
            let caller = (cx.principal(), client.as_deref());
            return self.forwarded_task(&id, declared, caller, task, &route);
        }
        self.answer_call(
            Answer {
                tool,
                shape,
                name: &name,
                id: &id,
                round,
                kept,
                raw,
            },
            outcome,
        )
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
            None => self.respond_with_meta(shape, id, &result),
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
