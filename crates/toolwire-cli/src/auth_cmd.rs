//! `toolwire auth login|status|logout`, and the credentials every HTTP
//! subcommand sends: `--bearer-env VAR`, or the token `auth login` stored
//! for the server (refreshed when it expires).
//!
//! Tokens live in `toolwire::oauth::FileTokenStore` (mode 0600 under the
//! user's configuration directory, or `$TOOLWIRE_CONFIG_DIR`). They are
//! never printed: `auth status` shows issuers, scopes and expiry only.

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use std::io::IsTerminal as _;
use std::time::{SystemTime, UNIX_EPOCH};
use toolwire::ClientBuilder;
use toolwire::oauth::{
    FileTokenStore, LoopbackRedirect, OAuthConfig, OAuthProvider, StoredTokens, TokenStore as _,
    Url,
};

/// `toolwire auth`.
#[derive(Subcommand, Debug)]
pub(crate) enum AuthCommand {
    /// Log in to a server: discover its authorization server, register if
    /// needed, and authorize in the browser (a listener on 127.0.0.1
    /// receives the answer). The tokens are stored for later commands.
    Login(LoginArgs),
    /// List the servers with stored tokens: issuer, scopes, expiry.
    Status,
    /// Forget the stored tokens of a server.
    Logout {
        /// The server's MCP endpoint URL.
        #[arg(value_name = "URL")]
        url: String,
    },
}

/// `toolwire auth login`.
#[derive(Args, Debug)]
pub(crate) struct LoginArgs {
    /// The server's MCP endpoint URL.
    #[arg(value_name = "URL")]
    url: String,
    /// A scope to ask for besides those the server challenges with
    /// (repeatable, or space-separated); default: the server's
    /// scopes_supported.
    #[arg(long = "scope", value_name = "SCOPE")]
    scopes: Vec<String>,
    /// A client id registered with the authorization server beforehand.
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// The environment variable holding that client's secret.
    #[arg(long, value_name = "VAR", requires = "client_id")]
    client_secret_env: Option<String>,
    /// The HTTPS URL of a Client ID Metadata Document describing this
    /// client, used as the client id where the authorization server
    /// supports it.
    #[arg(long, value_name = "URL")]
    cimd_url: Option<String>,
    /// Trust the CA certificates in FILE (PEM) for https:// servers
    /// (repeatable).
    #[arg(long, value_name = "FILE")]
    cacert: Vec<std::path::PathBuf>,
}

/// Runs `toolwire auth …`.
pub(crate) async fn run(command: AuthCommand) -> anyhow::Result<()> {
    let store = FileTokenStore::open_default()?;
    match command {
        AuthCommand::Login(args) => login(args, store).await,
        AuthCommand::Status => {
            let servers = store.servers()?;
            if servers.is_empty() {
                eprintln!("toolwire: not logged in to any server");
            }
            let mut out = String::new();
            for (server, tokens) in servers {
                out.push_str(&format!("{server}\n{}", describe(&tokens)));
            }
            crate::client_cmd::print(&out)
        }
        AuthCommand::Logout { url } => {
            let provider = OAuthProvider::new(&url, OAuthConfig::new())?.with_store(store);
            if provider.logout().await? {
                eprintln!("toolwire: logged out of {url}");
                Ok(())
            } else {
                bail!("not logged in to {url}")
            }
        }
    }
}

async fn login(args: LoginArgs, store: FileTokenStore) -> anyhow::Result<()> {
    let mut config = OAuthConfig::new();
    let scopes: Vec<String> = args
        .scopes
        .iter()
        .flat_map(|s| s.split_ascii_whitespace())
        .map(str::to_owned)
        .collect();
    if !scopes.is_empty() {
        config = config.with_scopes(scopes);
    }
    if let Some(id) = args.client_id {
        let secret = match &args.client_secret_env {
            Some(var) => Some(
                std::env::var(var)
                    .with_context(|| format!("--client-secret-env: ${var} is not set"))?,
            ),
            None => None,
        };
        config = config.with_client(id, secret);
    }
    if let Some(url) = args.cimd_url {
        config = config.with_client_metadata_url(url);
    }
    for file in &args.cacert {
        let pem = std::fs::read(file)
            .with_context(|| format!("--cacert: cannot read {}", file.display()))?;
        config = config.with_ca_pem(pem);
    }
    let path = store.path().to_owned();
    let provider = OAuthProvider::new(&args.url, config)?
        .with_store(store)
        .with_redirect(loopback());
    let tokens = provider.login().await?;
    eprintln!(
        "toolwire: logged in to {} (tokens in {})",
        args.url,
        path.display()
    );
    crate::client_cmd::print(&describe(&tokens))
}

fn describe(tokens: &StoredTokens) -> String {
    let scopes = if tokens.scopes.is_empty() {
        "(none)".to_owned()
    } else {
        tokens.scopes.join(" ")
    };
    let expires = match tokens.expires_at {
        None => "never said".to_owned(),
        Some(at) => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            if at > now {
                format!("in {}s", at - now)
            } else {
                "expired".to_owned()
            }
        }
    };
    format!(
        "  issuer:   {}\n  resource: {}\n  scopes:   {scopes}\n  expires:  {expires}\n  refresh:  {}\n",
        tokens.issuer,
        tokens.resource,
        if tokens.refresh_token.is_some() {
            "yes"
        } else {
            "no"
        }
    )
}

/// The CLI's redirect handler: prints the URL on stderr and opens a
/// browser: `$BROWSER` if set (a command line, the URL appended), else the
/// platform's opener when stderr is a terminal.
pub(crate) fn loopback() -> LoopbackRedirect {
    LoopbackRedirect::new(|url: &Url| {
        eprintln!("toolwire: to authorize, open this URL in a browser:\n  {url}");
        open_browser(url.as_str());
    })
}

fn open_browser(url: &str) {
    let command = match std::env::var("BROWSER") {
        Ok(b) if !b.trim().is_empty() => b,
        _ if std::io::stderr().is_terminal() => if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        }
        .to_owned(),
        _ => return,
    };
    let mut words = command.split_ascii_whitespace();
    let Some(program) = words.next() else {
        return;
    };
    let spawned = std::process::Command::new(program)
        .args(words)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        eprintln!("toolwire: could not start a browser ({program}): {e}");
    }
}

/// Adds credentials for the server at `url` to `builder`: the token in
/// `$bearer_env` when given; otherwise the stored OAuth tokens (refreshed,
/// and stepped up in the browser when the server asks for more scopes);
/// with none stored, a 401 says to run `toolwire auth login`.
pub(crate) fn credentials(
    builder: ClientBuilder,
    url: &str,
    bearer_env: Option<&str>,
) -> anyhow::Result<ClientBuilder> {
    if let Some(var) = bearer_env {
        let token =
            std::env::var(var).with_context(|| format!("--bearer-env: ${var} is not set"))?;
        return Ok(builder.with_bearer_token(token));
    }
    let store = match FileTokenStore::open_default() {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!("no token store: {e}");
            return Ok(builder);
        }
    };
    let logged_in = match store.tokens(url) {
        Ok(t) => t.is_some(),
        Err(e) => {
            eprintln!("toolwire: warning: {e}");
            return Ok(builder);
        }
    };
    // A URL the provider cannot use is left for connect_http to explain.
    let Ok(provider) = OAuthProvider::new(url, OAuthConfig::new()) else {
        return Ok(builder);
    };
    let mut provider = provider.with_store(store);
    if logged_in {
        provider = provider.with_redirect(loopback());
    }
    Ok(builder.with_auth(provider))
}
