//! What every built-in layer shares: a layer is a value that serves a
//! request around the rest of the stack ([`Around`]), and [`Wrapped`] is
//! the one `tower::Service` that runs it, so each layer writes only what
//! it does before and after.

use super::{BoxError, McpRequest, McpResponse};
use futures_util::future::BoxFuture;
use std::future::Future;
use std::task::{Context, Poll};
use tower::Service;

/// The rest of the stack's answer, as a built-in layer awaits it.
pub(crate) type Answer = BoxFuture<'static, Result<McpResponse, BoxError>>;

/// A built-in layer's work around one request.
pub(crate) trait Around {
    /// Serves `req`; `next` passes a request on to the rest of the stack.
    fn around<N, F>(&self, req: McpRequest, next: N) -> Answer
    where
        N: FnOnce(McpRequest) -> F,
        F: Future<Output = Result<McpResponse, BoxError>> + Send + 'static;
}

/// The service of a built-in layer `A` around the service `S`.
#[derive(Debug, Clone)]
pub struct Wrapped<S, A> {
    pub(crate) inner: S,
    pub(crate) layer: A,
}

impl<S, A> Service<McpRequest> for Wrapped<S, A>
where
    S: Service<McpRequest, Response = McpResponse>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    A: Around,
{
    type Response = McpResponse;
    type Error = BoxError;
    type Future = Answer;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: McpRequest) -> Answer {
        let inner = &mut self.inner;
        self.layer.around(req, |req| {
            let call = inner.call(req);
            async move { call.await.map_err(Into::into) }
        })
    }
}
