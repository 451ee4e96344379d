//! The middleware seam: tower layers around the typed pipeline, between a
//! request prepared (decoded, its era and principal decided) and its
//! outcome. A layer sees an [`McpRequest`] and the [`McpResponse`] the rest
//! of the stack made of it, in both eras and on every transport, and may
//! observe, refuse (with a protocol error or an `isError` result) or pass
//! on. Layers are plain [`tower::Layer`]s, so tower's own (timeout,
//! concurrency limit, load shedding) work unchanged; their errors become
//! JSON-RPC errors here.
//!
//! With no layer added, a request pays one atomic load for the seam and
//! runs the pipeline directly. The built-in layers live in the submodules:
//! the audit log, metrics (with a Prometheus endpoint), per-tool timeouts,
//! concurrency limits and response-size caps, and [`Select`], which
//! applies a layer to chosen methods or tools.

mod around;
mod audit;
mod concurrency;
#[cfg(feature = "http")]
mod endpoint;
mod metrics;
mod per_tool;
mod rate;
mod select;
mod size;
mod timeout;

pub use around::Wrapped;
pub use audit::{AuditLayer, AuditRecord, AuditService};
pub use concurrency::{ConcurrencyLimitLayer, ConcurrencyLimitService};
#[cfg(feature = "http")]
pub use endpoint::serve_metrics;
pub use metrics::{DURATION_BUCKETS, MAX_SERIES, Metrics, MetricsLayer, MetricsService};
pub use per_tool::PerTool;
pub(crate) use rate::RateLimitLayer;
pub use select::{Select, SelectService};
pub use size::{ResponseSizeLayer, ResponseSizeService};
pub use timeout::{ToolTimeoutLayer, ToolTimeoutService};

use crate::context::Outbound;
use crate::server::{Outcome, Prepared, RpcError, Server, Shape};
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::net::IpAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio_util::sync::CancellationToken;
use toolwire_proto::types::{CallToolResult, Method, RequestMeta};
use toolwire_proto::{ErrorObject, RequestId};
use tower::{Layer, Service, ServiceExt};

/// The error type of the stack: whatever a layer fails with. Known tower
/// errors become their JSON-RPC errors (a timeout `-32603` with
/// `data.timeoutMs` unknown, an overload `-32603` that HTTP answers with
/// `503`); anything else is an internal error, logged, never shown.
pub type BoxError = tower::BoxError;

/// A request on its way through the layers: what the pipeline decided at
/// its boundary, and what the handler will be given.
pub struct McpRequest {
    pub(crate) p: Prepared,
    pub(crate) cancel: CancellationToken,
    pub(crate) outbound: Option<Outbound>,
    pub(crate) server: Server,
}

impl std::fmt::Debug for McpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest")
            .field("id", &self.p.id)
            .field("method", &self.p.method)
            .field("name", &self.name())
            .field("era", &self.era())
            .finish_non_exhaustive()
    }
}

/// The protocol era a request is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestEra {
    /// 2026-07-28: stateless, judged on its own `_meta`.
    Modern,
    /// A request of an initialize-era session, at the negotiated version.
    Legacy(&'static str),
}

impl McpRequest {
    /// The JSON-RPC id.
    pub fn id(&self) -> &RequestId {
        &self.p.id
    }

    /// The method, typed.
    pub fn method(&self) -> &Method {
        &self.p.method
    }

    /// What the request names: the tool of `tools/call`, the prompt of
    /// `prompts/get`, the URI of `resources/read`; `None` for the rest.
    pub fn name(&self) -> Option<&str> {
        match self.p.method {
            Method::CallTool | Method::GetPrompt => self.p.params.name.as_deref(),
            Method::ReadResource => self.p.params.uri.as_deref(),
            _ => None,
        }
    }

    /// The tool a `tools/call` names.
    pub fn tool(&self) -> Option<&str> {
        match self.p.method {
            Method::CallTool => self.p.params.name.as_deref(),
            _ => None,
        }
    }

    /// The era the request is served in.
    pub fn era(&self) -> RequestEra {
        match self.p.era.shape() {
            Shape::Modern => RequestEra::Modern,
            Shape::Legacy(version) => RequestEra::Legacy(version),
        }
    }

    /// The protocol version: the `_meta`'s, or the negotiated version of
    /// the legacy session.
    pub fn protocol_version(&self) -> &str {
        match self.p.era.shape() {
            Shape::Modern => self.p.protocol_version(),
            Shape::Legacy(version) => version,
        }
    }

    /// The authenticated caller (issuer and subject), when the HTTP
    /// transport's resource server is on, or a test set one.
    pub fn principal(&self) -> Option<&str> {
        self.p.principal().map(|p| &**p)
    }

    /// The client's address, on HTTP.
    pub fn peer(&self) -> Option<IpAddr> {
        self.p.peer
    }

    /// The arguments of `tools/call` and `prompts/get`, as sent.
    pub fn arguments(&self) -> Option<&Value> {
        self.p.params.arguments.as_ref()
    }

