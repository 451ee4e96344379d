//! The request pipeline shared by every transport and both eras: the
//! version check, and the one `match` over the method.

use super::accept::Prepared;
use super::era::Era;
use super::outcome::{Outcome, Reply, RpcError};
use super::shape::Shape;
use super::{Server, ServerInner, paging};
use crate::context::Outbound;
use crate::server::middleware::{McpRequest, Stack};
use futures_util::future::Either;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::SERVER_INFO_KEY;
use toolwire_proto::types::{
    CallToolResult, DiscoverResult, JsonObject, Method, PromptsCapability, ResourcesCapability,
    ResultType, ServerCapabilities, ToolsCapability,
};
use toolwire_proto::{ErrorCode, ErrorObject, RequestId};

/// What the one `match` over the method decided: an outcome at once, or a
/// handler to run.
#[derive(Debug)]
pub(crate) enum Step {
    /// Answered without waiting: discovery, the lists, a listen stream, the
    /// legacy-only methods, and every refusal.
    Done(Outcome),
    /// A handler runs: it may wait, and may emit notifications.
    Run(Job),
}

/// What the transports' entry point ([`Server::dispatch`]) made of a
/// request.
pub(crate) enum Dispatch {
    /// Answered without waiting: no layer, and no handler to run.
    Ready(Outcome),
    /// To await: a handler runs, or layers wrap the pipeline.
    Running(Running),
}

impl Dispatch {
    /// The outcome, awaited if need be.
    pub(crate) fn outcome(self) -> impl Future<Output = Outcome> + Send {
        match self {
            Self::Ready(outcome) => Either::Left(std::future::ready(outcome)),
            Self::Running(run) => Either::Right(run.outcome()),
        }
    }
}

/// A request still to serve: what its future needs, small (the request
/// is boxed), so that the transport builds the (large) future in place,
/// where it will be polled, instead of moving it there.
pub(crate) enum Running {
    /// A handler to run, straight through the pipeline.
    Direct(Direct),
    /// The request through the layers.
    Layered(Stack, McpRequest),
}

/// [`Running::Direct`]'s parts.
pub(crate) struct Direct {
    server: Server,
    job: Job,
    cancel: CancellationToken,
    outbound: Option<Outbound>,
    #[cfg(feature = "otel")]
    span: crate::otel::RequestSpan,
}

impl Running {
    /// Serves the request.
    ///
    /// Not an `async fn`, nor is anything between here and the handler's
    /// own future: each `async fn` level keeps its arguments beside the
    /// future it awaits, and the pipeline's future is copied whole into
    /// its box, so every level's bytes cost on every request.
    pub(crate) fn outcome(self) -> impl Future<Output = Outcome> + Send {
        match self {
            Self::Direct(d) => Either::Left(d.serve()),
            Self::Layered(stack, req) => Either::Right(stack.serve(req)),
        }
    }
}

impl Direct {
    fn serve(self) -> impl Future<Output = Outcome> + Send {
        let run = self.server.run(self.job, self.cancel, self.outbound);
        #[cfg(feature = "otel")]
        return self.span.around(run);
        #[cfg(not(feature = "otel"))]
        run
    }
}

/// A request whose handler runs.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) p: Prepared,
    pub(crate) kind: JobKind,
}

/// Which handler a [`Job`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobKind {
    /// `tools/call`.
    CallTool,
    /// `prompts/get`.
    GetPrompt,
    /// `resources/read`.
    ReadResource,
    /// `completion/complete`.
    Complete,
    /// `tasks/get`, `tasks/update` or `tasks/cancel`: no handler runs,
    /// but the task store may have to be waited for.
    Task,
}

impl Job {
    /// Whether the job runs under the legacy MRTR shim (a multi-round
    /// method in a legacy session) rather than once.
    pub(crate) fn in_rounds(&self) -> bool {
        self.kind.may_require_input() && matches!(self.p.era, Era::Legacy(_))
    }
}

impl JobKind {
    /// The handler `method` runs, if it is an invocation.
    pub(crate) fn of(method: &Method) -> Option<Self> {
        match method {
            Method::CallTool => Some(Self::CallTool),
            Method::GetPrompt => Some(Self::GetPrompt),
            Method::ReadResource => Some(Self::ReadResource),
            Method::Complete => Some(Self::Complete),
            _ => None,
        }
    }

    /// Whether the handler may answer `input_required` (multi round-trip
    /// requests); the legacy shim drives those rounds.
    pub(crate) fn may_require_input(self) -> bool {
        !matches!(self, Self::Complete | Self::Task)
    }
}

