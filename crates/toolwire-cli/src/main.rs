//! The `toolwire` command: serve the demo tools over stdio or HTTP.

mod app_cmd;
mod auth_args;
mod auth_cmd;
mod bus;
mod client_cmd;
mod demo;
mod demo_features;
mod gateway_cmd;
mod guard;
mod host_config;
mod layer_args;
mod log_format;
mod new_cmd;
#[cfg(feature = "otel")]
mod otlp;

/// `serve --otlp` in a build without the `otel` feature: refused, saying
/// how to get it.
#[cfg(not(feature = "otel"))]
mod otlp {
    pub(crate) enum Exporting {}

    impl Exporting {
        pub(crate) async fn shutdown(self) {
            match self {}
        }
    }

    pub(crate) fn install(url: &str) -> anyhow::Result<Exporting> {
        anyhow::bail!(
            "--otlp {url}: this toolwire was built without OpenTelemetry; build it with the `otel` feature (cargo install --path crates/toolwire-cli --features otel)"
        )
    }
}
mod report;

use anyhow::Context as _;
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::Duration;
use toolwire::{HttpConfig, STATE_KEYS_ENV, Server, ServerConfig, StateKeys};

/// The environment variables `toolwire` reads, for `--help`.
const ENVIRONMENT_HELP: &str = "\
Environment:
  TOOLWIRE_LOG         What toolwire itself logs on stderr, a tracing filter
                       (default warn; e.g. debug, or toolwire=trace). Not the
                       server's log messages: ask for those with `call --log`.
  TOOLWIRE_STATE_KEYS  serve: the requestState keyring, comma-separated base64
                       32-byte keys (see `serve --state-keys-file`).
  TOOLWIRE_AUTH_CLIENT_ID, TOOLWIRE_AUTH_CLIENT_SECRET
                       serve --auth-introspection: this server's client
                       credentials at the authorization server.
  NO_COLOR             Set to anything non-empty: no colour on stderr (there
                       is none anyway unless stderr is a terminal).";

#[derive(Parser)]
#[command(
    name = "toolwire",
    version,
    about = "Serve and call Model Context Protocol tools",
    after_help = "Environment variables: see --help.",
    after_long_help = ENVIRONMENT_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the demo tools over stdio, or Streamable HTTP with `--http`.
    ///
    /// Beside the tools (listed below), a resource, a resource template
    /// and a prompt, so that every client command has something to show.
    Serve(ServeOptions),
    /// Serve many MCP servers as one, with namespaced names, from a TOML
    /// configuration (see the book's Gateway chapter, docs/src/gateway.md); `gateway check`
    /// prints the merged tool table and what model providers would reject.
    Gateway(gateway_cmd::GatewayArgs),
    /// Show a server's protocol versions, capabilities and instructions
    /// (server/discover).
    Discover(client_cmd::DiscoverArgs),
    /// List a server's tools and their parameters.
    List(client_cmd::ListArgs),
    /// Call a tool on a server.
    Call(client_cmd::CallArgs),
    /// Call a tool that has an app interface (MCP Apps) and render it in a
    /// local page: a host for app developers, on 127.0.0.1 only.
    App(app_cmd::AppArgs),
    /// Get, wait for or cancel a task (of `call --task --detach`) by id.
    Task(client_cmd::TaskArgs),
    /// List a server's resources.
    Resources(client_cmd::ListingArgs),
    /// List a server's resource templates.
    Templates(client_cmd::ListingArgs),
    /// Read a resource.
    Read(client_cmd::ReadArgs),
    /// List a server's prompts and their arguments.
    Prompts(client_cmd::ListingArgs),
    /// Get a prompt's messages.
    Prompt(client_cmd::PromptArgs),
    /// Complete a prompt argument or a resource template variable.
    Complete(client_cmd::CompleteArgs),
    /// Print a server's change notifications until interrupted.
    Listen(client_cmd::ListenArgs),
    /// Log in to OAuth-protected servers, list and forget stored tokens.
    #[command(subcommand)]
    Auth(auth_cmd::AuthCommand),
    /// Make a new MCP server crate in ./NAME, with two tools and a test.
    #[command(long_about = new_cmd::LONG_ABOUT)]
    New(new_cmd::NewArgs),
    /// Print the JSON that adds a server to Claude Desktop, VS Code or
    /// Cursor.
    #[command(long_about = host_config::LONG_ABOUT)]
    HostConfig(host_config::HostConfigArgs),
}

