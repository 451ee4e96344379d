//! [`IntrospectionVerifier`]: opaque access tokens checked by the
//! authorization server's introspection endpoint (RFC 7662), which this
//! server calls with its own client credentials (HTTP Basic, RFC 6749
//! §2.3.1). The answers are cached by the resource server until the
//! token's `exp`.

use super::fetch::{Fetcher, form_encode, parse_endpoint};
use super::{AuthSetupError, TokenError, TokenVerifier, VerifiedToken, VerifyFuture};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderValue, Uri};
use serde::Deserialize;
use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

/// Verifies opaque tokens by RFC 7662 introspection.
///
/// A token is accepted when the endpoint says it is `active`, its `aud`
/// contains the audience (the canonical resource URI), and its `iss`, when
/// the answer has one, is the configured issuer. The subject is `sub`, or
/// `client_id` for a token issued to a client on its own behalf.
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
        let basic = STANDARD.encode(format!(
            "{}:{}",
            form_encode(client_id),
            form_encode(client_secret.as_ref())
        ));
        let mut authorization = HeaderValue::try_from(format!("Basic {basic}")).map_err(|_| {
            AuthSetupError("the client credentials cannot be sent in a header".to_owned())
        })?;
        authorization.set_sensitive(true);
        Ok(Self {
            endpoint,
            audience: audience.into(),
            issuer: None,
            authorization,
            fetcher: OnceLock::new(),
        })
    }

    /// Also requires the answer's `iss`, when present, to be `issuer`.
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
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
            expires_at: answer.exp.map(|exp| UNIX_EPOCH + Duration::from_secs(exp)),
            client_id: answer.client_id,
        })
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.introspect(token))
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

#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}
