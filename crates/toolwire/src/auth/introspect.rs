//! [`IntrospectionVerifier`]: opaque access tokens checked by the
//! authorization server's introspection endpoint (RFC 7662), which this
//! server calls with its own client credentials (HTTP Basic, RFC 6749
//! §2.3.1). The answers are cached by the resource server until the
//! token's `exp`; refusals are remembered here, briefly and by token
//! digest, and the introspections in flight are bounded, so a flood of bad
//! tokens cannot turn into a flood of requests to the authorization server.
//! Each client (by IP address) has its own budget of introspections, in a
//! bounded table, so a flood of distinct tokens from one client is refused
//! (`429`) while other clients are still served.

use super::fetch::{Fetcher, client_basic, form_encode, parse_endpoint};
use super::{AuthSetupError, TokenError, TokenVerifier, VerifiedToken, VerifyFuture, epoch_secs};
use crate::ratelimit::RateLimit;
use crate::ratelimit::{Caller, RateLimits};
use http::{HeaderValue, Uri};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::time::Instant;

/// Each client's default budget of introspections: 10 a second, 20 at
/// once. A client brings one token (two around a refresh), so only a
/// client inventing tokens reaches it.
fn default_client_limit() -> RateLimit {
    RateLimit::per_second(10).with_burst(20)
}
/// How many clients the budget table keeps by default; past it, new
/// clients share one budget.
const CLIENT_TABLE: usize = 10_000;

/// Verifies opaque tokens by RFC 7662 introspection.
///
/// A token is accepted when the endpoint says it is `active`, its `aud`
/// contains the audience (the canonical resource URI), and its `iss`, when
/// the answer has one, is the configured issuer. The subject is `sub`, or
/// `client_id` for a token issued to a client on its own behalf.
///
/// A token refused (inactive, for another resource or issuer, expired) is
/// refused again without asking for [`with_refusal_cache`]'s time (30 s;
/// at most 10 000 tokens, by digest). At most [`with_max_in_flight`] (16)
/// introspections run at once; a token that would need one more is
/// answered `503` with `Retry-After`, without a request. Each client (by
/// IP address) may cause [`with_client_limit`]'s introspections (10 a
/// second, 20 at once); a new token past it is answered `429` with
/// `Retry-After`, without a request.
///
/// [`with_refusal_cache`]: Self::with_refusal_cache
/// [`with_max_in_flight`]: Self::with_max_in_flight
/// [`with_client_limit`]: Self::with_client_limit
///
/// # Example
///
/// ```no_run
/// use toolwire::IntrospectionVerifier;
///
/// let secret = std::env::var("TOOLWIRE_AUTH_CLIENT_SECRET").unwrap_or_default();
/// let verifier = IntrospectionVerifier::new(
///     "https://auth.example.com/token/introspection",
///     "https://mcp.example.com/mcp",
///     "mcp-server",
///     secret,
/// )?
/// .with_issuer("https://auth.example.com");
/// # Ok::<(), toolwire::AuthSetupError>(())
/// ```
pub struct IntrospectionVerifier {
    endpoint: Uri,
    audience: String,
    issuer: Option<String>,
    authorization: HeaderValue,
    fetcher: OnceLock<Result<Fetcher, String>>,
    refused: Refusals,
    in_flight: AtomicUsize,
    max_in_flight: usize,
    /// Introspections per client; a client the transport does not name
    /// shares one budget with the others it does not name.
    per_client: Box<RateLimits>,
}

/// The budget table for `limit`, with room for `clients` clients.
fn client_budgets(limit: RateLimit, clients: usize) -> Box<RateLimits> {
    RateLimits::new(Some(limit), &[], clients.max(1))
        .unwrap_or_else(|| unreachable!("a default limit is given"))
}

/// Recently refused tokens, by digest: until when, and why.
struct Refusals {
    ttl: Duration,
    capacity: usize,
    map: Mutex<HashMap<[u8; 32], Refusal>>,
}

type Refusal = (Instant, Arc<str>);

impl Refusals {
    fn get(&self, digest: &[u8; 32]) -> Option<Arc<str>> {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.get(digest)
            .filter(|(until, _)| *until > Instant::now())
            .map(|(_, why)| Arc::clone(why))
    }

    fn insert(&self, digest: [u8; 32], why: &str) {
        if self.ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= self.capacity {
            map.retain(|_, (until, _)| *until > now);
            // Still full of live entries: the oldest goes.
            if map.len() >= self.capacity
                && let Some(oldest) = map.iter().min_by_key(|(_, (until, _))| *until)
            {
                let oldest = *oldest.0;
                map.remove(&oldest);
            }
        }
        map.insert(digest, (now + self.ttl, why.into()));
    }
}