/// How `serve` (and `gateway`) serve: stdio, or Streamable HTTP with
/// `--http`, and the server settings they share.
#[derive(clap::Args)]
struct ServeOptions {
    /// Serve Streamable HTTP on ADDR instead of stdio: `HOST:PORT`, or
    /// just `PORT` to bind 127.0.0.1. For example `127.0.0.1:8080`.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// The MCP endpoint path for `--http`.
    #[arg(long, value_name = "PATH", default_value = "/mcp", requires = "http")]
    path: String,
    /// Read the requestState keyring from FILE: base64 32-byte keys, one
    /// per line, the first for sealing. Without it, TOOLWIRE_STATE_KEYS
    /// (comma-separated) is used, or else a random key per process.
    #[arg(long, value_name = "FILE")]
    state_keys_file: Option<PathBuf>,
    /// How long a sealed requestState stays valid, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 600_000)]
    state_ttl_ms: u64,
    /// Export one OpenTelemetry span per request, and the metrics
    /// (mcp.server.operation.duration, request, error and input_required
    /// counts, every 10 s and at exit), over OTLP/HTTP (protobuf) to URL, a
    /// collector's base URL such as http://127.0.0.1:4318 (`/v1/traces`
    /// and `/v1/metrics` are added). A request's `_meta` traceparent is
    /// its span's parent. Needs the `otel` build feature.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// `ttlMs` of cacheable results (lists, resource reads): how long a
    /// client may reuse them, in milliseconds; 0 means not at all.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    ttl_ms: u64,
    /// `cacheScope` of cacheable results: `public` (shared caches may keep
    /// them) or `private` (only the client that asked).
    #[arg(long, value_name = "SCOPE", default_value = "public", value_parser = ["public", "private"])]
    cache_scope: String,
    /// With `--http`: how long one request may run before it is
    /// cancelled and answered with a timeout error, in milliseconds;
    /// 0 sets no limit.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_REQUEST_TIMEOUT_MS, requires = "http")]
    request_timeout_ms: u64,
    /// On stdio: how long requests still running when stdin closes may
    /// finish and be answered before they are cancelled, in milliseconds
    /// (1 to 60000).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 5_000,
        conflicts_with = "http"
    )]
    eof_grace_ms: u64,
    #[command(flatten)]
    auth: auth_args::AuthArgs,
    #[command(flatten)]
    guard: guard::GuardArgs,
    #[command(flatten)]
    layers: layer_args::LayerArgs,
    /// Share change notifications and define_tool's tools with every
    /// replica on the same bus: redis://HOST:PORT or nats://HOST:PORT
    /// (NATS with JetStream). Give the replicas one keyring
    /// (TOOLWIRE_STATE_KEYS) too.
    #[arg(long, value_name = "URL")]
    bus: Option<String>,
    /// Keep tasks (the io.modelcontextprotocol/tasks extension) in Redis,
    /// redis://HOST:PORT, or NATS with JetStream, nats://HOST:PORT, so
    /// that every replica on it answers for every
    /// task and takes over those of a replica that stops. In memory
    /// otherwise. Give the replicas one --bus too, so that answers and
    /// cancels reach the replica running a task at once.
    #[arg(long, value_name = "URL")]
    tasks: Option<String>,
    /// On shutdown, how long running tasks may go on before they are
    /// handed over to another replica (or, in memory, end failed), in
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    task_grace_ms: u64,
}

