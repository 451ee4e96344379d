//! The scope check (feature `auth`) as a layer: inside every layer a user
//! adds, so that an audit log or the metrics see its refusals, and outside
//! the rate limit, so that a refused request does not count against the
//! caller. An authenticating transport turns it on; a server no such
//! transport serves has no such layer.
//!
//! A request without a grant (no resource server, or the stdio transport)
//! passes. One whose grant lacks a scope its operation needs is refused
//! with every scope it needs, which HTTP answers `403` with an
//! `insufficient_scope` challenge.
//!
//! Spec: basic/authorization/index.mdx#scope-challenge-handling

use super::around::{Answer, Around, Wrapped};
use super::{BoxError, McpRequest, McpResponse};
use crate::server::{Outcome, RpcError};
use std::future::Future;
use tower::Layer;

/// Refuses an operation the request's grant lacks scopes for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScopeLayer;

impl<S> Layer<S> for ScopeLayer {
    type Service = Wrapped<S, ScopeLayer>;

    fn layer(&self, inner: S) -> Self::Service {
        Wrapped {
            inner,
            layer: *self,
        }
    }
}

impl Around for ScopeLayer {
    fn around<N, F>(&self, req: McpRequest, next: N) -> Answer
    where
        N: FnOnce(McpRequest) -> F,
        F: Future<Output = Result<McpResponse, BoxError>> + Send + 'static,
    {
        if let Some(grant) = req.p.grant()
            && let Some(needed) = req.server.missing_scopes(&req.p, grant)
        {
            tracing::debug!(principal = %grant.principal, "insufficient scope");
            let refused = Outcome::error(RpcError::forbidden(&needed));
            return Box::pin(std::future::ready(Ok(McpResponse(refused))));
        }
        Box::pin(next(req))
    }
}
