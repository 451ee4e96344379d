//! [`Challenge`]: the `Bearer` challenge of a `WWW-Authenticate` header
//! (RFC 9110 §11.6.1 syntax, RFC 6750 §3 and RFC 9728 §5.1 parameters).
//!
//! Spec: basic/authorization/authorization-server-discovery.mdx — clients
//! MUST be able to parse `WWW-Authenticate` headers.

/// The parameters of a `Bearer` challenge that drive the client: where the
/// protected resource metadata is, which scopes the operation needs, and
/// the error code. `error_description` is deliberately not kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// `resource_metadata`: the protected resource metadata URL.
    pub resource_metadata: Option<String>,
    /// `scope`: the space-separated scopes the refused operation needs.
    pub scope: Option<String>,
    /// `error`, for example `insufficient_scope` or `invalid_token`.
    pub error: Option<String>,
}

/// Longest header value parsed; a longer one is treated as absent.
const MAX_HEADER: usize = 8 * 1024;

impl Challenge {
    /// The `Bearer` challenge among the given `WWW-Authenticate` values
    /// (several challenges may share one value, or come in several); an
    /// empty challenge when there is none.
    pub fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut found = Self::default();
        for value in values {
            if value.len() > MAX_HEADER {
                continue;
            }
            let mut in_bearer = false;
            for item in split_top_level(value) {
                let item = item.trim();
                if item.is_empty() {
                    continue;
                }
                let params = match item.split_once(char::is_whitespace) {
                    Some((first, rest)) if !first.contains('=') => {
                        in_bearer = first.eq_ignore_ascii_case("bearer");
                        rest.trim()
                    }
                    None if !item.contains('=') => {
                        in_bearer = item.eq_ignore_ascii_case("bearer");
                        ""
                    }
                    _ => item,
                };
                if !in_bearer || params.is_empty() {
                    continue;
                }
                let Some((name, raw)) = params.split_once('=') else {
                    continue;
                };
                let value = unquote(raw.trim());
                let slot = match name.trim().to_ascii_lowercase().as_str() {
                    "resource_metadata" => &mut found.resource_metadata,
                    "scope" => &mut found.scope,
                    "error" => &mut found.error,
                    _ => continue,
                };
                slot.get_or_insert(value);
            }
        }
        found
    }

    /// The challenged scopes, one by one.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scope.iter().flat_map(|s| s.split_ascii_whitespace())
    }

    /// Whether this is RFC 6750's `insufficient_scope`.
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Splits at the commas outside quoted strings.
fn split_top_level(value: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in value.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                items.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&value[start..]);
    items
}

/// A token as is, or a quoted string without its quotes and escapes.
fn unquote(raw: &str) -> String {
    let Some(inner) = raw.strip_prefix('"') else {
        return raw.to_owned();
    };
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_gives_its_parameters() {
        let c = Challenge::parse([
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="a, b""#,
        ]);
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert!(c.is_insufficient_scope());
        assert_eq!(
            c.scopes().collect::<Vec<_>>(),
            ["files:read", "files:write"]
        );
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
    }

    #[test]
    fn other_schemes_are_skipped_and_escapes_undone() {
        let c = Challenge::parse([
            r#"Basic realm="x", scope="not-this""#,
            r#"DPoP algs="ES256", bearer scope="a\"b", realm=mcp"#,
        ]);
        assert_eq!(c.scope.as_deref(), Some("a\"b"));
        assert_eq!(c.resource_metadata, None);
        assert_eq!(Challenge::parse(["Bearer"]), Challenge::default());
        assert_eq!(
            Challenge::parse(["garbage \"unterminated"]),
            Challenge::default()
        );
    }
}