/// `toolwire serve --http`'s default request timeout: two minutes, so that a
/// held call (such as a long `countdown`) cannot keep its slot for as long
/// as the tool allows.
const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 120_000;

/// The server configuration for `serve` and `gateway`: the identity, the
/// requestState keyring and lifetime, the rate limits, and the bus (with
/// `--bus`, connected here, so an unreachable one stops start-up).
async fn server_config(
    name: &str,
    options: &ServeOptions,
) -> anyhow::Result<(
    ServerConfig,
    Option<std::sync::Arc<toolwire_replica::Relay>>,
)> {
    let mut config = ServerConfig::new(name, env!("CARGO_PKG_VERSION"))
        .with_state_ttl(Duration::from_millis(options.state_ttl_ms))
        .with_ttl(Duration::from_millis(options.ttl_ms));
    if options.cache_scope == "private" {
        config = config.with_cache_scope(toolwire::proto::types::CacheScope::Private);
    }
    let keys = match &options.state_keys_file {
        Some(file) => Some(StateKeys::from_file(file).context("configuring requestState keys")?),
        None => StateKeys::from_env(STATE_KEYS_ENV).context("configuring requestState keys")?,
    };
    if let Some(keys) = keys {
        config = config.with_state_keys(keys);
    }
    let relay = match &options.bus {
        Some(url) => Some(std::sync::Arc::new(bus::connect(url).await?)),
        None => None,
    };
    if let Some(relay) = &relay {
        config = config.with_bus(relay.clone());
    }
    if let Some(url) = &options.tasks {
        let store = bus::connect_tasks(url).await?;
        config = config.with_tasks(toolwire::task::TaskOptions::new().store(store));
    }
    Ok((options.guard.server_config(config), relay))
}

/// Serves `server` as `options` say (stdio, or HTTP with `--http`), with
/// the OTLP export if asked for, until the input closes or a signal.
async fn serve(server: Server, options: &ServeOptions) -> anyhow::Result<()> {
    let exporting = options.otlp.as_deref().map(otlp::install).transpose()?;
    let server = options.layers.apply(server, exporting.is_some()).await?;
    let tasks = server.clone();
    let served = match &options.http {
        Some(addr) => serve_http(server, addr, options).await,
        None => {
            // A person at a terminal would otherwise see nothing and think
            // it hung; a client piping stdin needs no such line (and stdout
            // stays the protocol's alone).
            if std::io::stdin().is_terminal() {
                eprintln!(
                    "toolwire: serving MCP on stdio: waiting for JSON-RPC messages, one per line (Ctrl-D ends)"
                );
            }
            let stdio = toolwire::StdioConfig::new()
                .with_end_of_input_grace(Duration::from_millis(options.eof_grace_ms));
            serve_stdio(server, stdio).await
        }
    };
    // Tasks still running go on for the grace period, then are handed
    // over: on a shared store another replica takes them.
    tasks
        .hand_over_tasks(Duration::from_millis(options.task_grace_ms))
        .await;
    if let Some(exporting) = exporting {
        exporting.shutdown().await;
    }
    served
}

/// Serves stdio until stdin closes (and what was running is answered), or
/// until SIGINT/SIGTERM starts a graceful shutdown (open subscriptions get
/// their closing result).
async fn serve_stdio(server: Server, config: toolwire::StdioConfig) -> anyhow::Result<()> {
    let serve = toolwire::serve_stdio_with(server.clone(), config);
    tokio::pin!(serve);
    tokio::select! {
        done = &mut serve => return done.context("serving stdio"),
        () = toolwire::shutdown_signal() => server.shutdown(),
    }
    serve.await.context("serving stdio")
}

