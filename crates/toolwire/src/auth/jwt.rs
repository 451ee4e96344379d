//! [`JwtVerifier`]: JWT access tokens (RFC 9068) checked against the
//! authorization server's key set.
//!
//! The key set's URL comes from the authorization server's metadata (RFC
//! 8414, then OpenID Connect Discovery) or is configured. Keys are cached
//! by `kid`; an unknown `kid` refetches the set, at most once per refresh
//! interval, so a stream of forged `kid`s cannot turn into a stream of
//! fetches. While no key set could be loaded (the last fetch failed), a
//! token signed with a key the server does not know cannot be judged:
//! it is answered `503` with `Retry-After`, not `401`, and the fetch is
//! retried after [`FAILED_FETCH_RETRY`] at most. Signatures are checked
//! by `jsonwebtoken` (ring): no JOSE or cryptography is written here.

use super::fetch::{Fetcher, parse_endpoint};
use super::{
    AuthSetupError, FAILED_FETCH_RETRY, TokenError, TokenVerifier, VerifiedToken, VerifyFuture,
    epoch_secs,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::Uri;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;
use tokio::time::Instant;

/// The signature algorithms accepted: asymmetric only, so `none` and an
/// HMAC keyed with a public key (algorithm confusion) never verify.
const ALGORITHMS: [Algorithm; 3] = [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA];

/// The most keys kept from one key set.
const MAX_KEYS: usize = 64;

/// The token types accepted by default: RFC 9068's.
const AT_JWT: &str = "at+jwt";

/// The most token types [`JwtVerifier::with_accepted_token_types`] keeps.
const MAX_TOKEN_TYPES: usize = 16;

/// Verifies JWT access tokens (RFC 9068) against an authorization server's
/// JSON Web Key Set.
///
/// A token is accepted when its header's `typ` is `at+jwt` (or a type
/// named with [`with_accepted_token_types`](Self::with_accepted_token_types)),
/// its header has no `crit`, its `alg` is RS256, ES256 or EdDSA and matches
/// the key its `kid` names, its signature verifies, its `iss` equals the
/// issuer exactly, its `aud` contains the audience (the canonical resource
/// URI), it has a `sub`, and `exp` and `nbf` hold within the leeway (30 s
/// by default).
///
/// # Example
///
/// ```no_run
/// use std::time::Duration;
/// use toolwire::JwtVerifier;
///
/// let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp")?
///     // Optional: otherwise found in the issuer's metadata.
///     .with_jwks_uri("https://auth.example.com/jwks")?
///     .with_leeway(Duration::from_secs(10))
///     // Optional: an issuer that types its access tokens `JWT`.
///     .with_accepted_token_types(["at+jwt", "JWT"])?;
/// # Ok::<(), toolwire::AuthSetupError>(())
/// ```
pub struct JwtVerifier {
    inner: Inner,
}

struct Inner {
    issuer: String,
    audience: String,
    leeway: Duration,
    refresh_interval: Duration,
    /// Accepted `typ` values, lowercase, without `application/`.
    token_types: Vec<String>,
    configured_jwks: Option<Uri>,
    fetcher: OnceLock<Result<Fetcher, String>>,
    keys: RwLock<Keys>,
    /// One refresh at a time; the others wait for its keys.
    refreshing: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Keys {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys published without a `kid`.
    anonymous: Vec<Arc<Key>>,
    jwks_uri: Option<Uri>,
    /// When the set was last fetched (or a fetch last failed).
    fetched: Option<Instant>,
    /// Whether that last fetch failed: the keys above may then be stale
    /// or none, and an unknown key says nothing about the token.
    failed: bool,
}

struct Key {
    key: DecodingKey,
    alg: Algorithm,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Tokens of `issuer` (compared exactly) for `audience`, the canonical
    /// URI of this server. Fails when `issuer` is not an `https://` URL
    /// (`http://` is allowed on loopback hosts).
    pub fn new(
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Result<Self, AuthSetupError> {
        let issuer = issuer.into();
        parse_endpoint(&issuer).map_err(|e| AuthSetupError(format!("issuer {e}")))?;
        Ok(Self {
            inner: Inner {
                issuer,
                audience: audience.into(),
                leeway: Duration::from_secs(30),
                refresh_interval: Duration::from_secs(30),
                token_types: vec![AT_JWT.to_owned()],
                configured_jwks: None,
                fetcher: OnceLock::new(),
                keys: RwLock::new(Keys::default()),
                refreshing: tokio::sync::Mutex::new(()),
            },
        })
    }

    fn inner_mut(&mut self) -> &mut Inner {
        &mut self.inner
    }

    /// Fetches the key set from `url` instead of the URL in the issuer's
    /// metadata.
    pub fn with_jwks_uri(mut self, url: &str) -> Result<Self, AuthSetupError> {
        let uri = parse_endpoint(url).map_err(|e| AuthSetupError(format!("JWKS URL {e}")))?;
        self.inner_mut().configured_jwks = Some(uri);
        Ok(self)
    }

    /// The token types (`typ`) accepted instead of RFC 9068's `at+jwt`,
    /// compared without case and with or without `application/` (RFC 7515
    /// §4.1.9), such as `["at+jwt", "JWT"]` for an issuer that types its
    /// access tokens `JWT`. A token without `typ` is always refused. Fails
    /// on an empty list, an empty type, or more than 16 types.
    ///
    /// Accepting `JWT` weakens RFC 9068's defence against another JWT of
    /// the issuer (an ID token) being replayed as an access token: the
    /// audience check still applies, so keep `aud` distinct from client
    /// ids.
    pub fn with_accepted_token_types<I, S>(mut self, types: I) -> Result<Self, AuthSetupError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut accepted = Vec::new();
        for t in types {
            let t = t.as_ref().trim();
            let bare = strip_application(t).to_ascii_lowercase();
            if bare.is_empty() || !bare.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(AuthSetupError(format!(
                    "token type {t:?}: expected a media type such as at+jwt or JWT"
                )));
            }
            if !accepted.contains(&bare) {
                accepted.push(bare);
            }
        }
        if accepted.is_empty() || accepted.len() > MAX_TOKEN_TYPES {
            return Err(AuthSetupError(format!(
                "accepted token types: expected 1 to {MAX_TOKEN_TYPES} types"
            )));
        }
        self.inner_mut().token_types = accepted;
        Ok(self)
    }

    /// The clock skew allowed on `exp` and `nbf` (whole seconds; at most
    /// five minutes). Default 30 s. A token is accepted, and its grant
    /// cached, until `exp` plus the leeway.
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.inner_mut().leeway = leeway.min(Duration::from_secs(300));
        self
    }

    /// The shortest time between two fetches of the key set (at least one
    /// second). A token whose `kid` is unknown refetches the set only when
    /// the last fetch is older. Default 30 s.
    pub fn with_refresh_interval(mut self, interval: Duration) -> Self {
        self.inner_mut().refresh_interval = interval.max(Duration::from_secs(1));
        self
    }

    /// The issuer tokens must name.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.inner.verify(token))
    }
}

