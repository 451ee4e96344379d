//! OAuth 2.1 resource server for the Streamable HTTP transport (feature
//! `auth`): Protected Resource Metadata (RFC 9728), bearer tokens checked
//! by a [`TokenVerifier`] ([`JwtVerifier`] for RFC 9068 JWTs,
//! [`IntrospectionVerifier`] for opaque tokens), the verified grants cached
//! by token (`auth/cache.rs`), and the scopes operations need.
//!
//! [`AuthConfig`] holds the settings; `HttpConfig::with_auth` turns it on.
//! The transport asks the [`Authenticator`] built from it once per request,
//! from the head alone, before the body is read.
//!
//! Spec: basic/authorization/index.mdx; basic/authorization/security-considerations.mdx

mod cache;
mod exchange;
mod fetch;
mod introspect;
mod jwt;
pub(crate) mod scope;

pub use exchange::{ExchangedToken, TokenExchange};
pub use introspect::IntrospectionVerifier;
pub use jwt::JwtVerifier;

use bytes::Bytes;
use http::HeaderMap;
use http::header::AUTHORIZATION;
use scope::{Grant, Kind, ScopePolicy};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// The future a [`TokenVerifier`] returns.
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<VerifiedToken, TokenError>> + Send + 'a>>;

/// Checks an access token. Implemented by [`JwtVerifier`] and
/// [`IntrospectionVerifier`]; implement it for any other scheme.
///
/// The verifier must check that the token was issued for this server (its
/// audience); the resource server caches what it returns until
/// [`VerifiedToken::expires_at`].
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`. Never log or forward it.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;

    /// Verifies `token`, sent by the client at `client` (its IP address,
    /// when the transport knows it). The resource server calls this one;
    /// a verifier that costs a request per token (introspection) counts
    /// it against the client's share. The default ignores the client.
    fn verify_from<'a>(&'a self, token: &'a str, client: Option<IpAddr>) -> VerifyFuture<'a> {
        let _ = client;
        self.verify(token)
    }
}

/// What a verified token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    /// The authorization server that issued it (`iss`).
    pub issuer: String,
    /// Whom it was issued to (`sub`).
    pub subject: String,
    /// The scopes it grants.
    pub scopes: Vec<String>,
    /// Until when it is accepted (`exp`, plus the verifier's clock-skew
    /// leeway, if any); a token without one is cached briefly.
    pub expires_at: Option<SystemTime>,
    /// The client it was issued to (`client_id`), if the token says.
    pub client_id: Option<String>,
    /// The audiences it names (`aud`): this server's canonical URI among
    /// them, and any other resource it is also for.
    pub audiences: Vec<String>,
}

/// Why a token was not accepted.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TokenError {
    /// The token is invalid, expired, or not for this server: `401`.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked (the authorization server did not
    /// answer, or no key set is loaded): `503` with `Retry-After`.
    #[error("the token could not be checked: {0}")]
    Unavailable(String),
    /// The client asked for more token checks than its share allows (for
    /// an introspection, each new token costs a request): `429` with
    /// `Retry-After`, after which it may try again.
    #[error("too many token checks from this client; retry in {0:?}")]
    RateLimited(Duration),
}

/// A setting of the resource server that cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct AuthSetupError(pub(crate) String);

/// How long a verified token without `exp` stays cached.
const UNTIMED_TTL: Duration = Duration::from_secs(60);

/// How soon a failed fetch of the authorization server's keys is tried
/// again (at most), and the `Retry-After` of a `503`.
pub(crate) const FAILED_FETCH_RETRY: Duration = Duration::from_secs(5);

/// `secs` seconds after the epoch, if the clock can hold it (a time of
/// 2^63 s or more overflows it).
pub(crate) fn epoch_secs(secs: u64) -> Option<SystemTime> {
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// The settings of the OAuth 2.1 resource server: the canonical resource
/// URI, the authorization servers, the token verifier, and the scopes.
///
/// Every request to the MCP endpoint then needs `Authorization: Bearer`
/// with a token the verifier accepts (else `401` with a
/// `WWW-Authenticate` challenge that points at the metadata), holding the
/// required scopes and the scopes of the tool, prompt or resource it uses
/// (else `403` `insufficient_scope`). The metadata is served at
/// `/.well-known/oauth-protected-resource` and at that path followed by
/// the resource's path.
///
/// # Example
///
/// ```no_run
/// use toolwire::{AuthConfig, HttpConfig, JwtVerifier};
///
/// let resource = "https://mcp.example.com/mcp";
/// let verifier = JwtVerifier::new("https://auth.example.com", resource)?;
/// let auth = AuthConfig::new(resource, verifier)?
///     .with_authorization_server("https://auth.example.com")
///     .with_scopes_supported(["mcp:tools"])
///     .with_required_scopes(["mcp:tools"])
///     .with_tool_scopes("delete_everything", ["mcp:admin"])
///     .with_scope_implies("mcp:admin", ["mcp:tools"]);
/// let http = HttpConfig::new()
///     .with_allowed_hosts(["mcp.example.com"])
///     .with_auth(auth);
/// # drop(http);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct AuthConfig {
    resource: String,
    /// The origin and path of `resource`, split once.
    origin: String,
    path: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
    opaque: Option<Arc<dyn TokenVerifier>>,
    policy: ScopePolicy,
    cache_capacity: usize,
    /// Whether handlers may see the caller's token (`with_caller_tokens`).
    caller_tokens: bool,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl AuthConfig {
    /// Protects the resource `resource`, its canonical URI (an absolute
    /// `http://` or `https://` URI without query or fragment, such as
    /// `https://mcp.example.com/mcp`; a trailing slash is dropped), with
    /// tokens that `verifier` accepts.
    ///
    /// Spec: basic/authorization/index.mdx#canonical-server-uri
    pub fn new(resource: &str, verifier: impl TokenVerifier) -> Result<Self, AuthSetupError> {
        let uri: http::Uri = resource
            .parse()
            .map_err(|e| AuthSetupError(format!("resource URI {resource:?}: {e}")))?;
        let (Some(scheme @ ("http" | "https")), Some(authority)) =
            (uri.scheme_str(), uri.authority())
        else {
            return Err(AuthSetupError(format!(
                "resource URI {resource:?}: expected an absolute http:// or https:// URI"
            )));
        };
        if uri.query().is_some() || resource.contains('#') {
            return Err(AuthSetupError(format!(
                "resource URI {resource:?}: a canonical URI has no query or fragment"
            )));
        }
        let origin = format!(
            "{}://{}",
            scheme.to_ascii_lowercase(),
            authority.as_str().to_ascii_lowercase()
        );
        let path = uri.path().trim_end_matches('/').to_owned();
        Ok(Self {
            resource: format!("{origin}{path}"),
            origin,
            path,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            verifier: Arc::new(verifier),
            opaque: None,
            policy: ScopePolicy::default(),
            cache_capacity: 10_000,
            caller_tokens: false,
        })
    }

    /// Lets handlers see each caller's access token and its audiences
    /// ([`RequestContext::caller_token`](crate::RequestContext::caller_token)),
    /// for a server that forwards it on purpose: a gateway's opt-in
    /// passthrough to an upstream the token also names. Off by default,
    /// so that no handler of an ordinary server can leak a token.
    #[must_use]
    pub fn with_caller_tokens(mut self) -> Self {
        self.caller_tokens = true;
        self
    }

    /// Tokens that are not JWTs (not three dot-separated parts) go to
    /// `verifier` instead, such as an [`IntrospectionVerifier`] beside a
    /// [`JwtVerifier`].
    pub fn with_opaque_verifier(mut self, verifier: impl TokenVerifier) -> Self {
        self.opaque = Some(Arc::new(verifier));
        self
    }

    /// Adds an authorization server (its issuer URL) to the metadata's
    /// `authorization_servers`.
    pub fn with_authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The metadata's `scopes_supported`: the scopes basic use needs.
    ///
    /// `offline_access` is left out: refresh tokens are not a resource's
    /// requirement (spec: basic/authorization/index.mdx#refresh-tokens).
    pub fn with_scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes
            .into_iter()
            .map(Into::into)
            .filter(|s| s != "offline_access")
            .collect();
        self
    }

    /// Scopes every request needs (named in the `401` challenge).
    ///
    /// `offline_access` is left out: refresh tokens are not a resource's
    /// requirement (spec: basic/authorization/index.mdx#refresh-tokens).
    pub fn with_required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.policy.required = scopes
            .into_iter()
            .map(Into::into)
            .filter(|s| s != "offline_access")
            .collect();
        self
    }

    fn add(mut self, kind: Kind, name: String, scopes: Vec<String>) -> Self {
        self.policy
            .by_name
            .entry((kind, name))
            .or_default()
            .extend(scopes);
        self
    }

    /// Scopes needed to see and call the tool `name`, besides the ones its
    /// builder declares ([`ToolBuilder::scopes`](crate::ToolBuilder::scopes)).
    pub fn with_tool_scopes<I, S>(self, name: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.add(Kind::Tool, name.into(), scopes)
    }

    /// Scopes needed to see and get the prompt `name`.
    pub fn with_prompt_scopes<I, S>(self, name: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.add(Kind::Prompt, name.into(), scopes)
    }

    /// Scopes needed to see and read the resource at `uri` (or the
    /// resources of the template `uri`).
    pub fn with_resource_scopes<I, S>(self, uri: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.add(Kind::Resource, uri.into(), scopes)
    }

    /// A scope hierarchy: a token granted `broader` also holds each of
    /// `narrower` (and, in turn, what they imply).
    pub fn with_scope_implies<I, S>(mut self, broader: impl Into<String>, narrower: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.policy
            .implies
            .entry(broader.into())
            .or_default()
            .extend(narrower.into_iter().map(Into::into));
        self
    }

    /// The most verified tokens kept (at least 1; default 10 000). A full
    /// cache drops expired entries, then an arbitrary one.
    pub fn with_cache_capacity(mut self, capacity: usize) -> Self {
        self.cache_capacity = capacity.max(1);
        self
    }

    /// The canonical resource URI (the metadata's `resource`).
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the Protected Resource Metadata is published: the well-known
    /// path with the resource's path appended (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        format!(
            "{}/.well-known/oauth-protected-resource{}",
            self.origin, self.path
        )
    }
}

