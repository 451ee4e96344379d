//! The `Host` and `Origin` allow-lists: the DNS-rebinding defence.
//!
//! Spec: basic/transports/streamable-http.mdx#security--endpoint — servers
//! MUST validate `Origin` and answer an invalid one with `403 Forbidden`.
//! Checking `Host` as well stops a rebound name even from clients that send
//! no `Origin`.

use super::found::{Found, HeadHeaders};

/// One allow-list entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    /// Lowercase scheme, when the entry was a full origin.
    scheme: Option<String>,
    /// Lowercase host; IPv6 addresses keep their brackets.
    host: String,
    /// `None` matches any port.
    port: Option<u16>,
}

impl Pattern {
    fn parse(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        let (scheme, authority) = match entry.split_once("://") {
            Some((scheme, rest)) => (Some(scheme.to_ascii_lowercase()), rest),
            None => (None, entry),
        };
        let (host, port) = parse_authority(authority)?;
        Some(Self {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    /// Whether `authority` is this entry's host, as stored (lowercase),
    /// optionally followed by an allowed `:port`: the usual `Host` value,
    /// accepted without parsing. Whatever this accepts `parse_authority`
    /// reads as this host and port; anything else takes the general path.
    fn matches_exact(&self, authority: &[u8]) -> bool {
        let Some(rest) = authority.strip_prefix(self.host.as_bytes()) else {
            return false;
        };
        let port = match rest {
            [] => None,
            [b':', digits @ ..]
                if !digits.is_empty()
                    && digits.len() <= 5
                    && digits.iter().all(u8::is_ascii_digit) =>
            {
                let n = digits
                    .iter()
                    .fold(0_u32, |n, d| n * 10 + u32::from(d - b'0'));
                match u16::try_from(n) {
                    Ok(port) => Some(port),
                    Err(_) => return false,
                }
            }
            _ => return false,
        };
        self.port.is_none_or(|p| Some(p) == port)
    }

    fn matches(&self, scheme: Option<&str>, host: &str, port: Option<u16>) -> bool {
        if let (Some(want), Some(got)) = (&self.scheme, scheme)
            && !want.eq_ignore_ascii_case(got)
        {
            return false;
        }
        self.host.eq_ignore_ascii_case(host) && self.port.is_none_or(|p| Some(p) == port)
    }
}

/// Splits `host[:port]` into the host and the port. `None` when it
/// is not a plain authority (empty host, user info, a path, a bad port).
fn parse_authority(authority: &str) -> Option<(&str, Option<u16>)> {
    if authority.is_empty()
        || authority
            .bytes()
            .any(|b| matches!(b, b'@' | b'/' | b'?' | b'#') || b <= b' ' || b >= 0x7f)
    {
        return None;
    }
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        match rest {
            "" => (host, None),
            _ => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || (host.contains(':') && !host.starts_with('[')) {
        return None;
    }
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((host, port))
}

/// The compiled `Host` and `Origin` allow-lists.
#[derive(Debug, Clone)]
pub(super) struct OriginPolicy {
    hosts: Option<Vec<Pattern>>,
    origins: Option<Vec<Pattern>>,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// The `Host` is missing, repeated or not a readable authority: a bad
    /// request, whatever the allow-list says.
    ///
    /// Spec: RFC 9112 §3.2 — a server MUST answer `400` to an HTTP/1.1
    /// request without `Host`, with more than one, or with an invalid one.
    BadHost,
    /// The `Host` (or URI authority) is not allowed.
    Host,
    /// The `Origin` is present and not allowed.
    Origin,
}

impl OriginPolicy {
    /// Compiles the lists. Entries that are not readable patterns match
    /// nothing (and are logged).
    pub(super) fn new(hosts: Option<&[String]>, origins: Option<&[String]>) -> Self {
        let compile = |list: &[String]| {
            list.iter()
                .filter_map(|entry| {
                    let pattern = Pattern::parse(entry);
                    if pattern.is_none() {
                        tracing::warn!(entry = %entry, "ignoring unreadable host/origin allow-list entry");
                    }
                    pattern
                })
                .collect()
        };
        Self {
            hosts: hosts.map(compile),
            origins: origins.map(compile),
        }
    }

    /// Checks the request's authority and `Origin`.
    ///
    /// HTTP/2 and absolute-form requests carry the authority in the URI;
    /// HTTP/1.1 in `Host`, which must then be there, once, and readable
    /// (even with no allow-list). Without a list, HTTP/1.0 requests need
    /// no `Host`.
    pub(super) fn check(
        &self,
        version: http::Version,
        authority: Option<&http::uri::Authority>,
        found: &HeadHeaders<'_>,
    ) -> Result<(), Refusal> {
        let Some(hosts) = &self.hosts else {
            if authority.is_none()
                && version == http::Version::HTTP_11
                && single(found.host).and_then(parse_authority).is_none()
            {
                return Err(Refusal::BadHost);
            }
            return self.check_origin(found.origin);
        };
        let host = match authority {
            Some(a) => a.as_str(),
            None => single(found.host).ok_or(Refusal::BadHost)?,
        };
        if hosts.iter().any(|p| p.matches_exact(host.as_bytes())) {
            return self.check_origin(found.origin);
        }
        let (host, port) = parse_authority(host).ok_or(Refusal::BadHost)?;
        if !hosts.iter().any(|p| p.matches(None, host, port)) {
            return Err(Refusal::Host);
        }
        self.check_origin(found.origin)
    }

    /// Checks `Origin`, when it is present and there is a list.
    fn check_origin(&self, origin: Found<'_>) -> Result<(), Refusal> {
        if let Some(origins) = &self.origins {
            let first = match origin {
                // Not a browser request: nothing to check.
                Found::Absent => return Ok(()),
                Found::Once(first) => first,
                Found::Repeated(_) => return Err(Refusal::Origin),
            };
            let Some((scheme, host, port)) = first.to_str().ok().and_then(parse_origin) else {
                return Err(Refusal::Origin);
            };
            if !origins.iter().any(|p| p.matches(Some(scheme), host, port)) {
                return Err(Refusal::Origin);
            }
        }
        Ok(())
    }
}

/// The only value of a header, if it has exactly one readable value.
fn single(found: Found<'_>) -> Option<&str> {
    found.once().and_then(|v| v.to_str().ok())
}

/// Reads an RFC 6454 origin, `scheme://host[:port]`. The opaque origin
/// `null` and anything with a path are not readable.
fn parse_origin(origin: &str) -> Option<(&str, &str, Option<u16>)> {
    let (scheme, authority) = origin.trim().split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        return None;
    }
    let (host, port) = parse_authority(authority)?;
    Some((scheme, host, port))
}

#[cfg(test)]
mod tests {
    use super::super::config::LOCAL_HOSTS;
    use super::*;
    use http::header::{HOST, ORIGIN};
    use http::{HeaderMap, HeaderValue};

    fn local() -> OriginPolicy {
        let list: Vec<String> = LOCAL_HOSTS.iter().map(|h| (*h).to_owned()).collect();
        OriginPolicy::new(Some(&list), Some(&list))
    }

    fn check(
        policy: &OriginPolicy,
        host: Option<&str>,
        origin: Option<&str>,
    ) -> Result<(), Refusal> {
        let mut headers = HeaderMap::new();
        if let Some(h) = host {
            headers.insert(HOST, HeaderValue::from_str(h).expect("host"));
        }
        if let Some(o) = origin {
            headers.insert(ORIGIN, HeaderValue::from_str(o).expect("origin"));
        }
        policy.check(http::Version::HTTP_11, None, &HeadHeaders::find(&headers))
    }

    #[test]
    fn local_hosts_on_any_port_are_allowed() {
        let p = local();
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST:1",
            "127.0.0.1:3900",
            "127.0.0.1",
            "[::1]",
            "[::1]:65535",
        ] {
            assert_eq!(check(&p, Some(host), None), Ok(()), "{host}");
        }
    }

    /// The byte-exact fast path accepts only what the general path accepts.
    #[test]
    fn exact_host_match_agrees_with_parsing() {
        let list: Vec<String> = ["localhost", "127.0.0.1:8080", "[::1]", "Example.COM:443"]
            .iter()
            .map(|h| (*h).to_owned())
            .collect();
        let p = OriginPolicy::new(Some(&list), None);
        let patterns = p.hosts.as_deref().expect("hosts");
        for host in [
            "localhost",
            "localhost:1",
            "localhost:65535",
            "localhost:65536",
            "localhost:00080",
            "localhost:0000080",
            "localhost:",
            "localhost:x",
            "localhost.evil",
            "localhostx:1",
            "127.0.0.1",
            "127.0.0.1:8080",
            "127.0.0.1:8081",
            "[::1]",
            "[::1]:9",
            "[::1]x",
            "example.com:443",
            "example.com:444",
            "EXAMPLE.com:443",
        ] {
            let slow = parse_authority(host)
                .is_some_and(|(h, port)| patterns.iter().any(|p| p.matches(None, h, port)));
            let fast = patterns.iter().any(|p| p.matches_exact(host.as_bytes()));
            assert!(
                !fast || slow,
                "{host}: the fast path accepts what parsing refuses"
            );
            assert_eq!(check(&p, Some(host), None).is_ok(), slow, "{host}");
        }
    }

    #[test]
    fn other_hosts_are_refused() {
        let p = local();
        for host in [
            "evil.example.com",
            "evil.example.com:8080",
            "localhost.evil.com",
            "127.0.0.2",
            "[::2]",
        ] {
            assert_eq!(check(&p, Some(host), None), Err(Refusal::Host), "{host:?}");
        }
    }

    #[test]
    fn missing_or_unreadable_host_is_a_bad_request() {
        for p in [local(), OriginPolicy::new(None, None)] {
            for host in [
                "localhost:99999",
                "localhost:",
                "user@localhost",
                "localhost/x",
                "::1",
                "",
            ] {
                assert_eq!(
                    check(&p, Some(host), None),
                    Err(Refusal::BadHost),
                    "{host:?}"
                );
            }
            assert_eq!(check(&p, None, None), Err(Refusal::BadHost));
        }
        // HTTP/1.0 needs no Host, unless a list must check it.
        let headers = HeaderMap::new();
        let any = OriginPolicy::new(None, None);
        assert_eq!(
            any.check(http::Version::HTTP_10, None, &HeadHeaders::find(&headers)),
            Ok(())
        );
        assert_eq!(
            local().check(http::Version::HTTP_10, None, &HeadHeaders::find(&headers)),
            Err(Refusal::BadHost)
        );
        // The URI's authority (HTTP/2, absolute form) stands for Host.
        let authority: http::uri::Authority = "localhost:1".parse().expect("authority");
        assert_eq!(
            local().check(
                http::Version::HTTP_2,
                Some(&authority),
                &HeadHeaders::find(&headers)
            ),
            Ok(())
        );
    }

    #[test]
    fn local_origins_are_allowed_and_others_refused() {
        let p = local();
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:8080",
            "HTTP://LocalHost",
        ] {
            assert_eq!(
                check(&p, Some("localhost"), Some(origin)),
                Ok(()),
                "{origin}"
            );
        }
        for origin in [
            "http://evil.example.com",
            "http://localhost.evil.com",
            "null",
            "localhost",
            "http://localhost/path",
            "http://",
        ] {
            assert_eq!(
                check(&p, Some("localhost"), Some(origin)),
                Err(Refusal::Origin),
                "{origin}"
            );
        }
    }

    #[test]
    fn missing_origin_is_not_checked() {
        assert_eq!(check(&local(), Some("127.0.0.1:1"), None), Ok(()));
    }

    #[test]
    fn entries_with_port_or_scheme_are_exact() {
        let hosts = vec!["api.example.com:443".to_owned()];
        let origins = vec![
            "https://app.example.com".to_owned(),
            "tool.example.com:8443".to_owned(),
        ];
        let p = OriginPolicy::new(Some(&hosts), Some(&origins));
        assert_eq!(check(&p, Some("API.example.com:443"), None), Ok(()));
        assert_eq!(
            check(&p, Some("api.example.com:80"), None),
            Err(Refusal::Host)
        );
        assert_eq!(check(&p, Some("api.example.com"), None), Err(Refusal::Host));
        let host = Some("api.example.com:443");
        assert_eq!(
            check(&p, host, Some("https://app.example.com:9999")),
            Ok(())
        );
        assert_eq!(
            check(&p, host, Some("http://app.example.com")),
            Err(Refusal::Origin)
        );
        assert_eq!(
            check(&p, host, Some("http://tool.example.com:8443")),
            Ok(())
        );
        assert_eq!(
            check(&p, host, Some("http://tool.example.com")),
            Err(Refusal::Origin)
        );
    }

    #[test]
    fn none_disables_a_list() {
        let p = OriginPolicy::new(None, None);
        assert_eq!(
            check(
                &p,
                Some("evil.example.com"),
                Some("http://evil.example.com")
            ),
            Ok(())
        );
    }

    #[test]
    fn uri_authority_takes_precedence_over_host() {
        let p = local();
        let authority: http::uri::Authority = "evil.example.com".parse().expect("authority");
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_static("localhost"));
        assert_eq!(
            p.check(
                http::Version::HTTP_11,
                Some(&authority),
                &HeadHeaders::find(&headers)
            ),
            Err(Refusal::Host)
        );
    }

    #[test]
    fn duplicate_host_or_origin_is_refused() {
        let p = local();
        let mut headers = HeaderMap::new();
        headers.append(HOST, HeaderValue::from_static("localhost"));
        headers.append(HOST, HeaderValue::from_static("localhost"));
        assert_eq!(
            p.check(http::Version::HTTP_11, None, &HeadHeaders::find(&headers)),
            Err(Refusal::BadHost)
        );
        let mut headers = HeaderMap::new();
        headers.append(HOST, HeaderValue::from_static("localhost"));
        headers.append(ORIGIN, HeaderValue::from_static("http://localhost"));
        headers.append(ORIGIN, HeaderValue::from_static("http://localhost"));
        assert_eq!(
            p.check(http::Version::HTTP_11, None, &HeadHeaders::find(&headers)),
            Err(Refusal::Origin)
        );
    }
}
