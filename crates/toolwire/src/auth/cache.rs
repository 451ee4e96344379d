//! The verified-token cache: grants by bearer token, until the token's
//! `exp`, bounded in entries and in token length.
//!
//! A cached bearer token is the hot path of every authenticated request, so
//! a hit costs one short hash and one comparison: the table is keyed by the
//! whole token and compared whole (a hit can only be the very token that
//! was verified), and indexed by a hash of the token's length and its last
//! 16 bytes (a JWT's signature, an opaque token's random tail). Only
//! verified tokens enter the table, so a caller cannot fill it with tokens
//! chosen to share a bucket. Tokens longer than [`MAX_CACHED_TOKEN`] are
//! verified every time instead of being kept.

use super::scope::Grant;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// The longest token kept (bytes); real access tokens are well under it.
pub(crate) const MAX_CACHED_TOKEN: usize = 4096;

struct Cached {
    grant: Arc<Grant>,
    until: Instant,
}

/// Verified grants by token.
pub(crate) struct TokenCache {
    capacity: usize,
    map: Mutex<HashMap<Box<[u8]>, Cached, BuildHasherDefault<TailHasher>>>,
}

impl TokenCache {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            map: Mutex::new(HashMap::default()),
        }
    }

    /// The grant of `token`, while it lasts.
    pub(crate) fn get(&self, token: &[u8], now: Instant) -> Option<Arc<Grant>> {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.get(token)
            .filter(|c| c.until > now)
            .map(|c| Arc::clone(&c.grant))
    }

    /// Keeps `grant` for `token` until `until`. A full table drops its
    /// expired entries, then an arbitrary one.
    pub(crate) fn insert(&self, token: &str, grant: Arc<Grant>, until: Instant) {
        if token.len() > MAX_CACHED_TOKEN {
            return;
        }
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= self.capacity && !map.contains_key(token.as_bytes()) {
            let now = Instant::now();
            map.retain(|_, c| c.until > now);
            if map.len() >= self.capacity
                && let Some(victim) = map.keys().next().cloned()
            {
                map.remove(&victim);
            }
        }
        map.insert(token.as_bytes().into(), Cached { grant, until });
    }
}

/// Hashes a byte string by its length and its last 16 bytes (see the
/// module docs for why that is enough here).
#[derive(Default)]
pub(crate) struct TailHasher(u64);

impl Hasher for TailHasher {
    fn write(&mut self, bytes: &[u8]) {
        let tail = &bytes[bytes.len().saturating_sub(16)..];
        let mut word = [0_u8; 16];
        word[..tail.len()].copy_from_slice(tail);
        let word = u128::from_le_bytes(word);
        // Fold and mix (the 64-bit finaliser of MurmurHash3).
        let mut h = self.0 ^ (word as u64) ^ ((word >> 64) as u64).rotate_left(29);
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        self.0 = h;
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = self.0.rotate_left(7) ^ n as u64;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::scope::ScopePolicy;
    use std::time::Duration;

    fn grant(who: &str) -> Arc<Grant> {
        Arc::new(Grant {
            principal: who.into(),
            client: None,
            scopes: Default::default(),
            policy: Arc::new(ScopePolicy::default()),
            caller: None,
        })
    }

    #[test]
    fn only_the_very_token_hits_even_with_the_same_tail() {
        let cache = TokenCache::new(10);
        let later = Instant::now() + Duration::from_secs(60);
        cache.insert("aaaa.bbbb.0123456789abcdef", grant("a"), later);
        let now = Instant::now();
        let hit = cache.get(b"aaaa.bbbb.0123456789abcdef", now).expect("hit");
        assert_eq!(&*hit.principal, "a");
        // Same length, same last 16 bytes: same bucket, still a miss.
        assert!(cache.get(b"xxxx.bbbb.0123456789abcdef", now).is_none());
        assert!(cache.get(b"aaaa.bbbb.0123456789abcdeg", now).is_none());
        assert!(cache.get(b"short", now).is_none());
        // Expired entries are misses.
        assert!(cache.get(b"aaaa.bbbb.0123456789abcdef", later).is_none());
    }

    #[test]
    fn the_cache_is_bounded_in_entries_and_token_length() {
        let cache = TokenCache::new(3);
        let later = Instant::now() + Duration::from_secs(60);
        for i in 0..10 {
            cache.insert(&format!("token-{i}"), grant("p"), later);
        }
        let map = cache.map.lock().expect("lock");
        assert_eq!(map.len(), 3);
        drop(map);
        let long = "x".repeat(MAX_CACHED_TOKEN + 1);
        cache.insert(&long, grant("p"), later);
        assert!(cache.get(long.as_bytes(), Instant::now()).is_none());
    }
}
