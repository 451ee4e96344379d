//! Content negotiation: the `Accept` list a client must send, the
//! `Content-Type` of its body, and the codings applied to it (toolwire
//! undoes `chunked` only).
//!
//! Spec: basic/transports/streamable-http.mdx#sending-messages — the client
//! MUST list both `application/json` and `text/event-stream` in `Accept`.

use super::found::Found;
use http::header::{ACCEPT, CONTENT_ENCODING, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, StatusCode};

/// Whether the `Accept` header(s) make both `application/json` and
/// `text/event-stream` acceptable.
///
/// The list is read as RFC 9110 §12.5.1 says: media types compare ignoring
/// ASCII case, the most specific matching range decides (`type/subtype`,
/// then `type/*`, then `*/*`), and a range with `q=0` refuses. So
/// `text/event-stream, application/json`, `*/*` and
/// `application/json;q=0.5, text/*` all qualify, while `application/json`
/// alone, `*/*, text/event-stream;q=0` and a missing header do not.
pub(super) fn accepts_json_and_sse(headers: &HeaderMap, found: Found<'_>) -> bool {
    // The usual value, byte for byte: both types at q=1 and the most
    // specific range possible, so no other value can change the outcome.
    match found {
        Found::Absent => return false,
        Found::Once(v) if USUAL_ACCEPT.contains(&v.as_bytes()) => return true,
        Found::Once(_) | Found::Repeated(_) => {}
    }
    let mut json = Best::default();
    let mut sse = Best::default();
    let mut any = false;
    for value in headers.get_all(ACCEPT) {
        let Ok(list) = value.to_str() else {
            continue;
        };
        for range in list.split(',') {
            let Some((ty, sub, q)) = parse_range(range) else {
                continue;
            };
            any = true;
            json.offer(ty, sub, q, "application", "json");
            sse.offer(ty, sub, q, "text", "event-stream");
        }
    }
    any && json.acceptable() && sse.acceptable()
}

/// `Accept` values that qualify without parsing.
const USUAL_ACCEPT: [&[u8]; 2] = [
    b"application/json, text/event-stream",
    b"text/event-stream, application/json",
];

/// The most specific media range matching one media type seen so far.
#[derive(Default)]
struct Best {
    /// `(specificity, q)`: 0 for `*/*`, 1 for `type/*`, 2 for `type/subtype`.
    found: Option<(u8, f32)>,
}

impl Best {
    fn offer(&mut self, ty: &str, sub: &str, q: f32, want_ty: &str, want_sub: &str) {
        let specificity = match (ty, sub) {
            ("*", "*") => 0,
            (t, "*") if t.eq_ignore_ascii_case(want_ty) => 1,
            (t, s) if t.eq_ignore_ascii_case(want_ty) && s.eq_ignore_ascii_case(want_sub) => 2,
            _ => return,
        };
        self.found = match self.found {
            Some((s, old)) if s > specificity => Some((s, old)),
            Some((s, old)) if s == specificity => Some((s, old.max(q))),
            _ => Some((specificity, q)),
        };
    }

    fn acceptable(&self) -> bool {
        self.found.is_some_and(|(_, q)| q > 0.0)
    }
}

/// Splits `type/subtype;param=value;q=0.5` into type, subtype and q.
fn parse_range(range: &str) -> Option<(&str, &str, f32)> {
    let mut parts = range.split(';');
    let media = parts.next()?.trim();
    let (ty, sub) = media.split_once('/')?;
    let (ty, sub) = (ty.trim(), sub.trim());
    if ty.is_empty() || sub.is_empty() || (ty == "*" && sub != "*") {
        return None;
    }
    let mut q = 1.0_f32;
    for param in parts {
        if let Some((name, value)) = param.split_once('=')
            && name.trim().eq_ignore_ascii_case("q")
        {
            // RFC 9110 §12.4.2: a qvalue is 0 to 1; anything unreadable
            // counts as a refusal rather than a preference.
            q = value
                .trim()
                .parse::<f32>()
                .ok()
                .filter(|q| (0.0..=1.0).contains(q))
                .unwrap_or(0.0);
        }
    }
    Some((ty, sub, q))
}

