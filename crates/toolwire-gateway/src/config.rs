//! The gateway's TOML configuration: the upstreams in file order, the
//! namespacing settings, and `${VAR}` substitution from the environment.
//! Unknown keys are errors that name the key and its line.

use crate::GatewayError;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;
use toolwire::ProtocolMode;

/// The default separator between an upstream's prefix and a name.
pub const DEFAULT_SEPARATOR: &str = "__";

/// How long a call to an upstream may take unless its `timeout_ms` says
/// otherwise.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(60);

/// How long start-up waits for the upstreams' first listing unless
/// `start_wait_ms` says otherwise: an upstream that has not answered by
/// then joins the merged lists when it does (`list_changed`).
pub const DEFAULT_START_WAIT: Duration = Duration::from_secs(2);

/// Whether names carry their upstream's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Namespace {
    /// Always `<prefix><separator><name>`, even with one upstream, so adding
    /// an upstream never renames the tools that were there (the default).
    #[default]
    Always,
    /// Names as the upstreams give them; two upstreams offering the same
    /// name is an error naming both. For a single upstream.
    Never,
}

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// Between prefix and name; valid under the tool-name rule.
    #[serde(default = "default_separator")]
    pub(crate) separator: Spanned<String>,
    /// `"always"` (the default) or `"never"`.
    #[serde(default)]
    pub(crate) namespace: Namespace,
    /// A list request fails while any upstream is down, instead of leaving
    /// that upstream's part out.
    #[serde(default)]
    pub(crate) fail_closed: bool,
    /// How long start-up waits for the upstreams' first listing, in
    /// milliseconds; the gateway serves after that, or as soon as every
    /// upstream has answered.
    pub(crate) start_wait_ms: Option<u64>,
    /// The upstreams, in file order: the order of the merged lists.
    #[serde(default)]
    pub(crate) upstreams: Upstreams,
    /// The upstreams resolved when the file was parsed.
    #[serde(skip)]
    pub(crate) resolved: Vec<Upstream>,
}

fn default_separator() -> Spanned<String> {
    Spanned::new(0..0, DEFAULT_SEPARATOR.to_owned())
}

/// The `[upstreams.NAME]` tables in the order the file gives them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Upstreams(pub(crate) Vec<(String, Spanned<UpstreamConfig>)>);

impl<'de> Deserialize<'de> for Upstreams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Upstreams;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of upstreams")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Upstreams, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Spanned<UpstreamConfig>>()? {
                    out.push((k, v));
                }
                Ok(Upstreams(out))
            }
        }
        d.deserialize_map(Ordered)
    }
}

/// One `[upstreams.NAME]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpstreamConfig {
    /// A stdio upstream: argv, no shell.
    pub(crate) command: Option<Vec<String>>,
    /// Environment of the stdio command; values may use `${VAR}`.
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    /// Working directory of the stdio command.
    pub(crate) cwd: Option<PathBuf>,
    /// An HTTP(S) upstream.
    pub(crate) url: Option<String>,
    /// A REST API upstream: its OpenAPI 3.0 or 3.1 document (JSON or
    /// YAML), an `http(s)://` URL or a file.
    pub(crate) openapi: Option<String>,
    /// Where the REST API's paths are; the document's first `servers`
    /// entry by default.
    pub(crate) base_url: Option<String>,
    /// HTTP headers; values may use `${VAR}`.
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    /// The environment variable holding the bearer token sent upstream.
    pub(crate) bearer_env: Option<String>,
    /// `"auto"` (the default), `"modern"` or `"legacy"`.
    pub(crate) protocol: Option<Spanned<String>>,
    /// Per-request time limit in milliseconds.
    pub(crate) timeout_ms: Option<u64>,
    /// The prefix of this upstream's names; defaults to the table's key.
    pub(crate) prefix: Option<Spanned<String>>,
    /// Only tools whose upstream name matches one of these globs.
    #[serde(default)]
    pub(crate) allow: Vec<Spanned<String>>,
    /// No tool whose upstream name matches one of these globs.
    #[serde(default)]
    pub(crate) deny: Vec<Spanned<String>>,
    /// Per-tool overrides, by upstream name.
    #[serde(default)]
    pub(crate) tools: BTreeMap<String, ToolOverride>,
    /// Each caller's own credential, by the subject of their access token,
    /// instead of the gateway's for every caller.
    pub(crate) per_subject: Option<PerSubjectConfig>,
    /// Forward the caller's own access token, when it names this upstream
    /// in `aud` (the weaker option: see the book's gateway chapter).
    #[serde(default)]
    pub(crate) passthrough: bool,
    /// The audience a passed-through token must name; the `url` by
    /// default.
    pub(crate) audience: Option<String>,
    /// Each caller's token exchanged (RFC 8693) for one for this upstream.
    pub(crate) token_exchange: Option<TokenExchangeConfig>,
}