impl Server {
    /// `-32022` unless the request's protocol version is one this server
    /// serves.
    pub(crate) fn check_version(&self, p: &Prepared) -> Result<(), ErrorObject> {
        let version = p.protocol_version();
        if self
            .inner
            .config
            .supported_versions
            .iter()
            .any(|v| v == version)
        {
            Ok(())
        } else {
            Err(unsupported_version(&self.inner, version))
        }
    }

    /// The transports' one entry point, for both eras: the request
    /// through the layers ([`Server::with_layer`]) when there are any,
    /// else straight through the pipeline, answered at once when no
    /// handler runs.
    ///
    /// `cancel` makes the request's cancellation token, called only when
    /// something will run that can be cancelled: a request answered at once
    /// (a list page, discovery, a refusal) makes none, and costs neither its
    /// allocation nor the locking of its clones and drops.
    pub(crate) fn dispatch(
        &self,
        p: Prepared,
        cancel: impl FnOnce() -> CancellationToken,
        outbound: Option<Outbound>,
    ) -> Dispatch {
        if let Some(stack) = self.layers() {
            let req = McpRequest {
                p,
                cancel: cancel(),
                outbound,
                server: self.clone(),
            };
            return Dispatch::Running(Running::Layered(stack, req));
        }
        self.core(p, cancel, outbound)
    }

    /// The pipeline under the layers: [`step`](Self::step), then the
    /// handler; with `otel`, the request's span around both. `cancel` as
    /// for [`dispatch`](Self::dispatch).
    pub(crate) fn core(
        &self,
        p: Prepared,
        cancel: impl FnOnce() -> CancellationToken,
        outbound: Option<Outbound>,
    ) -> Dispatch {
        // Spec: basic/index.mdx#opentelemetry-trace-context — the span
        // continues the caller's trace and covers every round.
        #[cfg(feature = "otel")]
        let span = crate::otel::RequestSpan::of(&p);
        match self.step(p) {
            Step::Done(outcome) => {
                #[cfg(feature = "otel")]
                span.done(&outcome);
                Dispatch::Ready(outcome)
            }
            Step::Run(job) => Dispatch::Running(Running::Direct(Direct {
                server: self.clone(),
                job,
                cancel: cancel(),
                outbound,
                #[cfg(feature = "otel")]
                span,
            })),
        }
    }

    /// The one `match` over the method, for both eras. Everything that
    /// needs no handler is answered here; the rest is a [`Job`].
    pub(crate) fn step(&self, p: Prepared) -> Step {
        // A legacy session negotiated its version in `initialize`.
        if let Era::Modern = p.era
            && let Err(e) = self.check_version(&p)
        {
            return Step::Done(Outcome::error(e));
        }
        // Spec: basic/authorization/index.mdx#scope-challenge-handling —
        // inside every layer, so that an audit log sees the refusal.
        #[cfg(feature = "auth")]
        if let Some(grant) = p.grant()
            && let Some(needed) = self.missing_scopes(&p, grant)
        {
            tracing::debug!(principal = %grant.principal, "insufficient scope");
            return Step::Done(Outcome::error(RpcError::forbidden(&needed)));
        }
        let kind = match (&p.method, p.era.session()) {
            (Method::Discover, _) => return Step::Done(self.discover(&p)),
            (Method::ListTools, _) => return Step::Done(self.list_tools(&p)),
            (Method::ListPrompts, _) => return Step::Done(self.list_prompts(&p)),
            (Method::ListResources, _) => return Step::Done(self.list_resources(&p)),
            (Method::ListResourceTemplates, _) => {
                return Step::Done(self.list_resource_templates(&p));
            }
            (Method::CallTool, _) => JobKind::CallTool,
            (Method::GetPrompt, _) => JobKind::GetPrompt,
            (Method::ReadResource, _) => JobKind::ReadResource,
            (Method::Complete, _) => JobKind::Complete,
            // Spec: extensions/tasks#protocol-errors — `-32021` for a request
            // that did not declare the extension.
            (Method::TasksGet | Method::TasksUpdate | Method::TasksCancel, None) => {
                if !super::tasks::declares_tasks(&p.meta) {
                    return Step::Done(Outcome::error(super::tasks::tasks_required(format!(
                        "Missing required client capability: {} needs the {} extension declared in the request's client capabilities",
                        p.method,
                        toolwire_proto::types::TASKS_EXTENSION
                    ))));
                }
                JobKind::Task
            }
            (Method::SubscriptionsListen, None) => {
                return Step::Done(match self.listen(&p) {
                    Ok(subscription) => Outcome::Stream(Box::new(subscription)),
                    Err(e) => Outcome::error(e),
                });
            }
            // The methods only the legacy revisions have, in their session.
            (
                Method::Initialize
                | Method::Ping
                | Method::SetLoggingLevel
                | Method::SubscribeResource
                | Method::UnsubscribeResource,
                Some(session),
            ) => return Step::Done(session.serve_method(&p)),
            // The 2025-11-25 experimental task methods are not served.
            (
                Method::SubscriptionsListen
                | Method::TasksGet
                | Method::TasksUpdate
                | Method::TasksCancel
                | Method::Initialize
                | Method::Ping
                | Method::SetLoggingLevel
                | Method::SubscribeResource
                | Method::UnsubscribeResource
                | Method::Other(_),
                _,
            ) => {
                return Step::Done(Outcome::error(ErrorObject::method_not_found(
                    p.method.as_str(),
                )));
            }
        };
        Step::Run(Job { p, kind })
    }