/// `typ` without its optional `application/` prefix (RFC 7515 §4.1.9).
fn strip_application(typ: &str) -> &str {
    match typ.get(..12) {
        Some(prefix) if prefix.eq_ignore_ascii_case("application/") => &typ[12..],
        _ => typ,
    }
}

/// Whether the JOSE header (the token's first segment) has a `crit`
/// member. `jsonwebtoken` does not read `crit`, so the segment is read
/// again here, as JSON only; the segment decoded already once.
fn has_crit(token: &str) -> bool {
    let Some(segment) = token.split('.').next() else {
        return false;
    };
    let Ok(json) = URL_SAFE_NO_PAD.decode(segment) else {
        // Not what `decode_header` accepted: refused as critical, to be safe.
        return true;
    };
    match serde_json::from_slice::<serde_json::Map<String, Value>>(&json) {
        Ok(header) => header.contains_key("crit"),
        Err(_) => true,
    }
}

/// The claims read from a verified token.
#[derive(Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    exp: u64,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    aud: Option<super::introspect::Audience>,
}

fn invalid(why: &str) -> TokenError {
    TokenError::Invalid(why.to_owned())
}

impl Inner {
    async fn verify(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid("the token is not a JWT signed with an accepted algorithm"))?;
        // Spec (RFC 9068 §4): the resource server MUST check `typ`.
        let typ_ok = header.typ.as_deref().is_some_and(|t| {
            let t = strip_application(t);
            self.token_types.iter().any(|a| t.eq_ignore_ascii_case(a))
        });
        if !typ_ok {
            return Err(TokenError::Invalid(format!(
                "the token is not a JWT access token (typ {})",
                self.token_types.join(" or ")
            )));
        }
        // Spec (RFC 7515 §4.1.11): a recipient that does not understand an
        // extension `crit` lists MUST reject the token; this one
        // understands none.
        if has_crit(token) {
            return Err(invalid(
                "the token has a critical header parameter (crit) that is not understood",
            ));
        }
        if !ALGORITHMS.contains(&header.alg) {
            return Err(invalid("the token's signature algorithm is not accepted"));
        }
        let key = self.key_for(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Claims>(token, &key.key, &validation).map_err(|e| {
            invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::ImmatureSignature => "the token is not valid yet",
                ErrorKind::InvalidAudience => "the token is not for this resource",
                ErrorKind::InvalidIssuer => "the token is from another issuer",
                ErrorKind::InvalidSignature => "the token's signature does not verify",
                ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
                _ => "the token is invalid",
            })
        })?;
        let claims = data.claims;
        // Accepted until `exp` plus the leeway, which `jsonwebtoken`
        // applied: the grant must not be refused as expired before that.
        // A time past what the clock can hold (an `exp` of 2^63 s or more)
        // is refused, not computed.
        let expires_at = claims
            .exp
            .checked_add(self.leeway.as_secs())
            .and_then(epoch_secs)
            .ok_or_else(|| invalid("the token's exp is out of range"))?;
        Ok(VerifiedToken {
            issuer: claims.iss,
            subject: claims.sub,
            scopes: claims
                .scope
                .as_deref()
                .unwrap_or_default()
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            expires_at: Some(expires_at),
            client_id: claims.client_id,
            audiences: claims
                .aud
                .map(super::introspect::Audience::into_vec)
                .unwrap_or_default(),
        })
    }

    /// The key for `kid` (or the only key for `alg`, when the token names
    /// none), refetching the set once if it is unknown and the interval
    /// allows.
    async fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<Arc<Key>, TokenError> {
        if let Some(key) = self.lookup(kid, alg)? {
            return Ok(key);
        }
        let started = Instant::now();
        let _one = self.refreshing.lock().await;
        // Another request may have refreshed while this one waited.
        let (fetched, due) = {
            let keys = self.read_keys();
            let fetched = keys.fetched;
            let wait = if keys.failed {
                self.refresh_interval.min(FAILED_FETCH_RETRY)
            } else {
                self.refresh_interval
            };
            let due = fetched.is_none_or(|at| at.elapsed() >= wait);
            (fetched.is_some_and(|at| at >= started), due)
        };
        if !fetched && due {
            self.refresh().await?;
        }
        if let Some(key) = self.lookup(kid, alg)? {
            return Ok(key);
        }
        // Spec: basic/authorization/index.mdx#error-handling — `401` says
        // the token is bad. Without a current key set that is not known:
        // the failure is this server's, and the client should retry, not
        // throw its token away.
        if self.read_keys().failed {
            return Err(TokenError::Unavailable(
                "the authorization server's keys could not be fetched".into(),
            ));
        }
        Err(invalid("the token is signed with an unknown key"))
    }

    fn read_keys(&self) -> std::sync::RwLockReadGuard<'_, Keys> {
        self.keys.read().unwrap_or_else(|p| p.into_inner())
    }

    fn lookup(&self, kid: Option<&str>, alg: Algorithm) -> Result<Option<Arc<Key>>, TokenError> {
        let keys = self.read_keys();
        let found = match kid {
            Some(kid) => keys.by_kid.get(kid).cloned(),
            None => {
                let mut fits = keys
                    .anonymous
                    .iter()
                    .chain(keys.by_kid.values())
                    .filter(|k| k.alg == alg);
                match (fits.next(), fits.next()) {
                    (Some(k), None) => Some(Arc::clone(k)),
                    (Some(_), Some(_)) => {
                        return Err(invalid("the token names no key (kid) and several fit"));
                    }
                    _ => None,
                }
            }
        };
        match found {
            Some(key) if key.alg != alg => {
                Err(invalid("the token's algorithm does not match its key's"))
            }
            found => Ok(found),
        }
    }

    fn fetcher(&self) -> Result<&Fetcher, TokenError> {
        let https = self.issuer.starts_with("https:")
            || self
                .configured_jwks
                .as_ref()
                .is_some_and(|u| u.scheme_str() == Some("https"));
        self.fetcher
            .get_or_init(|| Fetcher::new(https))
            .as_ref()
            .map_err(|e| TokenError::Unavailable(e.clone()))
    }

    /// Fetches the key set (discovering its URL first if need be) and
    /// replaces the cached keys. A failure is remembered as a fetch, so it
    /// is not retried before [`FAILED_FETCH_RETRY`] (or the interval, when
    /// shorter); the keys it had stay.
    async fn refresh(&self) -> Result<(), TokenError> {
        let result = self.fetch_keys().await;
        let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
        keys.fetched = Some(Instant::now());
        keys.failed = result.is_err();
        let (uri, set) = result.map_err(|e| {
            tracing::warn!(error = %e, "fetching the authorization server's keys failed");
            TokenError::Unavailable(e)
        })?;
        keys.jwks_uri = Some(uri);
        keys.by_kid.clear();
        keys.anonymous.clear();
        for (kid, key) in set {
            match kid {
                Some(kid) => {
                    keys.by_kid.insert(kid, key);
                }
                None => keys.anonymous.push(key),
            }
        }
        tracing::debug!(
            keys = keys.by_kid.len() + keys.anonymous.len(),
            "authorization server keys fetched"
        );
        Ok(())
    }

    #[allow(clippy::type_complexity, reason = "taken apart at once")]
    async fn fetch_keys(&self) -> Result<(Uri, Vec<(Option<String>, Arc<Key>)>), String> {
        let fetcher = self.fetcher().map_err(|e| e.to_string())?;
        let known = self.read_keys().jwks_uri.clone();
        let uri = match (&self.configured_jwks, known) {
            (Some(uri), _) => uri.clone(),
            (None, Some(uri)) => uri,
            (None, None) => self.discover(fetcher).await?,
        };
        let set: JwkSet = fetcher
            .get_json(&uri)
            .await?
            .ok_or_else(|| format!("{uri}: 404 Not Found"))?;
        let keys = set
            .keys
            .iter()
            .filter_map(usable_key)
            .take(MAX_KEYS)
            .collect();
        Ok((uri, keys))
    }

    /// The key set's URL from the issuer's metadata: RFC 8414 (path
    /// inserted), then OpenID Connect Discovery (path inserted, then
    /// appended). The metadata's `issuer` must be the configured one.
    ///
    /// Spec: basic/authorization/authorization-server-discovery.mdx#authorization-server-metadata-discovery
    async fn discover(&self, fetcher: &Fetcher) -> Result<Uri, String> {
        #[derive(Deserialize)]
        struct Metadata {
            issuer: String,
            jwks_uri: Option<String>,
        }
        for url in metadata_urls(&self.issuer) {
            let Ok(uri) = url.parse::<Uri>() else {
                continue;
            };
            let Some(meta) = fetcher.get_json::<Metadata>(&uri).await? else {
                continue;
            };
            if meta.issuer != self.issuer {
                return Err(format!(
                    "{uri}: the metadata names issuer {:?}, not {:?}",
                    meta.issuer, self.issuer
                ));
            }
            let jwks = meta
                .jwks_uri
                .ok_or_else(|| format!("{uri}: the metadata has no jwks_uri"))?;
            return parse_endpoint(&jwks).map_err(|e| format!("jwks_uri {e}"));
        }
        Err(format!(
            "no authorization server metadata found for issuer {:?}",
            self.issuer
        ))
    }
}