/// Why a request is refused before it runs.
#[derive(Debug, Clone)]
pub(crate) enum Denied {
    /// No bearer token: `401` without an error code.
    Missing,
    /// A malformed request (token in the query, two `Authorization`
    /// headers, another scheme's credentials): `400` `invalid_request`.
    Malformed(&'static str),
    /// `401` `invalid_token`.
    Invalid(String),
    /// `403` `insufficient_scope`, with every scope the operation needs.
    Forbidden(Vec<String>),
    /// `503`: the token could not be checked.
    Unavailable,
    /// `429`: the client's share of token checks is used up; it may retry
    /// after this many seconds (at least 1).
    RateLimited(u64),
}

/// The resource server of one endpoint, built from an [`AuthConfig`]: the
/// metadata document, the challenge's parameters, and the verified-token
/// cache.
pub(crate) struct Authenticator {
    config: AuthConfig,
    policy: Arc<ScopePolicy>,
    metadata: Bytes,
    /// Local paths the metadata is served at.
    metadata_paths: Vec<String>,
    /// `resource_metadata="…"`, and `scope="…"` when there are scopes.
    challenge: String,
    cache: cache::TokenCache,
    /// Verifications under way, by token digest: identical tokens that
    /// arrive together share one (one key fetch or introspection). An
    /// entry lives while a request waits on it, so the table is bounded
    /// by the requests in progress.
    flights: Mutex<HashMap<[u8; 32], Arc<Flight>>>,
}

type Flight = tokio::sync::OnceCell<Result<Arc<Grant>, Denied>>;

/// A request's share of a verification; the last one out removes it.
struct Joined<'a> {
    flights: &'a Mutex<HashMap<[u8; 32], Arc<Flight>>>,
    digest: [u8; 32],
    flight: Arc<Flight>,
}

