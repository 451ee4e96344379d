//! The cache of cacheable results (`server/discover`, the four lists and
//! `resources/read`).
//!
//! An entry is keyed by method, the parameters that shape the result
//! (everything but `_meta`), and its partition: `public` entries are shared,
//! `private` ones belong to the credentials they were fetched with. An entry
//! is fresh for `ttlMs` after it was received, until a change notification
//! invalidates it. Stale entries stay for a while ([`STALE_KEEP`]), so that
//! a refetch that fails to reach the server can fall back on them; then
//! they are evicted, and the cache never holds more than [`MAX_ENTRIES`].
//!
//! Spec: server/utilities/caching.mdx

use super::method::MethodInfo;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// How long an entry is kept after it went stale, as a fallback.
pub(crate) const STALE_KEEP: Duration = Duration::from_secs(600);
/// The most entries kept; past it the stalest go first.
pub(crate) const MAX_ENTRIES: usize = 4096;

/// Who may reuse an entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Partition {
    Public,
    /// For the given credentials (`None`: no credentials).
    Private(Option<Arc<str>>),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    method: MethodInfo,
    params: String,
    partition: Partition,
}

#[derive(Debug)]
struct Entry {
    value: Value,
    expires: Instant,
    invalidated: bool,
    /// `resources/read`'s URI, for `notifications/resources/updated`.
    uri: Option<String>,
}

/// What a lookup found.
#[derive(Debug)]
pub(crate) enum Hit {
    Fresh(Value),
    Stale(Value),
}

/// Which cached results a change notification makes stale.
#[derive(Debug, Clone)]
pub(crate) enum Invalidation {
    Method(MethodInfo),
    Resource(String),
}

#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: Mutex<HashMap<Key, Entry>>,
}

/// Evicts entries stale for longer than [`STALE_KEEP`], then the stalest
/// ones while there are [`MAX_ENTRIES`] or more.
fn evict(entries: &mut HashMap<Key, Entry>, now: Instant) {
    entries.retain(|_, e| now.saturating_duration_since(e.expires) < STALE_KEEP);
    if entries.len() >= MAX_ENTRIES {
        let mut by_expiry: Vec<(Instant, Key)> = entries
            .iter()
            .map(|(k, e)| (e.expires, k.clone()))
            .collect();
        by_expiry.sort_by_key(|(t, _)| *t);
        let excess = entries.len() + 1 - MAX_ENTRIES;
        for (_, key) in by_expiry.into_iter().take(excess) {
            entries.remove(&key);
        }
    }
}

/// The part of a request's params that identifies its result: all but
/// `_meta`, serialised with sorted keys.
fn params_key(params: &Map<String, Value>) -> String {
    let mut sorted: Vec<(&String, &Value)> = params
        .iter()
        .filter(|(k, _)| k.as_str() != "_meta")
        .collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let obj: Map<String, Value> = sorted
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Object(obj).to_string()
}

/// `ttlMs` of a result: absent, negative or not an integer counts as `0`.
// Spec: server/utilities/caching.mdx#time-to-live-ttl-field
fn ttl(result: &Value) -> Duration {
    Duration::from_millis(result.get("ttlMs").and_then(Value::as_u64).unwrap_or(0))
}

/// When an entry stored now with `ttl` goes stale. A `ttlMs` as large as
/// the wire allows (about 584 million years) would overflow `Instant`: such
/// an entry is kept as long as the server's own cap on time limits.
fn expiry(now: Instant, ttl: Duration) -> Instant {
    now.checked_add(ttl)
        .or_else(|| now.checked_add(crate::bounds::MAX_DURATION))
        .unwrap_or(now)
}

fn is_public(result: &Value) -> bool {
    result.get("cacheScope").and_then(Value::as_str) == Some("public")
}

impl Cache {
    pub(crate) fn get(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        credentials: Option<&Arc<str>>,
    ) -> Option<Hit> {
        let entries = self.entries.lock().ok()?;
        let params = params_key(params);
        let now = Instant::now();
        let mut stale = None;
        for partition in [Partition::Private(credentials.cloned()), Partition::Public] {
            let key = Key {
                method,
                params: params.clone(),
                partition,
            };
            if let Some(e) = entries.get(&key) {
                if !e.invalidated && now < e.expires {
                    return Some(Hit::Fresh(e.value.clone()));
                }
                stale.get_or_insert_with(|| e.value.clone());
            }
        }
        stale.map(Hit::Stale)
    }

