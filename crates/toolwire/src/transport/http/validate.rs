//! Server validation of the request-metadata headers against the parsed
//! body: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and every
//! `Mcp-Param-{Name}` of the called tool. Every failure is `-32020`
//! (HeaderMismatch), sent with `400 Bad Request`.
//!
//! Spec: basic/transports/streamable-http.mdx#server-validation

use super::found::Found;
use super::names;
use crate::server::{Prepared, Server};
use http::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use std::borrow::Cow;
use toolwire_proto::ErrorObject;
use toolwire_proto::header::{
    HeaderParam, HeaderValueError, METHOD_HEADER as METHOD, NAME_HEADER as NAME,
    PROTOCOL_VERSION_HEADER as PROTOCOL_VERSION, decode_header_value, header_matches_value,
    lookup_path,
};
use toolwire_proto::types::Method;

/// Checks the headers in the order the conformance suite probes them:
/// protocol version, method, name, then tool parameters.
pub(crate) fn check_metadata_headers(
    headers: &HeaderMap,
    p: &Prepared,
    server: &Server,
) -> Result<(), ErrorObject> {
    // Spec: basic/transports/streamable-http.mdx#protocol-version-header —
    // this revision does not serve pre-2025-06-18 clients, so a missing
    // header is a validation failure.
    let found = Metadata::find(headers);
    if !is_verbatim(found.version, p.protocol_version()) {
        let version = required_plain(found.version, PROTOCOL_VERSION)?;
        compare(PROTOCOL_VERSION, version, p.protocol_version())?;
    }

    // Spec: basic/transports/streamable-http.mdx#standard-request-headers
    if !is_verbatim(found.method, p.method.as_str()) {
        let method = required_plain(found.method, METHOD)?;
        compare(METHOD, method, p.method.as_str())?;
    }

    let source = match p.method {
        Method::CallTool | Method::GetPrompt => Some(("params.name", &p.params.name)),
        Method::ReadResource => Some(("params.uri", &p.params.uri)),
        // Spec: extensions/tasks#streamable-http-routing-headers
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
            Some(("params.taskId", &p.params.task_id))
        }
        _ => None,
    };
    if let Some((field, body)) = source
        && !body
            .as_deref()
            .is_some_and(|b| is_verbatim(found.name, b) && !b.starts_with("=?base64?"))
    {
        let Some(raw) = only(found.name, NAME)? else {
            return Err(missing(NAME));
        };
        // Spec: basic/transports/streamable-http.mdx#value-encoding — decode
        // the Base64 sentinel before comparing. `to_str` has checked the
        // characters already, so without a sentinel the value is the
        // trimmed text.
        let text = raw.to_str().map_err(|_| invalid_chars(NAME))?;
        let trimmed = text.trim_matches([' ', '\t']);
        let name: Cow<'_, str> = if trimmed.starts_with("=?base64?") {
            Cow::Owned(decode_header_value(text).map_err(|e| decode_error(NAME, &e))?)
        } else {
            Cow::Borrowed(trimmed)
        };
        match body {
            Some(body) => compare(NAME, &name, body)?,
            None => {
                return Err(mismatch(
                    NAME,
                    format!(
                        "Header mismatch: {NAME} header value '{name}' has no {field} to match in the body"
                    ),
                ));
            }
        }
    }

    if p.method == Method::CallTool
        && let Some(tool) = p.params.name.as_deref().and_then(|n| server.tool(n))
    {
        check_param_headers(headers, tool.header_params(), p.params.arguments.as_ref())?;
    }
    Ok(())
}

/// Checks the `Mcp-Param-{Name}` header of every `x-mcp-header` parameter.
///
/// Spec: basic/transports/streamable-http.mdx#server-behavior-for-custom-headers
/// — a value in the body requires the header; a `null` or absent value
/// requires none. A header sent anyway for an absent or `null` value does not
/// match the body, so it is rejected too.
fn check_param_headers(
    headers: &HeaderMap,
    params: &[HeaderParam],
    arguments: Option<&Value>,
) -> Result<(), ErrorObject> {
    for param in params {
        let display = param.header_name();
        let body = arguments
            .and_then(|args| lookup_path(args, &param.path))
            .filter(|v| !v.is_null());
        let Some(raw) = one(headers, display.as_str(), &display)? else {
            if body.is_some() {
                return Err(missing(&display));
            }
            continue;
        };
        let raw = raw.to_str().map_err(|_| invalid_chars(&display))?;
        let body = body.unwrap_or(&Value::Null);
        header_matches_value(raw, body, param.kind).map_err(|e| match e {
            HeaderValueError::UnexpectedHeader { header } => mismatch(
                &display,
                format!(
                    "Header mismatch: {display} header value '{header}' was sent but the body has no value at arguments.{}",
                    param.path.join(".")
                ),
            ),
            other => decode_error(&display, &other),
        })?;
    }
    Ok(())
}