impl Drop for Joined<'_> {
    fn drop(&mut self) {
        let mut flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
        // The table's reference and this one: no one else waits.
        if Arc::strong_count(&self.flight) == 2 {
            flights.remove(&self.digest);
        }
    }
}

/// What the head says about authentication, before any await.
pub(crate) enum Check {
    /// Decided from the head and the cache.
    Done(Result<Arc<Grant>, Denied>),
    /// A token to verify (not cached), with its digest.
    Verify(String, [u8; 32]),
}

/// Seconds since the epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A token68 (RFC 7235 §2.1): the characters a bearer token may have.
fn is_token68(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

impl Authenticator {
    /// Builds the metadata document and the challenge once. `local_path`
    /// is the endpoint's own path, whose suffix form is served too.
    pub(crate) fn new(config: AuthConfig, local_path: Option<&str>) -> Self {
        let capacity = config.cache_capacity;
        let mut doc = serde_json::Map::new();
        doc.insert("resource".into(), config.resource.clone().into());
        doc.insert(
            "authorization_servers".into(),
            config.authorization_servers.clone().into(),
        );
        if !config.scopes_supported.is_empty() {
            doc.insert(
                "scopes_supported".into(),
                config.scopes_supported.clone().into(),
            );
        }
        doc.insert("bearer_methods_supported".into(), vec!["header"].into());
        let metadata = Bytes::from(serde_json::Value::Object(doc).to_string());
        let base = "/.well-known/oauth-protected-resource";
        let mut metadata_paths = vec![base.to_owned(), format!("{base}{}", config.path)];
        if let Some(local) = local_path.filter(|p| *p != "/") {
            metadata_paths.push(format!("{base}{}", local.trim_end_matches('/')));
        }
        metadata_paths.dedup();
        let mut challenge = format!("resource_metadata=\"{}\"", config.metadata_url());
        // Spec: basic/authorization/index.mdx#scope-selection-strategy — the
        // scopes needed for access, else the ones basic use needs.
        let scopes = if config.policy.required.is_empty() {
            &config.scopes_supported
        } else {
            &config.policy.required
        };
        if !scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", quoted(&scopes.join(" "))));
        }
        Self {
            policy: Arc::new(config.policy.clone()),
            config,
            metadata,
            metadata_paths,
            challenge,
            cache: cache::TokenCache::new(capacity),
            flights: Mutex::new(HashMap::new()),
        }
    }

    /// The metadata document, when `path` is one of its locations.
    pub(crate) fn metadata_for(&self, path: &str) -> Option<Bytes> {
        self.metadata_paths
            .iter()
            .any(|p| p == path)
            .then(|| self.metadata.clone())
    }

    /// The `resource_metadata` and `scope` parameters of a `401`.
    pub(crate) fn challenge(&self) -> &str {
        &self.challenge
    }

    /// The `resource_metadata` URL.
    pub(crate) fn metadata_url(&self) -> String {
        self.config.metadata_url()
    }

    /// Reads the bearer token and answers from the cache when it can.
    ///
    /// Spec: basic/authorization/index.mdx#token-requirements — the token
    /// travels in the `Authorization` header, never in the query string.
    pub(crate) fn check(&self, query: Option<&str>, headers: &HeaderMap) -> Check {
        if query.is_some_and(|q| {
            q.split('&')
                .any(|pair| pair.split('=').next() == Some("access_token"))
        }) {
            return Check::Done(Err(Denied::Malformed(
                "access tokens must not be sent in the query string",
            )));
        }
        let mut all = headers.get_all(AUTHORIZATION).iter();
        let (Some(value), None) = (all.next(), all.next()) else {
            return Check::Done(Err(if headers.contains_key(AUTHORIZATION) {
                Denied::Malformed("more than one Authorization header")
            } else {
                Denied::Missing
            }));
        };
        // Bytes, not `to_str`: a cached token is looked up before anything
        // walks its bytes, and only a miss checks its characters.
        let value = value.as_bytes();
        let Some(space) = value.iter().position(|b| *b == b' ') else {
            return Check::Done(Err(Denied::Missing));
        };
        let (scheme, token) = (&value[..space], value[space + 1..].trim_ascii());
        if !scheme.eq_ignore_ascii_case(b"bearer") {
            return Check::Done(Err(Denied::Missing));
        }
        if let Some(grant) = self.cache.get(token, Instant::now()) {
            return Check::Done(self.admit(grant));
        }
        match std::str::from_utf8(token) {
            Ok(token) if is_token68(token) => {
                let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
                Check::Verify(token.to_owned(), digest)
            }
            _ => Check::Done(Err(Denied::Invalid("the bearer token is malformed".into()))),
        }
    }

    /// Verifies a token the cache did not know, and caches the grant;
    /// requests with the same token at the same time share one check.
    pub(crate) async fn verify(
        &self,
        token: String,
        digest: [u8; 32],
        client: Option<IpAddr>,
    ) -> Result<Arc<Grant>, Denied> {
        let joined = {
            let mut flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
            Joined {
                flights: &self.flights,
                digest,
                flight: Arc::clone(flights.entry(digest).or_default()),
            }
        };
        // Should the request running the check go away, a waiting one
        // runs it with its own (identical) token.
        let result = joined
            .flight
            .get_or_init(|| self.verify_once(token, client))
            .await
            .clone();
        drop(joined);
        result
    }

    async fn verify_once(
        &self,
        token: String,
        client: Option<IpAddr>,
    ) -> Result<Arc<Grant>, Denied> {
        let jwt_shaped = token.bytes().filter(|b| *b == b'.').count() == 2;
        let verifier = match &self.config.opaque {
            Some(opaque) if !jwt_shaped => opaque,
            _ => &self.config.verifier,
        };
        let verified = match verifier.verify_from(&token, client).await {
            Ok(v) => v,
            Err(TokenError::Invalid(why)) => {
                tracing::debug!(reason = %why, "bearer token refused");
                return Err(Denied::Invalid(why));
            }
            Err(TokenError::Unavailable(why)) => {
                tracing::warn!(reason = %why, "a bearer token could not be checked");
                return Err(Denied::Unavailable);
            }
            Err(TokenError::RateLimited(wait)) => {
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                return Err(Denied::RateLimited(secs.max(1)));
            }
        };
        let left = match verified.expires_at {
            Some(at) => match at.duration_since(SystemTime::now()) {
                Ok(left) => left,
                // Expired between the check and now.
                Err(_) => return Err(Denied::Invalid("the token has expired".into())),
            },
            None => UNTIMED_TTL,
        };
        let caller = self
            .config
            .caller_tokens
            .then(|| crate::context::CallerToken::new(token.as_str(), verified.audiences));
        let grant = Arc::new(Grant {
            principal: format!("{} {}", verified.issuer, verified.subject).into(),
            client: verified.client_id.map(Into::into),
            scopes: self.policy.expand(verified.scopes),
            policy: Arc::clone(&self.policy),
            caller,
        });
        tracing::debug!(principal = %grant.principal, "bearer token verified");
        self.cache.insert(
            &token,
            Arc::clone(&grant),
            Instant::now() + left.min(Duration::from_secs(24 * 60 * 60)),
        );
        drop(token);
        self.admit(grant)
    }

    /// Checks the server-wide scopes.
    fn admit(&self, grant: Arc<Grant>) -> Result<Arc<Grant>, Denied> {
        if grant.holds(self.policy.required.iter()) {
            Ok(grant)
        } else {
            Err(Denied::Forbidden(self.policy.required.clone()))
        }
    }
}