    /// The request's `_meta`: protocol version, client capabilities,
    /// progress token, trace context.
    pub fn meta(&self) -> &RequestMeta {
        &self.p.meta
    }

    /// Fired when the request is cancelled (by the client, or a timeout
    /// layer); the handler's [`RequestContext`](crate::RequestContext)
    /// sees the same token.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// What builds answers to this request later, once the request itself
    /// has been passed on.
    pub fn responder(&self) -> Responder {
        Responder {
            server: self.server.clone(),
            id: self.p.id.clone(),
            shape: self.p.era.shape(),
            method: self.p.method.clone(),
        }
    }

    /// Refuses the request with a JSON-RPC error.
    pub fn error(&self, error: ErrorObject) -> McpResponse {
        McpResponse::error(error)
    }

    /// Refuses a `tools/call` with an `isError` result whose text the model
    /// reads; any other method gets a `-32603` error with the same text.
    pub fn tool_error(&self, text: impl Into<String>) -> McpResponse {
        self.responder().tool_error(text)
    }
}

/// Builds answers to one request after it was passed on: a layer takes it
/// before calling the inner service.
#[derive(Debug, Clone)]
pub struct Responder {
    server: Server,
    id: RequestId,
    shape: Shape,
    method: Method,
}

impl Responder {
    /// An `isError` result with `text` for a `tools/call`; a `-32603`
    /// error with `text` for any other method.
    pub fn tool_error(&self, text: impl Into<String>) -> McpResponse {
        let text = text.into();
        match self.method {
            Method::CallTool => McpResponse(self.server.complete(
                self.shape,
                &self.id,
                CallToolResult::error_text(text),
            )),
            _ => McpResponse::error(ErrorObject::internal(text)),
        }
    }

    /// The method of the request.
    pub fn method(&self) -> &Method {
        &self.method
    }
}

/// What the stack made of a request.
#[derive(Debug)]
pub struct McpResponse(pub(crate) Outcome);

/// The kind of an [`McpResponse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutcomeKind {
    /// A complete result.
    Complete,
    /// A complete `tools/call` result with `isError: true`.
    ToolError,
    /// `input_required`: the client is asked for input and retries.
    InputRequired,
    /// A JSON-RPC error.
    Error,
    /// A `subscriptions/listen` stream.
    Stream,
}

impl OutcomeKind {
    /// The name used in audit lines and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::ToolError => "tool_error",
            Self::InputRequired => "input_required",
            Self::Error => "error",
            Self::Stream => "stream",
        }
    }
}

impl McpResponse {
    /// A JSON-RPC error, in the form of the request's era.
    pub fn error(error: ErrorObject) -> Self {
        Self(Outcome::error(error))
    }

    /// A refusal because a shared resource is exhausted: `-32603`, which
    /// HTTP answers with `503` and `Retry-After`.
    pub fn busy(message: impl Into<String>) -> Self {
        Self(Outcome::error(RpcError::Busy(ErrorObject::internal(
            message.into(),
        ))))
    }

    /// The kind of outcome.
    pub fn kind(&self) -> OutcomeKind {
        match &self.0 {
            Outcome::Complete(_) => OutcomeKind::Complete,
            Outcome::Failed(_) => OutcomeKind::ToolError,
            Outcome::InputRequired(_) => OutcomeKind::InputRequired,
            Outcome::Error(_) => OutcomeKind::Error,
            Outcome::Stream(_) => OutcomeKind::Stream,
        }
    }

    /// Whether this is a `tools/call` result with `isError: true`.
    pub fn is_error(&self) -> bool {
        matches!(self.0, Outcome::Failed(_))
    }

    /// The JSON-RPC error, in its 2026-07-28 form.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        match &self.0 {
            Outcome::Error(e) => Some(e.modern()),
            _ => None,
        }
    }

    /// The size of the encoded JSON-RPC response of a complete result.
    pub fn encoded_len(&self) -> Option<usize> {
        match &self.0 {
            Outcome::Complete(body) | Outcome::Failed(body) => Some(body.len()),
            _ => None,
        }
    }
}

/// The layers a server was given, erased: each
/// [`Server::with_layer`] wraps the stack so far. A clone is a reference
/// count, not a copy of the layers.
pub struct Stack {
    erased: Erased,
    /// The layers below, cloned for one request when a layer above asks
    /// for readiness (a concurrency limit's permit, say), so that a layer
    /// such as load shedding sees that they are not ready.
    ready: Option<Box<dyn Ready>>,
}

impl Clone for Stack {
    fn clone(&self) -> Self {
        Self {
            erased: self.erased.clone(),
            ready: None,
        }
    }
}

/// The pipeline itself needs no box: only the layers around it are erased.
#[derive(Clone)]
enum Erased {
    Pipeline,
    Layers(Arc<dyn Serve>),
}

