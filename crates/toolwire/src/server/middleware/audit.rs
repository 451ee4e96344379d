//! The audit log: one structured line per request that passes the layer,
//! with the method, what it names, the principal, the era, the outcome's
//! kind, `isError`, the error code and the duration. Never the arguments
//! unless asked ([`AuditLayer::with_arguments`]), never a token (the
//! pipeline does not carry one). A request dropped before its outcome (the
//! client cancelled, or went away) is logged as `cancelled`.
//!
//! Placed outermost, the layer sees the refusals of every layer inside it
//! and of the pipeline (rate limits, unknown tools, scope checks).

use super::around::{Answer, Around, Wrapped};
use super::{BoxError, McpRequest, McpResponse, OutcomeKind};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::Layer;

/// Where audit records go: by default a `tracing` event at `INFO` with the
/// target `toolwire::audit`.
type Sink = Arc<dyn Fn(&AuditRecord) + Send + Sync>;

/// One audited request. Serialised (as a JSON line, say) with camelCase
/// member names, the duration as `durationUs`, and absent members left out.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuditRecord {
    /// The JSON-RPC id, as written.
    pub id: String,
    /// The method name.
    pub method: String,
    /// The tool, prompt or resource URI the request names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The authenticated caller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The request's protocol version: its `_meta`'s, or the negotiated
    /// version of its legacy session.
    pub protocol_version: String,
    /// `complete`, `tool_error`, `input_required`, `error`, `stream`, or
    /// `cancelled` for a request dropped before its outcome.
    pub outcome: &'static str,
    /// Whether the result says `isError: true`.
    pub is_error: bool,
    /// The JSON-RPC error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// From the layer's call to the outcome.
    #[serde(rename = "durationUs", serialize_with = "micros")]
    pub duration: Duration,
    /// The arguments, only with [`AuditLayer::with_arguments`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

fn micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Writes an [`AuditRecord`] per request.
#[derive(Clone)]
pub struct AuditLayer {
    sink: Sink,
    arguments: bool,
}

impl std::fmt::Debug for AuditLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLayer")
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl Default for AuditLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl AuditLayer {
    /// Records as `tracing` events (`INFO`, target `toolwire::audit`).
    pub fn new() -> Self {
        Self::with_sink(log)
    }

    /// Records handed to `sink` instead (a file, a queue, a test).
    pub fn with_sink(sink: impl Fn(&AuditRecord) + Send + Sync + 'static) -> Self {
        Self {
            sink: Arc::new(sink),
            arguments: false,
        }
    }

    /// Records carry the arguments of `tools/call` and `prompts/get`. Off
    /// by default: arguments may hold what the user typed.
    #[must_use]
    pub fn with_arguments(mut self) -> Self {
        self.arguments = true;
        self
    }
}

fn log(r: &AuditRecord) {
    let arguments = r.arguments.as_ref().map(Value::to_string);
    tracing::info!(
        target: "toolwire::audit",
        id = %r.id,
        method = %r.method,
        name = r.name.as_deref(),
        principal = r.principal.as_deref(),
        protocol_version = %r.protocol_version,
        outcome = r.outcome,
        is_error = r.is_error,
        code = r.code,
        duration_us = u64::try_from(r.duration.as_micros()).unwrap_or(u64::MAX),
        arguments = arguments.as_deref(),
        "request served"
    );
}

impl<S> Layer<S> for AuditLayer {
    type Service = AuditService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Wrapped {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`AuditLayer`].
pub type AuditService<S> = Wrapped<S, AuditLayer>;

/// The record of a request in flight: written when the outcome is known,
/// or as `cancelled` when the request is dropped first.
struct Pending {
    record: Option<AuditRecord>,
    started: Instant,
    sink: Sink,
}

impl Pending {
    fn finish(mut self, response: &McpResponse) {
        if let Some(mut record) = self.record.take() {
            record.outcome = response.kind().as_str();
            record.is_error = response.kind() == OutcomeKind::ToolError;
            record.code = response.error_object().map(|e| e.code.0);
            record.duration = self.started.elapsed();
            (self.sink)(&record);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(mut record) = self.record.take() {
            record.duration = self.started.elapsed();
            (self.sink)(&record);
        }
    }
}

impl Around for AuditLayer {
    fn around<N, F>(&self, req: McpRequest, next: N) -> Answer
    where
        N: FnOnce(McpRequest) -> F,
        F: Future<Output = Result<McpResponse, BoxError>> + Send + 'static,
    {
        let record = AuditRecord {
            id: req.id().to_string(),
            method: req.method().as_str().to_owned(),
            name: req.name().map(str::to_owned),
            principal: req.principal().map(str::to_owned),
            protocol_version: req.protocol_version().to_owned(),
            outcome: "cancelled",
            is_error: false,
            code: None,
            duration: Duration::ZERO,
            arguments: self.arguments.then(|| req.arguments().cloned()).flatten(),
        };
        let pending = Pending {
            record: Some(record),
            started: Instant::now(),
            sink: Arc::clone(&self.sink),
        };
        let call = next(req);
        Box::pin(async move {
            let answer = call.await?;
            pending.finish(&answer);
            Ok(answer)
        })
    }
}
