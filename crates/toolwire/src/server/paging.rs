//! List pagination: opaque cursors and pages serialised once per registry
//! snapshot.

use super::dispatch::Reply;
use crate::registry::{Named, Snapshot};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::value::RawValue;
use toolwire_proto::{ErrorObject, RequestId};

pub(crate) fn to_raw(value: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| {
        RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!("valid JSON"))
    })
}

pub(crate) const CURSOR_PREFIX: &str = "tw1:";

pub(crate) fn encode_cursor(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{offset}"))
}

/// The page a cursor points at, if it is one of ours and lands on a page boundary.
fn decode_cursor(cursor: &str, page_size: usize) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let offset: usize = text.strip_prefix(CURSOR_PREFIX)?.parse().ok()?;
    offset
        .is_multiple_of(page_size)
        .then_some(offset / page_size)
}

/// Answers a list request from `snapshot`'s cached pages, building them on
/// first use with `build(items_of_page, next_cursor)`.
pub(crate) fn list_page<T: Named>(
    id: &RequestId,
    snapshot: &Snapshot<T>,
    page_size: usize,
    cursor: Option<&str>,
    build: impl Fn(&[T], Option<String>) -> Box<RawValue>,
) -> Reply {
    let pages = snapshot.pages.get_or_init(|| {
        let items = snapshot.items();
        let count = items.len().div_ceil(page_size).max(1);
        (0..count)
            .map(|page| {
                let start = page * page_size;
                let end = (start + page_size).min(items.len());
                build(
                    &items[start..end],
                    (end < items.len()).then(|| encode_cursor(end)),
                )
            })
            .collect()
    });
    let page = match cursor {
        None => 0,
        Some(cursor) => match decode_cursor(cursor, page_size) {
            Some(page) if page < pages.len() => page,
            _ => {
                return Reply::error(
                    Some(id),
                    &ErrorObject::invalid_params(format!("invalid cursor {cursor:?}")),
                );
            }
        },
    };
    Reply::raw_result(id, &pages[page])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_round_trips_and_rejects_garbage() {
        let c = encode_cursor(20);
        assert_eq!(decode_cursor(&c, 10), Some(2));
        assert_eq!(decode_cursor(&c, 7), None);
        assert_eq!(decode_cursor("nope", 10), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("tw1:-1"), 10), None);
    }
}
