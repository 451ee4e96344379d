//! A tool call made an HTTP request, and the response made a tool result:
//! a 2xx JSON answer as `structuredContent` (and its text), anything else
//! as text; an HTTP error as an `isError` result carrying the status and
//! the start of the body, which is what a model needs to try again.

use super::operation::{Body, Encoding, Location, Operation};
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, COOKIE, USER_AGENT};
use http::{HeaderName, HeaderValue, Request, Response};
use serde_json::{Map, Value};
use toolwire::proto::types::CallToolResult;

/// The most of an error body an `isError` result carries.
const MAX_EXCERPT: usize = 2_000;

/// The request for `args` (already checked against the tool's input
/// schema), to `base` with `headers` (the upstream's own credentials, or
/// the caller's) set.
pub(crate) fn build(
    op: &Operation,
    base: &str,
    args: &Value,
    headers: &[(HeaderName, HeaderValue)],
) -> Result<Request<Bytes>, String> {
    let empty = Map::new();
    let args = args.as_object().unwrap_or(&empty);
    let mut path = op.path.clone();
    let mut query = String::new();
    let mut cookies = Vec::new();
    let mut request = Request::builder().method(op.method.clone());
    for p in &op.params {
        let Some(value) = args.get(&p.arg).filter(|v| !v.is_null()) else {
            if p.location == Location::Path {
                return Err(format!("the path parameter {:?} is missing", p.arg));
            }
            continue;
        };
        match p.location {
            Location::Path => {
                let text = if p.json {
                    value.to_string()
                } else {
                    plain(value, ",")
                };
                path = path.replace(&format!("{{{}}}", p.name), &encode(&text));
            }
            Location::Query => {
                let mut pair = |k: &str, v: &str| {
                    query.push(if query.is_empty() { '?' } else { '&' });
                    query.push_str(&encode(k));
                    query.push('=');
                    query.push_str(&encode(v));
                };
                match value {
                    _ if p.json => pair(&p.name, &value.to_string()),
                    Value::Array(items) if p.explode => {
                        for item in items {
                            pair(&p.name, &plain(item, ","));
                        }
                    }
                    Value::Object(fields) if p.explode => {
                        for (k, v) in fields {
                            pair(k, &plain(v, ","));
                        }
                    }
                    other => pair(&p.name, &plain(other, ",")),
                }
            }
            Location::Header => {
                let text = if p.json {
                    value.to_string()
                } else {
                    plain(value, ",")
                };
                let value = HeaderValue::try_from(text)
                    .map_err(|_| format!("{:?} cannot be sent in a header", p.arg))?;
                request = request.header(p.name.as_str(), value);
            }
            Location::Cookie => {
                let text = if p.json {
                    value.to_string()
                } else {
                    plain(value, ",")
                };
                cookies.push(format!("{}={}", p.name, encode(&text)));
            }
        }
    }
    if !cookies.is_empty() {
        let value = HeaderValue::try_from(cookies.join("; "))
            .map_err(|_| "the cookie parameters cannot be sent in a header".to_owned())?;
        request = request.header(COOKIE, value);
    }
    let body = match &op.body {
        None => Bytes::new(),
        Some((body, encoding)) => {
            let value = match body {
                Body::Whole(arg) => args.get(arg).cloned(),
                Body::Spread(names) => {
                    let fields: Map<String, Value> = names
                        .iter()
                        .filter_map(|n| args.get(n).map(|v| (n.clone(), v.clone())))
                        .collect();
                    (!fields.is_empty()).then_some(Value::Object(fields))
                }
            };
            match value {
                None => Bytes::new(),
                Some(value) => {
                    request = request.header(CONTENT_TYPE, encoding.content_type());
                    encode_body(&value, *encoding)
                }
            }
        }
    };
    request = request
        .uri(format!("{base}{path}{query}"))
        .header(ACCEPT, "application/json, */*;q=0.5")
        .header(
            USER_AGENT,
            concat!("toolwire-gateway/", env!("CARGO_PKG_VERSION")),
        );
    let mut request = request
        .body(body)
        .map_err(|e| format!("cannot make the request: {e}"))?;
    // The gateway's own headers win over an argument's of the same name.
    for (k, v) in headers {
        request.headers_mut().insert(k, v.clone());
    }
    Ok(request)
}

/// A parameter value as text: strings as they are, arrays joined by
/// `separator`, anything else as JSON.
fn plain(value: &Value, separator: &str) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|v| plain(v, separator))
            .collect::<Vec<_>>()
            .join(separator),
        other => other.to_string(),
    }
}

fn encode_body(value: &Value, encoding: Encoding) -> Bytes {
    match encoding {
        Encoding::Json => Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
        Encoding::Text => Bytes::from(plain(value, ",")),
        Encoding::Form => {
            let mut out = String::new();
            if let Value::Object(fields) = value {
                for (k, v) in fields {
                    if !out.is_empty() {
                        out.push('&');
                    }
                    out.push_str(&encode(k));
                    out.push('=');
                    out.push_str(&encode(&plain(v, ",")));
                }
            }
            Bytes::from(out)
        }
    }
}

