//! Metrics after the OpenTelemetry semantic conventions for MCP: the
//! histogram `mcp.server.operation.duration` (seconds) with the attributes
//! `mcp.method.name`, `gen_ai.tool.name` and `error.type`, and counts of
//! requests, errors and `input_required` answers. Kept in process and
//! rendered in the Prometheus text format ([`Metrics::render_prometheus`],
//! served by `toolwire serve --metrics ADDR`); with the `otel` feature the
//! same measurements also go to the global OpenTelemetry meter, which an
//! OTLP exporter can send on.
//!
//! The label sets are bounded: a tool name is a label only when the server
//! has that tool (`_unknown` otherwise, since names come from clients),
//! and past [`MAX_SERIES`] label sets new ones are counted under `_other`.

use super::around::{Answer, Around, Wrapped};
use super::{BoxError, McpRequest, McpResponse, OutcomeKind};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tower::Layer;

/// The histogram's bucket bounds, in seconds: the ones the semantic
/// conventions recommend for `mcp.server.operation.duration`.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// At most this many label sets are kept; later ones share `_other`.
pub const MAX_SERIES: usize = 2048;

/// The label set of one series.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Labels {
    method: Box<str>,
    tool: Option<Box<str>>,
    /// The JSON-RPC error code, or `tool_error` for an `isError` result.
    error: Option<Box<str>>,
}

#[derive(Debug, Default, Clone)]
struct Series {
    /// Per bucket (not cumulative); the last counts what is above every
    /// bound.
    buckets: [u64; DURATION_BUCKETS.len() + 1],
    count: u64,
    sum: f64,
    input_required: u64,
}

/// The measurements of a server, shared by its [`MetricsLayer`]s.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    series: Arc<Mutex<HashMap<Labels, Series>>>,
}

impl Metrics {
    /// No measurements yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The layer that measures into these metrics.
    pub fn layer(&self) -> MetricsLayer {
        MetricsLayer {
            metrics: self.clone(),
        }
    }

    fn record(&self, labels: Labels, seconds: f64, input_required: bool) {
        let Ok(mut series) = self.series.lock() else {
            return;
        };
        let labels = if series.len() >= MAX_SERIES && !series.contains_key(&labels) {
            Labels {
                method: labels.method,
                tool: labels.tool.map(|_| "_other".into()),
                error: labels.error,
            }
        } else {
            labels
        };
        let s = series.entry(labels).or_default();
        let bucket = DURATION_BUCKETS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(DURATION_BUCKETS.len());
        s.buckets[bucket] += 1;
        s.count += 1;
        s.sum += seconds;
        if input_required {
            s.input_required += 1;
        }
    }

    /// Everything measured, in the Prometheus text exposition format
    /// (version 0.0.4): `mcp_server_operation_duration_seconds` (a
    /// histogram), `mcp_server_requests_total`, `mcp_server_errors_total`
    /// and `mcp_server_input_required_total`, each labelled with
    /// `mcp_method_name`, `gen_ai_tool_name` and (errors) `error_type`.
    pub fn render_prometheus(&self) -> String {
        let mut series: Vec<(Labels, Series)> = match self.series.lock() {
            Ok(s) => s.iter().map(|(l, s)| (l.clone(), s.clone())).collect(),
            Err(_) => Vec::new(),
        };
        series.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = String::new();
        let histogram = "mcp_server_operation_duration_seconds";
        let _ = writeln!(
            out,
            "# HELP {histogram} Duration of MCP requests as the server observed them."
        );
        let _ = writeln!(out, "# TYPE {histogram} histogram");
        for (labels, s) in &series {
            let mut cumulative = 0;
            for (i, bound) in DURATION_BUCKETS.iter().enumerate() {
                cumulative += s.buckets[i];
                let le = format!("{bound}");
                let _ = writeln!(
                    out,
                    "{histogram}_bucket{{{},le=\"{le}\"}} {cumulative}",
                    label_text(labels, true)
                );
            }
            let _ = writeln!(
                out,
                "{histogram}_bucket{{{},le=\"+Inf\"}} {}",
                label_text(labels, true),
                s.count
            );
            let _ = writeln!(
                out,
                "{histogram}_sum{{{}}} {}",
                label_text(labels, true),
                s.sum
            );
            let _ = writeln!(
                out,
                "{histogram}_count{{{}}} {}",
                label_text(labels, true),
                s.count
            );
        }
        let counter = |out: &mut String,
                       name: &str,
                       help: &str,
                       errors: bool,
                       f: &dyn Fn(&Labels, &Series) -> Option<u64>| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            let mut sums: Vec<(String, u64)> = Vec::new();
            for (labels, s) in &series {
                if let Some(n) = f(labels, s) {
                    let key = label_text(labels, errors);
                    match sums.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, total)) => *total += n,
                        None => sums.push((key, n)),
                    }
                }
            }
            for (key, n) in sums {
                let _ = writeln!(out, "{name}{{{key}}} {n}");
            }
        };
        counter(
            &mut out,
            "mcp_server_requests_total",
            "MCP requests served.",
            false,
            &|_, s| Some(s.count),
        );
        counter(
            &mut out,
            "mcp_server_errors_total",
            "MCP requests answered with a JSON-RPC error or an isError result.",
            true,
            &|l, s| l.error.is_some().then_some(s.count),
        );
        counter(
            &mut out,
            "mcp_server_input_required_total",
            "MCP requests answered with input_required.",
            false,
            &|_, s| (s.input_required > 0).then_some(s.input_required),
        );
        out
    }
}