/// The header's only value, `None` when absent, an error when repeated.
/// `key` is looked up; `name` is how errors spell it.
fn one<'h, K: http::header::AsHeaderName>(
    headers: &'h HeaderMap,
    key: K,
    name: &str,
) -> Result<Option<&'h HeaderValue>, ErrorObject> {
    let mut values = headers.get_all(key).iter();
    match (values.next(), values.next()) {
        (None, _) => Ok(None),
        (Some(v), None) => Ok(Some(v)),
        (Some(_), Some(_)) => Err(repeated(name)),
    }
}

fn repeated(name: &str) -> ErrorObject {
    mismatch(
        name,
        format!("Header mismatch: {name} header must appear once but appears more than once"),
    )
}

/// Whether a header appears once and is the body's value byte for byte,
/// all of it visible ASCII: then it has no characters to refuse, no spaces
/// to trim, and it matches, which is what the usual request sends. Anything
/// else takes the full check.
fn is_verbatim(found: Found<'_>, body: &str) -> bool {
    found.once().is_some_and(|v| {
        v.as_bytes() == body.as_bytes() && body.bytes().all(|b| b.is_ascii_graphic())
    })
}

/// As [`one`] answers, for a header found in a walk.
fn only<'h>(found: Found<'h>, name: &str) -> Result<Option<&'h HeaderValue>, ErrorObject> {
    match found {
        Found::Absent => Ok(None),
        Found::Once(v) => Ok(Some(v)),
        Found::Repeated(_) => Err(repeated(name)),
    }
}

/// The request-metadata headers every request has, found in one walk over
/// the headers: a lookup of a custom header name hashes it, and three of
/// them cost more than the walk.
#[derive(Default)]
struct Metadata<'h> {
    version: Found<'h>,
    method: Found<'h>,
    name: Found<'h>,
}

impl<'h> Metadata<'h> {
    fn find(headers: &'h HeaderMap) -> Self {
        let mut found = Self::default();
        for (key, value) in headers {
            // `HeaderName`s compare without spelling out a standard name.
            let slot = if *key == names::PROTOCOL_VERSION {
                &mut found.version
            } else if *key == names::METHOD {
                &mut found.method
            } else if *key == names::NAME {
                &mut found.name
            } else {
                continue;
            };
            slot.add(value);
        }
        found
    }
}

/// A required header that takes no Base64 sentinel, with surrounding
/// spaces and tabs removed.
fn required_plain<'h>(found: Found<'h>, name: &str) -> Result<&'h str, ErrorObject> {
    let Some(value) = only(found, name)? else {
        return Err(missing(name));
    };
    // Spec: basic/transports/streamable-http.mdx#server-validation — only
    // visible ASCII, space and tab are valid, which is what `to_str` accepts.
    let text = value.to_str().map_err(|_| invalid_chars(name))?;
    Ok(text.trim_matches([' ', '\t']))
}

/// Header values are case-sensitive.
///
/// Spec: basic/transports/streamable-http.mdx#case-sensitivity
fn compare(name: &str, header: &str, body: &str) -> Result<(), ErrorObject> {
    if header == body {
        Ok(())
    } else {
        Err(mismatch(
            name,
            format!(
                "Header mismatch: {name} header value '{header}' does not match body value '{body}'"
            ),
        ))
    }
}

fn mismatch(name: &str, message: String) -> ErrorObject {
    ErrorObject::header_mismatch(message).with_data(json!({ "header": name }))
}

fn missing(name: &str) -> ErrorObject {
    mismatch(
        name,
        format!("Header mismatch: required header {name} is missing"),
    )
}

fn invalid_chars(name: &str) -> ErrorObject {
    mismatch(
        name,
        format!(
            "Header mismatch: {name} header value contains characters that are not allowed in a header value"
        ),
    )
}

fn decode_error(name: &str, e: &HeaderValueError) -> ErrorObject {
    mismatch(name, format!("Header mismatch: {name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_lone_visible_ascii_copy_of_the_body_skips_the_full_check() {
        let value = |s: &'static str| HeaderValue::from_static(s);
        let (plain, padded, spaced) = (value("tools/call"), value(" tools/call"), value("a b"));
        assert!(is_verbatim(Found::Once(&plain), "tools/call"));
        assert!(!is_verbatim(Found::Once(&plain), "tools/list"));
        // Spaces are trimmed (or kept inside) by the full check, which
        // decides then.
        assert!(!is_verbatim(Found::Once(&padded), " tools/call"));
        assert!(!is_verbatim(Found::Once(&spaced), "a b"));
        assert!(!is_verbatim(Found::Repeated(&plain), "tools/call"));
        assert!(!is_verbatim(Found::Absent, "tools/call"));
        let obs = HeaderValue::from_bytes("café".as_bytes()).expect("obs-text");
        assert!(!is_verbatim(Found::Once(&obs), "café"));
        // The full check refuses what the shortcut does not take.
        assert!(required_plain(Found::Repeated(&plain), METHOD).is_err());
        assert!(required_plain(Found::Once(&obs), METHOD).is_err());
        assert_eq!(
            required_plain(Found::Once(&padded), METHOD).ok(),
            Some("tools/call")
        );
    }
}
