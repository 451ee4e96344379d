//! The request headers the checks read, found in one walk over the header
//! map. A lookup hashes its name and probes the map; the head checks read
//! eight headers, and one pass over the few a request has costs less than
//! eight lookups. A header found more than once is marked so, and the
//! checks that accept repeats (an `Accept` list split over lines) read
//! the map itself then.

use super::names;
use http::header::{ACCEPT, CONTENT_ENCODING, CONTENT_TYPE, HOST, ORIGIN, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderValue};

/// How often a header appears, and its value when once (its first value
/// when more often).
#[derive(Clone, Copy, Debug, Default)]
pub(super) enum Found<'h> {
    #[default]
    Absent,
    Once(&'h HeaderValue),
    Repeated(&'h HeaderValue),
}

impl<'h> Found<'h> {
    pub(super) fn add(&mut self, value: &'h HeaderValue) {
        *self = match *self {
            Self::Absent => Self::Once(value),
            Self::Once(first) | Self::Repeated(first) => Self::Repeated(first),
        };
    }

    /// The value when the header appears exactly once.
    pub(super) fn once(self) -> Option<&'h HeaderValue> {
        match self {
            Self::Once(v) => Some(v),
            Self::Absent | Self::Repeated(_) => None,
        }
    }

    /// The first value, as `HeaderMap::get` reads it.
    pub(super) fn first(self) -> Option<&'h HeaderValue> {
        match self {
            Self::Once(v) | Self::Repeated(v) => Some(v),
            Self::Absent => None,
        }
    }

    pub(super) fn is_absent(self) -> bool {
        matches!(self, Self::Absent)
    }
}

/// The headers the head checks read (`head.rs`): the allow-lists',
/// content negotiation's, and the era-deciding ones.
#[derive(Debug, Default)]
pub(super) struct HeadHeaders<'h> {
    pub(super) host: Found<'h>,
    pub(super) origin: Found<'h>,
    pub(super) accept: Found<'h>,
    pub(super) content_type: Found<'h>,
    pub(super) transfer_encoding: Found<'h>,
    pub(super) content_encoding: Found<'h>,
    pub(super) session_id: Found<'h>,
    pub(super) version: Found<'h>,
}

impl<'h> HeadHeaders<'h> {
    pub(super) fn find(headers: &'h HeaderMap) -> Self {
        let mut found = Self::default();
        for (key, value) in headers {
            // A standard name compares as a small tag, and never equals a
            // custom one; custom names compare as text.
            let slot = if key == HOST {
                &mut found.host
            } else if key == CONTENT_TYPE {
                &mut found.content_type
            } else if key == ACCEPT {
                &mut found.accept
            } else if key == ORIGIN {
                &mut found.origin
            } else if key == TRANSFER_ENCODING {
                &mut found.transfer_encoding
            } else if key == CONTENT_ENCODING {
                &mut found.content_encoding
            } else if key == names::PROTOCOL_VERSION {
                &mut found.version
            } else if key == names::SESSION_ID {
                &mut found.session_id
            } else {
                continue;
            };
            slot.add(value);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_header_is_found_once_repeated_or_absent() {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_static("localhost"));
        headers.append(ACCEPT, HeaderValue::from_static("application/json"));
        headers.append(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.append(ACCEPT, HeaderValue::from_static("*/*"));
        headers.insert(
            names::PROTOCOL_VERSION,
            HeaderValue::from_static("2026-07-28"),
        );
        headers.insert("x-other", HeaderValue::from_static("ignored"));
        let found = HeadHeaders::find(&headers);
        assert_eq!(
            found.host.once().map(HeaderValue::as_bytes),
            Some(&b"localhost"[..])
        );
        assert!(matches!(found.accept, Found::Repeated(_)));
        assert!(found.accept.once().is_none());
        assert_eq!(
            found.accept.first().map(HeaderValue::as_bytes),
            Some(&b"application/json"[..])
        );
        assert_eq!(
            found.version.once().map(HeaderValue::as_bytes),
            Some(&b"2026-07-28"[..])
        );
        for absent in [
            found.origin,
            found.content_type,
            found.transfer_encoding,
            found.content_encoding,
            found.session_id,
        ] {
            assert!(absent.is_absent());
        }
    }
}