#[derive(Deserialize)]
struct JwkSet {
    keys: Vec<Value>,
}

/// A signing key the allow-list can use, with its algorithm; anything else
/// in the set (encryption keys, symmetric keys, other curves) is skipped.
fn usable_key(value: &Value) -> Option<(Option<String>, Arc<Key>)> {
    let jwk: Jwk = serde_json::from_value(value.clone()).ok()?;
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return None;
    }
    let alg = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => Algorithm::ES256,
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            Algorithm::EdDSA
        }
        _ => return None,
    };
    // A key that names its algorithm is used with that one only.
    if let Some(named) = jwk.common.key_algorithm {
        let same = matches!(
            (named, alg),
            (KeyAlgorithm::RS256, Algorithm::RS256)
                | (KeyAlgorithm::ES256, Algorithm::ES256)
                | (KeyAlgorithm::EdDSA, Algorithm::EdDSA)
        );
        if !same {
            return None;
        }
    }
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    Some((jwk.common.key_id, Arc::new(Key { key, alg })))
}

/// Where the issuer's metadata may be, in the order tried.
fn metadata_urls(issuer: &str) -> Vec<String> {
    let Some((scheme, rest)) = issuer.split_once("://") else {
        return Vec::new();
    };
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let origin = format!("{scheme}://{host}");
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_up_in_the_spec_order() {
        assert_eq!(
            metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn symmetric_and_encryption_keys_are_never_used() {
        let hs = serde_json::json!({"kty": "oct", "k": "c2VjcmV0", "kid": "h"});
        assert!(usable_key(&hs).is_none());
        let enc = serde_json::json!({
            "kty": "OKP", "crv": "Ed25519", "use": "enc",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
        });
        assert!(usable_key(&enc).is_none());
        let sig = serde_json::json!({
            "kty": "OKP", "crv": "Ed25519", "kid": "e",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
        });
        let (kid, key) = usable_key(&sig).expect("an Ed25519 signing key");
        assert_eq!(kid.as_deref(), Some("e"));
        assert_eq!(key.alg, Algorithm::EdDSA);
    }

    #[test]
    fn token_types_are_named_without_case_or_application_prefix() {
        assert_eq!(strip_application("application/at+jwt"), "at+jwt");
        assert_eq!(strip_application("Application/JWT"), "JWT");
        assert_eq!(strip_application("at+jwt"), "at+jwt");
        assert_eq!(strip_application("applicatio"), "applicatio");
        let v = JwtVerifier::new("https://auth.invalid", "https://mcp.invalid")
            .expect("verifier")
            .with_accepted_token_types(["at+jwt", "application/JWT", "jwt"])
            .expect("types");
        assert_eq!(v.inner.token_types, ["at+jwt", "jwt"]);
        for bad in [vec![], vec![""], vec!["application/"], vec!["a b"]] {
            let v =
                JwtVerifier::new("https://auth.invalid", "https://mcp.invalid").expect("verifier");
            assert!(v.with_accepted_token_types(&bad).is_err(), "{bad:?}");
        }
        let many: Vec<String> = (0..=MAX_TOKEN_TYPES).map(|i| format!("t{i}")).collect();
        let v = JwtVerifier::new("https://auth.invalid", "https://mcp.invalid").expect("verifier");
        assert!(v.with_accepted_token_types(&many).is_err());
    }

    #[test]
    fn any_crit_member_is_seen_and_its_absence_too() {
        use base64::Engine as _;
        use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
        let token = |header: &str| format!("{}.e30.c2ln", B64.encode(header));
        assert!(!has_crit(&token(r#"{"alg":"RS256","typ":"at+jwt"}"#)));
        assert!(has_crit(&token(
            r#"{"alg":"RS256","crit":["exp"],"exp":1}"#
        )));
        assert!(has_crit(&token(r#"{"alg":"RS256","crit":null}"#)));
        assert!(has_crit(&token(r#"{"alg":"RS256","crit":[]}"#)));
        assert!(has_crit("!!!.e30.c2ln"));
    }

    #[tokio::test]
    async fn none_and_hmac_tokens_are_refused_before_any_key_is_fetched() {
        use base64::Engine as _;
        use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
        let v = JwtVerifier::new("https://auth.invalid", "https://mcp.invalid").expect("verifier");
        let claims = B64.encode(br#"{"iss":"https://auth.invalid","sub":"a","aud":"https://mcp.invalid","exp":99999999999}"#);
        for header in [
            r#"{"alg":"none","typ":"at+jwt"}"#,
            r#"{"alg":"HS256","typ":"at+jwt"}"#,
        ] {
            let token = format!("{}.{claims}.c2ln", B64.encode(header));
            let err = v.verify(&token).await.expect_err(header);
            assert!(matches!(err, TokenError::Invalid(_)), "{header}: {err:?}");
        }
        // No fetch was tried: the issuer is unreachable, which would be
        // `Unavailable`.
        assert!(v.inner.read_keys().fetched.is_none());
    }
}