    /// Stores a result received just now. A `ttlMs` of 0 is still stored:
    /// it is never fresh, but it can stand in if a refetch fails.
    pub(crate) fn put(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        credentials: Option<&Arc<str>>,
        value: &Value,
    ) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let partition = if is_public(value) {
            Partition::Public
        } else {
            Partition::Private(credentials.cloned())
        };
        let now = Instant::now();
        evict(&mut entries, now);
        let params_text = params_key(params);
        // A result changes scope only with the server's mind; drop the
        // other partition's copy so the two never disagree.
        let other = match &partition {
            Partition::Public => Partition::Private(credentials.cloned()),
            Partition::Private(_) => Partition::Public,
        };
        entries.remove(&Key {
            method,
            params: params_text.clone(),
            partition: other,
        });
        entries.insert(
            Key {
                method,
                params: params_text,
                partition,
            },
            Entry {
                value: value.clone(),
                expires: expiry(now, ttl(value)),
                invalidated: false,
                uri: params.get("uri").and_then(Value::as_str).map(str::to_owned),
            },
        );
    }

    /// Marks matching entries stale.
    pub(crate) fn invalidate(&self, what: &Invalidation) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        for (key, entry) in entries.iter_mut() {
            let hit = match what {
                Invalidation::Method(m) => key.method == *m,
                Invalidation::Resource(uri) => {
                    key.method.reads_resource && entry.uri.as_deref() == Some(uri)
                }
            };
            if hit {
                entry.invalidated = true;
                // Stale from now on: the fallback period starts.
                entry.expires = entry.expires.min(Instant::now());
            }
        }
    }

    /// Drops the entry a definite error answered, in every partition of
    /// these credentials.
    pub(crate) fn remove(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        credentials: Option<&Arc<str>>,
    ) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let params = params_key(params);
        for partition in [Partition::Private(credentials.cloned()), Partition::Public] {
            entries.remove(&Key {
                method,
                params: params.clone(),
                partition,
            });
        }
    }

    /// Drops every entry of `method` (all pages of a list).
    pub(crate) fn remove_method(&self, method: MethodInfo) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|k, _| k.method != method);
        }
    }

    /// How many entries are held (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.len())
    }

    /// Forgets everything.
    pub(crate) fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolwire_proto::types::{ListToolsRequest, ReadResourceRequest};

    const LIST: MethodInfo = MethodInfo::of::<ListToolsRequest>();
    const READ: MethodInfo = MethodInfo::of::<ReadResourceRequest>();

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    #[tokio::test]
    async fn the_largest_ttl_on_the_wire_is_kept_without_overflow() {
        let cache = Cache::default();
        let p = params(json!({}));
        cache.put(
            LIST,
            &p,
            None,
            &json!({"tools": [], "ttlMs": u64::MAX, "cacheScope": "public"}),
        );
        assert!(matches!(cache.get(LIST, &p, None), Some(Hit::Fresh(_))));
    }

    #[tokio::test(start_paused = true)]
    async fn entries_are_fresh_for_ttl_then_stale() {
        let cache = Cache::default();
        let p = params(json!({"cursor": "c1", "_meta": {"x": 1}}));
        cache.put(
            LIST,
            &p,
            None,
            &json!({"tools": [], "ttlMs": 1000, "cacheScope": "public"}),
        );
        // `_meta` does not take part in the key.
        let same = params(json!({"cursor": "c1"}));
        assert!(matches!(cache.get(LIST, &same, None), Some(Hit::Fresh(_))));
        assert!(cache.get(LIST, &params(json!({})), None).is_none());
        tokio::time::advance(Duration::from_millis(1001)).await;
        assert!(matches!(cache.get(LIST, &same, None), Some(Hit::Stale(_))));
    }

    #[tokio::test(start_paused = true)]
    async fn private_entries_are_partitioned_by_credentials() {
        let cache = Cache::default();
        let p = params(json!({"uri": "file:///a"}));
        let alice: Arc<str> = "alice".into();
        let bob: Arc<str> = "bob".into();
        cache.put(
            READ,
            &p,
            Some(&alice),
            &json!({"contents": [], "ttlMs": 60000, "cacheScope": "private"}),
        );
        assert!(matches!(
            cache.get(READ, &p, Some(&alice)),
            Some(Hit::Fresh(_))
        ));
        assert!(cache.get(READ, &p, Some(&bob)).is_none());
        assert!(cache.get(READ, &p, None).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn invalidation_makes_entries_stale() {
        let cache = Cache::default();
        let read = params(json!({"uri": "file:///a"}));
        let other = params(json!({"uri": "file:///b"}));
        let fresh = json!({"ttlMs": 60000, "cacheScope": "public"});
        cache.put(READ, &read, None, &fresh);
        cache.put(READ, &other, None, &fresh);
        cache.put(LIST, &params(json!({})), None, &fresh);
        cache.invalidate(&Invalidation::Resource("file:///a".into()));
        assert!(matches!(cache.get(READ, &read, None), Some(Hit::Stale(_))));
        assert!(matches!(cache.get(READ, &other, None), Some(Hit::Fresh(_))));
        cache.invalidate(&Invalidation::Method(LIST));
        assert!(matches!(
            cache.get(LIST, &params(json!({})), None),
            Some(Hit::Stale(_))
        ));
    }

    #[test]
    fn missing_or_negative_ttl_is_zero() {
        assert_eq!(ttl(&json!({})), Duration::ZERO);
        assert_eq!(ttl(&json!({"ttlMs": -5})), Duration::ZERO);
        assert_eq!(ttl(&json!({"ttlMs": 1.5})), Duration::ZERO);
        assert_eq!(ttl(&json!({"ttlMs": 7})), Duration::from_millis(7));
    }
}
