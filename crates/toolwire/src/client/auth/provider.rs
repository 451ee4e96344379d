//! [`OAuthProvider`]: the client side of MCP authorization for one server.
//! It keeps the tokens (in a [`TokenStore`]), refreshes them when they
//! expire or a 401 says so, authorizes from scratch through a
//! [`Redirect`] when it must, and steps up on `insufficient_scope`.
//!
//! Spec: basic/authorization/index.mdx

use super::AuthProvider;
use super::challenge::Challenge;
use super::discovery::{self, ResourceMetadata, ServerMetadata};
use super::error::AuthError;
use super::flow::{self, Granted};
use super::http::AuthHttp;
use super::redirect::Redirect;
use super::store::{ClientRegistration, MemoryTokenStore, StoredTokens, TokenStore};
use futures_util::future::BoxFuture;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use url::Url;

/// A token this close to its expiry is refreshed before use, in seconds.
const EXPIRY_MARGIN: u64 = 30;

/// How the client identifies itself and what it asks for. Built with
/// `new` and `with_*`.
#[derive(Clone)]
#[must_use]
pub struct OAuthConfig {
    client_id: Option<String>,
    client_secret: Option<String>,
    client_issuer: Option<String>,
    cimd_url: Option<String>,
    client_name: String,
    scopes: Vec<String>,
    max_authorizations: u32,
    ca_pems: Vec<Vec<u8>>,
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("client_issuer", &self.client_issuer)
            .field("cimd_url", &self.cimd_url)
            .field("client_name", &self.client_name)
            .field("scopes", &self.scopes)
            .field("max_authorizations", &self.max_authorizations)
            .finish_non_exhaustive()
    }
}

impl Default for OAuthConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl OAuthConfig {
    /// No pre-registered client, no Client ID Metadata Document, client
    /// name `toolwire`, scopes as the server asks, at most 3 authorizations
    /// for one request.
    pub fn new() -> Self {
        Self {
            client_id: None,
            client_secret: None,
            client_issuer: None,
            cimd_url: None,
            client_name: "toolwire".into(),
            scopes: Vec::new(),
            max_authorizations: 3,
            ca_pems: Vec::new(),
        }
    }

    /// A pre-registered client: used before anything else. With a secret
    /// it authenticates at the token endpoint with `client_secret_basic`
    /// (or `client_secret_post` when only that is offered).
    pub fn with_client(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = client_secret;
        self
    }

    /// The issuer the pre-registered client belongs to: with another
    /// authorization server the provider fails instead of sending it.
    pub fn with_client_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.client_issuer = Some(issuer.into());
        self
    }

    /// An HTTPS URL of this client's Client ID Metadata Document, used as
    /// the `client_id` with authorization servers that advertise
    /// `client_id_metadata_document_supported`.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.cimd_url = Some(url.into());
        self
    }

    /// The `client_name` sent when registering.
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Scopes to ask for besides the ones the server challenges with
    /// (instead of all of its `scopes_supported`).
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How many authorizations one request may go through before the
    /// refusal is final (at least 1).
    pub fn with_max_authorizations(mut self, n: u32) -> Self {
        self.max_authorizations = n.max(1);
        self
    }

    /// Trusts the CA certificates in `pem` for `https://` authorization
    /// and metadata servers.
    pub fn with_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca_pems.push(pem.into());
        self
    }
}

/// The OAuth 2.1 client for one MCP server. Cheap to clone; give it to
/// [`ClientBuilder::with_auth`](crate::ClientBuilder::with_auth).
///
/// ```no_run
/// # async fn run() -> Result<(), toolwire::ClientError> {
/// use toolwire::oauth::{FileTokenStore, LoopbackRedirect, OAuthConfig, OAuthProvider};
///
/// let url = "https://mcp.example.com/mcp";
/// let provider = OAuthProvider::new(url, OAuthConfig::new())?
///     .with_store(FileTokenStore::open_default()?)
///     .with_redirect(LoopbackRedirect::new(|url| eprintln!("open {url}")));
/// let client = toolwire::ClientBuilder::new().with_auth(provider).connect_http(url)?;
/// let tools = client.list_tools().await?;
/// # drop(tools);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OAuthProvider {
    inner: Arc<Inner>,
}

