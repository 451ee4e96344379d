//! Discovery: the protected resource metadata (RFC 9728) of the MCP
//! server, then the authorization server metadata (RFC 8414 / OpenID
//! Connect Discovery) of the issuer it names, each validated before use.
//!
//! Spec: basic/authorization/authorization-server-discovery.mdx

use super::challenge::Challenge;
use super::error::AuthError;
use super::http::AuthHttp;
use serde::Deserialize;
use url::Url;

/// RFC 9728 §2, the members the client uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    pub(crate) resource: String,
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 §2, the members the client uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: Option<bool>,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: Option<bool>,
}

impl ServerMetadata {
    /// Whether `method` may be used at the token endpoint; RFC 8414 §2: an
    /// absent list means `client_secret_basic` only.
    pub(crate) fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }

    pub(crate) fn lists_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

/// Finds and validates the protected resource metadata of `server`: the
/// challenge's `resource_metadata` when given, otherwise the path-suffixed
/// well-known URI, then the root one.
pub(crate) async fn resource_metadata(
    http: &AuthHttp,
    server: &Url,
    challenge: &Challenge,
) -> Result<ResourceMetadata, AuthError> {
    let mut candidates = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        candidates.push(url.clone());
    }
    let origin = origin(server);
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        candidates.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    for url in &candidates {
        let Some(metadata) = http.get_json::<ResourceMetadata>(url).await? else {
            continue;
        };
        // Spec: RFC 9728 §3.3 — the resource must be the one accessed.
        if !resource_matches(&metadata.resource, server) {
            return Err(AuthError::ResourceMismatch {
                resource: metadata.resource,
                server: server.to_string(),
            });
        }
        if metadata.authorization_servers.is_empty() {
            return Err(AuthError::Discovery(format!(
                "{url} names no authorization server"
            )));
        }
        return Ok(metadata);
    }
    Err(AuthError::Discovery(format!(
        "no protected resource metadata for {server} (tried {})",
        candidates.join(", ")
    )))
}

/// Whether the metadata's `resource` identifies `server`: the same origin
/// (scheme and host compared without case) and a path that is the server's
/// or one of its parents, on a segment boundary.
fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    if r.fragment().is_some()
        || r.scheme() != server.scheme()
        || r.host_str().map(str::to_ascii_lowercase)
            != server.host_str().map(str::to_ascii_lowercase)
        || r.port_or_known_default() != server.port_or_known_default()
    {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = server.path().trim_end_matches('/');
    sp == rp
        || sp
            .strip_prefix(rp)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Fetches the metadata of `issuer` in the spec's order and checks that
/// its `issuer` is identical and that PKCE S256 is offered.
pub(crate) async fn server_metadata(
    http: &AuthHttp,
    issuer: &str,
) -> Result<ServerMetadata, AuthError> {
    let url = Url::parse(issuer)
        .map_err(|e| AuthError::Discovery(format!("issuer {issuer:?} is not a URL: {e}")))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(AuthError::Discovery(format!(
            "issuer {issuer:?} has a query or fragment"
        )));
    }
    let origin = origin(&url);
    let path = url.path().trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    for candidate in &candidates {
        let Some(metadata) = http.get_json::<ServerMetadata>(candidate).await? else {
            continue;
        };
        // Spec: RFC 8414 §3.3 — identical, no normalization.
        if metadata.issuer != issuer {
            return Err(AuthError::IssuerMismatch {
                expected: issuer.to_owned(),
                found: metadata.issuer,
            });
        }
        // Spec: basic/authorization/security-considerations.mdx — PKCE S256,
        // and refuse when its support cannot be confirmed.
        let s256 = metadata
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"));
        if !s256 {
            return Err(AuthError::NoPkce(issuer.to_owned()));
        }
        return Ok(metadata);
    }
    Err(AuthError::Discovery(format!(
        "no authorization server metadata for {issuer} (tried {})",
        candidates.join(", ")
    )))
}

/// `scheme://host[:port]`, as written in the URL.
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_must_be_the_server_or_a_parent_on_the_same_origin() {
        let server = Url::parse("http://localhost:3000/api/mcp").expect("url");
        for ok in [
            "http://localhost:3000/api/mcp",
            "http://LOCALHOST:3000/api/mcp/",
            "http://localhost:3000/api",
            "http://localhost:3000",
        ] {
            assert!(resource_matches(ok, &server), "{ok}");
        }
        for bad in [
            "https://evil.example.com/mcp",
            "http://localhost:3001/api/mcp",
            "https://localhost:3000/api/mcp",
            "http://localhost:3000/ap",
            "http://localhost:3000/api/mcp/other",
            "http://localhost:3000/api/mcp#f",
            "not a url",
        ] {
            assert!(!resource_matches(bad, &server), "{bad}");
        }
    }
}
