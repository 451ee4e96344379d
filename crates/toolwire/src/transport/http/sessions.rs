//! The legacy sessions of one HTTP endpoint: minted by `initialize`,
//! addressed by `Mcp-Session-Id`, expired when idle (or soon, when never
//! used after `initialize`), bounded in number overall and per client.
//!
//! Spec (2025-11-25): basic/transports.mdx#session-management — the id is
//! globally unique and cryptographically secure, visible ASCII only; a
//! request with an unknown or expired id gets 404.

use super::peers::Slot;
use crate::legacy::Session;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

struct Entry {
    session: Arc<Session>,
    created: Instant,
    last_seen: Instant,
    /// The authenticated principal that opened it: only it may use it.
    owner: Option<Arc<str>>,
    /// The client's session slot, given back when the entry goes.
    _slot: Option<Slot>,
}

/// Why a session could not be created.
#[derive(Debug)]
pub(super) struct Full;

pub(super) struct SessionStore {
    map: Mutex<HashMap<String, Entry>>,
    idle: Duration,
    init: Duration,
    max: usize,
}

impl SessionStore {
    pub(super) fn new(idle: Duration, init: Duration, max: usize) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            idle,
            init,
            max,
        }
    }

    fn expired(&self, e: &Entry, now: Instant) -> bool {
        // A session whose GET stream is open is in use.
        if e.session.has_notifier() {
            return false;
        }
        // Spec (2025-11-25): basic/lifecycle.mdx#initialization — a client
        // that means to use a session goes on at once; one that only
        // initializes must not hold a slot for the whole idle timeout.
        if !e.session.is_confirmed() && now.saturating_duration_since(e.created) > self.init {
            return true;
        }
        now.saturating_duration_since(e.last_seen) > self.idle
    }

    fn sweep(&self, map: &mut HashMap<String, Entry>, now: Instant) {
        map.retain(|_, e| {
            let keep = !self.expired(e, now);
            if !keep {
                e.session.close();
            }
            keep
        });
    }

    /// Stores `session` under a new random id. `slot` takes the client's
    /// session slot (`Err` at its limit; `Ok(None)` when clients are not
    /// counted); expired sessions are swept when either limit is reached.
    pub(super) fn create(
        &self,
        session: Arc<Session>,
        slot: impl Fn() -> Result<Option<Slot>, ()>,
        owner: Option<Arc<str>>,
    ) -> Result<String, Full> {
        let now = Instant::now();
        let mut map = self.map.lock().map_err(|_| Full)?;
        let mut taken = slot();
        if map.len() >= self.max || taken.is_err() {
            self.sweep(&mut map, now);
            if map.len() >= self.max {
                return Err(Full);
            }
            if taken.is_err() {
                taken = slot();
            }
        }
        let slot = taken.map_err(|()| Full)?;
        let id = new_id().ok_or(Full)?;
        map.insert(
            id.clone(),
            Entry {
                session,
                created: now,
                last_seen: now,
                owner,
                _slot: slot,
            },
        );
        Ok(id)
    }

    /// The live session `id` names, marked as just used, if `who` opened
    /// it (another principal's request finds none: a leaked id is worthless
    /// without its token). An expired one is removed and closed.
    pub(super) fn get(&self, id: &str, who: Option<&Arc<str>>) -> Option<Arc<Session>> {
        let now = Instant::now();
        let mut map = self.map.lock().ok()?;
        let entry = map.get_mut(id)?;
        if entry.owner.as_ref() != who {
            return None;
        }
        if self.expired(entry, now) {
            if let Some(e) = map.remove(id) {
                e.session.close();
            }
            return None;
        }
        entry.last_seen = now;
        Some(Arc::clone(&entry.session))
    }

    /// Ends the session `id` if `who` opened it; `false` if there was none.
    pub(super) fn remove(&self, id: &str, who: Option<&Arc<str>>) -> bool {
        let removed = self.map.lock().ok().and_then(|mut m| {
            if m.get(id)?.owner.as_ref() != who {
                return None;
            }
            m.remove(id)
        });
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
        let store = SessionStore::new(Duration::from_secs(10), Duration::from_secs(100), 2);
        let a = store.create(session(), || Ok(None), None).expect("a");
        let _b = store.create(session(), || Ok(None), None).expect("b");
        assert!(
            store.create(session(), || Ok(None), None).is_err(),
            "at the limit"
        );
        assert!(store.get(&a, None).is_some());
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(store.get(&a, None).is_none(), "expired");
        let c = store
            .create(session(), || Ok(None), None)
            .expect("room after expiry");
        assert_eq!(c.len(), 32);
        assert!(c.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(store.remove(&c, None));
        assert!(store.get(&c, None).is_none());
    }

    #[tokio::test]
    async fn a_session_belongs_to_the_principal_that_opened_it() {
        let store = SessionStore::new(Duration::from_secs(60), Duration::from_secs(60), 4);
        let alice: Arc<str> = "https://as alice".into();
        let bob: Arc<str> = "https://as bob".into();
        let id = store
            .create(session(), || Ok(None), Some(Arc::clone(&alice)))
            .expect("created");
        assert!(store.get(&id, Some(&bob)).is_none(), "another principal");
        assert!(store.get(&id, None).is_none(), "no principal");
        assert!(!store.remove(&id, Some(&bob)), "bob cannot end it");
        assert!(store.get(&id, Some(&alice)).is_some());
        assert!(store.remove(&id, Some(&alice)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_never_used_after_initialize_expires_early() {
        let store = SessionStore::new(Duration::from_secs(1800), Duration::from_secs(5), 10);
        let unused = store.create(session(), || Ok(None), None).expect("unused");
        let used_session = session();
        let used = store
            .create(Arc::clone(&used_session), || Ok(None), None)
            .expect("used");
        used_session.confirm();
        tokio::time::advance(Duration::from_secs(6)).await;
        assert!(store.get(&unused, None).is_none(), "unused: gone after 5 s");
        assert!(
            store.get(&used, None).is_some(),
            "used: lives on the idle timeout"
        );
    }
}
