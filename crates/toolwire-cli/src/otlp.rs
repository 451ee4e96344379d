//! `serve --otlp URL`: the server's spans (one per request, continuing the
//! caller's `_meta` trace context) and its metrics
//! (`mcp.server.operation.duration` and the request, error and
//! `input_required` counts) exported over OTLP/HTTP with protobuf bodies.
//! Built only with the `otel` feature.

use anyhow::Context as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::metrics::periodic_reader_with_async_runtime::PeriodicReader;
use opentelemetry_sdk::runtime::Tokio;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use std::time::Duration;

/// How often the metrics are exported (and once more at shutdown).
const METRICS_INTERVAL: Duration = Duration::from_secs(10);

/// The installed exporters; [`shutdown`](Self::shutdown) sends what is left.
pub(crate) struct Exporting {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
}

/// The endpoint of `signal` (`traces`, `metrics`) for `URL`: a collector's
/// base URL (such as `http://localhost:4318`) gets `/v1/SIGNAL`, the
/// OTLP/HTTP convention; a URL that ends in `/v1/traces` (as `--otlp`
/// once took) has that part replaced.
fn endpoint(url: &str, signal: &str) -> String {
    let base = url.strip_suffix("/v1/traces").unwrap_or(url);
    format!("{}/v1/{signal}", base.trim_end_matches('/'))
}

/// Installs the global tracer provider that exports to `url`. Must run
/// inside the Tokio runtime: the batch exporter is one of its tasks.
pub(crate) fn install(url: &str) -> anyhow::Result<Exporting> {
    anyhow::ensure!(
        url.starts_with("http://"),
        "--otlp expects an http:// URL (TLS is not built in), for example http://127.0.0.1:4318; got {url:?}"
    );
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint(url, "traces"))
        .build()
        .with_context(|| format!("configuring the OTLP exporter for {url}"))?;
    let resource = Resource::builder().with_service_name("toolwire").build();
    let traces = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(exporter, Tokio).build())
        .with_resource(resource.clone())
        .build();
    opentelemetry::global::set_tracer_provider(traces.clone());
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint(url, "metrics"))
        .build()
        .with_context(|| format!("configuring the OTLP metrics exporter for {url}"))?;
    let reader = PeriodicReader::builder(exporter, Tokio)
        .with_interval(METRICS_INTERVAL)
        .build();
    let metrics = SdkMeterProvider::builder()
        .with_reader(reader)
        .with_resource(resource)
        .build();
    opentelemetry::global::set_meter_provider(metrics.clone());
    Ok(Exporting { traces, metrics })
}

impl Exporting {
    /// Exports the spans still queued and stops. The SDK blocks while it
    /// waits for the export task, so it waits on a blocking thread, leaving
    /// the runtime free to run that task.
    pub(crate) async fn shutdown(self) {
        let Self { traces, metrics } = self;
        let done = tokio::task::spawn_blocking(move || (traces.shutdown(), metrics.shutdown()));
        match done.await {
            Ok((Ok(()), Ok(()))) => {}
            Ok((Err(e), _)) => tracing::warn!("exporting the last spans over OTLP: {e}"),
            Ok((_, Err(e))) => tracing::warn!("exporting the last metrics over OTLP: {e}"),
            Err(e) => tracing::warn!("stopping the OTLP exporter: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::endpoint;

    #[test]
    fn a_base_url_gets_the_signal_path() {
        assert_eq!(
            endpoint("http://127.0.0.1:4318", "traces"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(endpoint("http://h:1/", "metrics"), "http://h:1/v1/metrics");
        assert_eq!(
            endpoint("http://h:1/v1/traces", "traces"),
            "http://h:1/v1/traces"
        );
        assert_eq!(
            endpoint("http://h:1/v1/traces", "metrics"),
            "http://h:1/v1/metrics"
        );
    }
}