/// Escapes a quoted-string's content (RFC 9110 §5.6.4).
pub(crate) fn quoted(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Never;
    impl TokenVerifier for Never {
        fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> {
            Box::pin(async { Err(TokenError::Invalid("never".into())) })
        }
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        let c = AuthConfig::new("HTTPS://MCP.Example.com/api/mcp/", Never).expect("config");
        assert_eq!(c.resource(), "https://mcp.example.com/api/mcp");
        assert_eq!(
            c.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp"
        );
        let root = AuthConfig::new("https://mcp.example.com", Never).expect("config");
        assert_eq!(
            root.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn resources_that_are_not_canonical_uris_are_refused() {
        for bad in [
            "mcp.example.com",
            "https://mcp.example.com/#frag",
            "https://a/?q=1",
            "ftp://a/b",
        ] {
            assert!(AuthConfig::new(bad, Never).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_metadata_document_has_the_rfc_9728_members() {
        let c = AuthConfig::new("https://mcp.example.com/mcp", Never)
            .expect("config")
            .with_authorization_server("https://auth.example.com")
            .with_scopes_supported(["mcp:tools", "offline_access"]);
        let a = Authenticator::new(c, Some("/mcp"));
        assert!(
            a.metadata_for("/.well-known/oauth-protected-resource/other")
                .is_none()
        );
        let doc = a
            .metadata_for("/.well-known/oauth-protected-resource/mcp")
            .expect("the path form");
        let v: serde_json::Value = serde_json::from_slice(&doc).expect("json");
        assert_eq!(
            v,
            serde_json::json!({
                "resource": "https://mcp.example.com/mcp",
                "authorization_servers": ["https://auth.example.com"],
                "scopes_supported": ["mcp:tools"],
                "bearer_methods_supported": ["header"],
            })
        );
        assert!(
            a.metadata_for("/.well-known/oauth-protected-resource")
                .is_some()
        );
        assert_eq!(
            a.challenge(),
            "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""
        );
    }

    #[test]
    fn the_challenge_never_asks_for_offline_access() {
        let c = AuthConfig::new("https://m.example/mcp", Never)
            .expect("config")
            .with_required_scopes(["mcp:tools", "offline_access"]);
        let a = Authenticator::new(c, None);
        assert_eq!(
            a.challenge(),
            "resource_metadata=\"https://m.example/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""
        );
    }

    #[test]
    fn tokens_are_read_from_the_header_only() {
        let a = Authenticator::new(
            AuthConfig::new("https://m.example/mcp", Never).expect("c"),
            None,
        );
        let mut h = HeaderMap::new();
        assert!(matches!(
            a.check(None, &h),
            Check::Done(Err(Denied::Missing))
        ));
        assert!(matches!(
            a.check(Some("x=1&access_token=abc"), &h),
            Check::Done(Err(Denied::Malformed(_)))
        ));
        h.insert(AUTHORIZATION, "Basic dXNlcjpwdw==".parse().expect("v"));
        assert!(matches!(
            a.check(None, &h),
            Check::Done(Err(Denied::Missing))
        ));
        h.insert(AUTHORIZATION, "Bearer a b".parse().expect("v"));
        assert!(matches!(
            a.check(None, &h),
            Check::Done(Err(Denied::Invalid(_)))
        ));
        h.insert(AUTHORIZATION, "bearer abc.def".parse().expect("v"));
        assert!(matches!(a.check(None, &h), Check::Verify(t, _) if t == "abc.def"));
        h.append(AUTHORIZATION, "Bearer other".parse().expect("v"));
        assert!(matches!(
            a.check(None, &h),
            Check::Done(Err(Denied::Malformed(_)))
        ));
    }
}
