//! A time limit per tool: a `tools/call` still running when its limit
//! passes is cancelled (its handler's cancellation token fires and its
//! future is dropped) and answered with an `isError` result that says so,
//! which the model can act on.

use super::{BoxError, McpRequest, McpResponse, PerTool};
use futures_util::future::BoxFuture;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Layer, Service};

/// Limits how long each tool's calls may run. Other methods pass through.
///
/// ```
/// use std::time::Duration;
/// use toolwire::middleware::{PerTool, ToolTimeoutLayer};
///
/// // 30 s for every tool, 5 min for `build`.
/// let layer = ToolTimeoutLayer::new(
///     PerTool::all(Duration::from_secs(30)).tool("build", Duration::from_secs(300)),
/// );
/// # let _ = layer;
/// ```
#[derive(Debug, Clone)]
pub struct ToolTimeoutLayer {
    limits: Arc<PerTool<Duration>>,
}

impl ToolTimeoutLayer {
    /// The limits, per tool.
    pub fn new(limits: PerTool<Duration>) -> Self {
        Self {
            limits: Arc::new(limits),
        }
    }
}

impl<S> Layer<S> for ToolTimeoutLayer {
    type Service = ToolTimeoutService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ToolTimeoutService {
            inner,
            limits: Arc::clone(&self.limits),
        }
    }
}

/// The service of [`ToolTimeoutLayer`].
#[derive(Debug, Clone)]
pub struct ToolTimeoutService<S> {
    inner: S,
    limits: Arc<PerTool<Duration>>,
}

impl<S> Service<McpRequest> for ToolTimeoutService<S>
where
    S: Service<McpRequest, Response = McpResponse>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = McpResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<McpResponse, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: McpRequest) -> Self::Future {
        let Some(&limit) = req.tool().and_then(|t| self.limits.get(t)) else {
            let call = self.inner.call(req);
            return Box::pin(async move { call.await.map_err(Into::into) });
        };
        let name = req.tool().unwrap_or_default().to_owned();
        let responder = req.responder();
        // The handler's own token, so that firing it cancels the handler
        // and not the request: the transport still sends the answer.
        let cancel = req.cancel.child_token();
        req.cancel = cancel.clone();
        let call = self.inner.call(req);
        Box::pin(async move {
            match tokio::time::timeout(limit, call).await {
                Ok(answer) => answer.map_err(Into::into),
                Err(_) => {
                    cancel.cancel();
                    Ok(responder.tool_error(format!(
                        "the tool {name:?} did not finish within {} ms and was cancelled",
                        limit.as_millis()
                    )))
                }
            }
        })
    }
}
