//! The resource server's few outbound requests (authorization server
//! metadata, the key set, introspection), on the outbound HTTP stack the
//! client uses too (`outbound.rs`): hyper with rustls. Each is bounded in time and in response size, and
//! carries no caller's token: tokens are never forwarded.
//!
//! Spec: basic/authorization/security-considerations.mdx#communication-security
//! — authorization server endpoints are served over HTTPS; plain `http://`
//! is accepted for loopback hosts only (a local test authorization server).

use crate::outbound::{self, HttpClient};
use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt as _, Full, Limited};
use serde::de::DeserializeOwned;
use std::time::Duration;

/// The largest response read: key sets and metadata are a few KiB.
const MAX_RESPONSE_BYTES: usize = 256 * 1024;
/// How long one outbound request may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(10);

/// An HTTP client for the authorization server's endpoints.
pub(crate) struct Fetcher {
    client: HttpClient,
}

/// Checks that `url` is an absolute `https://` URL, or `http://` on a
/// loopback host.
pub(crate) fn parse_endpoint(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|e| format!("{url:?}: {e}"))?;
    let host = uri
        .host()
        .ok_or_else(|| format!("{url:?}: not an absolute URL"))?;
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if is_loopback(host) => Ok(uri),
        Some("http") => Err(format!(
            "{url:?}: authorization server endpoints must use https:// (http:// only on a loopback host)"
        )),
        _ => Err(format!("{url:?}: expected an https:// URL")),
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl Fetcher {
    /// A client; `https` loads the platform's root certificates.
    pub(crate) fn new(https: bool) -> Result<Self, String> {
        Ok(Self {
            client: outbound::client(https, &[]).map_err(|e| e.to_string())?,
        })
    }

    /// GETs `url` and reads a JSON document; `None` for a 404 (a
    /// discovery location that is not there).
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        url: &Uri,
    ) -> Result<Option<T>, String> {
        let req = Request::builder()
            .method(Method::GET)
            .uri(url.clone())
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        self.send(req).await
    }

    /// POSTs a form with an `Authorization` header and reads a JSON
    /// document.
    pub(crate) async fn post_form<T: DeserializeOwned>(
        &self,
        url: &Uri,
        authorization: HeaderValue,
        form: String,
    ) -> Result<T, String> {
        let req = Request::builder()
            .method(Method::POST)
            .uri(url.clone())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(AUTHORIZATION, authorization)
            .body(Full::new(Bytes::from(form)))
            .map_err(|e| e.to_string())?;
        self.send(req)
            .await?
            .ok_or_else(|| format!("{url}: 404 Not Found"))
    }

    async fn send<T: DeserializeOwned>(
        &self,
        req: Request<Full<Bytes>>,
    ) -> Result<Option<T>, String> {
        let url = req.uri().clone();
        let exchange = async {
            let res = self
                .client
                .request(req)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = res.status();
            if status == http::StatusCode::NOT_FOUND {
                return Ok(None);
            }
            if !status.is_success() {
                return Err(format!("{url}: HTTP {status}"));
            }
            let body = Limited::new(res.into_body(), MAX_RESPONSE_BYTES)
                .collect()
                .await
                .map_err(|e| format!("{url}: reading the response: {e}"))?
                .to_bytes();
            serde_json::from_slice(&body)
                .map(Some)
                .map_err(|e| format!("{url}: not the expected JSON: {e}"))
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .map_err(|_| format!("{url}: no answer within {} s", TIMEOUT.as_secs()))?
    }
}

/// The `Authorization` value of a client authenticating to an
/// authorization server with its id and secret (HTTP Basic, each part
/// form-encoded first: RFC 6749 §2.3.1), marked sensitive.
pub(crate) fn client_basic(
    client_id: &str,
    client_secret: &str,
) -> Result<HeaderValue, super::AuthSetupError> {
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        form_encode(client_id),
        form_encode(client_secret)
    ));
    let mut value = HeaderValue::try_from(format!("Basic {basic}")).map_err(|_| {
        super::AuthSetupError("the client credentials cannot be sent in a header".to_owned())
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// `application/x-www-form-urlencoded` encoding of one value.
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_need_https_except_on_loopback() {
        assert!(parse_endpoint("https://as.example.com/jwks").is_ok());
        assert!(parse_endpoint("http://127.0.0.1:9/jwks").is_ok());
        assert!(parse_endpoint("http://[::1]:9/jwks").is_ok());
        assert!(parse_endpoint("http://localhost/jwks").is_ok());
        assert!(parse_endpoint("http://as.example.com/jwks").is_err());
        assert!(parse_endpoint("/jwks").is_err());
        assert!(parse_endpoint("ftp://as.example.com/").is_err());
    }

    #[test]
    fn form_values_are_percent_encoded() {
        assert_eq!(form_encode("a b+c/d=é"), "a+b%2Bc%2Fd%3D%C3%A9");
        assert_eq!(form_encode("Az09-._*"), "Az09-._*");
    }
}
