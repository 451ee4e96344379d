//! REST APIs as upstreams: an OpenAPI 3.0 or 3.1 document's operations
//! served as tools. The document is read when the upstream connects (and
//! again each time it reconnects); a call becomes one HTTP request to the
//! API, with the upstream's credentials or the caller's.

mod document;
mod operation;
mod request;
mod schema;

use crate::config::{Credentials, Endpoint, Upstream};
use http::{HeaderName, HeaderValue};
use operation::Operation;
use std::collections::HashMap;
use std::time::Duration;
use toolwire::proto::types::{CallToolResult, Tool};
use toolwire::{OutboundError, OutboundHttp};

/// The largest response body a call reads.
const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// A REST API, read from its document.
pub(crate) struct RestApi {
    http: OutboundHttp,
    /// Where the paths are, without a final `/`.
    base: String,
    /// The upstream's own headers (`headers`, `bearer_env`).
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Each tool's request, by the tool's name.
    operations: HashMap<String, Operation>,
}

impl std::fmt::Debug for RestApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestApi")
            .field("base", &self.base)
            .field("operations", &self.operations.len())
            .finish_non_exhaustive()
    }
}

impl RestApi {
    /// Reads the document of an `openapi` upstream (fetched with the
    /// upstream's own headers, within its time limit) and makes its tools.
    /// A header parameter the gateway sends itself (a configured header,
    /// the caller's credential) is no tool argument.
    pub(crate) async fn load(upstream: &Upstream) -> Result<(Self, Vec<Tool>), String> {
        let timeout = upstream.timeout;
        let Endpoint::OpenApi {
            document,
            base_url,
            headers,
            bearer,
        } = &upstream.endpoint
        else {
            return Err("not an openapi upstream".into());
        };
        let mut sent = Vec::new();
        for (k, v) in headers {
            let name = HeaderName::try_from(k.as_str())
                .map_err(|_| format!("header {k:?} is not a header name"))?;
            let mut value = HeaderValue::try_from(v.as_str())
                .map_err(|_| format!("the value of header {k} cannot be sent"))?;
            value.set_sensitive(true);
            sent.push((name, value));
        }
        if let Some(token) = bearer {
            let mut value = HeaderValue::try_from(format!("Bearer {token}"))
                .map_err(|_| "the bearer token cannot be sent in a header".to_owned())?;
            value.set_sensitive(true);
            sent.push((http::header::AUTHORIZATION, value));
        }
        let remote = document.starts_with("http://") || document.starts_with("https://");
        let bytes = if remote {
            let http = OutboundHttp::new(document.starts_with("https://"), &[])
                .map_err(|e| e.to_string())?;
            fetch(&http, document, &sent, timeout).await?
        } else {
            read_file(document)?
        };
        let doc = document::parse(&bytes).map_err(|e| format!("{document}: {e}"))?;
        document::check_version(&doc).map_err(|e| format!("{document}: {e}"))?;
        let base = document::base_url(
            &doc,
            base_url.as_deref(),
            remote.then_some(document.as_str()),
        )?;
        let http =
            OutboundHttp::new(base.starts_with("https://"), &[]).map_err(|e| e.to_string())?;
        let mut supplied: Vec<String> = sent.iter().map(|(k, _)| k.as_str().to_owned()).collect();
        match &upstream.credentials {
            Credentials::Gateway => {}
            Credentials::PerSubject { header, .. } => supplied.push(header.to_ascii_lowercase()),
            Credentials::Passthrough { .. } | Credentials::Exchange(_) => {
                supplied.push("authorization".into());
            }
        }
        let (tools, operations) = operation::tools(&doc, &upstream.key, &supplied);
        if tools.is_empty() {
            return Err(format!("{document}: no operation could be made a tool"));
        }
        Ok((
            Self {
                http,
                base,
                headers: sent,
                operations,
            },
            tools,
        ))
    }

    /// Each tool's arguments in the document's order, by tool name.
    pub(crate) fn argument_orders(&self) -> HashMap<String, Vec<String>> {
        self.operations
            .iter()
            .map(|(name, op)| (name.clone(), op.argument_order()))
            .collect()
    }