/// One introspection's place under the in-flight bound.
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The credentials stay out of logs.
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint)
            .field("audience", &self.audience)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Introspects at `endpoint` (an `https://` URL; `http://` on loopback
    /// hosts), authenticated as `client_id` with `client_secret`; accepts
    /// tokens whose audience includes `audience`.
    pub fn new(
        endpoint: &str,
        audience: impl Into<String>,
        client_id: &str,
        client_secret: impl AsRef<str>,
    ) -> Result<Self, AuthSetupError> {
        let endpoint = parse_endpoint(endpoint)
            .map_err(|e| AuthSetupError(format!("introspection URL {e}")))?;
        let authorization = client_basic(client_id, client_secret.as_ref())?;
        Ok(Self {
            endpoint,
            audience: audience.into(),
            issuer: None,
            authorization,
            fetcher: OnceLock::new(),
            refused: Refusals {
                ttl: Duration::from_secs(30),
                capacity: 10_000,
                map: Mutex::new(HashMap::new()),
            },
            in_flight: AtomicUsize::new(0),
            max_in_flight: 16,
            per_client: client_budgets(default_client_limit(), CLIENT_TABLE),
        })
    }

    /// How long a refused token is refused again without asking (default
    /// 30 s; zero asks every time), and how many refused tokens are kept
    /// (default 10 000, at least 1; a full table drops expired entries,
    /// then the oldest). Refusals are kept by SHA-256 digest, never as
    /// tokens.
    pub fn with_refusal_cache(mut self, ttl: Duration, capacity: usize) -> Self {
        self.refused.ttl = ttl.min(Duration::from_secs(24 * 60 * 60));
        self.refused.capacity = capacity.max(1);
        self
    }

    /// How many introspection requests may be in flight at once (default
    /// 16, at least 1). A token that would need another is answered `503`
    /// with `Retry-After` (a [`TokenError::Unavailable`]) without one.
    pub fn with_max_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max.max(1);
        self
    }

    /// How many introspections one client (an IP address) may cause:
    /// `limit` (default 10 a second, 20 at once), for tokens that are
    /// neither cached nor recently refused. Past it, a new token is
    /// answered `429` with `Retry-After` (a [`TokenError::RateLimited`])
    /// without a request. `clients` bounds the table of clients (default
    /// 10 000, at least 1): idle ones are forgotten when it fills, and
    /// while it is full of active ones new clients share one budget.
    pub fn with_client_limit(mut self, limit: RateLimit, clients: usize) -> Self {
        self.per_client = client_budgets(limit, clients);
        self
    }

    /// Also requires the answer's `iss`, when present, to be `issuer`.
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The answer for `token` from `client`: a recent refusal, else an
    /// introspection if the client's budget and the in-flight bound have
    /// room for one; a refusal is remembered.
    async fn check(
        &self,
        token: &str,
        client: Option<IpAddr>,
    ) -> Result<VerifiedToken, TokenError> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(why) = self.refused.get(&digest) {
            return Err(TokenError::Invalid(why.to_string()));
        }
        let caller = client.map_or(Caller::Process, Caller::Addr);
        if let Err(limited) = self.per_client.check(&caller, None) {
            crate::log_limit::warn_limited!(
                "a client sent more new access tokens than its introspection budget; answering 429"
            );
            return Err(TokenError::RateLimited(Duration::from_secs(
                limited.retry_after_secs,
            )));
        }
        if self.in_flight.fetch_add(1, Ordering::AcqRel) >= self.max_in_flight {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            crate::log_limit::warn_limited!(
                "too many token introspections in flight; answering 503"
            );
            return Err(TokenError::Unavailable(
                "too many token introspections in flight".into(),
            ));
        }
        let slot = Slot(&self.in_flight);
        let answer = self.introspect(token).await;
        drop(slot);
        if let Err(TokenError::Invalid(why)) = &answer {
            self.refused.insert(digest, why);
        }
        answer
    }

    async fn introspect(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let fetcher = self
            .fetcher
            .get_or_init(|| Fetcher::new(self.endpoint.scheme_str() == Some("https")))
            .as_ref()
            .map_err(|e| TokenError::Unavailable(e.clone()))?;
        let form = format!("token={}&token_type_hint=access_token", form_encode(token));
        let answer: Answer = fetcher
            .post_form(&self.endpoint, self.authorization.clone(), form)
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "token introspection failed");
                TokenError::Unavailable(e)
            })?;
        if !answer.active {
            return Err(TokenError::Invalid("the token is not active".into()));
        }
        let for_us = match &answer.aud {
            Some(Audience::One(a)) => *a == self.audience,
            Some(Audience::Many(all)) => all.contains(&self.audience),
            None => false,
        };
        if !for_us {
            return Err(TokenError::Invalid(
                "the token is not for this resource".into(),
            ));
        }
        let issuer = match (answer.iss, &self.issuer) {
            (Some(iss), Some(want)) if iss != *want => {
                return Err(TokenError::Invalid(
                    "the token is from another issuer".into(),
                ));
            }
            (Some(iss), _) => iss,
            (None, Some(want)) => want.clone(),
            (None, None) => self.endpoint.to_string(),
        };
        let Some(subject) = answer.sub.or_else(|| answer.client_id.clone()) else {
            return Err(TokenError::Invalid("the token names no subject".into()));
        };
        let now = super::now_secs();
        if answer.exp.is_some_and(|exp| exp <= now) {
            return Err(TokenError::Invalid("the token has expired".into()));
        }
        Ok(VerifiedToken {
            issuer,
            subject,
            scopes: answer
                .scope
                .as_deref()
                .unwrap_or_default()
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            // An `exp` past what the clock holds is as good as none: the
            // grant is then kept briefly.
            expires_at: answer.exp.and_then(epoch_secs),
            client_id: answer.client_id,
            audiences: answer.aud.map(Audience::into_vec).unwrap_or_default(),
        })
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token, None))
    }

    fn verify_from<'a>(&'a self, token: &'a str, client: Option<IpAddr>) -> VerifyFuture<'a> {
        Box::pin(self.check(token, client))
    }
}

/// An introspection response (RFC 7662 §2.2), the members used.
#[derive(Deserialize)]
struct Answer {
    active: bool,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    exp: Option<u64>,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    aud: Option<Audience>,
}

/// `aud`: one audience or several.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    pub(super) fn into_vec(self) -> Vec<String> {
        match self {
            Self::One(a) => vec![a],
            Self::Many(all) => all,
        }
    }
}