    /// Counts an invocation against its caller's rate limit: the error
    /// outcome when it is over. Every invocation counts, each MRTR retry
    /// included; a server without limits pays one branch.
    ///
    /// Spec: server/tools.mdx#security-considerations
    pub(crate) fn check_rate_limit(&self, p: &Prepared) -> Result<(), Outcome> {
        let Some(limits) = &self.inner.rate_limits else {
            return Ok(());
        };
        let tool = match p.method {
            Method::CallTool => p.params.name.as_deref(),
            _ => None,
        };
        limits.check(&p.caller(), tool).map_err(|limited| {
            Outcome::error(RpcError::RateLimited(
                limited.error,
                limited.retry_after_secs,
            ))
        })
    }

    /// Runs a job's handler. In a legacy session, a handler that may answer
    /// `input_required` runs under the MRTR shim, which asks the client
    /// through real server-to-client requests and runs the next round.
    fn run(
        self,
        job: Job,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> impl Future<Output = Outcome> + Send {
        if job.in_rounds()
            && let Era::Legacy(session) = &job.p.era
        {
            // Boxed (by the session): rare, and its state would otherwise
            // size every run.
            let rounds = Arc::clone(session).rounds(self, job, cancel, outbound);
            return Either::Left(rounds);
        }
        // Not an `async fn`: the usual job's future is `run_once`'s own,
        // with no layer around it to build and move.
        Either::Right(self.run_once(job, cancel, outbound))
    }

    /// One round of a job's handler.
    pub(crate) async fn run_once(
        self,
        job: Job,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Outcome {
        let Job { p, kind } = job;
        match kind {
            JobKind::CallTool => self.call_tool(p, cancel, outbound).await,
            JobKind::GetPrompt => self.get_prompt(p, cancel, outbound).await,
            JobKind::ReadResource => self.read_resource(p, cancel, outbound).await,
            JobKind::Complete => self.complete_argument(p, cancel, outbound).await,
            JobKind::Task => self.task_method(p).await,
        }
    }

    /// `accept` (with no session) then `execute`, encoded: the whole
    /// pipeline, for tests.
    #[cfg(test)]
    pub(crate) async fn handle(
        &self,
        req: toolwire_proto::Request,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Reply {
        use super::accept::Accepted;
        match self.accept(req, None) {
            Accepted::Request(p) => {
                let id = p.id.clone();
                let shape = p.era.shape();
                match self
                    .dispatch(p, || cancel, outbound)
                    .outcome()
                    .await
                    .into_reply(&id, shape)
                {
                    Ok(reply) => reply,
                    Err(_stream) => Reply::error(
                        Some(&id),
                        &ErrorObject::internal("a stream cannot be answered here"),
                    ),
                }
            }
            Accepted::Refused(reply, _) | Accepted::NoSession(reply) => reply,
            Accepted::Initialize(id, _) => Reply::error(
                Some(&id),
                &ErrorObject::invalid_params("params._meta is required"),
            ),
        }
    }

    /// A complete result in `shape`.
    pub(crate) fn respond(
        &self,
        shape: Shape,
        id: &RequestId,
        result: &(impl serde::Serialize + ?Sized),
    ) -> Outcome {
        match shape {
            Shape::Modern => Outcome::Complete(Reply::result(id, result).into_body()),
            Shape::Legacy(_) => legacy_result(shape, id, result),
        }
    }

    /// The reply carrying `result`, which has no `_meta` member, with this
    /// server's `_meta` (`serverInfo`) added.
    pub(crate) fn respond_with_meta(
        &self,
        shape: Shape,
        id: &RequestId,
        result: &(impl serde::Serialize + ?Sized),
    ) -> Outcome {
        match shape {
            Shape::Modern => Outcome::Complete(
                Reply::result_with_meta(id, result, &self.inner.result_meta_member).into_body(),
            ),
            Shape::Legacy(_) => legacy_result(shape, id, result),
        }
    }

    /// [`respond_with_meta`](Self::respond_with_meta) for a `tools/call`
    /// result, which has a writer of its own.
    pub(crate) fn respond_call_with_meta(
        &self,
        shape: Shape,
        id: &RequestId,
        result: &CallToolResult,
    ) -> Outcome {
        match shape {
            Shape::Modern => Outcome::Complete(
                Reply::call_result_with_meta(id, result, &self.inner.result_meta_member)
                    .into_body(),
            ),
            Shape::Legacy(_) => legacy_result(shape, id, result),
        }
    }

    pub(crate) fn result_meta(&self) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(SERVER_INFO_KEY.to_owned(), self.inner.server_info.clone());
        meta
    }

    /// What `server/discover` advertises. `subscriptions/listen` honours the
    /// `listChanged` (and resource `subscribe`) flags found here.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..ToolsCapability::default()
            }),
            // Handlers may log through `RequestContext::log`.
            // Spec: server/utilities/logging.mdx#capabilities
            logging: Some(JsonObject::new()),
            // Always served (an empty list is a valid answer), so always
            // declared. Spec: server/prompts.mdx#capabilities,
            // server/resources.mdx#capabilities,
            // server/utilities/completion.mdx#capabilities
            prompts: Some(PromptsCapability {
                list_changed: Some(true),
                ..PromptsCapability::default()
            }),
            resources: Some(ResourcesCapability {
                list_changed: Some(true),
                ..ResourcesCapability::default()
            }),
            completions: Some(JsonObject::new()),
            // Spec: extensions/tasks#capability-negotiation — declared while
            // some tool may run as a task; MCP Apps while an app interface
            // is registered (ext-apps apps.mdx#client-server-capability-negotiation).
            extensions: self.extensions(),
            ..ServerCapabilities::default()
        }
    }

    /// The extensions the server offers now, if any.
    pub(crate) fn extensions(&self) -> Option<std::collections::BTreeMap<String, JsonObject>> {
        let mut out = std::collections::BTreeMap::new();
        if self.offers_tasks() {
            out.insert(
                toolwire_proto::types::TASKS_EXTENSION.to_owned(),
                JsonObject::new(),
            );
        }
        if self.offers_apps() {
            out.insert(crate::apps::UI_EXTENSION.to_owned(), JsonObject::new());
        }
        (!out.is_empty()).then_some(out)
    }

    /// Whether an app interface is registered.
    pub(crate) fn offers_apps(&self) -> bool {
        self.inner
            .resources
            .snapshot()
            .items()
            .iter()
            .any(|r| r.definition().mime_type.as_deref() == Some(crate::apps::APP_MIME_TYPE))
    }

    /// Whether some registered tool may run as a task, or the task
    /// forwarder passes tasks through.
    pub(crate) fn offers_tasks(&self) -> bool {
        if let Some(forwarder) = &self.inner.config.task_forwarder
            && forwarder.offers_tasks()
        {
            return true;
        }
        self.inner
            .tools
            .snapshot()
            .items()
            .iter()
            .any(|t| t.task_support() != crate::task::TaskSupport::Forbidden)
    }

    fn discover_result(&self) -> DiscoverResult {
        let c = &self.inner.config;
        DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: c.supported_versions.clone(),
            capabilities: self.capabilities(),
            instructions: c.instructions.clone(),
            ttl_ms: c.ttl_ms(),
            cache_scope: c.cache_scope,
            meta: Some(self.result_meta()),
        }
    }

    fn discover(&self, p: &Prepared) -> Outcome {
        match p.era.shape() {
            Shape::Modern => {
                let cache = if self.offers_tasks() {
                    &self.inner.discover_tasks
                } else {
                    &self.inner.discover
                };
                let raw = cache.get_or_init(|| paging::to_raw(&self.discover_result()));
                Outcome::Complete(Reply::raw_result(&p.id, raw).into_body())
            }
            shape => self.respond(shape, &p.id, &self.discover_result()),
        }
    }
}

/// A complete result in a legacy `shape`: read into a value, the
/// 2026-only members dropped, then encoded.
fn legacy_result(
    shape: Shape,
    id: &RequestId,
    result: &(impl serde::Serialize + ?Sized),
) -> Outcome {
    let value = serde_json::to_value(result).unwrap_or_else(|_| Value::Object(Map::new()));
    Outcome::Complete(Reply::result(id, &shape.result(value)).into_body())
}

fn unsupported_version(inner: &ServerInner, requested: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("unsupported protocol version {requested:?}"),
    )
    .with_data(json!({
        "supported": inner.config.supported_versions,
        "requested": requested,
    }))
}

#[cfg(test)]
mod tests;