/// The address to bind for `--http ADDR`: a bare port (or `:PORT`) binds
/// the loopback address, so nothing is exposed by accident.
///
/// Spec: basic/transports/streamable-http.mdx#security--endpoint — local
/// servers SHOULD bind only to localhost.
fn bind_addr(addr: &str) -> anyhow::Result<String> {
    let port_only = addr.strip_prefix(':').unwrap_or(addr);
    if !port_only.is_empty() && port_only.bytes().all(|b| b.is_ascii_digit()) {
        let port: u16 = port_only
            .parse()
            .with_context(|| format!("invalid port in --http {addr:?}"))?;
        return Ok(format!("127.0.0.1:{port}"));
    }
    let has_port = addr
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    anyhow::ensure!(
        has_port,
        "--http expects HOST:PORT or PORT, for example 127.0.0.1:8080; got {addr:?}"
    );
    Ok(addr.to_owned())
}

async fn serve_http(server: Server, addr: &str, options: &ServeOptions) -> anyhow::Result<()> {
    let (path, auth, guard) = (options.path.as_str(), &options.auth, &options.guard);
    let request_timeout_ms = options.request_timeout_ms;
    let addr = bind_addr(addr)?;
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    let request_timeout =
        (request_timeout_ms > 0).then(|| Duration::from_millis(request_timeout_ms));
    let config = HttpConfig::new()
        .with_path(path)
        .with_request_timeout(request_timeout)
        .with_shutdown_grace(Duration::from_secs(5));
    let (config, tls) = guard.http_config(config)?;
    let scheme = if tls { "https" } else { "http" };
    let config = auth.apply(config, path, local)?;
    let url_path = config.path().unwrap_or_default().to_owned();
    if !local.ip().is_loopback() && auth.public_url.is_none() {
        eprintln!(
            "toolwire: warning: listening on {local}, but only localhost Host and Origin values are accepted"
        );
    }
    eprintln!("toolwire: serving MCP at {scheme}://{local}{url_path}");
    toolwire::serve_http_on(server, listener, config, toolwire::shutdown_signal())
        .await
        .context("serving HTTP")?;
    eprintln!("toolwire: stopped");
    Ok(())
}

/// Whether stderr gets ANSI colour: only a terminal does, and not when
/// `NO_COLOR` is set to anything non-empty (<https://no-color.org>).
fn colour_on_stderr() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// `serve`'s options that mean nothing to `gateway`, with why: it serves
/// no demo tools, and runs no task of its own (it passes its upstreams'
/// tasks through).
const NOT_FOR_GATEWAY: [(&str, &str); 4] = [
    ("allow_define", "the gateway serves no define_tool"),
    ("define_scope", "the gateway serves no define_tool"),
    (
        "tasks",
        "the gateway keeps no task: its upstreams keep theirs",
    ),
    (
        "task_grace_ms",
        "the gateway runs no task: its upstreams run theirs",
    ),
];

/// What `serve -h` and `gateway -h` say after their common options.
const MORE_OPTIONS: &str = "More options (authorization, scopes, rate limits, timeouts, \
                            caching, requestState keys): --help.";

/// `serve`'s (and `gateway`'s) options for fewer setups, which `-h` leaves
/// to `--help` so that it fits on a screen.
const ADVANCED: [&str; 25] = [
    "state_keys_file",
    "state_ttl_ms",
    "ttl_ms",
    "cache_scope",
    "request_timeout_ms",
    "eof_grace_ms",
    "auth_audience",
    "auth_jwks",
    "auth_introspection",
    "auth_introspection_rate",
    "auth_token_type",
    "auth_leeway",
    "auth_jwks_refresh",
    "required_scope",
    "scope_for",
    "scope_implies",
    "define_scope",
    "no_auth",
    "rate_limit_for",
    "audit_arguments",
    "tool_timeout_ms",
    "tool_concurrency",
    "max_result_bytes",
    "tasks",
    "task_grace_ms",
];

/// `command` with its [`ADVANCED`] options shown by `--help` only.
fn advanced_in_long_help(mut command: clap::Command) -> clap::Command {
    for id in ADVANCED {
        command = command.mut_arg(id, |a| a.hide_short_help(true));
    }
    command
}