/// Whether the body is declared as `application/json` (parameters such as
/// `charset` are allowed).
pub(super) fn is_json_content_type(found: Found<'_>) -> bool {
    let Some(value) = found.once() else {
        return false;
    };
    if value.as_bytes() == b"application/json" {
        return true;
    }
    let Ok(value) = value.to_str() else {
        return false;
    };
    let media = value.split(';').next().unwrap_or_default().trim();
    media.eq_ignore_ascii_case("application/json")
}

/// Checks the transfer codings of the body: only `chunked`, once, is
/// served. hyper itself answers `400` to a request whose last coding is not
/// `chunked` (RFC 9112 §6.3: its length cannot be known) and decodes
/// `chunked`; what reaches the service with another coding before it
/// (`gzip, chunked`) would otherwise be read as if it were not coded.
///
/// Spec: RFC 9112 §6.1 — a server that receives a transfer coding it does
/// not understand SHOULD answer `501 Not Implemented`; `chunked` applied
/// twice breaks the rule that a sender MUST NOT do so: `400`.
pub(super) fn check_transfer_coding(
    headers: &HeaderMap,
    found: Found<'_>,
) -> Result<(), StatusCode> {
    match found {
        Found::Absent => return Ok(()),
        Found::Once(v) if v.as_bytes() == b"chunked" => return Ok(()),
        Found::Once(_) | Found::Repeated(_) => {}
    }
    let mut chunked = 0_usize;
    for coding in codings(headers, TRANSFER_ENCODING) {
        if !coding.eq_ignore_ascii_case("chunked") {
            return Err(StatusCode::NOT_IMPLEMENTED);
        }
        chunked += 1;
    }
    if chunked == 1 {
        Ok(())
    } else {
        Err(StatusCode::BAD_REQUEST)
    }
}

/// Whether the body has no content coding (or only `identity`): toolwire
/// decodes none, so a compressed body is refused rather than parsed as
/// JSON.
///
/// Spec: RFC 9110 §8.4 — a server MAY answer `415` to a content coding it
/// does not accept (and §15.5.16: say which it accepts in
/// `Accept-Encoding`).
pub(super) fn is_identity_coded(headers: &HeaderMap, found: Found<'_>) -> bool {
    found.is_absent()
        || codings(headers, CONTENT_ENCODING).all(|c| c.eq_ignore_ascii_case("identity"))
}

