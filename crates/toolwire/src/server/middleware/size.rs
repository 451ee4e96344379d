//! A cap on the size of a complete result. A result over it is not sent:
//! a `tools/call` gets an `isError` result that gives both sizes (so the
//! model can ask for less), any other method a `-32603` error with
//! `data.size` and `data.limit`.

use super::around::{Answer, Around, Wrapped};
use super::{BoxError, McpRequest, McpResponse, PerTool};
use serde_json::json;
use std::future::Future;
use std::sync::Arc;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::Method;
use tower::Layer;

/// Caps the encoded size of results: `max_bytes` for every method, with
/// per-tool overrides for `tools/call`.
#[derive(Debug, Clone)]
pub struct ResponseSizeLayer {
    limits: Arc<Limits>,
}

#[derive(Debug, Clone)]
struct Limits {
    all: usize,
    tools: PerTool<usize>,
}

impl ResponseSizeLayer {
    /// At most `max_bytes` of encoded JSON-RPC response per result.
    pub fn new(max_bytes: usize) -> Self {
        Self {
            limits: Arc::new(Limits {
                all: max_bytes,
                tools: PerTool::none(),
            }),
        }
    }

    /// At most `max_bytes` for the results of the tool `name`.
    #[must_use]
    pub fn tool(self, name: impl Into<String>, max_bytes: usize) -> Self {
        let Limits { all, tools } = Arc::unwrap_or_clone(self.limits);
        Self {
            limits: Arc::new(Limits {
                all,
                tools: tools.tool(name, max_bytes),
            }),
        }
    }
}

impl<S> Layer<S> for ResponseSizeLayer {
    type Service = ResponseSizeService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Wrapped {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`ResponseSizeLayer`].
pub type ResponseSizeService<S> = Wrapped<S, ResponseSizeLayer>;

impl Around for ResponseSizeLayer {
    fn around<N, F>(&self, req: McpRequest, next: N) -> Answer
    where
        N: FnOnce(McpRequest) -> F,
        F: Future<Output = Result<McpResponse, BoxError>> + Send + 'static,
    {
        let limit = req
            .tool()
            .and_then(|t| self.limits.tools.get(t))
            .copied()
            .unwrap_or(self.limits.all);
        let responder = req.responder();
        let name = req.name().map(str::to_owned);
        let call = next(req);
        Box::pin(async move {
            let answer = call.await?;
            let Some(size) = answer.encoded_len().filter(|&size| size > limit) else {
                return Ok(answer);
            };
            Ok(match responder.method() {
                Method::CallTool => responder.tool_error(super::too_large_text(
                    name.as_deref().unwrap_or_default(),
                    size,
                    limit,
                )),
                method => McpResponse::error(
                    ErrorObject::internal(format!(
                        "the result of {} is {size} bytes, over this server's limit of {limit} bytes",
                        method.as_str()
                    ))
                    .with_data(json!({ "size": size, "limit": limit })),
                ),
            })
        })
    }
}
