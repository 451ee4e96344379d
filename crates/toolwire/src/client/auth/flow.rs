//! The OAuth exchanges themselves: client registration (RFC 7591), the
//! authorization code grant with PKCE S256 and `state` (the `oauth2`
//! crate builds the requests), the RFC 9207 `iss` check, and refresh. The
//! RFC 8707 `resource` goes into the authorization and every token
//! request.
//!
//! Spec: basic/authorization/index.mdx#authorization-response-validation,
//! #resource-parameter-implementation

use super::discovery::ServerMetadata;
use super::error::AuthError;
use super::http::AuthHttp;
use super::redirect::RedirectWait;
use super::store::ClientRegistration;
use oauth2::basic::{BasicClient, BasicErrorResponse, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, RedirectUrl, RefreshToken, RequestTokenError, Scope,
    TokenResponse, TokenUrl,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

type OAuthClient =
    BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// What a token endpoint granted.
pub(crate) struct Granted {
    pub(crate) access_token: String,
    pub(crate) refresh_token: Option<String>,
    pub(crate) expires_at: Option<u64>,
    /// The granted scopes, when the server said.
    pub(crate) scopes: Option<Vec<String>>,
}

/// The token endpoint authentication methods this client can use.
const METHODS: [&str; 3] = ["none", "client_secret_basic", "client_secret_post"];

/// RFC 7591 registration at `endpoint`: a native client with one redirect
/// URI, asking for the refresh grant too.
// Spec: basic/authorization/client-registration.mdx#dynamic-client-registration
pub(crate) async fn register(
    http: &AuthHttp,
    metadata: &ServerMetadata,
    endpoint: &str,
    client_name: &str,
    redirect_uri: &str,
) -> Result<ClientRegistration, AuthError> {
    let requested = METHODS
        .into_iter()
        .find(|m| metadata.supports_auth_method(m))
        .unwrap_or("none");
    let body = json!({
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": requested,
        "application_type": "native",
    });
    tracing::debug!("registering with {endpoint}");
    let (status, bytes) = http.post_json(endpoint, &body).await?;
    let reply: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if !status.is_success() {
        let error = reply.get("error").and_then(Value::as_str).unwrap_or("");
        return Err(AuthError::Registration(format!(
            "{endpoint} answered {status} {error}"
        )));
    }
    let text = |k: &str| reply.get(k).and_then(Value::as_str).map(str::to_owned);
    let client_id = text("client_id")
        .ok_or_else(|| AuthError::Registration(format!("{endpoint} returned no client_id")))?;
    let client_secret = text("client_secret");
    let method = text("token_endpoint_auth_method")
        .filter(|m| METHODS.contains(&m.as_str()))
        .unwrap_or_else(|| requested.to_owned());
    Ok(ClientRegistration {
        auth_method: effective_method(method, client_secret.is_some()),
        client_id,
        client_secret,
        redirect_uris: vec![redirect_uri.to_owned()],
    })
}

/// The method for a pre-registered client: with a secret, Basic unless
/// only `client_secret_post` is offered; without one, `none`.
pub(crate) fn preregistered_method(metadata: &ServerMetadata, has_secret: bool) -> String {
    let method = if !has_secret {
        "none"
    } else if !metadata.supports_auth_method("client_secret_basic")
        && metadata.supports_auth_method("client_secret_post")
    {
        "client_secret_post"
    } else {
        "client_secret_basic"
    };
    method.to_owned()
}

fn effective_method(method: String, has_secret: bool) -> String {
    if has_secret {
        method
    } else {
        "none".to_owned()
    }
}

fn oauth_client(
    metadata: &ServerMetadata,
    client: &ClientRegistration,
    redirect_uri: Option<&str>,
) -> Result<OAuthClient, AuthError> {
    let bad = |what: &str, e: url::ParseError| AuthError::Discovery(format!("{what}: {e}"));
    let mut c = BasicClient::new(ClientId::new(client.client_id.clone()))
        .set_auth_uri(
            AuthUrl::new(metadata.authorization_endpoint.clone())
                .map_err(|e| bad("authorization_endpoint", e))?,
        )
        .set_token_uri(
            TokenUrl::new(metadata.token_endpoint.clone()).map_err(|e| bad("token_endpoint", e))?,
        );
    if let Some(uri) = redirect_uri {
        c = c.set_redirect_uri(
            RedirectUrl::new(uri.to_owned()).map_err(|e| bad("redirect_uri", e))?,
        );
    }
    match (client.auth_method.as_str(), &client.client_secret) {
        ("client_secret_basic", Some(secret)) => Ok(c
            .set_client_secret(ClientSecret::new(secret.clone()))
            .set_auth_type(AuthType::BasicAuth)),
        ("client_secret_post", Some(secret)) => Ok(c
            .set_client_secret(ClientSecret::new(secret.clone()))
            .set_auth_type(AuthType::RequestBody)),
        // `none`: the client_id goes in the body and no secret anywhere.
        _ => Ok(c.set_auth_type(AuthType::RequestBody)),
    }
}

/// Runs the authorization code grant: sends the user to the authorization
/// endpoint through `wait`, validates the response, exchanges the code.
pub(crate) async fn authorize(
    http: &AuthHttp,
    metadata: &ServerMetadata,
    client: &ClientRegistration,
    wait: Box<dyn RedirectWait>,
    scopes: &BTreeSet<String>,
    resource: &str,
) -> Result<Granted, AuthError> {
    let oauth = oauth_client(metadata, client, Some(wait.redirect_uri()))?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = oauth
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", resource)
        .url();
    tracing::debug!("authorizing at {}", metadata.authorization_endpoint);
    let response = wait.wait(url).await?;
    let code = validate_response(&response, metadata, state.secret())?;
    let token = oauth
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .add_extra_param("resource", resource)
        .request_async(http)
        .await
        .map_err(token_error)?;
    Ok(granted(&token))
}

/// The refresh grant.
pub(crate) async fn refresh(
    http: &AuthHttp,
    metadata: &ServerMetadata,
    client: &ClientRegistration,
    refresh_token: &str,
    resource: &str,
) -> Result<Granted, AuthError> {
    let oauth = oauth_client(metadata, client, None)?;
    let token = oauth
        .exchange_refresh_token(&RefreshToken::new(refresh_token.to_owned()))
        .add_extra_param("resource", resource)
        .request_async(http)
        .await
        .map_err(token_error)?;
    let mut g = granted(&token);
    // RFC 6749 §6: without a new refresh token, the old one stays valid.
    if g.refresh_token.is_none() {
        g.refresh_token = Some(refresh_token.to_owned());
    }
    Ok(g)
}

fn granted(token: &BasicTokenResponse) -> Granted {
    Granted {
        access_token: token.access_token().secret().clone(),
        refresh_token: token.refresh_token().map(|r| r.secret().clone()),
        expires_at: token
            .expires_in()
            .map(|d| now_secs().saturating_add(d.as_secs())),
        scopes: token
            .scopes()
            .map(|s| s.iter().map(|s| s.to_string()).collect()),
    }
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

/// The token endpoint's refusal, without the response body (which could
/// hold a token).
fn token_error(e: RequestTokenError<AuthError, BasicErrorResponse>) -> AuthError {
    match e {
        RequestTokenError::ServerResponse(r) => AuthError::Token(match r.error_description() {
            Some(d) => format!("{} ({d})", r.error()),
            None => r.error().to_string(),
        }),
        RequestTokenError::Request(e) => e,
        RequestTokenError::Parse(e, _) => {
            AuthError::Token(format!("unreadable token response: {}", e.inner()))
        }
        RequestTokenError::Other(e) => AuthError::Token(e),
    }
}

/// Checks the authorization response and returns its code. The `iss`
/// check comes first: a response from a mixed-up issuer is not read any
/// further, not even its `error`.
// Spec: basic/authorization/index.mdx#authorization-response-validation
fn validate_response(
    response: &url::Url,
    metadata: &ServerMetadata,
    state: &str,
) -> Result<String, AuthError> {
    let mut params = std::collections::BTreeMap::new();
    for (k, v) in response.query_pairs() {
        // RFC 6749 §3.1: parameters must not repeat.
        if params.insert(k.to_string(), v.to_string()).is_some() {
            return Err(AuthError::InvalidResponse(format!(
                "parameter {k} repeated"
            )));
        }
    }
    let advertised = metadata.authorization_response_iss_parameter_supported == Some(true);
    match params.get("iss") {
        // Simple string comparison, no normalization (RFC 3986 §6.2.1).
        Some(iss) if *iss != metadata.issuer => {
            return Err(AuthError::InvalidResponse(format!(
                "iss {iss:?} is not the issuer {:?}",
                metadata.issuer
            )));
        }
        None if advertised => {
            return Err(AuthError::InvalidResponse(
                "the authorization server advertises iss but the response has none".into(),
            ));
        }
        _ => {}
    }
    if params.get("state").map(String::as_str) != Some(state) {
        return Err(AuthError::InvalidResponse("state does not match".into()));
    }
    if let Some(error) = params.get("error") {
        return Err(AuthError::Refused {
            error: error.clone(),
            description: params.get("error_description").cloned(),
        });
    }
    params
        .remove("code")
        .ok_or_else(|| AuthError::InvalidResponse("no code".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(advertised: Option<bool>) -> ServerMetadata {
        serde_json::from_value(json!({
            "issuer": "https://as.example/tenant",
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
            "authorization_response_iss_parameter_supported": advertised,
        }))
        .expect("metadata")
    }

    fn check(query: &str, advertised: Option<bool>) -> Result<String, AuthError> {
        let url = url::Url::parse(&format!("http://127.0.0.1:1/callback?{query}")).expect("url");
        validate_response(&url, &metadata(advertised), "s1")
    }

    #[test]
    fn iss_is_checked_by_exact_string_per_rfc_9207() {
        let iss = "iss=https%3A%2F%2Fas.example%2Ftenant";
        assert_eq!(
            check(&format!("code=c&state=s1&{iss}"), Some(true)).expect("ok"),
            "c"
        );
        assert_eq!(check("code=c&state=s1", None).expect("ok"), "c");
        assert!(matches!(
            check("code=c&state=s1", Some(true)),
            Err(AuthError::InvalidResponse(_))
        ));
        for wrong in [
            "https%3A%2F%2Fas.example%2Ftenant%2F",
            "https%3A%2F%2FAS.example%2Ftenant",
            "https%3A%2F%2Fevil.example",
        ] {
            for advertised in [Some(true), None, Some(false)] {
                assert!(
                    matches!(
                        check(&format!("code=c&state=s1&iss={wrong}"), advertised),
                        Err(AuthError::InvalidResponse(_))
                    ),
                    "{wrong} {advertised:?}"
                );
            }
        }
    }

    #[test]
    fn a_mismatched_issuer_hides_the_error_and_state_must_match() {
        let err = check("error=access_denied&error_description=click+here&state=s1&iss=https%3A%2F%2Fevil.example", None)
            .expect_err("mismatch");
        assert!(!err.to_string().contains("click"), "{err}");
        assert!(matches!(
            check("code=c&state=other", None),
            Err(AuthError::InvalidResponse(_))
        ));
        assert!(matches!(
            check("code=c&code=d&state=s1", None),
            Err(AuthError::InvalidResponse(_))
        ));
        assert!(matches!(
            check("error=access_denied&state=s1", None),
            Err(AuthError::Refused { .. })
        ));
    }
}