/// The coding names of a list header, their parameters (`;…`) left off.
/// Empty elements are skipped (RFC 9110 §5.6.1); an unreadable value is
/// `?`, which names no coding.
fn codings(headers: &HeaderMap, name: HeaderName) -> impl Iterator<Item = &str> {
    headers.get_all(name).into_iter().flat_map(|value| {
        value
            .to_str()
            .unwrap_or("?")
            .split(',')
            .map(|c| c.split(';').next().unwrap_or_default().trim())
            .filter(|c| !c.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::super::found::HeadHeaders;
    use super::*;
    use http::HeaderValue;
    use http::header::CONTENT_TYPE;

    // Every check reads what the one walk found, as the service does.
    fn accept(values: &[&str]) -> bool {
        let headers = with(ACCEPT, values);
        accepts_json_and_sse(&headers, HeadHeaders::find(&headers).accept)
    }

    fn content_type(values: &[&str]) -> bool {
        let headers = with(CONTENT_TYPE, values);
        is_json_content_type(HeadHeaders::find(&headers).content_type)
    }

    fn te(values: &[&str]) -> Result<(), StatusCode> {
        let headers = with(TRANSFER_ENCODING, values);
        check_transfer_coding(&headers, HeadHeaders::find(&headers).transfer_encoding)
    }

    fn identity(headers: &HeaderMap) -> bool {
        is_identity_coded(headers, HeadHeaders::find(headers).content_encoding)
    }

    #[test]
    fn both_types_in_either_order_are_accepted() {
        assert!(accept(&["application/json, text/event-stream"]));
        assert!(accept(&["text/event-stream, application/json"]));
        assert!(accept(&["text/event-stream,application/json"]));
        assert!(accept(&["application/json", "text/event-stream"]));
    }

    #[test]
    fn media_types_ignore_case_and_parameters() {
        assert!(accept(&[
            "Application/JSON; charset=utf-8, TEXT/Event-Stream"
        ]));
        assert!(accept(&["application/json;q=0.9, text/event-stream;q=0.1"]));
    }

    #[test]
    fn one_type_alone_is_not_enough() {
        assert!(!accept(&["application/json"]));
        assert!(!accept(&["text/event-stream"]));
        assert!(!accept(&["text/html, application/xml"]));
        assert!(!accept(&[]));
        assert!(!accept(&[""]));
    }

    #[test]
    fn q_zero_refuses_a_type() {
        assert!(!accept(&["application/json, text/event-stream;q=0"]));
        assert!(!accept(&["application/json;q=0.000, text/event-stream"]));
        assert!(!accept(&["*/*, text/event-stream; Q=0"]));
        assert!(!accept(&["application/json, text/event-stream;q=banana"]));
    }

    #[test]
    fn wildcards_cover_the_types_they_name() {
        assert!(accept(&["*/*"]));
        assert!(accept(&["application/json, text/*"]));
        assert!(accept(&["application/*, text/event-stream"]));
        assert!(!accept(&["application/*"]));
        // The specific range wins over the wildcard.
        assert!(!accept(&[
            "text/*, text/event-stream;q=0, application/json"
        ]));
        assert!(accept(&["text/*;q=0, text/event-stream, application/json"]));
    }

    #[test]
    fn malformed_ranges_are_skipped() {
        assert!(!accept(&["json, event-stream"]));
        assert!(!accept(&["*/json, text/event-stream"]));
        assert!(accept(&[
            "garbage, application/json, ;;, text/event-stream"
        ]));
    }

    fn with(name: HeaderName, values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(&name, HeaderValue::from_str(v).expect("header value"));
        }
        headers
    }

    #[test]
    fn only_chunked_once_is_a_served_transfer_coding() {
        assert_eq!(te(&[]), Ok(()));
        assert_eq!(te(&["chunked"]), Ok(()));
        assert_eq!(te(&["Chunked"]), Ok(()));
        assert_eq!(te(&[" chunked , "]), Ok(()));
        assert_eq!(te(&["gzip, chunked"]), Err(StatusCode::NOT_IMPLEMENTED));
        assert_eq!(te(&["gzip", "chunked"]), Err(StatusCode::NOT_IMPLEMENTED));
        assert_eq!(
            te(&["x-custom;a=1, chunked"]),
            Err(StatusCode::NOT_IMPLEMENTED)
        );
        assert_eq!(te(&["chunked, chunked"]), Err(StatusCode::BAD_REQUEST));
        assert_eq!(te(&["chunked", "chunked"]), Err(StatusCode::BAD_REQUEST));
        assert_eq!(te(&[""]), Err(StatusCode::BAD_REQUEST));
    }

    #[test]
    fn only_identity_is_a_served_content_coding() {
        let ce = |values: &[&str]| identity(&with(CONTENT_ENCODING, values));
        assert!(ce(&[]));
        assert!(ce(&["identity"]));
        assert!(ce(&["IDENTITY, identity"]));
        assert!(ce(&[""]));
        for coded in ["gzip", "br", "deflate", "identity, gzip", "x-gzip", "zstd"] {
            assert!(!ce(&[coded]), "{coded}");
        }
        let mut obs = HeaderMap::new();
        obs.insert(
            CONTENT_ENCODING,
            HeaderValue::from_bytes(b"\xffgzip").expect("obs-text value"),
        );
        assert!(!ce(&["identity", "gzip"]));
        assert!(!identity(&obs));
    }

    #[test]
    fn content_type_must_be_json() {
        assert!(content_type(&["application/json"]));
        assert!(content_type(&["application/json; charset=utf-8"]));
        assert!(content_type(&["APPLICATION/JSON"]));
        assert!(!content_type(&[]));
        assert!(!content_type(&["text/plain"]));
        assert!(!content_type(&["application/json-patch+json"]));
        assert!(!content_type(&["application/json", "text/plain"]));
    }
}