    /// Calls tool `name` with `args` (checked against its input schema),
    /// adding `credential` (the caller's, in a per-caller mode) to the
    /// upstream's own headers, in place of any of the same name.
    pub(crate) async fn call(
        &self,
        name: &str,
        args: &serde_json::Value,
        credential: Option<(String, String)>,
        timeout: Duration,
    ) -> CallToolResult {
        let Some(op) = self.operations.get(name) else {
            return CallToolResult::error_text(format!("no operation for tool {name:?}"));
        };
        let headers = match with_credential(&self.headers, credential) {
            Ok(h) => h,
            Err(e) => return CallToolResult::error_text(e),
        };
        let request = match request::build(op, &self.base, args, &headers) {
            Ok(r) => r,
            Err(e) => {
                return CallToolResult::error_text(format!("{} {}: {e}", op.method, op.path));
            }
        };
        // The request as sent, for the model to read in an error.
        let what = format!(
            "{} {}",
            op.method,
            request
                .uri()
                .path_and_query()
                .map_or("/", http::uri::PathAndQuery::as_str)
        );
        match self.http.send(request, MAX_RESPONSE_BYTES, timeout).await {
            Ok(response) => request::result(op, &what, &response),
            Err(OutboundError::Timeout(t)) => CallToolResult::error_text(format!(
                "{what} did not answer within {} ms; the request was abandoned",
                t.as_millis()
            )),
            Err(e) => CallToolResult::error_text(format!("{what} failed: {e}")),
        }
    }
}

/// The upstream's own headers with the caller's credential in place of any
/// of the same name: a caller's request never carries the gateway's
/// credential for the header the caller's goes in.
fn with_credential(
    own: &[(HeaderName, HeaderValue)],
    credential: Option<(String, String)>,
) -> Result<Vec<(HeaderName, HeaderValue)>, &'static str> {
    let mut headers = own.to_vec();
    if let Some((k, v)) = credential {
        let (Ok(k), Ok(mut v)) = (HeaderName::try_from(k), HeaderValue::try_from(v)) else {
            return Err("the caller's credential cannot be sent");
        };
        v.set_sensitive(true);
        headers.retain(|(h, _)| *h != k);
        headers.push((k, v));
    }
    Ok(headers)
}

async fn fetch(
    http: &OutboundHttp,
    url: &str,
    headers: &[(HeaderName, HeaderValue)],
    timeout: Duration,
) -> Result<bytes::Bytes, String> {
    let mut request = http::Request::builder().uri(url).header(
        http::header::ACCEPT,
        "application/json, application/yaml;q=0.9, */*;q=0.5",
    );
    for (k, v) in headers {
        request = request.header(k, v);
    }
    let request = request
        .body(bytes::Bytes::new())
        .map_err(|e| format!("{url}: {e}"))?;
    let response = http
        .send(request, document::MAX_DOCUMENT_BYTES, timeout)
        .await
        .map_err(|e| format!("fetching {url}: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("fetching {url}: HTTP {}", response.status()));
    }
    Ok(response.into_body())
}

fn read_file(path: &str) -> Result<bytes::Bytes, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(document::MAX_DOCUMENT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(bytes.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callers_credential_replaces_the_gateways_of_the_same_header() {
        let own = vec![
            (
                http::header::AUTHORIZATION,
                HeaderValue::from_static("Bearer gateway"),
            ),
            (
                HeaderName::from_static("x-tenant"),
                HeaderValue::from_static("t1"),
            ),
        ];
        let alice = with_credential(&own, Some(("Authorization".into(), "Bearer alice".into())))
            .expect("a header");
        let auth: Vec<&HeaderValue> = alice
            .iter()
            .filter(|(k, _)| *k == http::header::AUTHORIZATION)
            .map(|(_, v)| v)
            .collect();
        assert_eq!(auth, [&HeaderValue::from_static("Bearer alice")]);
        assert!(auth[0].is_sensitive());
        assert_eq!(alice.len(), 2, "the other header stays");
        assert_eq!(with_credential(&own, None).expect("none").len(), 2);
        assert!(with_credential(&own, Some(("X-Key".into(), "a\nb".into()))).is_err());
    }
}
