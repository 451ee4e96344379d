//! A time limit per tool: a `tools/call` still running when its limit
//! passes is cancelled (its handler's cancellation token fires and its
//! future is dropped) and answered with an `isError` result that says so,
//! which the model can act on.

use super::around::{Answer, Around, Wrapped};
use super::{BoxError, McpRequest, McpResponse, PerTool};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tower::Layer;

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
        Wrapped {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`ToolTimeoutLayer`].
pub type ToolTimeoutService<S> = Wrapped<S, ToolTimeoutLayer>;

impl Around for ToolTimeoutLayer {
    fn around<N, F>(&self, mut req: McpRequest, next: N) -> Answer
    where
        N: FnOnce(McpRequest) -> F,
        F: Future<Output = Result<McpResponse, BoxError>> + Send + 'static,
    {
        let Some(&limit) = req.tool().and_then(|t| self.limits.get(t)) else {
            let call = next(req);
            return Box::pin(call);
        };
        let name = req.tool().unwrap_or_default().to_owned();
        let responder = req.responder();
        // The handler's own token, so that firing it cancels the handler
        // and not the request: the transport still sends the answer.
        let cancel = req.cancel.child_token();
        req.cancel = cancel.clone();
        let call = next(req);
        Box::pin(async move {
            match tokio::time::timeout(limit, call).await {
                Ok(answer) => answer,
                Err(_) => {
                    cancel.cancel();
                    Ok(responder.tool_error(super::timed_out_text(&name, limit)))
                }
            }
        })
    }
}
