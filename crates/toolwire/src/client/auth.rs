//! OAuth 2.1 for the HTTP client (feature `oauth`): the [`AuthProvider`]
//! hook the HTTP transport calls, and [`OAuthProvider`], the authorization
//! code flow of the 2026-07-28 revision.
//!
//! The transport asks the provider for the `Authorization` value of every
//! request and, on a 401 or 403, hands it the challenge; the provider
//! discovers, authorizes, refreshes or steps up, and says whether to send
//! the request again. Tokens go nowhere else: only into that header, only
//! to the server they were issued for, and never into a log.
//!
//! Spec: basic/authorization/index.mdx,
//! basic/authorization/authorization-server-discovery.mdx,
//! basic/authorization/client-registration.mdx

mod challenge;
mod discovery;
mod error;
mod flow;
mod http;
mod provider;
mod redirect;
mod retry;
mod store;

pub use challenge::Challenge;
pub use error::AuthError;
pub use provider::{OAuthConfig, OAuthProvider};
pub use redirect::{LoopbackRedirect, Redirect, RedirectWait};
pub use store::{ClientRegistration, FileTokenStore, MemoryTokenStore, StoredTokens, TokenStore};

pub(crate) use retry::send_authorized;

/// The URL type of the [`Redirect`] interface.
pub use url::Url;

use futures_util::future::BoxFuture;
use std::fmt;
use std::sync::Arc;

/// What the HTTP transport asks about credentials. [`OAuthProvider`] is the
/// OAuth 2.1 implementation; a custom one can supply tokens from elsewhere.
pub trait AuthProvider: Send + Sync + 'static {
    /// The `Authorization` header value for the next request (for example
    /// `Bearer …`), refreshed first when it has expired; `None` sends none.
    fn authorization(&self) -> BoxFuture<'_, Result<Option<String>, AuthError>>;

    /// The server refused a request: `status` is 401 or 403, `challenge`
    /// the parsed `WWW-Authenticate` header, `sent` the `Authorization`
    /// value the request carried, `attempt` how many times this request
    /// was already sent again. `Ok(true)` sends it again with fresh
    /// credentials; `Ok(false)` gives the refusal to the caller.
    fn refused<'a>(
        &'a self,
        status: u16,
        challenge: &'a Challenge,
        sent: Option<&'a str>,
        attempt: u32,
    ) -> BoxFuture<'a, Result<bool, AuthError>>;

    /// Whom the credentials speak for, as an opaque key: the client keeps
    /// the `private` results it caches apart per principal, so that what
    /// one user was shown is never served to another. `None`: no
    /// credentials (or none to be had now).
    ///
    /// The default is a digest of the [`authorization`](Self::authorization)
    /// value: every new token is a new principal, which is always safe. A
    /// provider that knows the identity behind its tokens may return that
    /// instead, so that a refreshed token keeps the cached results.
    fn principal(&self) -> BoxFuture<'_, Option<Arc<str>>> {
        Box::pin(async move {
            let value = self.authorization().await.ok().flatten()?;
            Some(digest(&value))
        })
    }
}

/// A key for the credentials in an `Authorization` value that does not
/// reveal them: the hex SHA-256 of the value.
pub(crate) fn digest(value: &str) -> Arc<str> {
    use sha2::{Digest as _, Sha256};
    use std::fmt::Write as _;
    let mut key = String::with_capacity(64);
    for b in Sha256::digest(value.as_bytes()) {
        let _ = write!(key, "{b:02x}");
    }
    key.into()
}

/// The provider a client was built with, if any.
#[derive(Clone, Default)]
pub(crate) struct AuthSlot(pub(crate) Option<Arc<dyn AuthProvider>>);

impl fmt::Debug for AuthSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "AuthProvider"
        } else {
            "None"
        })
    }
}