/// `[upstreams.NAME.token_exchange]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TokenExchangeConfig {
    /// The authorization server's token endpoint.
    pub(crate) token_endpoint: String,
    /// The gateway's client id there.
    pub(crate) client_id: String,
    /// The environment variable holding the gateway's client secret.
    pub(crate) client_secret_env: String,
    /// The resource (and audience) asked for; the `url` by default.
    pub(crate) resource: Option<String>,
    /// The scope asked for, if any.
    pub(crate) scope: Option<String>,
}

/// `[upstreams.NAME.per_subject]`: the header each caller's credential
/// goes in, and the credentials by subject.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PerSubjectConfig {
    /// The header; `Authorization` by default.
    pub(crate) header: Option<String>,
    /// What goes before the secret in the header: `"Bearer "` for
    /// `Authorization` by default, nothing for another header.
    pub(crate) prefix: Option<String>,
    /// The secret of each subject: a string (which may use `${VAR}`) or
    /// `{ file = "PATH" }` (its first line).
    pub(crate) subjects: BTreeMap<String, SecretSource>,
}

/// Where a secret comes from.
#[derive(Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum SecretSource {
    /// The value itself (after `${VAR}` substitution).
    Value(String),
    /// The first line of a file.
    File {
        /// The file.
        file: PathBuf,
    },
}

impl fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Value(_) => f.write_str("Value(<redacted>)"),
            Self::File { file } => f.debug_struct("File").field("file", file).finish(),
        }
    }
}

/// A credential read from the configuration: never shown.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Whose credential a request forwarded for a caller carries.
#[derive(Debug, Clone, Default)]
pub(crate) enum Credentials {
    /// The gateway's own (`headers`, `bearer_env`), whoever the caller.
    #[default]
    Gateway,
    /// Each caller's own, by the subject of their access token.
    PerSubject {
        header: String,
        prefix: String,
        secrets: std::collections::HashMap<String, Secret>,
    },
    /// The caller's own access token, when it names `audience`.
    Passthrough { audience: String },
    /// The caller's token exchanged for one for this upstream.
    Exchange(std::sync::Arc<crate::exchange::Exchanger>),
}

impl Credentials {
    /// The header a request forwarded for a caller carries, in every mode:
    /// an exchanged token, or what [`for_caller`](Self::for_caller) gives.
    pub(crate) async fn header(
        &self,
        upstream: &str,
        principal: Option<&str>,
        token: Option<&toolwire::CallerToken>,
    ) -> Result<Option<(String, String)>, String> {
        match self {
            Self::Exchange(exchanger) => exchanger
                .authorization(upstream, principal, token)
                .await
                .map(|value| Some(("Authorization".to_owned(), value))),
            _ => self.for_caller(upstream, principal, token),
        }
    }

    /// The header a request forwarded for `principal` (issuer and subject,
    /// as the server's OAuth gives it) carries, if any; the refusal to
    /// forward it otherwise. Never the gateway's own credential in place
    /// of a caller's.
    pub(crate) fn for_caller(
        &self,
        upstream: &str,
        principal: Option<&str>,
        token: Option<&toolwire::CallerToken>,
    ) -> Result<Option<(String, String)>, String> {
        let (header, prefix, secrets) = match self {
            Self::Gateway | Self::Exchange(_) => return Ok(None),
            Self::Passthrough { audience } => {
                let Some(token) = token else {
                    return Err(format!(
                        "upstream {upstream:?} takes the caller's own token (passthrough), and \
                         this request has none (serve the gateway with --auth-issuer)"
                    ));
                };
                if !token.is_for(audience) {
                    return Err(format!(
                        "upstream {upstream:?} takes the caller's own token only when it is \
                         also for {audience:?} (in aud), and this one is not"
                    ));
                }
                return Ok(Some((
                    "Authorization".into(),
                    format!("Bearer {}", token.token()),
                )));
            }
            Self::PerSubject {
                header,
                prefix,
                secrets,
            } => (header, prefix, secrets),
        };
        let Some(principal) = principal else {
            return Err(format!(
                "upstream {upstream:?} takes each caller's own credential, and this request has \
                 no authenticated caller (serve the gateway with --auth-issuer)"
            ));
        };
        let subject = principal.split_once(' ').map_or(principal, |(_, s)| s);
        match secrets.get(subject) {
            Some(secret) => Ok(Some((
                header.clone(),
                format!("{prefix}{}", secret.expose()),
            ))),
            None => Err(format!(
                "upstream {upstream:?} has no credential for this caller: its per_subject \
                 table names no subject {subject:?}"
            )),
        }
    }
}

