//! The legacy sessions of one HTTP endpoint: minted by `initialize`,
//! addressed by `Mcp-Session-Id`, expired when idle, bounded in number.
//!
//! Spec (2025-11-25): basic/transports.mdx#session-management — the id is
//! globally unique and cryptographically secure, visible ASCII only; a
//! request with an unknown or expired id gets 404.

use crate::legacy::Session;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

struct Entry {
    session: Arc<Session>,
    last_seen: Instant,
}

/// Why a session could not be created.
#[derive(Debug)]
pub(super) struct Full;

pub(super) struct SessionStore {
    map: Mutex<HashMap<String, Entry>>,
    idle: Duration,
    max: usize,
}

impl SessionStore {
    pub(super) fn new(idle: Duration, max: usize) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            idle,
            max,
        }
    }

    fn expired(&self, e: &Entry, now: Instant) -> bool {
        // A session whose GET stream is open is in use.
        now.saturating_duration_since(e.last_seen) > self.idle && !e.session.has_notifier()
    }

    /// Stores `session` under a new random id.
    pub(super) fn create(&self, session: Arc<Session>) -> Result<String, Full> {
        let now = Instant::now();
        let mut map = self.map.lock().map_err(|_| Full)?;
        if map.len() >= self.max {
            map.retain(|_, e| {
                let keep = !self.expired(e, now);
                if !keep {
                    e.session.close();
                }
                keep
            });
            if map.len() >= self.max {
                return Err(Full);
            }
        }
        let id = new_id().ok_or(Full)?;
        map.insert(
            id.clone(),
            Entry {
                session,
                last_seen: now,
            },
        );
        Ok(id)
    }

    /// The live session `id` names, marked as just used. An expired one is
    /// removed and closed.
    pub(super) fn get(&self, id: &str) -> Option<Arc<Session>> {
        let now = Instant::now();
        let mut map = self.map.lock().ok()?;
        let entry = map.get_mut(id)?;
        if self.expired(entry, now) {
            if let Some(e) = map.remove(id) {
                e.session.close();
            }
            return None;
        }
        entry.last_seen = now;
        Some(Arc::clone(&entry.session))
    }

    /// Ends the session `id`; `false` if there was none.
    pub(super) fn remove(&self, id: &str) -> bool {
        let removed = self.map.lock().ok().and_then(|mut m| m.remove(id));
        match removed {
            Some(e) => {
                e.session.close();
                true
            }
            None => false,
        }
    }
}

/// 128 random bits from the OS, as 32 hex digits.
fn new_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire_proto::types::ClientCapabilities;

    fn session() -> Arc<Session> {
        Arc::new(Session::new(
            "2025-11-25",
            ClientCapabilities::default(),
            None,
        ))
    }

    #[tokio::test(start_paused = true)]
    async fn idle_sessions_expire_and_the_count_is_bounded() {
        let store = SessionStore::new(Duration::from_secs(10), 2);
        let a = store.create(session()).expect("a");
        let _b = store.create(session()).expect("b");
        assert!(store.create(session()).is_err(), "at the limit");
        assert!(store.get(&a).is_some());
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(store.get(&a).is_none(), "expired");
        let c = store.create(session()).expect("room after expiry");
        assert_eq!(c.len(), 32);
        assert!(c.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(store.remove(&c));
        assert!(store.get(&c).is_none());
    }
}