/// Percent-encoding of everything but RFC 3986's unreserved characters.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The tool result of a response to `op` (`what` names the request, for
/// error texts).
pub(crate) fn result(op: &Operation, what: &str, response: &Response<Bytes>) -> CallToolResult {
    let status = response.status();
    let body = response.body();
    let text = String::from_utf8_lossy(body);
    if !status.is_success() {
        let mut message = format!("HTTP {status} from {what}");
        if status.is_redirection()
            && let Some(to) = response.headers().get(http::header::LOCATION)
        {
            message.push_str(&format!(
                " (a redirect to {}, not followed)",
                String::from_utf8_lossy(to.as_bytes())
            ));
        }
        if !text.trim().is_empty() {
            message.push_str(": ");
            message.push_str(excerpt(text.trim()));
            if text.trim().len() > MAX_EXCERPT {
                message.push_str(" […]");
            }
        }
        return CallToolResult::error_text(message);
    }
    let json = is_json(response)
        .then(|| serde_json::from_slice::<Value>(body).ok())
        .flatten();
    match json {
        Some(value) => {
            let structured = if op.wrap {
                Some(serde_json::json!({ "result": value }))
            } else {
                value.is_object().then_some(value)
            };
            let mut result = CallToolResult::text(text.into_owned());
            result.structured_content = structured;
            if op.output && result.structured_content.is_none() {
                return CallToolResult::error_text(format!(
                    "{what} answered HTTP {status} with JSON that is not an object, though its \
                     OpenAPI document promises one"
                ));
            }
            result
        }
        None if op.output => CallToolResult::error_text(format!(
            "{what} answered HTTP {status} without the JSON its OpenAPI document promises{}",
            if text.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", excerpt(text.trim()))
            }
        )),
        None if text.is_empty() => CallToolResult::text(format!("HTTP {status}")),
        None => CallToolResult::text(text.into_owned()),
    }
}

fn is_json(response: &Response<Bytes>) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| {
            let t = t.to_ascii_lowercase();
            t.starts_with("application/json") || t.contains("+json")
        })
}

/// The first [`MAX_EXCERPT`] bytes of `text`, at a character boundary.
fn excerpt(text: &str) -> &str {
    let mut end = text.len().min(MAX_EXCERPT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::super::operation::Param;
    use super::*;
    use serde_json::json;

    fn op() -> Operation {
        let param = |arg: &str, name: &str, location, explode| Param {
            arg: arg.into(),
            name: name.into(),
            location,
            explode,
            json: false,
        };
        Operation {
            method: http::Method::POST,
            path: "/pets/{pet id}/toys".into(),
            params: vec![
                param("pet id", "pet id", Location::Path, false),
                param("tags", "tags", Location::Query, true),
                param("q", "q", Location::Query, true),
                param("ids", "ids", Location::Query, false),
                param("trace", "X-Trace", Location::Header, false),
                param("session", "session", Location::Cookie, false),
            ],
            body: Some((
                Body::Spread(vec!["name".into(), "size".into()]),
                Encoding::Json,
            )),
            wrap: false,
            output: true,
        }
    }

    #[test]
    fn arguments_go_to_path_query_headers_cookies_and_body() {
        let args = json!({"pet id": "a/b c", "tags": ["x", "y z"], "q": "é&", "ids": [1, 2],
            "trace": "t-1", "session": "s;1", "name": "Rex"});
        let auth = [(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer k"),
        )];
        let req = build(&op(), "http://127.0.0.1:9/v1", &args, &auth).unwrap();
        assert_eq!(
            req.uri().to_string(),
            "http://127.0.0.1:9/v1/pets/a%2Fb%20c/toys?tags=x&tags=y%20z&q=%C3%A9%26&ids=1%2C2"
        );
        assert_eq!(req.headers()["x-trace"], "t-1");
        assert_eq!(req.headers()["cookie"], "session=s%3B1");
        assert_eq!(req.headers()["authorization"], "Bearer k");
        assert_eq!(req.headers()["content-type"], "application/json");
        assert_eq!(req.body().as_ref(), br#"{"name":"Rex"}"#);
        let e = build(&op(), "http://h", &json!({}), &[]).unwrap_err();
        assert!(e.contains("\"pet id\" is missing"), "{e}");
    }

    fn response(status: u16, content_type: &str, body: &str) -> Response<Bytes> {
        Response::builder()
            .status(status)
            .header(CONTENT_TYPE, content_type)
            .body(Bytes::from(body.to_owned()))
            .unwrap()
    }

    #[test]
    fn answers_become_results_and_errors_carry_status_and_body() {
        let ok = result(
            &op(),
            "POST /pets",
            &response(200, "application/json", r#"{"id":1}"#),
        );
        assert_eq!(ok.is_error, None);
        assert_eq!(ok.structured_content, Some(json!({"id": 1})));
        let mut wrapped = op();
        wrapped.wrap = true;
        let list = result(
            &wrapped,
            "GET /pets",
            &response(200, "application/json", "[1]"),
        );
        assert_eq!(list.structured_content, Some(json!({"result": [1]})));
        let missing = result(
            &op(),
            "GET /pets/7",
            &response(404, "application/json", r#"{"detail":"Pet 7 not found"}"#),
        );
        assert_eq!(missing.is_error, Some(true));
        let text = serde_json::to_string(&missing.content).unwrap();
        assert!(
            text.contains("HTTP 404 Not Found from GET /pets/7"),
            "{text}"
        );
        assert!(text.contains("Pet 7 not found"), "{text}");
        let long = "x".repeat(10_000);
        let big = result(&op(), "GET /", &response(500, "text/plain", &long));
        let text = serde_json::to_string(&big.content).unwrap();
        assert!(text.len() < 3_000 && text.contains("[…]"), "{}", text.len());
        let html = result(&op(), "GET /", &response(200, "text/html", "<p>hi</p>"));
        assert_eq!(html.is_error, Some(true), "an outputSchema promises JSON");
        let mut plain_op = op();
        plain_op.output = false;
        let html = result(&plain_op, "GET /", &response(200, "text/html", "<p>hi</p>"));
        assert_eq!(html.is_error, None);
        let none = result(
            &plain_op,
            "DELETE /pets/1",
            &response(204, "text/plain", ""),
        );
        let text = serde_json::to_string(&none.content).unwrap();
        assert!(text.contains("HTTP 204 No Content"), "{text}");
    }
}
