//! `serve`'s guards: rate limits on invocations, HTTPS (with the
//! certificate reloaded on SIGHUP), and whether `define_tool` is served
//! over HTTP.

use anyhow::Context as _;
use std::path::PathBuf;
use toolwire::{HttpConfig, RateLimit, ServerConfig, TlsConfig};

/// The guard flags of `toolwire serve`.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct GuardArgs {
    /// Limit how often each caller (the client's address over HTTP, the
    /// process over stdio) may call a tool, get a prompt, read a resource
    /// or complete an argument: N per second (N/s), minute (N/m) or hour
    /// (N/h), in bursts of up to BURST (default N). For example 10/s,20.
    /// Every MRTR retry counts. Over it: HTTP 429 with Retry-After, and the
    /// JSON-RPC error -31429 with data.retryAfterMs. Off by default.
    #[arg(long, value_name = "N/s[,BURST]")]
    pub(crate) rate_limit: Option<RateLimit>,
    /// Give TOOL its own rate limit, counted instead of --rate-limit's:
    /// TOOL=N/s[,BURST], for example countdown=1/s. Repeatable.
    #[arg(long, value_name = "TOOL=N/s[,BURST]", value_parser = tool_limit)]
    pub(crate) rate_limit_for: Vec<(String, RateLimit)>,
    /// With --http: serve HTTPS (HTTP/2 and HTTP/1.1 through ALPN) with the
    /// certificate chain in FILE (PEM, the server's certificate first).
    /// The certificate and key are read again on SIGHUP; open connections
    /// keep theirs.
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_key"])]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
    /// With --http: serve define_tool and undefine_tool, which let any
    /// caller change the tool list every client sees. Over stdio (one
    /// client) they are always served.
    #[arg(long, requires = "http")]
    pub(crate) allow_define: bool,
}

/// `TOOL=N/s[,BURST]`.
fn tool_limit(s: &str) -> Result<(String, RateLimit), String> {
    let (tool, limit) = s
        .split_once('=')
        .filter(|(tool, _)| !tool.is_empty())
        .ok_or_else(|| format!("expected TOOL=N/s[,BURST], got {s:?}"))?;
    let limit = limit.parse::<RateLimit>().map_err(|e| e.to_string())?;
    Ok((tool.to_owned(), limit))
}

impl GuardArgs {
    /// The rate limits, on `config`.
    pub(crate) fn server_config(&self, mut config: ServerConfig) -> ServerConfig {
        if let Some(limit) = self.rate_limit {
            config = config.with_rate_limit(limit);
        }
        for (tool, limit) in &self.rate_limit_for {
            config = config.with_tool_rate_limit(tool.clone(), *limit);
        }
        config
    }

    /// HTTPS, on `config`, reloaded on SIGHUP; whether TLS is on.
    pub(crate) fn http_config(&self, config: HttpConfig) -> anyhow::Result<(HttpConfig, bool)> {
        let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) else {
            return Ok((config, false));
        };
        let tls =
            TlsConfig::from_pem_files(cert, key).context("loading --tls-cert and --tls-key")?;
        reload_on_hangup(tls.clone())?;
        Ok((config.with_tls(tls), true))
    }
}

/// Reads the certificate and key again on each SIGHUP; a reload that fails
/// keeps the old pair and says why.
#[cfg(unix)]
fn reload_on_hangup(tls: TlsConfig) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    // Installed before the server starts, so that a SIGHUP never finds the
    // default action (which ends the process).
    let mut hangups = signal(SignalKind::hangup()).context("listening for SIGHUP")?;
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            match tls.reload() {
                Ok(()) => eprintln!("toolwire: SIGHUP: reloaded the TLS certificate and key"),
                Err(e) => eprintln!("toolwire: SIGHUP: keeping the current TLS certificate: {e}"),
            }
        }
    });
    Ok(())
}

#[cfg(not(unix))]
fn reload_on_hangup(_tls: TlsConfig) -> anyhow::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::tool_limit;
    use toolwire::RateLimit;

    #[test]
    fn tool_limits_read_tool_equals_limit() {
        assert_eq!(
            tool_limit("countdown=1/s,2"),
            Ok((
                "countdown".to_owned(),
                RateLimit::per_second(1).with_burst(2)
            ))
        );
        for bad in ["countdown", "=1/s", "countdown=fast", "countdown=0/s"] {
            assert!(tool_limit(bad).is_err(), "{bad:?}");
        }
    }
}
