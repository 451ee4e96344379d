//! List pagination: opaque cursors and pages serialised once per registry
//! snapshot.

use super::Server;
use super::accept::Prepared;
use super::outcome::{Outcome, Reply};
use super::shape::Shape;
use crate::registry::Snapshot;
use crate::tool::order::InOrder;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::cell::OnceCell;
use toolwire_proto::ErrorObject;
use toolwire_proto::meta::LIST_FINGERPRINT_KEY;
use toolwire_proto::types::CacheScope;

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

/// Answers a list request from `snapshot`, with `build(items_of_page,
/// next_cursor)` making a page's result. Modern pages are serialised on
/// first use and kept with the snapshot; a legacy request (rare) gets its
/// page built and shaped for its revision.
pub(crate) fn list_page<T: Listed + Defined + Ordered, R: serde::Serialize>(
    server: &Server,
    p: &Prepared,
    snapshot: &Snapshot<T>,
    cursor: Option<&str>,
    build: impl Fn(&[T], Option<String>, CacheScope, Map<String, Value>) -> R,
) -> Outcome {
    let c = &server.inner.config;
    // A list the server knows is incomplete fails for every caller,
    // whatever its grant.
    if let Some(e) = server.list_failure() {
        return Outcome::error(e);
    }
    // With the resource server on, a caller whose grant narrows the list
    // gets pages built for it alone, never kept, and private.
    #[cfg(feature = "auth")]
    if let Some(visible) = super::authz::visible(p, snapshot) {
        let fingerprint = OnceCell::new();
        return list_items(server, p, &visible, None, c.page_size, cursor, |i, n| {
            build(
                i,
                n,
                CacheScope::Private,
                page_meta(server, &visible, &fingerprint),
            )
        });
    }
    let items = snapshot.items();
    // Pages are built once per snapshot (modern) or per request (legacy);
    // the fingerprint, when asked for, once per build of all pages.
    let fingerprint = OnceCell::new();
    list_items(
        server,
        p,
        items,
        Some(&snapshot.pages),
        c.page_size,
        cursor,
        |i, n| {
            build(
                i,
                n,
                server.cache_scope(),
                page_meta(server, items, &fingerprint),
            )
        },
    )
}

/// A list page's `_meta`: `serverInfo`, and the whole list's fingerprint
/// when the server sends one.
fn page_meta<T: Defined>(
    server: &Server,
    items: &[T],
    fingerprint: &OnceCell<String>,
) -> Map<String, Value> {
    let mut meta = server.result_meta();
    if server.inner.config.list_fingerprints {
        let f = fingerprint.get_or_init(|| list_fingerprint(items));
        meta.insert(LIST_FINGERPRINT_KEY.to_owned(), Value::String(f.clone()));
    }
    meta
}

/// The fingerprint of a list of entries: the lowercase hex SHA-256 of
/// each entry's definition as JSON, in order, each followed by a newline.
/// It is what a list result carries in `_meta` under
/// [`LIST_FINGERPRINT_KEY`] when
/// [`ServerConfig::with_list_fingerprints`](crate::ServerConfig::with_list_fingerprints)
/// is on, so a list built elsewhere (a gateway's merge, say) can be
/// compared with one served.
pub fn list_fingerprint<T: Defined>(items: &[T]) -> String {
    use sha2::Digest as _;
    let mut hash = sha2::Sha256::new();
    let mut buf = Vec::new();
    for item in items {
        buf.clear();
        item.write_definition(&mut buf);
        buf.push(b'\n');
        hash.update(&buf);
    }
    hash.finalize()
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            use std::fmt::Write as _;
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// An entry of a list ([`Tool`](crate::Tool), [`Prompt`](crate::Prompt),
/// [`Resource`](crate::Resource), [`ResourceTemplate`](crate::ResourceTemplate)),
/// whose definition goes into the list's [`list_fingerprint`].
pub trait Defined: sealed::Sealed {
    /// Appends the definition, as the list shows it, in JSON.
    fn write_definition(&self, out: &mut Vec<u8>);
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! defined {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Defined for $t {
            fn write_definition(&self, out: &mut Vec<u8>) {
                // A definition is plain data: it always serialises.
                let _ = serde_json::to_writer(out, self.definition());
            }
        }
    )*};
}
defined!(
    crate::tool::Tool,
    crate::prompt::Prompt,
    crate::resource::Resource,
    crate::resource::ResourceTemplate
);

