//! A limit on how many calls of each tool run at once. A call past the
//! limit is refused at once (`-32603`, which HTTP answers with `503` and
//! `Retry-After`) rather than queued: a queue would only hold the caller's
//! connection and grow.

use super::around::{Answer, Around, Wrapped};
use super::{BoxError, McpRequest, McpResponse, PerTool};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;
use tower::Layer;

/// Tools with a default limit get their counter on first use; at most this
/// many are kept (the registered tools, which a server bounds itself).
const MAX_COUNTERS: usize = 4096;

/// Limits the calls of each tool in flight at once. Other methods pass
/// through.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimitLayer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    limits: PerTool<usize>,
    /// One semaphore per tool, created when first called.
    counters: Mutex<HashMap<Box<str>, Arc<Semaphore>>>,
}

impl ConcurrencyLimitLayer {
    /// The limits, per tool; a limit of 0 is taken as 1.
    pub fn new(limits: PerTool<usize>) -> Self {
        let counters = limits
            .named()
            .map(|(name, &n)| (Box::from(name), Arc::new(Semaphore::new(n.max(1)))))
            .collect();
        Self {
            shared: Arc::new(Shared {
                limits,
                counters: Mutex::new(counters),
            }),
        }
    }
}

impl Shared {
    /// The counter of a tool that has a limit and that the server has.
    fn counter(&self, req: &McpRequest, name: &str) -> Option<(Arc<Semaphore>, usize)> {
        let limit = (*self.limits.get(name)?).max(1);
        let mut counters = self.counters.lock().ok()?;
        if let Some(counter) = counters.get(name) {
            return Some((Arc::clone(counter), limit));
        }
        // Only registered tools get a counter of the default's, so unknown
        // names (refused by the pipeline) cannot grow the table.
        if counters.len() >= MAX_COUNTERS || !req.server.has_tool(name) {
            return None;
        }
        let counter = Arc::new(Semaphore::new(limit));
        counters.insert(Box::from(name), Arc::clone(&counter));
        Some((counter, limit))
    }
}

impl<S> Layer<S> for ConcurrencyLimitLayer {
    type Service = ConcurrencyLimitService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Wrapped {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`ConcurrencyLimitLayer`].
pub type ConcurrencyLimitService<S> = Wrapped<S, ConcurrencyLimitLayer>;

impl Around for ConcurrencyLimitLayer {
    fn around<N, F>(&self, req: McpRequest, next: N) -> Answer
    where
        N: FnOnce(McpRequest) -> F,
        F: Future<Output = Result<McpResponse, BoxError>> + Send + 'static,
    {
        let counter = req
            .tool()
            .and_then(|name| self.shared.counter(&req, name).map(|c| (name, c)));
        let permit = match counter {
            None => None,
            Some((name, (counter, limit))) => match counter.try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => {
                    let refusal = McpResponse::busy(super::at_limit_text(name, limit));
                    return Box::pin(async move { Ok(refusal) });
                }
            },
        };
        let call = next(req);
        Box::pin(async move {
            let answer = call.await;
            drop(permit);
            answer
        })
    }
}
