//! A layer applied to chosen requests only: some methods, or some tools.
//! The others go straight to the inner service.

use super::{BoxError, McpRequest, McpResponse};
use futures_util::future::{BoxFuture, Either};
use std::sync::Arc;
use std::task::{Context, Poll};
use toolwire_proto::types::Method;
use tower::{Layer, Service, ServiceExt};

type Predicate = Arc<dyn Fn(&McpRequest) -> bool + Send + Sync>;

/// `layer` for the requests `Select` picks; the rest skip it.
///
/// ```
/// use std::time::Duration;
/// use toolwire::middleware::{AuditLayer, PerTool, Select, ToolTimeoutLayer};
/// use toolwire::proto::types::Method;
///
/// // Audit only the invocations, not discovery or the lists.
/// let audit = Select::methods([Method::CallTool, Method::GetPrompt], AuditLayer::new());
/// // The same as ToolTimeoutLayer's own per-tool setting, for any layer.
/// let slow = Select::tools(["build"], ToolTimeoutLayer::new(PerTool::all(Duration::from_secs(300))));
/// # let _ = (audit, slow);
/// ```
#[derive(Clone)]
pub struct Select<L> {
    layer: L,
    picks: Predicate,
}

impl<L> std::fmt::Debug for Select<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Select")
    }
}

impl<L> Select<L> {
    /// `layer` for the requests of these methods.
    pub fn methods(methods: impl IntoIterator<Item = Method>, layer: L) -> Self {
        let methods: Vec<Method> = methods.into_iter().collect();
        Self::when(move |req| methods.contains(req.method()), layer)
    }

    /// `layer` for the calls of these tools.
    pub fn tools<I, N>(tools: I, layer: L) -> Self
    where
        I: IntoIterator<Item = N>,
        N: Into<String>,
    {
        let tools: Vec<String> = tools.into_iter().map(Into::into).collect();
        Self::when(
            move |req| req.tool().is_some_and(|t| tools.iter().any(|n| n == t)),
            layer,
        )
    }

    /// `layer` for the requests `picks` returns `true` for.
    pub fn when(picks: impl Fn(&McpRequest) -> bool + Send + Sync + 'static, layer: L) -> Self {
        Self {
            layer,
            picks: Arc::new(picks),
        }
    }
}

impl<L, S> Layer<S> for Select<L>
where
    L: Layer<S>,
    S: Clone,
{
    type Service = SelectService<L::Service, S>;

    fn layer(&self, inner: S) -> Self::Service {
        SelectService {
            picked: self.layer.layer(inner.clone()),
            inner,
            picks: Arc::clone(&self.picks),
        }
    }
}

/// The service of [`Select`].
#[derive(Clone)]
pub struct SelectService<P, S> {
    picked: P,
    inner: S,
    picks: Predicate,
}

impl<P, S> std::fmt::Debug for SelectService<P, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SelectService")
    }
}

impl<P, S> Service<McpRequest> for SelectService<P, S>
where
    P: Service<McpRequest, Response = McpResponse> + Clone + Send + 'static,
    P::Error: Into<BoxError>,
    P::Future: Send + 'static,
    S: Service<McpRequest, Response = McpResponse> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = McpResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<McpResponse, BoxError>>;

    /// Readiness is awaited on the branch a request takes, in `call`.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        let call = if (self.picks)(&req) {
            Either::Left(self.picked.clone().oneshot(req))
        } else {
            Either::Right(self.inner.clone().oneshot(req))
        };
        Box::pin(async move {
            match call {
                Either::Left(c) => c.await.map_err(Into::into),
                Either::Right(c) => c.await.map_err(Into::into),
            }
        })
    }
}