/// An entry whose definition has properties to show in an order of their
/// own: a tool's input, in declaration order (see `tool/order.rs`).
pub(crate) trait Ordered {
    fn property_order(&self) -> Option<&[Box<str>]> {
        None
    }
}

impl Ordered for crate::tool::Tool {
    fn property_order(&self) -> Option<&[Box<str>]> {
        self.inner.property_order.as_deref()
    }
}
impl Ordered for crate::prompt::Prompt {}
impl Ordered for crate::resource::Resource {}
impl Ordered for crate::resource::ResourceTemplate {}

/// What a list holds: named entries, which the resource server (feature
/// `auth`) may also filter by scope.
#[cfg(feature = "auth")]
pub(crate) trait Listed: super::authz::Scoped {}
#[cfg(feature = "auth")]
impl<T: super::authz::Scoped> Listed for T {}
/// What a list holds: named entries.
#[cfg(not(feature = "auth"))]
pub(crate) trait Listed: crate::registry::Named {}
#[cfg(not(feature = "auth"))]
impl<T: crate::registry::Named> Listed for T {}

type Pages = std::sync::OnceLock<Vec<Box<RawValue>>>;

fn list_items<T: Ordered, R: serde::Serialize>(
    server: &Server,
    p: &Prepared,
    items: &[T],
    pages: Option<&Pages>,
    page_size: usize,
    cursor: Option<&str>,
    build: impl Fn(&[T], Option<String>) -> R,
) -> Outcome {
    // A page size of 0 is refused when the configuration is set; guard the
    // division anyway, since no value may make a request panic.
    let page_size = page_size.max(1);
    let count = items.len().div_ceil(page_size).max(1);
    let page = match cursor {
        None => 0,
        Some(cursor) => match decode_cursor(cursor, page_size) {
            Some(page) if page < count => page,
            _ => {
                return Outcome::error(ErrorObject::invalid_params(format!(
                    "invalid cursor {cursor:?}"
                )));
            }
        },
    };
    let bounds = |page: usize| {
        let start = page * page_size;
        (start, (start + page_size).min(items.len()))
    };
    let page_of = |page: usize| {
        let (start, end) = bounds(page);
        build(
            &items[start..end],
            (end < items.len()).then(|| encode_cursor(end)),
        )
    };
    // The properties of a page's tools, in their declared order, where
    // that is not the sorted order the definitions hold.
    // (Nothing is allocated for a page without one: the usual case, and
    // the one a legacy or narrowed list meets on every request.)
    let orders = |page: usize| {
        let (start, end) = bounds(page);
        let items = &items[start..end];
        items
            .iter()
            .any(|t| t.property_order().is_some())
            .then(|| items.iter().map(T::property_order).collect::<Vec<_>>())
    };
    match (p.era.shape(), pages) {
        (Shape::Modern, Some(pages)) => {
            let pages = pages.get_or_init(|| {
                (0..count)
                    .map(|page| match orders(page) {
                        Some(orders) => to_raw(&InOrder {
                            page: &serde_json::to_value(page_of(page)).unwrap_or_default(),
                            orders: &orders,
                        }),
                        None => to_raw(&page_of(page)),
                    })
                    .collect()
            });
            Outcome::Complete(Reply::raw_result(&p.id, &pages[page]).into_body())
        }
        (shape, _) => match orders(page) {
            Some(orders) => {
                let value = serde_json::to_value(page_of(page)).unwrap_or_default();
                let page = InOrder {
                    page: &shape.result(value),
                    orders: &orders,
                };
                Outcome::Complete(Reply::result(&p.id, &page).into_body())
            }
            None => server.respond(shape, &p.id, &page_of(page)),
        },
    }
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