impl fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("server", &self.inner.server.as_str())
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

struct Inner {
    server: Url,
    config: OAuthConfig,
    http: AuthHttp,
    store: Arc<dyn TokenStore>,
    redirect: Option<Arc<dyn Redirect>>,
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    loaded: bool,
    tokens: Option<StoredTokens>,
    /// The metadata the tokens came from.
    metadata: Option<(ResourceMetadata, ServerMetadata)>,
    /// Every scope asked for so far, for the union on re-authorization.
    requested: BTreeSet<String>,
}

impl OAuthProvider {
    /// A provider for the MCP endpoint at `server` with an in-memory store
    /// and no redirect handler (so it can refresh, not log in).
    pub fn new(server: &str, config: OAuthConfig) -> Result<Self, AuthError> {
        let parsed = Url::parse(server)
            .map_err(|e| AuthError::Discovery(format!("{server:?} is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(AuthError::Discovery(format!(
                "{server:?} is not an http(s) URL"
            )));
        }
        Ok(Self {
            inner: Arc::new(Inner {
                server: parsed,
                http: AuthHttp::new(config.ca_pems.clone()),
                config,
                store: Arc::new(MemoryTokenStore::new()),
                redirect: None,
                state: tokio::sync::Mutex::default(),
            }),
        })
    }

    fn rebuild(self, f: impl FnOnce(&mut Inner)) -> Self {
        let inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            server: shared.server.clone(),
            config: shared.config.clone(),
            http: AuthHttp::new(shared.config.ca_pems.clone()),
            store: shared.store.clone(),
            redirect: shared.redirect.clone(),
            state: tokio::sync::Mutex::default(),
        });
        let mut inner = inner;
        f(&mut inner);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Keeps registrations and tokens in `store`.
    #[must_use]
    pub fn with_store(self, store: impl TokenStore) -> Self {
        let store: Arc<dyn TokenStore> = Arc::new(store);
        self.rebuild(|i| i.store = store)
    }

    /// Lets the provider authorize from scratch (and step up) by sending
    /// the user through `redirect`.
    #[must_use]
    pub fn with_redirect(self, redirect: impl Redirect) -> Self {
        let redirect: Arc<dyn Redirect> = Arc::new(redirect);
        self.rebuild(|i| i.redirect = Some(redirect))
    }

    /// The server this provider authorizes for.
    pub fn server(&self) -> &str {
        self.inner.server.as_str()
    }

    /// The tokens held for the server, if any (loaded from the store).
    pub async fn tokens(&self) -> Result<Option<StoredTokens>, AuthError> {
        let mut st = self.inner.state.lock().await;
        self.load(&mut st)?;
        Ok(st.tokens.clone())
    }

    /// Logs in now, without waiting for a 401: probes the server for its
    /// challenge, discovers, registers if needed and authorizes.
    pub async fn login(&self) -> Result<StoredTokens, AuthError> {
        let challenge = self.probe().await?;
        let mut st = self.inner.state.lock().await;
        self.load(&mut st)?;
        self.authorize_anew(&mut st, &challenge).await?;
        st.tokens
            .clone()
            .ok_or_else(|| AuthError::Token("no token was stored".into()))
    }

    /// Forgets the server's tokens (the client registration stays).
    pub async fn logout(&self) -> Result<bool, AuthError> {
        let mut st = self.inner.state.lock().await;
        st.loaded = true;
        st.tokens = None;
        st.metadata = None;
        self.inner.store.remove_tokens(self.server())
    }

    fn load(&self, st: &mut State) -> Result<(), AuthError> {
        if !st.loaded {
            st.tokens = self.inner.store.tokens(self.server())?;
            if let Some(t) = &st.tokens {
                st.requested.extend(t.scopes.iter().cloned());
            }
            st.loaded = true;
        }
        Ok(())
    }

    /// An unauthenticated request to the server, for its challenge; no
    /// challenge (the server answered) means the well-known URIs.
    async fn probe(&self) -> Result<Challenge, AuthError> {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "server/discover",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": toolwire_proto::meta::PROTOCOL_VERSION}}
        });
        let request = http::Request::builder()
            .method(http::Method::POST)
            .uri(self.server())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header(
                "mcp-protocol-version",
                toolwire_proto::meta::PROTOCOL_VERSION,
            )
            .header("mcp-method", "server/discover")
            .body(serde_json::to_vec(&body).unwrap_or_default())
            .map_err(|e| AuthError::Http(e.to_string()))?;
        let response = self.inner.http.send(request).await?;
        Ok(Challenge::parse(
            response
                .headers()
                .get_all(http::header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        ))
    }

    /// The metadata of the current tokens' authorization server, fetched
    /// once.
    async fn metadata(
        &self,
        st: &mut State,
        challenge: &Challenge,
    ) -> Result<(ResourceMetadata, ServerMetadata), AuthError> {
        if let Some(m) = &st.metadata {
            return Ok(m.clone());
        }
        let m = self.discover(challenge).await?;
        st.metadata = Some(m.clone());
        Ok(m)
    }

    async fn discover(
        &self,
        challenge: &Challenge,
    ) -> Result<(ResourceMetadata, ServerMetadata), AuthError> {
        let http = &self.inner.http;
        let prm = discovery::resource_metadata(http, &self.inner.server, challenge).await?;
        // Spec: RFC 9728 §7.6 — the choice is the client's; the first.
        let issuer = prm.authorization_servers[0].clone();
        let asm = discovery::server_metadata(http, &issuer).await?;
        Ok((prm, asm))
    }

    /// Uses the refresh token; `Ok(false)` when there is none or the
    /// authorization server refused it.
    async fn refresh(&self, st: &mut State) -> Result<bool, AuthError> {
        let Some(tokens) = st.tokens.clone() else {
            return Ok(false);
        };
        let Some(refresh_token) = tokens.refresh_token.as_deref() else {
            return Ok(false);
        };
        let Some(client) = self.inner.store.client(&tokens.issuer)? else {
            return Ok(false);
        };
        let asm = match &st.metadata {
            Some((_, asm)) if asm.issuer == tokens.issuer => asm.clone(),
            _ => discovery::server_metadata(&self.inner.http, &tokens.issuer).await?,
        };
        match flow::refresh(
            &self.inner.http,
            &asm,
            &client,
            refresh_token,
            &tokens.resource,
        )
        .await
        {
            Ok(granted) => {
                let scopes = tokens.scopes.clone();
                self.keep(st, &tokens.issuer, &tokens.resource, granted, scopes)?;
                tracing::debug!("refreshed the token for {}", self.server());
                Ok(true)
            }
            Err(AuthError::Token(why)) => {
                tracing::debug!("refresh refused for {}: {why}", self.server());
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn keep(
        &self,
        st: &mut State,
        issuer: &str,
        resource: &str,
        granted: Granted,
        requested: Vec<String>,
    ) -> Result<(), AuthError> {
        let tokens = StoredTokens {
            issuer: issuer.to_owned(),
            resource: resource.to_owned(),
            access_token: granted.access_token,
            refresh_token: granted.refresh_token,
            expires_at: granted.expires_at,
            scopes: granted.scopes.unwrap_or(requested),
        };
        self.inner.store.save_tokens(self.server(), &tokens)?;
        st.tokens = Some(tokens);
        Ok(())
    }

    /// Full authorization after a 401: discovery (the authorization
    /// server may have changed), then the code flow.
    async fn authorize_anew(&self, st: &mut State, challenge: &Challenge) -> Result<(), AuthError> {
        self.login_possible()?;
        let (prm, asm) = self.discover(challenge).await?;
        if st.tokens.as_ref().is_some_and(|t| t.issuer != asm.issuer) {
            // Spec: basic/authorization/client-registration.mdx#authorization-server-binding
            tracing::debug!(
                "the authorization server of {} changed to {}",
                self.server(),
                asm.issuer
            );
            st.tokens = None;
        }
        let mut scopes: BTreeSet<String> = challenge.scopes().map(str::to_owned).collect();
        if !self.inner.config.scopes.is_empty() {
            scopes.extend(self.inner.config.scopes.iter().cloned());
        } else if scopes.is_empty() {
            scopes.extend(prm.scopes_supported.iter().flatten().cloned());
        }
        self.authorize(st, prm, asm, scopes).await
    }

    /// The code flow with `scopes` plus every scope asked for before.
    // Spec: basic/authorization/index.mdx#scope-selection-strategy,
    // #step-up-authorization-flow, #refresh-tokens
    async fn authorize(
        &self,
        st: &mut State,
        prm: ResourceMetadata,
        asm: ServerMetadata,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), AuthError> {
        let redirect = self.login_possible()?;
        scopes.extend(st.requested.iter().cloned());
        scopes.remove("offline_access");
        if asm.lists_scope("offline_access") {
            scopes.insert("offline_access".into());
        }
        st.requested.clone_from(&scopes);
        let wait = redirect.prepare().await?;
        let client = self.client_identity(&asm, wait.redirect_uri()).await?;
        let granted = flow::authorize(
            &self.inner.http,
            &asm,
            &client,
            wait,
            &scopes,
            &prm.resource,
        )
        .await?;
        let requested: Vec<String> = scopes
            .into_iter()
            .filter(|s| s != "offline_access")
            .collect();
        self.keep(st, &asm.issuer, &prm.resource, granted, requested)?;
        st.metadata = Some((prm, asm));
        Ok(())
    }

    /// The redirect handler, without which there is no authorizing.
    fn login_possible(&self) -> Result<&Arc<dyn Redirect>, AuthError> {
        self.inner
            .redirect
            .as_ref()
            .ok_or_else(|| AuthError::LoginRequired {
                server: self.server().to_owned(),
            })
    }

    /// The client identity for `asm`, in the spec's order, saved under its
    /// issuer for later refreshes.
    // Spec: basic/authorization/client-registration.mdx
    async fn client_identity(
        &self,
        asm: &ServerMetadata,
        redirect_uri: &str,
    ) -> Result<ClientRegistration, AuthError> {
        let config = &self.inner.config;
        let store = &self.inner.store;
        let client = if let Some(id) = &config.client_id {
            if let Some(bound) = config.client_issuer.as_ref().filter(|b| **b != asm.issuer) {
                return Err(AuthError::WrongAuthorizationServer {
                    registered: bound.clone(),
                    current: asm.issuer.clone(),
                });
            }
            ClientRegistration {
                client_id: id.clone(),
                auth_method: flow::preregistered_method(asm, config.client_secret.is_some()),
                client_secret: config.client_secret.clone(),
                redirect_uris: vec![redirect_uri.to_owned()],
            }
        } else if let Some(url) = config
            .cimd_url
            .as_ref()
            .filter(|_| asm.client_id_metadata_document_supported == Some(true))
        {
            ClientRegistration {
                client_id: url.clone(),
                client_secret: None,
                auth_method: "none".into(),
                redirect_uris: vec![redirect_uri.to_owned()],
            }
        } else if let Some(known) = store.client(&asm.issuer)?.filter(|c| {
            c.redirect_uris
                .iter()
                .any(|u| same_redirect(u, redirect_uri))
        }) {
            tracing::debug!("reusing the registration with {}", asm.issuer);
            return Ok(known);
        } else if let Some(endpoint) = &asm.registration_endpoint {
            flow::register(
                &self.inner.http,
                asm,
                endpoint,
                &config.client_name,
                redirect_uri,
            )
            .await?
        } else {
            return Err(AuthError::NoClientIdentity(asm.issuer.clone()));
        };
        store.save_client(&asm.issuer, &client)?;
        Ok(client)
    }
}

/// Whether a registration for `registered` also covers `current`: the
/// same URI, or the same loopback IP redirect on another port, which the
/// authorization server must accept (the listener's port is the system's
/// choice each time).
// Spec: RFC 8252 §7.3; OAuth 2.1 §8.4.2 (loopback interface redirection)
fn same_redirect(registered: &str, current: &str) -> bool {
    if registered == current {
        return true;
    }
    let (Ok(mut a), Ok(mut b)) = (Url::parse(registered), Url::parse(current)) else {
        return false;
    };
    let loopback = |u: &Url| {
        u.scheme() == "http"
            && match u.host() {
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                _ => false,
            }
    };
    if !loopback(&a) || !loopback(&b) {
        return false;
    }
    // Both are http URLs with a host, so the port can always be cleared.
    let _ = (a.set_port(None), b.set_port(None));
    a == b
}

fn bearer(tokens: &StoredTokens) -> String {
    format!("Bearer {}", tokens.access_token)
}

impl AuthProvider for OAuthProvider {
    fn authorization(&self) -> BoxFuture<'_, Result<Option<String>, AuthError>> {
        Box::pin(async move {
            let mut st = self.inner.state.lock().await;
            self.load(&mut st)?;
            let expired = st
                .tokens
                .as_ref()
                .and_then(|t| t.expires_at)
                .is_some_and(|at| at <= flow::now_secs() + EXPIRY_MARGIN);
            // Spec: basic/authorization/index.mdx#refresh-tokens. An expired
            // token that cannot be refreshed is still sent: the server's
            // 401 then starts a new authorization.
            if expired {
                self.refresh(&mut st).await?;
            }
            Ok(st.tokens.as_ref().map(bearer))
        })
    }

    fn refused<'a>(
        &'a self,
        status: u16,
        challenge: &'a Challenge,
        sent: Option<&'a str>,
        attempt: u32,
    ) -> BoxFuture<'a, Result<bool, AuthError>> {
        Box::pin(async move {
            if attempt >= self.inner.config.max_authorizations {
                return Err(AuthError::RetryLimit(attempt));
            }
            let mut st = self.inner.state.lock().await;
            self.load(&mut st)?;
            // Another request renewed the token while this one was out:
            // send it again with the new one instead of renewing twice.
            let current = st.tokens.as_ref().map(bearer);
            if current.is_some() && current.as_deref() != sent {
                return Ok(true);
            }
            match status {
                401 => {
                    // A rejected token is refreshed once; after that, or
                    // without a refresh token, authorize from discovery on.
                    if attempt == 0 && self.refresh(&mut st).await? {
                        return Ok(true);
                    }
                    self.authorize_anew(&mut st, challenge).await?;
                    Ok(true)
                }
                403 if challenge.is_insufficient_scope() => {
                    let (prm, asm) = self.metadata(&mut st, challenge).await?;
                    let scopes = challenge.scopes().map(str::to_owned).collect();
                    self.authorize(&mut st, prm, asm, scopes).await?;
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
    }

    /// The default's digest of the `Authorization` value, of the token
    /// held now: without refreshing it first, which the request does.
    fn principal(&self) -> BoxFuture<'_, Option<Arc<str>>> {
        Box::pin(async move {
            let mut st = self.inner.state.lock().await;
            self.load(&mut st).ok()?;
            st.tokens.as_ref().map(|t| super::digest(&bearer(t)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::same_redirect;

    #[test]
    fn a_loopback_redirect_matches_on_any_port_and_nothing_else_does() {
        let registered = "http://127.0.0.1:40001/callback";
        assert!(same_redirect(registered, registered));
        assert!(same_redirect(registered, "http://127.0.0.1:51234/callback"));
        assert!(same_redirect(
            "http://[::1]:1/callback",
            "http://[::1]:2/callback"
        ));
        for other in [
            "http://127.0.0.1:51234/other",
            "http://127.0.0.1:51234/callback?x=1",
            "https://127.0.0.1:51234/callback",
            "http://[::1]:51234/callback",
            "http://localhost:51234/callback",
        ] {
            assert!(!same_redirect(registered, other), "{other}");
        }
        // Only loopback IP literals: a named or remote host keeps its port.
        assert!(!same_redirect(
            "http://localhost:1/callback",
            "http://localhost:2/callback"
        ));
        assert!(!same_redirect(
            "https://app.example:1/callback",
            "https://app.example:2/callback"
        ));
    }
}
