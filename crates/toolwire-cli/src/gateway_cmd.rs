//! `toolwire gateway`: serve many MCP servers as one (the
//! `toolwire-gateway` crate), and `toolwire gateway check`: the merged tool
//! table and what model providers' function-calling dialects reject.

use crate::{ServeOptions, serve, server_config};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use toolwire::proto::types::CacheScope;
use toolwire_gateway::{Gateway, GatewayConfig, NameProblem, check};

/// `toolwire gateway`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct GatewayArgs {
    #[command(subcommand)]
    command: Option<GatewayCommand>,
    /// The gateway's configuration (TOML): `[upstreams.NAME]` tables with
    /// `command = [...]` (stdio) or `url = "..."` (HTTP).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    serve: ServeOptions,
}

#[derive(clap::Subcommand)]
enum GatewayCommand {
    /// Connect to every upstream and print the merged tool table: each
    /// tool's estimated token cost, name collisions, and what the
    /// function-calling dialects of OpenAI, Anthropic and Gemini reject.
    /// Exits with 1 when anything would be rejected or left out.
    Check {
        /// The gateway's configuration (TOML).
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
    },
}

pub(crate) async fn run(mut args: GatewayArgs) -> anyhow::Result<()> {
    if let Some(GatewayCommand::Check { config }) = args.command {
        return run_check(&config).await;
    }
    let Some(path) = args.config else {
        anyhow::bail!(
            "toolwire gateway needs --config FILE (a TOML file with [upstreams.NAME] tables)"
        );
    };
    let config = GatewayConfig::from_file(&path)?;
    // An upstream that takes the caller's own token needs to see it.
    args.serve.auth.caller_tokens = config.needs_caller_tokens();
    let (mut server_config, _relay) = server_config("toolwire-gateway", &args.serve).await?;
    if args.serve.auth.auth_issuer.is_some() {
        // What a caller may see depends on its token: no shared caches.
        server_config = server_config.with_cache_scope(CacheScope::Private);
    }
    let gateway = Gateway::start(config, server_config).await?;
    let served = serve(gateway.server().clone(), &args.serve).await;
    gateway.close().await;
    served
}

async fn run_check(path: &Path) -> anyhow::Result<()> {
    let config = GatewayConfig::from_file(path)?;
    let server_config = toolwire::ServerConfig::new("toolwire-gateway", env!("CARGO_PKG_VERSION"));
    let gateway = Gateway::start(config, server_config).await?;
    // A report waits for every upstream (each within its timeout).
    gateway.settled().await;
    let text = render(&gateway);
    gateway.close().await;
    eprint!("{}", text.stderr);
    // The report is the command's output, on stdout.
    #[allow(clippy::print_stdout)]
    {
        print!("{}", text.stdout);
    }
    anyhow::ensure!(text.clean, "the merged list has problems (listed above)");
    Ok(())
}

struct Rendered {
    stdout: String,
    stderr: String,
    clean: bool,
}

fn render(gateway: &Gateway) -> Rendered {
    let mut out = String::new();
    let mut err = String::new();
    let mut clean = true;
    for h in gateway.health() {
        if h.state != toolwire_gateway::UpstreamState::Up {
            clean = false;
            let _ = writeln!(
                err,
                "upstream {}: down: {}",
                h.name,
                h.last_error.as_deref().unwrap_or("unreachable")
            );
        }
    }
    let rows = check(gateway);
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(out, "{:<width$}  {:>6}  rejected by", "tool", "tokens");
    let mut total = 0;
    for r in &rows {
        total += r.tokens;
        let verdict = if r.issues.is_empty() {
            "-".to_owned()
        } else {
            clean = false;
            r.issues
                .iter()
                .map(|i| format!("{}: {}", i.dialect, i.problem))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let _ = writeln!(out, "{:<width$}  {:>6}  {verdict}", r.name, r.tokens);
    }
    let _ = writeln!(out, "{} tools, about {total} tokens", rows.len());
    for p in gateway.problems() {
        if !matches!(p, NameProblem::TooLong { .. }) {
            clean = false;
        }
        let _ = writeln!(out, "problem: {p}");
    }
    let _ = writeln!(out, "fingerprint: {}", gateway.tools_fingerprint());
    Rendered {
        stdout: out,
        stderr: err,
        clean,
    }
}
