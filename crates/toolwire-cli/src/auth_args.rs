//! `toolwire serve --http`'s OAuth flags: the resource server's settings
//! (issuer, audience, key set, introspection, scopes) and the secure
//! default that refuses a non-loopback address without them.

use anyhow::Context as _;
use std::time::Duration;
use toolwire::{AuthConfig, HttpConfig, IntrospectionVerifier, JwtVerifier, RateLimit};

/// The environment variables holding `--auth-introspection`'s client
/// credentials: never on the command line, where `ps` shows them.
pub(crate) const CLIENT_ID_ENV: &str = "TOOLWIRE_AUTH_CLIENT_ID";
/// See [`CLIENT_ID_ENV`].
pub(crate) const CLIENT_SECRET_ENV: &str = "TOOLWIRE_AUTH_CLIENT_SECRET";

/// The demo tools that change what every client sees.
const DEFINE_TOOLS: [&str; 2] = ["define_tool", "undefine_tool"];

#[derive(clap::Args, Debug)]
pub(crate) struct AuthArgs {
    /// Whether handlers may see the caller's token: set by `gateway` for
    /// an upstream with `passthrough`, never from the command line.
    #[arg(skip)]
    pub(crate) caller_tokens: bool,
    /// With `--http`: require OAuth 2.1 bearer tokens issued by the
    /// authorization server URL (its issuer identifier, compared exactly).
    /// JWT access tokens are checked against its keys (found in its
    /// metadata, or at --auth-jwks).
    #[arg(long, value_name = "URL", requires = "http")]
    pub(crate) auth_issuer: Option<String>,
    /// The canonical URI of this server, which tokens must name in `aud`
    /// (default: --public-url followed by --path).
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub(crate) auth_audience: Option<String>,
    /// The authorization server's key set (JWKS) URL, instead of the one
    /// in its metadata.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub(crate) auth_jwks: Option<String>,
    /// Check opaque (non-JWT) tokens at this RFC 7662 introspection
    /// endpoint, authenticated with TOOLWIRE_AUTH_CLIENT_ID and
    /// TOOLWIRE_AUTH_CLIENT_SECRET.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub(crate) auth_introspection: Option<String>,
    /// How many introspections one client (IP address) may cause, as
    /// N/s, N/m or N/h with an optional ,BURST; a new opaque token past
    /// it gets 429 with Retry-After.
    #[arg(
        long,
        value_name = "RATE",
        default_value = "10/s,20",
        requires = "auth_introspection"
    )]
    pub(crate) auth_introspection_rate: RateLimit,
    /// A JWT access token type (`typ`) to accept, instead of RFC 9068's
    /// at+jwt (repeatable; `--auth-token-type at+jwt --auth-token-type
    /// JWT` accepts both).
    #[arg(long, value_name = "TYPE", requires = "auth_issuer")]
    pub(crate) auth_token_type: Vec<String>,
    /// The clock skew allowed on a token's exp and nbf, in seconds.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        requires = "auth_issuer"
    )]
    pub(crate) auth_leeway: u64,
    /// The shortest time between two fetches of the key set, in seconds
    /// (a token signed with an unknown key refetches it).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        requires = "auth_issuer"
    )]
    pub(crate) auth_jwks_refresh: u64,
    /// The URL clients reach this server at, such as
    /// https://mcp.example.com (behind a TLS proxy, its public address):
    /// the metadata URL and the default audience are built from it, never
    /// from the request. Its host is added to the accepted Host values.
    #[arg(long, value_name = "URL", requires = "http")]
    pub(crate) public_url: Option<String>,
    /// A scope every request needs (repeatable); also listed as the
    /// metadata's scopes_supported.
    #[arg(long, value_name = "SCOPE", requires = "auth_issuer")]
    pub(crate) required_scope: Vec<String>,
    /// TOOL=SCOPE: calling (and seeing) TOOL needs SCOPE (repeatable).
    #[arg(long, value_name = "TOOL=SCOPE", requires = "auth_issuer", value_parser = pair)]
    pub(crate) scope_for: Vec<(String, String)>,
    /// BROADER=NARROWER: a token granted BROADER also holds NARROWER
    /// (repeatable).
    #[arg(long, value_name = "BROADER=NARROWER", requires = "auth_issuer", value_parser = pair)]
    pub(crate) scope_implies: Vec<(String, String)>,
    /// The scope that define_tool and undefine_tool (served over HTTP with
    /// --allow-define) need: tools every client then sees.
    #[arg(long, value_name = "SCOPE", requires = "auth_issuer")]
    pub(crate) define_scope: Option<String>,
    /// Serve --http on a non-loopback address without authentication:
    /// anyone who reaches the port can call every tool.
    #[arg(long, requires = "http", conflicts_with = "auth_issuer")]
    pub(crate) no_auth: bool,
}

/// The host of an `http(s)://` URL, without the port.
fn host_of(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme, "http" | "https") {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = match authority.strip_prefix('[') {
        Some(v6) => &authority[..v6.find(']')? + 2],
        None => authority.split(':').next()?,
    };
    (!host.is_empty()).then_some(host)
}

