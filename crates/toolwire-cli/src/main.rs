//! The `toolwire` command: serve the demo tools over stdio or HTTP.

mod demo;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use toolwire::{Server, ServerConfig};

#[derive(Parser)]
#[command(
    name = "toolwire",
    version,
    about = "Serve and call Model Context Protocol tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the demo tools (echo, add, countdown, regional_echo) over stdio.
    Serve,
}

fn main() -> anyhow::Result<()> {
    // stdout is the protocol channel: logs go to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLWIRE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        match cli.command {
            Command::Serve => {
                let server = Server::new(ServerConfig::new(
                    "toolwire-demo",
                    env!("CARGO_PKG_VERSION"),
                ));
                demo::register(&server).context("registering the demo tools")?;
                toolwire::serve_stdio(server).await.context("serving stdio")
            }
        }
    })
}
