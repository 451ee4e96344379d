//! `serve --otlp URL`: the server's spans (one per request, continuing the
//! caller's `_meta` trace context) exported over OTLP/HTTP with protobuf
//! bodies. Built only with the `otel` feature.

use anyhow::Context as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::runtime::Tokio;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;

/// The installed exporter; [`shutdown`](Self::shutdown) sends what is left.
pub(crate) struct Exporting(SdkTracerProvider);

/// `URL` as given when it names the traces path, else `URL/v1/traces`: the
/// OTLP/HTTP convention for a collector's base URL (such as
/// `http://localhost:4318`).
fn traces_endpoint(url: &str) -> String {
    if url.ends_with("/v1/traces") {
        url.to_owned()
    } else {
        format!("{}/v1/traces", url.trim_end_matches('/'))
    }
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
        .with_endpoint(traces_endpoint(url))
        .build()
        .with_context(|| format!("configuring the OTLP exporter for {url}"))?;
    let provider = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(exporter, Tokio).build())
        .with_resource(Resource::builder().with_service_name("toolwire").build())
        .build();
    opentelemetry::global::set_tracer_provider(provider.clone());
    Ok(Exporting(provider))
}

impl Exporting {
    /// Exports the spans still queued and stops. The SDK blocks while it
    /// waits for the export task, so it waits on a blocking thread, leaving
    /// the runtime free to run that task.
    pub(crate) async fn shutdown(self) {
        let provider = self.0;
        let done = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("exporting the last spans over OTLP: {e}"),
            Err(e) => tracing::warn!("stopping the OTLP exporter: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::traces_endpoint;

    #[test]
    fn a_base_url_gets_the_traces_path() {
        assert_eq!(
            traces_endpoint("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(traces_endpoint("http://h:1/"), "http://h:1/v1/traces");
        assert_eq!(
            traces_endpoint("http://h:1/v1/traces"),
            "http://h:1/v1/traces"
        );
    }
}