fn pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_owned(), b.to_owned())),
        _ => Err(format!("expected NAME=SCOPE, got {s:?}")),
    }
}

impl AuthArgs {
    /// Applies the flags to `config` (`path` is the MCP endpoint's path).
    /// `loopback` is whether the bound address is a loopback one: anywhere
    /// else, the server needs an auth configuration or `--no-auth`.
    ///
    /// Spec: basic/authorization/index.mdx — a remote MCP server is an
    /// OAuth 2.1 protected resource.
    pub(crate) fn apply(
        &self,
        mut config: HttpConfig,
        path: &str,
        bound: std::net::SocketAddr,
    ) -> anyhow::Result<HttpConfig> {
        if let Some(public) = &self.public_url {
            let host = host_of(public).with_context(|| {
                format!("--public-url {public:?}: expected an absolute URL such as https://mcp.example.com")
            })?;
            if let Some(hosts) = config.allowed_hosts() {
                let mut hosts = hosts.to_vec();
                hosts.push(host.to_ascii_lowercase());
                config = config.with_allowed_hosts(hosts);
            }
        }
        let Some(issuer) = &self.auth_issuer else {
            anyhow::ensure!(
                bound.ip().is_loopback() || self.no_auth,
                "refusing to serve {bound} without authentication: on a non-loopback address anyone who reaches the port could call every tool. \
                 Configure OAuth with --auth-issuer URL (and --public-url or --auth-audience), or pass --no-auth to serve it open anyway"
            );
            return Ok(config);
        };
        let audience = match (&self.auth_audience, &self.public_url) {
            (Some(audience), _) => audience.clone(),
            (None, Some(public)) => format!("{}{path}", public.trim_end_matches('/')),
            (None, None) => anyhow::bail!(
                "--auth-issuer needs the canonical URI of this server: pass --public-url (such as https://mcp.example.com) or --auth-audience"
            ),
        };
        let mut jwt = JwtVerifier::new(issuer.as_str(), audience.as_str())
            .context("--auth-issuer")?
            .with_leeway(Duration::from_secs(self.auth_leeway))
            .with_refresh_interval(Duration::from_secs(self.auth_jwks_refresh));
        if let Some(jwks) = &self.auth_jwks {
            jwt = jwt.with_jwks_uri(jwks).context("--auth-jwks")?;
        }
        if !self.auth_token_type.is_empty() {
            jwt = jwt
                .with_accepted_token_types(&self.auth_token_type)
                .context("--auth-token-type")?;
        }
        let mut auth = AuthConfig::new(&audience, jwt)
            .context("the resource URI (--auth-audience or --public-url)")?
            .with_authorization_server(issuer.as_str())
            .with_scopes_supported(self.required_scope.iter().cloned())
            .with_required_scopes(self.required_scope.iter().cloned());
        if let Some(endpoint) = &self.auth_introspection {
            let id = std::env::var(CLIENT_ID_ENV).with_context(|| {
                format!("--auth-introspection needs the client id in {CLIENT_ID_ENV}")
            })?;
            let secret = std::env::var(CLIENT_SECRET_ENV).with_context(|| {
                format!("--auth-introspection needs the client secret in {CLIENT_SECRET_ENV}")
            })?;
            let introspection =
                IntrospectionVerifier::new(endpoint, audience.as_str(), &id, secret)
                    .context("--auth-introspection")?
                    .with_issuer(issuer.as_str())
                    .with_client_limit(self.auth_introspection_rate, 10_000);
            auth = auth.with_opaque_verifier(introspection);
        }
        for (tool, scope) in &self.scope_for {
            auth = auth.with_tool_scopes(tool.as_str(), [scope.as_str()]);
        }
        for (broader, narrower) in &self.scope_implies {
            auth = auth.with_scope_implies(broader.as_str(), [narrower.as_str()]);
        }
        if self.caller_tokens {
            auth = auth.with_caller_tokens();
        }
        if let Some(scope) = &self.define_scope {
            for tool in DEFINE_TOOLS {
                auth = auth.with_tool_scopes(tool, [scope.as_str()]);
            }
        }
        eprintln!(
            "toolwire: OAuth on: tokens of {issuer} for {}; metadata at {}",
            auth.resource(),
            auth.metadata_url()
        );
        Ok(config.with_auth(auth))
    }
}

#[cfg(test)]
mod tests {
    use super::host_of;

    #[test]
    fn the_public_host_is_read_without_its_port() {
        assert_eq!(host_of("https://mcp.example.com"), Some("mcp.example.com"));
        assert_eq!(
            host_of("https://mcp.example.com:8443/mcp"),
            Some("mcp.example.com")
        );
        assert_eq!(host_of("http://[::1]:80/x"), Some("[::1]"));
        assert_eq!(host_of("mcp.example.com"), None);
        assert_eq!(host_of("https:///x"), None);
    }
}
