//! `conformance-server`: the conformance fixtures over Streamable HTTP
//! (`--http 127.0.0.1:PORT`, endpoint `/mcp`; port 0 picks a free one) or
//! stdio (`--stdio`).
//!
//! With `--http` it prints one line to stdout once it accepts connections:
//! `listening on http://ADDR/mcp`.

use anyhow::Context as _;
use clap::Parser;
use std::io::Write as _;
use std::time::Duration;
use toolwire::HttpConfig;

#[derive(Parser)]
#[command(
    name = "conformance-server",
    about = "The MCP conformance fixture server"
)]
struct Cli {
    /// Serve Streamable HTTP on ADDR (HOST:PORT), endpoint /mcp.
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with = "stdio",
        required_unless_present = "stdio"
    )]
    http: Option<String>,
    /// Serve newline-delimited JSON-RPC on stdin and stdout.
    #[arg(long)]
    stdio: bool,
}

fn main() -> anyhow::Result<()> {
    // stdout may be the protocol channel: logs go to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLWIRE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let server = toolwire_conformance::server().context("registering the fixtures")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        match cli.http {
            None => toolwire::serve_stdio(server).await.context("serving stdio"),
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(&addr)
                    .await
                    .with_context(|| format!("binding {addr}"))?;
                let local = listener.local_addr().context("reading the bound address")?;
                let config = HttpConfig::new()
                    .with_path("/mcp")
                    .with_shutdown_grace(Duration::from_secs(2));
                let mut out = std::io::stdout().lock();
                writeln!(out, "listening on http://{local}/mcp")
                    .and_then(|()| out.flush())
                    .context("writing the address")?;
                drop(out);
                toolwire::serve_http_on(server, listener, config, toolwire::shutdown_signal())
                    .await
                    .context("serving HTTP")
            }
        }
    })
}
