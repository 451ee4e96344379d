//! Per-caller upstream tokens by token exchange (RFC 8693): each caller's
//! access token traded for one whose audience is the upstream, kept per
//! caller until shortly before it expires, in a bounded table.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;
use toolwire::{CallerToken, TokenExchange};

/// Exchanged tokens kept at most, per upstream.
const CAPACITY: usize = 10_000;
/// An exchanged token is used until this long before it expires.
const MARGIN: Duration = Duration::from_secs(30);
/// How long a token whose lifetime the server did not say is kept.
const UNTIMED: Duration = Duration::from_secs(60);

/// One upstream's exchange and the tokens it gave.
pub(crate) struct Exchanger {
    client: TokenExchange,
    resource: String,
    scope: Option<String>,
    /// By principal (issuer and subject): the token, and until when it is
    /// used.
    cache: Mutex<HashMap<String, (String, Instant)>>,
}

impl std::fmt::Debug for Exchanger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchanger")
            .field("client", &self.client)
            .field("resource", &self.resource)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Exchanger {
    pub(crate) fn new(client: TokenExchange, resource: String, scope: Option<String>) -> Self {
        Self {
            client,
            resource,
            scope,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The `Authorization` value for `principal`'s requests upstream: a
    /// kept token, or one exchanged for `token` now. The refusal says why,
    /// naming the upstream; the gateway's own credential is never used
    /// instead.
    pub(crate) async fn authorization(
        &self,
        upstream: &str,
        principal: Option<&str>,
        token: Option<&CallerToken>,
    ) -> Result<String, String> {
        let (Some(principal), Some(token)) = (principal, token) else {
            return Err(format!(
                "upstream {upstream:?} takes a token exchanged for the caller's own, and this \
                 request has none (serve the gateway with --auth-issuer)"
            ));
        };
        let now = Instant::now();
        if let Some(kept) = self.kept(principal, now) {
            return Ok(format!("Bearer {kept}"));
        }
        let exchanged = self
            .client
            .exchange(token.token(), &self.resource, self.scope.as_deref())
            .await
            .map_err(|e| {
                format!("upstream {upstream:?}: the token exchange for this caller failed: {e}")
            })?;
        let life = exchanged.expires_in.unwrap_or(UNTIMED);
        let until = now
            + life
                .saturating_sub(MARGIN)
                .max(Duration::from_secs(1))
                .min(life);
        self.keep(principal, &exchanged.access_token, until, now);
        Ok(format!("Bearer {}", exchanged.access_token))
    }

    fn kept(&self, principal: &str, now: Instant) -> Option<String> {
        let cache = self.cache.lock().ok()?;
        cache
            .get(principal)
            .filter(|(_, until)| *until > now)
            .map(|(t, _)| t.clone())
    }

    /// Keeps `token` for `principal`; a full table first drops what
    /// expired, then the entry that expires soonest.
    fn keep(&self, principal: &str, token: &str, until: Instant, now: Instant) {
        let Ok(mut cache) = self.cache.lock() else {
            return;
        };
        if cache.len() >= CAPACITY && !cache.contains_key(principal) {
            cache.retain(|_, (_, u)| *u > now);
            if cache.len() >= CAPACITY
                && let Some(soonest) = cache
                    .iter()
                    .min_by_key(|(_, (_, u))| *u)
                    .map(|(k, _)| k.clone())
            {
                cache.remove(&soonest);
            }
        }
        cache.insert(principal.to_owned(), (token.to_owned(), until));
    }

    /// How many tokens are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.cache.lock().map_or(0, |c| c.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_table_is_bounded_and_an_expired_token_is_not_used() {
        let x = Exchanger::new(
            TokenExchange::new("http://127.0.0.1:1/token", "gw", "s").expect("client"),
            "http://up/mcp".into(),
            None,
        );
        let now = Instant::now();
        for i in 0..CAPACITY + 5 {
            x.keep(
                &format!("iss u{i}"),
                "t",
                now + Duration::from_secs(60),
                now,
            );
        }
        assert_eq!(x.len(), CAPACITY, "bounded");
        x.keep("iss old", "stale", now, now);
        assert_eq!(x.kept("iss old", now), None, "expired: not used");
        assert_eq!(
            x.kept(&format!("iss u{}", CAPACITY + 4), now).as_deref(),
            Some("t")
        );
        // No caller's token: refused, naming the upstream, without asking.
        let refused = x
            .authorization("up", Some("iss a"), None)
            .await
            .expect_err("none");
        assert!(refused.contains("\"up\""), "{refused}");
    }
}