/// `mcp_method_name="…",gen_ai_tool_name="…"[,error_type="…"]`.
fn label_text(l: &Labels, with_error: bool) -> String {
    let mut out = format!("mcp_method_name=\"{}\"", escape(&l.method));
    if let Some(tool) = &l.tool {
        let _ = write!(out, ",gen_ai_tool_name=\"{}\"", escape(tool));
    }
    if with_error && let Some(error) = &l.error {
        let _ = write!(out, ",error_type=\"{}\"", escape(error));
    }
    out
}

/// A label value escaped as the text format wants: `\`, `"` and newlines.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Measures every request that passes it into a [`Metrics`].
#[derive(Debug, Clone)]
pub struct MetricsLayer {
    metrics: Metrics,
}

impl<S> Layer<S> for MetricsLayer {
    type Service = MetricsService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Wrapped {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`MetricsLayer`].
pub type MetricsService<S> = Wrapped<S, MetricsLayer>;

impl Around for MetricsLayer {
    fn around<N, F>(&self, req: McpRequest, next: N) -> Answer
    where
        N: FnOnce(McpRequest) -> F,
        F: Future<Output = Result<McpResponse, BoxError>> + Send + 'static,
    {
        let method: Box<str> = req.method().as_str().into();
        // Client-chosen names become labels only when the server has them.
        let tool: Option<Box<str>> = req.tool().map(|name| match req.server.has_tool(name) {
            true => name.into(),
            false => "_unknown".into(),
        });
        let metrics = self.metrics.clone();
        let started = Instant::now();
        let call = next(req);
        Box::pin(async move {
            let answer = call.await?;
            let seconds = started.elapsed().as_secs_f64();
            let error: Option<Box<str>> = match answer.kind() {
                OutcomeKind::ToolError => Some("tool_error".into()),
                OutcomeKind::Error => answer.error_object().map(|e| e.code.0.to_string().into()),
                _ => None,
            };
            let input_required = answer.kind() == OutcomeKind::InputRequired;
            #[cfg(feature = "otel")]
            otel::record(
                &method,
                tool.as_deref(),
                error.as_deref(),
                seconds,
                input_required,
            );
            metrics.record(
                Labels {
                    method,
                    tool,
                    error,
                },
                seconds,
                input_required,
            );
            Ok(answer)
        })
    }
}

/// The same measurements on the global OpenTelemetry meter.
#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram};
    use std::sync::LazyLock;

    struct Instruments {
        duration: Histogram<f64>,
        requests: Counter<u64>,
        errors: Counter<u64>,
        input_required: Counter<u64>,
    }

    static INSTRUMENTS: LazyLock<Instruments> = LazyLock::new(|| {
        let meter = opentelemetry::global::meter("toolwire");
        Instruments {
            duration: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("Duration of MCP requests as the server observed them.")
                .with_boundaries(super::DURATION_BUCKETS.to_vec())
                .build(),
            requests: meter
                .u64_counter("mcp.server.requests")
                .with_description("MCP requests served.")
                .build(),
            errors: meter
                .u64_counter("mcp.server.errors")
                .with_description("MCP requests answered with an error or an isError result.")
                .build(),
            input_required: meter
                .u64_counter("mcp.server.input_required")
                .with_description("MCP requests answered with input_required.")
                .build(),
        }
    });

    pub(super) fn record(
        method: &str,
        tool: Option<&str>,
        error: Option<&str>,
        seconds: f64,
        input_required: bool,
    ) {
        let mut attributes = vec![KeyValue::new("mcp.method.name", method.to_owned())];
        if let Some(tool) = tool {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
        }
        let i = &*INSTRUMENTS;
        i.requests.add(1, &attributes);
        if input_required {
            i.input_required.add(1, &attributes);
        }
        if let Some(error) = error {
            attributes.push(KeyValue::new("error.type", error.to_owned()));
            i.errors.add(1, &attributes);
        }
        i.duration.record(seconds, &attributes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_text_has_cumulative_buckets_and_escaped_labels() {
        let m = Metrics::new();
        let labels = |tool: &str, error: Option<&str>| Labels {
            method: "tools/call".into(),
            tool: Some(tool.into()),
            error: error.map(Into::into),
        };
        m.record(labels("echo", None), 0.005, false);
        m.record(labels("echo", None), 0.5, false);
        m.record(labels("say \"hi\"", Some("-32602")), 400.0, false);
        m.record(labels("echo", None), 0.001, true);
        let text = m.render_prometheus();
        assert!(text.contains("# TYPE mcp_server_operation_duration_seconds histogram"));
        let echo = "mcp_method_name=\"tools/call\",gen_ai_tool_name=\"echo\"";
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_bucket{{{echo},le=\"0.01\"}} 2\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_bucket{{{echo},le=\"0.5\"}} 3\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_count{{{echo}}} 3\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!("mcp_server_requests_total{{{echo}}} 3\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("mcp_server_input_required_total{{{echo}}} 1\n")),
            "{text}"
        );
        let odd = "gen_ai_tool_name=\"say \\\"hi\\\"\",error_type=\"-32602\"";
        assert!(
            text.contains(&format!(
                "mcp_server_errors_total{{mcp_method_name=\"tools/call\",{odd}}} 1\n"
            )),
            "{text}"
        );
        // Above every bound: only in +Inf.
        assert!(text.contains("le=\"300\"} 0\n"), "{text}");
    }

    #[test]
    fn label_sets_are_bounded() {
        let m = Metrics::new();
        for n in 0..(MAX_SERIES + 50) {
            let labels = Labels {
                method: "tools/call".into(),
                tool: Some(format!("t{n}").into()),
                error: None,
            };
            m.record(labels, 0.0, false);
        }
        let len = m.series.lock().map(|s| s.len()).unwrap_or_default();
        assert_eq!(len, MAX_SERIES + 1, "the extra ones share _other");
        assert!(
            m.render_prometheus()
                .contains("gen_ai_tool_name=\"_other\"")
        );
    }
}