/// The gist of a help text, for `-h`: up to the first `. ` (the dot
/// kept), `: `, `; `, ` (`, `, for example` or `, such as` outside
/// backquotes and double quotes, and not within the first 20 bytes (past
/// a leading "With --http: "), or all of it.
fn gist(text: &str) -> &str {
    const ENDS: [&str; 6] = [". ", ": ", "; ", " (", ", for example", ", such as"];
    const SHORTEST: usize = 20;
    let mut quoted = None;
    for (i, c) in text.char_indices() {
        match quoted {
            Some(q) if c == q => quoted = None,
            None if c == '`' || c == '"' => quoted = Some(c),
            _ => {}
        }
        if quoted.is_some() || i < SHORTEST {
            continue;
        }
        if let Some(end) = ENDS.iter().find(|end| text[i..].starts_with(**end)) {
            let keep = if *end == ". " { i + 1 } else { i };
            return &text[..keep];
        }
    }
    text
}

/// `command` and its subcommands with a short `-h`: every option's and
/// subcommand's help there is the [`gist`] of its doc comment, and
/// `--help` keeps the whole of it (clap shows a doc comment's first
/// paragraph for `-h` and all of it for `--help`, but most are one
/// paragraph long).
fn short_help(mut command: clap::Command) -> clap::Command {
    if command.get_long_about().is_none()
        && let Some(about) = command.get_about().map(ToString::to_string)
        && gist(&about).len() < about.len()
    {
        command = command.about(gist(&about).to_owned()).long_about(about);
    }
    let ids: Vec<clap::Id> = command
        .get_arguments()
        .map(|a| a.get_id().clone())
        .collect();
    for id in ids {
        command = command.mut_arg(id, |arg| match arg.get_help().map(ToString::to_string) {
            Some(help) if arg.get_long_help().is_none() && gist(&help).len() < help.len() => {
                arg.help(gist(&help).to_owned()).long_help(help)
            }
            _ => arg,
        });
    }
    let names: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, short_help);
    }
    command
}

