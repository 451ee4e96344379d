//! OAuth 2.0 Token Exchange (RFC 8693) at an authorization server's token
//! endpoint: a server that calls another resource for its caller (a
//! gateway) trades the caller's access token for one whose audience is
//! that resource, authenticated with its own client credentials (HTTP
//! Basic, RFC 6749 §2.3.1).

use super::AuthSetupError;
use super::fetch::{Fetcher, client_basic, form_encode, parse_endpoint};
use http::{HeaderValue, Uri};
use serde::Deserialize;
use std::sync::OnceLock;
use std::time::Duration;

const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";

/// A client of one token endpoint's token exchange.
pub struct TokenExchange {
    endpoint: Uri,
    authorization: HeaderValue,
    fetcher: OnceLock<Result<Fetcher, String>>,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// A token an exchange gave: never shown by `Debug`.
#[derive(Clone)]
pub struct ExchangedToken {
    /// The access token, for the resource asked for.
    pub access_token: String,
    /// How long it is valid (`expires_in`), if the server said.
    pub expires_in: Option<Duration>,
}

impl std::fmt::Debug for ExchangedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExchangedToken")
            .field("access_token", &"<redacted>")
            .field("expires_in", &self.expires_in)
            .finish()
    }
}

#[derive(Deserialize)]
struct Answer {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl TokenExchange {
    /// Exchanges at `token_endpoint` (an `https://` URL; `http://` on
    /// loopback hosts), authenticated as `client_id` with `client_secret`.
    pub fn new(
        token_endpoint: &str,
        client_id: &str,
        client_secret: impl AsRef<str>,
    ) -> Result<Self, AuthSetupError> {
        let endpoint = parse_endpoint(token_endpoint)
            .map_err(|e| AuthSetupError(format!("token endpoint {e}")))?;
        let authorization = client_basic(client_id, client_secret.as_ref())?;
        Ok(Self {
            endpoint,
            authorization,
            fetcher: OnceLock::new(),
        })
    }

    /// Trades `subject_token` (the caller's access token) for an access
    /// token for `resource` (sent as RFC 8707 `resource` and as
    /// `audience`), with `scope` if given. The error says why, without
    /// the tokens.
    pub async fn exchange(
        &self,
        subject_token: &str,
        resource: &str,
        scope: Option<&str>,
    ) -> Result<ExchangedToken, String> {
        let fetcher = self
            .fetcher
            .get_or_init(|| Fetcher::new(self.endpoint.scheme_str() == Some("https")))
            .as_ref()
            .map_err(Clone::clone)?;
        let mut form = format!(
            "grant_type={}&subject_token={}&subject_token_type={}&requested_token_type={}&resource={}&audience={}",
            form_encode(GRANT),
            form_encode(subject_token),
            form_encode(ACCESS_TOKEN),
            form_encode(ACCESS_TOKEN),
            form_encode(resource),
            form_encode(resource),
        );
        if let Some(scope) = scope {
            form.push_str("&scope=");
            form.push_str(&form_encode(scope));
        }
        let answer: Answer = fetcher
            .post_form(&self.endpoint, self.authorization.clone(), form)
            .await?;
        Ok(ExchangedToken {
            access_token: answer.access_token,
            expires_in: answer.expires_in.map(Duration::from_secs),
        })
    }
}