/// `[upstreams.NAME.tools.TOOL]`: a new name (the prefix still applies)
/// or a new description.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolOverride {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
}

/// Where an upstream is.
#[derive(Debug, Clone)]
pub(crate) enum Endpoint {
    Stdio {
        argv: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        bearer: Option<String>,
    },
    /// A REST API described by an OpenAPI document.
    OpenApi {
        /// The document: a URL or a file.
        document: String,
        base_url: Option<String>,
        headers: Vec<(String, String)>,
        bearer: Option<String>,
    },
}

/// An upstream ready to connect: everything resolved and checked.
#[derive(Debug, Clone)]
pub(crate) struct Upstream {
    pub(crate) key: String,
    pub(crate) prefix: String,
    pub(crate) endpoint: Endpoint,
    pub(crate) mode: ProtocolMode,
    pub(crate) timeout: Duration,
    pub(crate) allow: Vec<glob::Pattern>,
    pub(crate) deny: Vec<glob::Pattern>,
    pub(crate) overrides: BTreeMap<String, ToolOverride>,
    pub(crate) credentials: Credentials,
}

impl GatewayConfig {
    /// Reads and checks a configuration file.
    ///
    /// # Errors
    ///
    /// [`GatewayError::Config`] naming the file, the line and what is wrong
    /// (an unknown key, a missing `command`/`url`, a `${VAR}` that is not
    /// set, a bad glob or separator).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, GatewayError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| GatewayError::Config {
            origin: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::parse(&text).map_err(|e| match e {
            GatewayError::Config { origin, message } if origin.is_empty() => GatewayError::Config {
                origin: path.display().to_string(),
                message,
            },
            other => other,
        })
    }

    /// Parses a configuration from TOML text (see [`from_file`](Self::from_file)).
    ///
    /// # Errors
    ///
    /// [`GatewayError::Config`] with the line of the problem.
    pub fn parse(text: &str) -> Result<Self, GatewayError> {
        let mut config: Self = toml::from_str(text).map_err(|e| GatewayError::Config {
            origin: String::new(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let at = |span: std::ops::Range<usize>, message: String| GatewayError::Config {
            origin: String::new(),
            message: format!("line {}: {message}", line_of(text, span.start)),
        };
        let sep = config.separator.get_ref();
        if sep.is_empty()
            || !sep
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        {
            return Err(at(
                config.separator.span(),
                format!(
                    "separator {sep:?} is not valid in a tool name: use letters, digits, `_`, `-` or `.` (the default is {DEFAULT_SEPARATOR:?})"
                ),
            ));
        }
        if config.upstreams.0.is_empty() {
            return Err(GatewayError::Config {
                origin: String::new(),
                message: "no upstreams: add an [upstreams.NAME] table with `command` or `url`"
                    .into(),
            });
        }
        // Resolve now, so every problem surfaces at start-up.
        config.resolved = config.resolve_with(text, &|var| std::env::var(var).ok())?;
        Ok(config)
    }

    /// The upstreams with `${VAR}` resolved by `env`.
    pub(crate) fn resolve_with(
        &self,
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Vec<Upstream>, GatewayError> {
        self.upstreams
            .0
            .iter()
            .map(|(key, spanned)| {
                let line = line_of(text, spanned.span().start);
                resolve_upstream(key, spanned.get_ref(), env).map_err(|message| {
                    GatewayError::Config {
                        origin: String::new(),
                        message: format!("line {line}: [upstreams.{key}]: {message}"),
                    }
                })
            })
            .collect()
    }

    /// The upstreams, resolved when parsed.
    pub(crate) fn upstreams(&self) -> &[Upstream] {
        &self.resolved
    }

    /// The separator between prefix and name.
    pub fn separator(&self) -> &str {
        self.separator.get_ref()
    }

    /// Whether names are prefixed.
    pub fn namespace(&self) -> Namespace {
        self.namespace
    }

    /// Whether a list fails while an upstream is down.
    pub fn fail_closed(&self) -> bool {
        self.fail_closed
    }

    /// How long [`Gateway::start`](crate::Gateway::start) waits for the
    /// upstreams' first listing before serving without the ones that have
    /// not answered ([`DEFAULT_START_WAIT`] unless `start_wait_ms` is set).
    pub fn start_wait(&self) -> Duration {
        self.start_wait_ms
            .map_or(DEFAULT_START_WAIT, Duration::from_millis)
    }

    /// Whether an upstream takes the caller's own token (`passthrough`), or
    /// one exchanged for it (`token_exchange`):
    /// the gateway's server must then let its handlers see it
    /// ([`AuthConfig::with_caller_tokens`](toolwire::AuthConfig::with_caller_tokens)).
    pub fn needs_caller_tokens(&self) -> bool {
        self.resolved.iter().any(|u| {
            matches!(
                u.credentials,
                Credentials::Passthrough { .. } | Credentials::Exchange(_)
            )
        })
    }

    /// The upstreams' keys, in file order.
    pub fn upstream_names(&self) -> Vec<&str> {
        self.upstreams.0.iter().map(|(k, _)| k.as_str()).collect()
    }
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(0, |t| t.matches('\n').count()) + 1
}

fn resolve_upstream(
    key: &str,
    c: &UpstreamConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Upstream, String> {
    let stdio_only = !c.env.is_empty() || c.cwd.is_some();
    let http_only = !c.headers.is_empty() || c.bearer_env.is_some();
    let given = usize::from(c.command.is_some())
        + usize::from(c.url.is_some())
        + usize::from(c.openapi.is_some());
    if given > 1 {
        return Err("give one of `command`, `url` and `openapi`".into());
    }
    if c.base_url.is_some() && c.openapi.is_none() {
        return Err("`base_url` applies to `openapi` upstreams only".into());
    }
    // The headers and bearer token of an HTTP upstream (MCP or REST).
    let http_parts = || -> Result<HttpCredentials, String> {
        if stdio_only {
            return Err("`env` and `cwd` apply to `command` upstreams only".into());
        }
        let headers = c
            .headers
            .iter()
            .map(|(k, v)| Ok((k.clone(), substitute(v, env)?)))
            .collect::<Result<_, String>>()?;
        let bearer = match &c.bearer_env {
            Some(var) => Some(env(var).ok_or_else(|| {
                format!("bearer_env names {var}, which is not set in the environment")
            })?),
            None => None,
        };
        Ok((headers, bearer))
    };
    let endpoint = match (&c.command, &c.url, &c.openapi) {
        (None, None, None) => {
            return Err(
                "needs `command = [\"program\", \"arg\"]` (stdio), `url = \"http://...\"` \
                 (MCP over HTTP) or `openapi = \"http://.../openapi.json\"` (a REST API)"
                    .into(),
            );
        }
        (Some(argv), _, _) => {
            if argv.is_empty() {
                return Err("`command` is empty: give the program and its arguments".into());
            }
            if http_only {
                return Err("`headers` and `bearer_env` apply to `url` upstreams only".into());
            }
            let env = c
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), substitute(v, env)?)))
                .collect::<Result<_, String>>()?;
            Endpoint::Stdio {
                argv: argv.clone(),
                env,
                cwd: c.cwd.clone(),
            }
        }
        (None, Some(url), _) => {
            if !is_http_url(url) {
                return Err(format!("url {url:?} is not http:// or https://"));
            }
            let (headers, bearer) = http_parts()?;
            Endpoint::Http {
                url: url.clone(),
                headers,
                bearer,
            }
        }
        (None, None, Some(document)) => {
            if c.protocol.is_some() {
                return Err("`protocol` applies to MCP upstreams, not to `openapi` ones".into());
            }
            if let Some(base) = &c.base_url
                && !is_http_url(base)
            {
                return Err(format!("base_url {base:?} is not http:// or https://"));
            }
            if !is_http_url(document) && !Path::new(document).is_file() {
                return Err(format!(
                    "openapi {document:?} is neither an http(s):// URL nor a readable file"
                ));
            }
            let (headers, bearer) = http_parts()?;
            Endpoint::OpenApi {
                document: document.clone(),
                base_url: c.base_url.clone(),
                headers,
                bearer,
            }
        }
    };
    let mode = match c.protocol.as_ref().map(|p| p.get_ref().as_str()) {
        None | Some("auto") => ProtocolMode::Auto,
        Some("modern") => ProtocolMode::Modern,
        Some("legacy") => ProtocolMode::Legacy,
        Some(other) => {
            return Err(format!(
                "protocol {other:?} is not one of \"auto\", \"modern\", \"legacy\""
            ));
        }
    };
    let prefix = c
        .prefix
        .as_ref()
        .map_or_else(|| key.to_owned(), |p| p.get_ref().clone());
    let globs = |list: &[Spanned<String>], what: &str| {
        list.iter()
            .map(|g| {
                glob::Pattern::new(g.get_ref())
                    .map_err(|e| format!("{what} glob {:?}: {e}", g.get_ref()))
            })
            .collect::<Result<Vec<_>, String>>()
    };
    let modes = usize::from(c.passthrough)
        + usize::from(c.per_subject.is_some())
        + usize::from(c.token_exchange.is_some());
    if modes > 1 {
        return Err("give one of `passthrough`, `per_subject` and `token_exchange`".into());
    }
    if c.audience.is_some() && !c.passthrough {
        return Err("`audience` applies with `passthrough = true` only".into());
    }
    let credentials = match &c.per_subject {
        None if c.token_exchange.is_some() => exchange(c, env)?,
        None if c.passthrough => match c.audience.as_ref().or(identity(c)) {
            Some(audience) if c.command.is_none() => Credentials::Passthrough {
                audience: audience.clone(),
            },
            _ if c.command.is_none() => {
                return Err(
                    "`passthrough` needs the `audience` a caller's token must name (an \
                     `openapi` upstream without `base_url` has no default)"
                        .into(),
                );
            }
            _ => return Err("`passthrough` applies to `url` and `openapi` upstreams only".into()),
        },
        None => Credentials::Gateway,
        Some(_) if c.command.is_some() => {
            return Err("`per_subject` applies to `url` and `openapi` upstreams only".into());
        }
        Some(p) => {
            let header = p.header.clone().unwrap_or_else(|| "Authorization".into());
            if http::HeaderName::try_from(header.as_str()).is_err() {
                return Err(format!(
                    "per_subject header {header:?} is not a header name"
                ));
            }
            let prefix = p.prefix.clone().unwrap_or_else(|| {
                if header.eq_ignore_ascii_case("authorization") {
                    "Bearer ".into()
                } else {
                    String::new()
                }
            });
            let mut secrets = std::collections::HashMap::new();
            for (subject, source) in &p.subjects {
                let value = match source {
                    SecretSource::Value(v) => substitute(v, env)?,
                    SecretSource::File { file } => std::fs::read_to_string(file)
                        .map_err(|e| {
                            format!("per_subject {subject:?}: reading {}: {e}", file.display())
                        })?
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                };
                if value.is_empty() {
                    return Err(format!("per_subject {subject:?}: the credential is empty"));
                }
                if http::HeaderValue::try_from(format!("{prefix}{value}")).is_err() {
                    return Err(format!(
                        "per_subject {subject:?}: the credential cannot go in a header"
                    ));
                }
                secrets.insert(subject.clone(), Secret(value));
            }
            Credentials::PerSubject {
                header,
                prefix,
                secrets,
            }
        }
    };
    let timeout = match c.timeout_ms {
        Some(0) => return Err("timeout_ms must be at least 1".into()),
        Some(ms) => Duration::from_millis(ms),
        None => DEFAULT_UPSTREAM_TIMEOUT,
    };
    Ok(Upstream {
        key: key.to_owned(),
        prefix,
        endpoint,
        mode,
        timeout,
        allow: globs(&c.allow, "allow")?,
        deny: globs(&c.deny, "deny")?,
        overrides: c.tools.clone(),
        credentials,
    })
}

