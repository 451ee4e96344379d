//! The rate limits on invocations (`ServerConfig::with_rate_limit` and
//! `with_tool_rate_limit`) as the innermost layer: a server with limits
//! gets it when built, so every layer a user adds sees its refusals. A
//! server without limits has no such layer and pays nothing for them.
//!
//! Every invocation (`tools/call`, `prompts/get`, `resources/read`,
//! `completion/complete`) counts here once; the legacy shim counts each
//! further round it runs itself (`legacy::rounds`).
//!
//! Spec: server/tools.mdx#security-considerations

use super::around::{Answer, Around, Wrapped};
use super::{BoxError, McpRequest, McpResponse};
use crate::server::JobKind;
use std::future::Future;
use tower::Layer;

/// Counts each invocation against its caller's bucket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RateLimitLayer;

impl<S> Layer<S> for RateLimitLayer {
    type Service = Wrapped<S, RateLimitLayer>;

    fn layer(&self, inner: S) -> Self::Service {
        Wrapped {
            inner,
            layer: *self,
        }
    }
}

impl Around for RateLimitLayer {
    fn around<N, F>(&self, req: McpRequest, next: N) -> Answer
    where
        N: FnOnce(McpRequest) -> F,
        F: Future<Output = Result<McpResponse, BoxError>> + Send + 'static,
    {
        if JobKind::of(req.method()).is_some()
            && let Err(limited) = req.server.check_rate_limit(&req.p)
        {
            return Box::pin(std::future::ready(Ok(McpResponse(limited))));
        }
        Box::pin(next(req))
    }
}
