//! OpenTelemetry trace context (feature `otel`): the server's span per
//! request, continuing the caller's trace from `_meta`, and the client's
//! injection of its current context into `_meta`.
//!
//! Spec: basic/index.mdx#opentelemetry-trace-context — the `_meta` keys
//! `traceparent`, `tracestate` and `baggage` carry W3C Trace Context and W3C
//! Baggage. Span names and attributes follow the OpenTelemetry semantic
//! conventions for MCP (`{mcp.method.name} {target}`, a SERVER span).
//!
//! Spans go to the global tracer provider
//! ([`opentelemetry::global::set_tracer_provider`]); with none installed they
//! are no-ops.

#[cfg(feature = "client")]
use opentelemetry::propagation::Injector;
use opentelemetry::propagation::{Extractor, TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::{FutureExt, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, InstrumentationScope, KeyValue, global};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
#[cfg(feature = "client")]
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::LazyLock;
use std::time::SystemTime;
use toolwire_proto::ErrorObject;
use toolwire_proto::meta::{BAGGAGE_KEY, TRACEPARENT_KEY, TRACESTATE_KEY};
use toolwire_proto::types::{Method, RequestMeta};

/// W3C Trace Context and W3C Baggage: the two formats the spec names. Fixed
/// rather than the global propagator, whose default propagates nothing.
static PROPAGATOR: LazyLock<TextMapCompositePropagator> = LazyLock::new(|| {
    TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
});

/// The instrumentation scope of every span this crate starts.
static SCOPE: LazyLock<InstrumentationScope> = LazyLock::new(|| {
    InstrumentationScope::builder("toolwire")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
});

/// Reads the trace context members of a request's `_meta`.
struct MetaExtractor<'a>(&'a RequestMeta);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT_KEY => self.0.traceparent.as_deref(),
            TRACESTATE_KEY => self.0.tracestate.as_deref(),
            BAGGAGE_KEY => self.0.baggage.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        [
            (TRACEPARENT_KEY, &self.0.traceparent),
            (TRACESTATE_KEY, &self.0.tracestate),
            (BAGGAGE_KEY, &self.0.baggage),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| k)
        .collect()
    }
}

/// Writes trace context members into an outgoing request's `_meta`. A
/// member the caller set explicitly is kept.
#[cfg(feature = "client")]
struct MetaInjector<'a>(&'a mut Map<String, Value>);

#[cfg(feature = "client")]
impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0
            .entry(key.to_owned())
            .or_insert_with(|| Value::String(value));
    }
}

/// The remote context a request's `_meta` carries (an empty context when it
/// carries none, or a malformed one).
pub(crate) fn extract(meta: &RequestMeta) -> Context {
    PROPAGATOR.extract_with_context(&Context::new(), &MetaExtractor(meta))
}

/// Client side: the current context (its span and baggage) into `meta`.
#[cfg(feature = "client")]
pub(crate) fn inject(meta: &mut Map<String, Value>) {
    PROPAGATOR.inject_context(&Context::current(), &mut MetaInjector(meta));
}

/// What a request's span is made of, read from the request before it is
/// served (serving consumes it). The server's side, reading it from a
/// prepared request and ending it with the outcome, is `server/traced.rs`,
/// so that this module knows no server.
pub(crate) struct RequestSpan {
    start: SystemTime,
    name: String,
    attributes: Vec<KeyValue>,
    parent: Context,
}

impl RequestSpan {
    /// The span of a request to `method`: named `{method} {tool or prompt}`
    /// (`name` is the request's `params.name`), parented on the caller's
    /// context from `meta`. The server reads these from its prepared
    /// request (`server/traced.rs`).
    pub(crate) fn new(
        method: &Method,
        id: String,
        protocol_version: &str,
        name: Option<&str>,
        uri: Option<&str>,
        meta: &RequestMeta,
    ) -> Self {
        let method_name = method.as_str();
        let mut attributes = vec![
            KeyValue::new("mcp.method.name", method_name.to_owned()),
            KeyValue::new("jsonrpc.request.id", id),
            KeyValue::new("mcp.protocol.version", protocol_version.to_owned()),
        ];
        let target = match method {
            Method::CallTool => name.inspect(|name| {
                attributes.push(KeyValue::new("gen_ai.tool.name", (*name).to_owned()));
                attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }),
            Method::GetPrompt => name.inspect(|name| {
                attributes.push(KeyValue::new("gen_ai.prompt.name", (*name).to_owned()));
            }),
            _ => None,
        };
        // A URI is not a low-cardinality name: an attribute, not in the name.
        if let Some(uri) = uri {
            attributes.push(KeyValue::new("mcp.resource.uri", uri.to_owned()));
        }
        let name = match target {
            Some(target) => format!("{method_name} {target}"),
            None => method_name.to_owned(),
        };
        Self {
            start: SystemTime::now(),
            name,
            attributes,
            parent: extract(meta),
        }
    }

    /// Starts the span: the context it is current in.
    fn start(self) -> Context {
        let tracer = global::tracer_with_scope(SCOPE.clone());
        let span = tracer
            .span_builder(self.name)
            .with_kind(SpanKind::Server)
            .with_start_time(self.start)
            .with_attributes(self.attributes)
            .start_with_context(&tracer, &self.parent);
        self.parent.with_span(span)
    }

    /// Runs `serve` with the span current (so a handler's own spans are its
    /// children), then ends the span, an error status if `error` finds a
    /// JSON-RPC error in what `serve` gave.
    pub(crate) async fn run<T>(
        self,
        serve: impl Future<Output = T>,
        error: impl FnOnce(&T) -> Option<&ErrorObject>,
    ) -> T {
        let cx = self.start();
        let served = serve.with_context(cx.clone()).await;
        end(&cx, error(&served));
        served
    }

    /// Records a request answered at once (no handler ran) with `error`,
    /// if it failed.
    pub(crate) fn record(self, error: Option<&ErrorObject>) {
        end(&self.start(), error);
    }
}

/// Ends the span of `cx`, an error status for a JSON-RPC error.
fn end(cx: &Context, error: Option<&ErrorObject>) {
    let span = cx.span();
    if let Some(e) = error {
        let code = e.code.0.to_string();
        span.set_attribute(KeyValue::new("rpc.response.status_code", code.clone()));
        span.set_attribute(KeyValue::new("error.type", code));
        span.set_status(Status::error(e.message.clone()));
    }
    span.end();
}

/// Marks the current request's span failed: a `tools/call` result with
/// `isError`, which is a JSON-RPC success and would otherwise look healthy.
pub(crate) fn tool_failed() {
    let cx = Context::current();
    let span = cx.span();
    span.set_attribute(KeyValue::new("error.type", "tool_error"));
    span.set_status(Status::error("the tool reported an error (isError)"));
}

#[cfg(test)]
mod tests;
