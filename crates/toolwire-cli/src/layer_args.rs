//! `serve`'s middleware flags: the audit log, per-tool timeouts and
//! concurrency limits, and the cap on a result's size, as layers around
//! the server's pipeline (`toolwire::middleware`).

use anyhow::Context as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;
use toolwire::Server;
use toolwire::middleware::{
    AuditLayer, ConcurrencyLimitLayer, Metrics, PerTool, ResponseSizeLayer, ToolTimeoutLayer,
    serve_metrics,
};

/// The middleware flags of `toolwire serve` and `toolwire gateway`.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct LayerArgs {
    /// Write one JSON line per request to FILE (`-` for stderr): id,
    /// method, name, principal, protocolVersion, outcome, isError, code
    /// and durationUs. Arguments only with --audit-arguments; never a
    /// token.
    #[arg(long, value_name = "FILE")]
    pub(crate) audit_log: Option<PathBuf>,
    /// Put each call's arguments in the audit log too. They may hold what
    /// users typed.
    #[arg(long, requires = "audit_log")]
    pub(crate) audit_arguments: bool,
    /// Cancel a tool call still running after MS milliseconds and answer
    /// it with an isError result that says so: MS for every tool, or
    /// TOOL=MS for one. Repeatable.
    #[arg(long, value_name = "[TOOL=]MS", value_parser = per_tool::<u64>)]
    pub(crate) tool_timeout_ms: Vec<(Option<String>, u64)>,
    /// Run at most N calls of a tool at once, refusing more (HTTP 503 with
    /// Retry-After): N for each tool, or TOOL=N for one. Repeatable.
    #[arg(long, value_name = "[TOOL=]N", value_parser = per_tool::<usize>)]
    pub(crate) tool_concurrency: Vec<(Option<String>, usize)>,
    /// Refuse to send a result larger than BYTES (encoded): a tool call
    /// gets an isError result giving both sizes, other methods -32603.
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_result_bytes: Option<usize>,
    /// With --http: serve Prometheus metrics at http://ADDR/metrics, on a
    /// listener of its own (`HOST:PORT`, or `PORT` for 127.0.0.1):
    /// mcp_server_operation_duration_seconds by method, tool and error
    /// type, and counts of requests, errors and input_required.
    #[arg(long, value_name = "ADDR", requires = "http")]
    pub(crate) metrics: Option<String>,
}

/// `VALUE` or `TOOL=VALUE`.
fn per_tool<T: std::str::FromStr>(s: &str) -> Result<(Option<String>, T), String>
where
    T::Err: std::fmt::Display,
{
    let (tool, value) = match s.split_once('=') {
        Some(("", _)) => return Err(format!("expected [TOOL=]VALUE, got {s:?}")),
        Some((tool, value)) => (Some(tool.to_owned()), value),
        None => (None, s),
    };
    let value = value.parse::<T>().map_err(|e| format!("{value:?}: {e}"))?;
    Ok((tool, value))
}

fn settings<T: Clone>(values: &[(Option<String>, T)]) -> Option<PerTool<T>> {
    if values.is_empty() {
        return None;
    }
    let default = values
        .iter()
        .rev()
        .find_map(|(t, v)| t.is_none().then(|| v.clone()));
    let start = default.map_or_else(PerTool::none, PerTool::all);
    Some(values.iter().fold(start, |p, (tool, v)| match tool {
        Some(tool) => p.tool(tool.clone(), v.clone()),
        None => p,
    }))
}

impl LayerArgs {
    /// `server` with the layers asked for: the timeout innermost, the
    /// metrics and the audit log outermost (so they see every refusal).
    /// `otlp`: the OTLP exporter is installed, so the metrics are measured
    /// for it even without `--metrics`.
    pub(crate) async fn apply(&self, mut server: Server, otlp: bool) -> anyhow::Result<Server> {
        anyhow::ensure!(
            self.tool_timeout_ms.iter().all(|(_, ms)| *ms > 0),
            "--tool-timeout-ms takes at least 1 ms"
        );
        let timeouts: Vec<_> = self
            .tool_timeout_ms
            .iter()
            .map(|(tool, ms)| (tool.clone(), Duration::from_millis(*ms)))
            .collect();
        if let Some(limits) = settings(&timeouts) {
            server = server.with_layer(ToolTimeoutLayer::new(limits));
        }
        if let Some(limits) = settings(&self.tool_concurrency) {
            server = server.with_layer(ConcurrencyLimitLayer::new(limits));
        }
        if let Some(max) = self.max_result_bytes {
            server = server.with_layer(ResponseSizeLayer::new(max));
        }
        if self.metrics.is_none() && otlp {
            server = server.with_layer(Metrics::new().layer());
        }
        if let Some(addr) = &self.metrics {
            let addr = crate::bind_addr(addr)?;
            let listener = tokio::net::TcpListener::bind(&addr)
                .await
                .with_context(|| format!("binding --metrics {addr}"))?;
            let bound = listener
                .local_addr()
                .context("reading --metrics' address")?;
            let metrics = Metrics::new();
            server = server.with_layer(metrics.layer());
            tokio::spawn(async move {
                let never = std::future::pending::<()>();
                if let Err(e) = serve_metrics(metrics, listener, never).await {
                    eprintln!("toolwire: the metrics endpoint stopped: {e}");
                }
            });
            eprintln!("toolwire: metrics at http://{bound}/metrics");
        }
        if let Some(path) = &self.audit_log {
            let mut layer = AuditLayer::with_sink(audit_sink(path)?);
            if self.audit_arguments {
                layer = layer.with_arguments();
            }
            server = server.with_layer(layer);
        }
        Ok(server)
    }
}

/// Where audit lines go: stderr for `-`, else FILE, appended to.
fn audit_sink(
    path: &std::path::Path,
) -> anyhow::Result<impl Fn(&toolwire::middleware::AuditRecord) + Send + Sync + 'static> {
    let out: Box<dyn std::io::Write + Send> = if path.as_os_str() == "-" {
        Box::new(std::io::stderr())
    } else {
        Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("opening --audit-log {}", path.display()))?,
        )
    };
    let out = Mutex::new(out);
    Ok(move |record: &toolwire::middleware::AuditRecord| {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        if let Ok(mut out) = out.lock() {
            let _ = out.write_all(&line);
            let _ = out.flush();
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_tool_values_read_tool_equals_value() {
        assert_eq!(per_tool::<u64>("500"), Ok((None, 500)));
        assert_eq!(
            per_tool::<u64>("build=60000"),
            Ok((Some("build".to_owned()), 60_000))
        );
        for bad in ["=5", "build=", "build=fast", "fast"] {
            assert!(per_tool::<u64>(bad).is_err(), "{bad:?}");
        }
        let p = settings(&[(None, 1), (Some("build".to_owned()), 9)]).expect("some");
        assert_eq!(p.get("build"), Some(&9));
        assert_eq!(p.get("other"), Some(&1));
    }
}
