//! The server's side of a request's span (feature `otel`): what the span is
//! made of, read from the prepared request, and its end with the outcome.
//! The spans themselves are `otel.rs`'s, which sits below the server.

use super::{Outcome, Prepared};
use crate::otel::RequestSpan;
use std::future::Future;
use toolwire_proto::ErrorObject;

impl RequestSpan {
    /// The span of `p`: named `{method} {tool or prompt}`, parented on the
    /// caller's context from `_meta`.
    pub(crate) fn of(p: &Prepared) -> Self {
        Self::new(
            &p.method,
            p.id.to_string(),
            p.protocol_version(),
            p.params.name.as_deref(),
            p.params.uri.as_deref(),
            &p.meta,
        )
    }

    /// Runs `serve` with the span current (so a handler's own spans are its
    /// children), then ends the span with the outcome's status.
    pub(crate) async fn around(self, serve: impl Future<Output = Outcome>) -> Outcome {
        self.run(serve, error_of).await
    }

    /// Records a request answered at once (no handler ran).
    pub(crate) fn done(self, outcome: &Outcome) {
        self.record(error_of(outcome));
    }
}

/// The JSON-RPC error an outcome answers with, in its modern form.
fn error_of(outcome: &Outcome) -> Option<&ErrorObject> {
    match outcome {
        Outcome::Error(e) => Some(e.modern()),
        _ => None,
    }
}