/// A service served by reference: each call clones the (concrete, usually
/// cheap) service and drives it to its answer, readiness included, as
/// tower's `oneshot` does. Unlike `BoxCloneService`, cloning the stack for
/// a request allocates nothing.
trait Serve: Send + Sync {
    fn serve(&self, req: McpRequest) -> BoxFuture<'static, Result<McpResponse, BoxError>>;

    /// A clone of the service, to be made ready and then called.
    fn ready(&self) -> Box<dyn Ready>;
}

/// One clone of the layers, between readiness and its call.
trait Ready: Send + Sync {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>>;
    fn start(&mut self, req: McpRequest) -> BoxFuture<'static, Result<McpResponse, BoxError>>;
}

/// [`Serve`] for a tower service.
struct Shared<S>(S);

impl<S> Serve for Shared<S>
where
    S: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn serve(&self, req: McpRequest) -> BoxFuture<'static, Result<McpResponse, BoxError>> {
        let service = self.0.clone();
        Box::pin(async move { service.oneshot(req).await.map_err(Into::into) })
    }

    fn ready(&self) -> Box<dyn Ready> {
        Box::new(self.0.clone())
    }
}

impl<S> Ready for S
where
    S: Service<McpRequest, Response = McpResponse> + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Service::poll_ready(self, cx).map_err(Into::into)
    }

    fn start(&mut self, req: McpRequest) -> BoxFuture<'static, Result<McpResponse, BoxError>> {
        let future = Service::call(self, req);
        Box::pin(async move { future.await.map_err(Into::into) })
    }
}

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stack")
    }
}

impl Stack {
    /// The pipeline with no layer.
    pub(crate) fn pipeline() -> Self {
        Self {
            erased: Erased::Pipeline,
            ready: None,
        }
    }

    /// `layer` around this stack.
    pub(crate) fn wrap<L>(self, layer: &L) -> Self
    where
        L: Layer<Stack>,
        L::Service: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
        <L::Service as Service<McpRequest>>::Error: Into<BoxError>,
        <L::Service as Service<McpRequest>>::Future: Send + 'static,
    {
        Self {
            erased: Erased::Layers(Arc::new(Shared(layer.layer(self)))),
            ready: None,
        }
    }

    /// Serves `req` through the layers; an error of a layer becomes its
    /// JSON-RPC error.
    pub(crate) async fn serve(mut self, req: McpRequest) -> Outcome {
        match self.call(req).await {
            Ok(response) => response.0,
            Err(e) => outcome_of_error(&e),
        }
    }
}

/// The pipeline under the layers.
async fn pipeline(req: McpRequest) -> Outcome {
    let McpRequest {
        p,
        cancel,
        outbound,
        server,
    } = req;
    server.core(p, || cancel, outbound).outcome().await
}

/// Ready as the layers inside are: the first `poll_ready` of a clone
/// clones them for the request. Called without it (as the outermost
/// stack is), a request waits for their readiness itself.
impl Service<McpRequest> for Stack {
    type Response = McpResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<McpResponse, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match &self.erased {
            Erased::Pipeline => Poll::Ready(Ok(())),
            Erased::Layers(layers) => self.ready.get_or_insert_with(|| layers.ready()).poll(cx),
        }
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        if let Some(mut ready) = self.ready.take() {
            return ready.start(req);
        }
        match &self.erased {
            Erased::Pipeline => Box::pin(async move { Ok(McpResponse(pipeline(req).await)) }),
            Erased::Layers(layers) => layers.serve(req),
        }
    }
}

/// The JSON-RPC error for a layer's error: tower's overload (load
/// shedding) is a busy refusal, its timeout an internal error that says
/// so; anything else is logged and answered without its text, which may
/// hold internals.
pub(crate) fn outcome_of_error(e: &BoxError) -> Outcome {
    if e.is::<tower::load_shed::error::Overloaded>() {
        return Outcome::error(RpcError::Busy(ErrorObject::internal(
            "the server is overloaded; retry later",
        )));
    }
    if e.is::<tower::timeout::error::Elapsed>() {
        return Outcome::error(ErrorObject::internal(
            "the request timed out and was cancelled",
        ));
    }
    crate::log_limit::error_limited!(error = %e, "a middleware layer failed");
    Outcome::error(ErrorObject::internal("the request failed in the server"))
}

/// The text of a tool call cancelled at its time limit.
pub(crate) fn timed_out_text(tool: &str, limit: std::time::Duration) -> String {
    format!(
        "the tool {tool:?} did not finish within {} ms and was cancelled",
        limit.as_millis()
    )
}

/// The message of a tool call refused at the tool's concurrency limit.
pub(crate) fn at_limit_text(tool: &str, limit: usize) -> String {
    format!("the tool {tool:?} is already running {limit} calls, its limit; retry later")
}

/// The text of a tool result refused for its size.
pub(crate) fn too_large_text(tool: &str, size: usize, limit: usize) -> String {
    format!(
        "the result of the tool {tool:?} is {size} bytes, over this server's limit of {limit} bytes; ask for less"
    )
}
