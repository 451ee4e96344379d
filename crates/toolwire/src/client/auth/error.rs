//! [`AuthError`]: why authorization failed, told apart by type.

/// Why the OAuth flow could not give the client credentials. Messages
/// never contain a token or a client secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No credentials are stored for the server and this provider cannot
    /// ask the user (it has no [`Redirect`](super::Redirect) handler).
    #[error("not logged in to {server}: run `toolwire auth login {server}`")]
    LoginRequired {
        /// The MCP server URL.
        server: String,
    },
    /// Protected resource or authorization server metadata could not be
    /// found or used.
    #[error("authorization discovery failed: {0}")]
    Discovery(String),
    /// The protected resource metadata names another resource than the
    /// server being accessed.
    // Spec: RFC 9728 §3.3; basic/authorization/security-considerations.mdx
    #[error("the protected resource metadata is for {resource}, not {server}")]
    ResourceMismatch {
        /// The `resource` of the metadata.
        resource: String,
        /// The server URL.
        server: String,
    },
    /// The authorization server metadata's `issuer` differs from the
    /// issuer it was fetched for.
    // Spec: basic/authorization/authorization-server-discovery.mdx#authorization-server-metadata-discovery
    #[error("the authorization server metadata says issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata URL was built from.
        expected: String,
        /// The `issuer` in the document.
        found: String,
    },
    /// The authorization server does not offer PKCE with S256.
    #[error("the authorization server {0} does not support PKCE S256; refusing to authorize")]
    NoPkce(String),
    /// No client identity can be used with this authorization server: no
    /// pre-registered client, no Client ID Metadata Document support, no
    /// registration endpoint.
    #[error(
        "no client identity for {0}: it offers neither Client ID Metadata Documents nor dynamic registration; give a pre-registered client id (--client-id)"
    )]
    NoClientIdentity(String),
    /// Pre-registered credentials belong to another authorization server.
    // Spec: basic/authorization/client-registration.mdx#authorization-server-binding
    #[error("the pre-registered client is for {registered}, but the server now uses {current}")]
    WrongAuthorizationServer {
        /// The issuer the credentials were registered with.
        registered: String,
        /// The issuer the protected resource metadata names.
        current: String,
    },
    /// Dynamic client registration failed.
    #[error("client registration failed: {0}")]
    Registration(String),
    /// The authorization response is unusable: wrong `state`, `iss`
    /// mismatch, no code. Nothing from such a response is shown.
    #[error("rejected the authorization response: {0}")]
    InvalidResponse(String),
    /// The authorization server refused (its `error` code, after the
    /// response passed the `iss` check).
    #[error("authorization refused: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Refused {
        /// The `error` code.
        error: String,
        /// The `error_description`, if any.
        description: Option<String>,
    },
    /// The token endpoint refused or failed.
    #[error("token request failed: {0}")]
    Token(String),
    /// The server still refused after re-authorizing this many times.
    #[error("the server still refuses after {0} authorizations; giving up")]
    RetryLimit(u32),
    /// The redirect handler failed (listener, timeout).
    #[error("authorization redirect failed: {0}")]
    Redirect(String),
    /// The token store failed.
    #[error("token store: {0}")]
    Store(String),
    /// An HTTP exchange with the authorization or resource server failed.
    #[error("{0}")]
    Http(String),
}