/// The token exchange of an upstream with `[token_exchange]`.
fn exchange(
    c: &UpstreamConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Credentials, String> {
    let Some(x) = c.token_exchange.as_ref().filter(|_| c.command.is_none()) else {
        return Err("`token_exchange` applies to `url` and `openapi` upstreams only".into());
    };
    let Some(resource) = x.resource.as_ref().or(identity(c)) else {
        return Err(
            "`token_exchange` needs the `resource` to ask for (an `openapi` upstream without \
             `base_url` has no default)"
                .into(),
        );
    };
    let secret = env(&x.client_secret_env).ok_or_else(|| {
        format!(
            "token_exchange client_secret_env names {}, which is not set in the environment",
            x.client_secret_env
        )
    })?;
    let client = toolwire::TokenExchange::new(&x.token_endpoint, &x.client_id, secret)
        .map_err(|e| format!("token_exchange: {e}"))?;
    Ok(Credentials::Exchange(std::sync::Arc::new(
        crate::exchange::Exchanger::new(client, resource.clone(), x.scope.clone()),
    )))
}

/// An HTTP upstream's own headers and bearer token.
type HttpCredentials = (Vec<(String, String)>, Option<String>);

/// The URL that names an HTTP upstream as a resource (the default
/// audience of a passed-through token and resource of an exchanged one):
/// its `url`, or an `openapi` upstream's `base_url`.
fn identity(c: &UpstreamConfig) -> Option<&String> {
    c.url.as_ref().or(c.base_url.as_ref())
}

fn is_http_url(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

/// `${VAR}` replaced by the variable's value; `$${` is a literal `${`.
fn substitute(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if let Some(r) = rest.strip_prefix("$${") {
            out.push_str("${");
            rest = r;
        } else if let Some(r) = rest.strip_prefix("${") {
            let end = r
                .find('}')
                .ok_or_else(|| format!("unclosed `${{` in {value:?}"))?;
            let var = &r[..end];
            let v = env(var).ok_or_else(|| {
                format!("${{{var}}} is used but {var} is not set in the environment")
            })?;
            out.push_str(&v);
            rest = &r[end + 1..];
        } else {
            out.push('$');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

impl Upstream {
    /// Whether the allow and deny globs let `name` through.
    pub(crate) fn admits(&self, name: &str) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|g| g.matches(name)))
            && !self.deny.iter().any(|g| g.matches(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
[upstreams.demo]                       # the key is the default prefix
command = ["toolwire", "serve"]        # a stdio upstream: argv, no shell
env = { LOG = "1" }                    # optional

[upstreams.py]
url = "http://127.0.0.1:8001/mcp"      # an HTTP(S) upstream
headers = { Authorization = "Bearer ${PY_TOKEN}" }   # optional; ${VAR} from the environment
"#;

    fn env(var: &str) -> Option<String> {
        (var == "PY_TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn per_subject_credentials_resolve_never_show_and_never_fall_back() {
        let text = r#"
[upstreams.crm]
url = "http://127.0.0.1:8001/mcp"
[upstreams.crm.per_subject]
header = "X-Api-Key"
[upstreams.crm.per_subject.subjects]
alice = "${PY_TOKEN}"
"#;
        let config: GatewayConfig = toml::from_str(text).expect("toml");
        let ups = config.resolve_with(text, &env).expect("resolves");
        let creds = &ups[0].credentials;
        assert!(
            !format!("{ups:?}").contains("s3cret"),
            "a secret in Debug: {ups:?}"
        );
        assert_eq!(
            creds.for_caller("crm", Some("https://as.example alice"), None),
            Ok(Some(("X-Api-Key".to_owned(), "s3cret".to_owned()))),
            "no prefix for a header other than Authorization"
        );
        let refused = creds
            .for_caller("crm", Some("https://as.example bob"), None)
            .expect_err("bob has none");
        assert!(
            refused.contains("\"crm\"") && refused.contains("\"bob\""),
            "{refused}"
        );
        assert!(
            creds.for_caller("crm", None, None).is_err(),
            "no caller, no call"
        );
        assert_eq!(
            Credentials::Gateway.for_caller("crm", None, None),
            Ok(None),
            "the gateway's own otherwise"
        );
        // Authorization by default, as a bearer token; a file's first line.
        let dir = std::env::temp_dir().join(format!("tw-per-subject-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("bob");
        std::fs::write(&file, "b0b\nignored\n").expect("write");
        let text = format!(
            "[upstreams.crm]\nurl = \"http://127.0.0.1:8001/mcp\"\n[upstreams.crm.per_subject.subjects]\nbob = {{ file = {:?} }}\n",
            file.display().to_string()
        );
        let config: GatewayConfig = toml::from_str(&text).expect("toml");
        let ups = config.resolve_with(&text, &env).expect("resolves");
        assert_eq!(
            ups[0].credentials.for_caller("crm", Some("iss bob"), None),
            Ok(Some(("Authorization".to_owned(), "Bearer b0b".to_owned())))
        );
        // Only for an HTTP upstream; an unset variable is named.
        let stdio =
            "[upstreams.s]\ncommand = [\"x\"]\n[upstreams.s.per_subject.subjects]\na = \"k\"\n";
        let e = parse(stdio).expect_err("stdio").to_string();
        assert!(e.contains("`url` and `openapi` upstreams only"), "{e}");
        let unset = "[upstreams.h]\nurl = \"http://h/mcp\"\n[upstreams.h.per_subject.subjects]\na = \"${NOPE}\"\n";
        let e = parse(unset).expect_err("unset").to_string();
        assert!(e.contains("NOPE"), "{e}");
    }

    #[test]
    fn one_credential_mode_per_upstream_and_each_checked_at_start() {
        let both = "[upstreams.h]\nurl = \"http://h/mcp\"\npassthrough = true\n[upstreams.h.per_subject.subjects]\na = \"k\"\n";
        let e = parse(both).expect_err("two modes").to_string();
        assert!(e.contains("give one of"), "{e}");
        let no_secret = "[upstreams.h]\nurl = \"http://h/mcp\"\n[upstreams.h.token_exchange]\ntoken_endpoint = \"https://as/token\"\nclient_id = \"gw\"\nclient_secret_env = \"NOPE\"\n";
        let e = parse(no_secret).expect_err("unset").to_string();
        assert!(e.contains("NOPE"), "{e}");
        let plain_http = no_secret
            .replace("https://as/token", "http://as.example/token")
            .replace("NOPE", "PY_TOKEN");
        let e = parse(&plain_http)
            .expect_err("http off loopback")
            .to_string();
        assert!(e.contains("https"), "{e}");
        let stray = "[upstreams.h]\nurl = \"http://h/mcp\"\naudience = \"x\"\n";
        assert!(parse(stray).is_err(), "audience without passthrough");
        let ok = no_secret
            .replace("NOPE", "PY_TOKEN")
            .replace("https://as/token", "http://127.0.0.1:9/token");
        let config = parse(&ok).expect("exchange");
        let ups = config.resolve_with(&ok, &env).expect("resolves");
        assert!(matches!(ups[0].credentials, Credentials::Exchange(_)));
        assert!(!format!("{ups:?}").contains("s3cret"), "{ups:?}");
    }

    fn parse(text: &str) -> Result<GatewayConfig, GatewayError> {
        let config: GatewayConfig = toml::from_str(text).map_err(|e| GatewayError::Config {
            origin: String::new(),
            message: e.to_string(),
        })?;
        config.resolve_with(text, &env)?;
        Ok(config)
    }

    #[test]
    fn the_issues_minimal_form_parses_in_file_order() {
        let config = parse(MINIMAL).expect("parses");
        let ups = config.resolve_with(MINIMAL, &env).expect("resolves");
        assert_eq!(config.upstream_names(), ["demo", "py"]);
        assert_eq!(ups[0].prefix, "demo");
        assert_eq!(config.separator(), "__");
        assert_eq!(config.namespace(), Namespace::Always);
        assert_eq!(config.start_wait(), DEFAULT_START_WAIT);
        let zero = parse(&format!("start_wait_ms = 0\n{MINIMAL}")).expect("parses");
        assert_eq!(zero.start_wait(), Duration::ZERO);
        match &ups[1].endpoint {
            Endpoint::Http { headers, .. } => {
                assert_eq!(headers[0], ("Authorization".into(), "Bearer s3cret".into()));
            }
            other => panic!("not http: {other:?}"),
        }
        match &ups[0].endpoint {
            Endpoint::Stdio { argv, env, .. } => {
                assert_eq!(argv, &["toolwire", "serve"]);
                assert_eq!(env[0], ("LOG".into(), "1".into()));
            }
            other => panic!("not stdio: {other:?}"),
        }
    }

    #[test]
    fn order_is_the_files_not_alphabetical() {
        let text =
            "[upstreams.zeta]\nurl = \"http://a/mcp\"\n[upstreams.alpha]\nurl = \"http://b/mcp\"\n";
        assert_eq!(parse(text).expect("ok").upstream_names(), ["zeta", "alpha"]);
    }

    #[test]
    fn unknown_key_is_named_with_its_line() {
        let text = "[upstreams.demo]\ncommand = [\"x\"]\ncomand = [\"y\"]\n";
        let e = parse(text).expect_err("unknown key").to_string();
        assert!(e.contains("comand"), "{e}");
        assert!(e.contains("line 3"), "{e}");
        let top = "separatr = \"-\"\n[upstreams.a]\nurl = \"http://a\"\n";
        let e = parse(top).expect_err("unknown key").to_string();
        assert!(e.contains("separatr") && e.contains("line 1"), "{e}");
    }

    #[test]
    fn missing_variable_and_missing_endpoint_name_the_upstream_and_line() {
        let text = "[upstreams.a]\nurl = \"http://a\"\nheaders = { X = \"${NOPE}\" }\n";
        let e = parse(text).expect_err("unset").to_string();
        assert!(
            e.contains("NOPE") && e.contains("[upstreams.a]") && e.contains("line 1"),
            "{e}"
        );
        let text = "\n[upstreams.b]\nprefix = \"b\"\n";
        let e = parse(text).expect_err("no endpoint").to_string();
        assert!(e.contains("line 2") && e.contains("command"), "{e}");
    }

    #[test]
    fn separator_must_be_valid_in_a_tool_name() {
        let text = "separator = \"::\"\n[upstreams.a]\nurl = \"http://a\"\n";
        let e = GatewayConfig::parse(text)
            .expect_err("bad separator")
            .to_string();
        assert!(e.contains("line 1") && e.contains("\"::\""), "{e}");
    }

    #[test]
    fn substitution_handles_escapes_and_unclosed_braces() {
        assert_eq!(substitute("a$${b}c$", &env).expect("ok"), "a${b}c$");
        assert_eq!(substitute("${PY_TOKEN}!", &env).expect("ok"), "s3cret!");
        assert!(substitute("${PY_TOKEN", &env).is_err());
    }

    #[test]
    fn globs_filter_tools() {
        let text = "[upstreams.a]\nurl = \"http://a\"\nallow = [\"e*\", \"add\"]\ndeny = [\"echo_secret\"]\n";
        let ups = parse(text)
            .expect("ok")
            .resolve_with(text, &env)
            .expect("ok");
        assert!(ups[0].admits("echo"));
        assert!(ups[0].admits("add"));
        assert!(!ups[0].admits("echo_secret"));
        assert!(!ups[0].admits("countdown"));
    }

    #[test]
    fn an_openapi_upstream_is_checked_like_the_others() {
        let ok = "[upstreams.pets]\nopenapi = \"http://127.0.0.1:9/openapi.json\"\nbase_url = \"http://127.0.0.1:9/v1\"\npassthrough = true\n";
        let config = parse(ok).expect("valid");
        let ups = config.resolve_with(ok, &env).expect("resolves");
        let up = &ups[0];
        assert!(
            matches!(&up.endpoint, Endpoint::OpenApi { document, base_url: Some(b), .. }
            if document.ends_with("openapi.json") && b.ends_with("/v1"))
        );
        // The base URL is the default audience.
        assert!(
            matches!(&up.credentials, Credentials::Passthrough { audience } if audience == "http://127.0.0.1:9/v1")
        );
        for (text, wanted) in [
            (
                "openapi = \"http://h/o.json\"\nurl = \"http://h/mcp\"",
                "one of `command`, `url` and `openapi`",
            ),
            (
                "url = \"http://h/mcp\"\nbase_url = \"http://h\"",
                "`base_url` applies to `openapi`",
            ),
            (
                "openapi = \"http://h/o.json\"\nprotocol = \"modern\"",
                "`protocol` applies to MCP upstreams",
            ),
            (
                "openapi = \"/nonexistent/openapi.yaml\"",
                "neither an http(s):// URL nor a readable file",
            ),
            (
                "openapi = \"http://h/o.json\"\nbase_url = \"ftp://h\"",
                "is not http:// or https://",
            ),
            (
                "openapi = \"http://h/o.json\"\npassthrough = true",
                "needs the `audience`",
            ),
            (
                "openapi = \"http://h/o.json\"\nenv = { A = \"1\" }",
                "apply to `command` upstreams only",
            ),
        ] {
            let e = parse(&format!("[upstreams.x]\n{text}\n"))
                .expect_err(text)
                .to_string();
            assert!(e.contains(wanted), "{text}: {e}");
        }
    }
}