/// The command line, with the demo tool list added to `serve --help`, and
/// `serve`'s options that do not apply to `gateway` left out of its help
/// and refused there.
fn parse_args() -> Cli {
    let mut command = short_help(Cli::command().max_term_width(100))
        .mut_subcommand("serve", |serve| {
            advanced_in_long_help(serve)
                .after_help(format!("{MORE_OPTIONS}\n\n{}", demo::tools_help()))
                .after_long_help(demo::tools_help())
        })
        .mut_subcommand("gateway", |mut gateway| {
            for (id, _) in NOT_FOR_GATEWAY {
                gateway = gateway.mut_arg(id, |a| a.hide(true));
            }
            advanced_in_long_help(gateway).after_help(MORE_OPTIONS)
        });
    let matches = command.get_matches_mut();
    if let Some(("gateway", gateway)) = matches.subcommand() {
        for (id, why) in NOT_FOR_GATEWAY {
            if gateway.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
                let flag = format!("--{}", id.replace('_', "-"));
                let mut gateway_command = command
                    .find_subcommand_mut("gateway")
                    .map_or_else(Cli::command, |g| g.clone().bin_name("toolwire gateway"));
                gateway_command
                    .error(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!("{flag} does not apply to `toolwire gateway`: {why}"),
                    )
                    .exit();
            }
        }
    }
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            // Not `Result` from main: its Debug output repeats causes and
            // adds a backtrace whenever RUST_BACKTRACE is set.
            eprint!("{}", report::render(&err));
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let cli = parse_args();
    // Warnings and errors, and the gateway's own account of its upstreams
    // (one line each at start-up: serving, starting or down; and when one
    // comes back or its relay breaks).
    let default_filter = match cli.command {
        Command::Gateway(_) => "warn,toolwire_gateway=info",
        _ => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLWIRE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    // stdout is the protocol channel: logs go to stderr. A server's lines
    // carry their time and source; a client command's read like its errors.
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour_on_stderr())
        .with_env_filter(filter);
    if matches!(cli.command, Command::Serve(_) | Command::Gateway(_)) {
        logs.init();
    } else {
        logs.event_format(log_format::Plain).init();
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let result = rt.block_on(async {
        match cli.command {
            Command::Serve(options) => {
                let (config, relay) = server_config("toolwire-demo", &options).await?;
                let server = Server::new(config);
                // Over HTTP every client sees what one defines: only when asked.
                let define = options.http.is_none() || options.guard.allow_define;
                let shared = match &relay {
                    Some(relay) => Some(demo::shared_tools(relay, &server).await?),
                    None => None,
                };
                demo::register(&server, shared, define).context("registering the demo tools")?;
                serve(server, &options).await
            }
            Command::Gateway(args) => gateway_cmd::run(args).await,
            Command::Discover(args) => client_cmd::discover(args).await,
            Command::List(args) => client_cmd::list(args).await,
            Command::Call(args) => client_cmd::call(args).await,
            Command::App(args) => app_cmd::app(args).await,
            Command::Task(args) => client_cmd::task(args).await,
            Command::Resources(args) => client_cmd::resources(args).await,
            Command::Templates(args) => client_cmd::templates(args).await,
            Command::Read(args) => client_cmd::read(args).await,
            Command::Prompts(args) => client_cmd::prompts(args).await,
            Command::Prompt(args) => client_cmd::prompt(args).await,
            Command::Complete(args) => client_cmd::complete(args).await,
            Command::Listen(args) => client_cmd::listen(args).await,
            Command::Auth(command) => auth_cmd::run(command).await,
            Command::New(args) => new_cmd::run(args),
            Command::HostConfig(args) => host_config::run(args),
        }
    });
    // A read of stdin may still be blocked in a runtime thread after a
    // signal; do not wait for it.
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}

#[cfg(test)]
mod tests {
    use super::{bind_addr, gist};

    #[test]
    fn the_gist_ends_at_the_first_clause_outside_quotes() {
        let cases = [
            (
                "Serve HTTP on the ADDR: `HOST:PORT`.",
                "Serve HTTP on the ADDR",
            ),
            (
                "Send `Authorization: Bearer $VAR` (HTTP only)",
                "Send `Authorization: Bearer $VAR`",
            ),
            (
                "A header, \"Name: value\" (repeatable)",
                "A header, \"Name: value\"",
            ),
            ("Bind it to 127.0.0.1. Then serve.", "Bind it to 127.0.0.1."),
            (
                "With --http: serve HTTPS (HTTP/2)",
                "With --http: serve HTTPS",
            ),
            (
                "Start the server here, for example --stdio x",
                "Start the server here",
            ),
            ("Print JSON instead of text", "Print JSON instead of text"),
            ("The key (PEM) of --tls-cert", "The key (PEM) of --tls-cert"),
        ];
        for (text, want) in cases {
            assert_eq!(gist(text), want, "{text}");
        }
    }

    #[test]
    fn bare_port_binds_loopback() {
        assert_eq!(bind_addr("8080").expect("addr"), "127.0.0.1:8080");
        assert_eq!(bind_addr(":0").expect("addr"), "127.0.0.1:0");
    }

    #[test]
    fn host_and_port_are_kept() {
        for addr in ["127.0.0.1:8080", "[::1]:3900", "localhost:1", "0.0.0.0:80"] {
            assert_eq!(bind_addr(addr).expect("addr"), addr);
        }
    }

    #[test]
    fn address_without_port_is_refused() {
        for addr in ["localhost", "127.0.0.1", "", ":", "host:99999", "70000"] {
            assert!(bind_addr(addr).is_err(), "{addr:?}");
        }
    }
}
