//! An ordered, copy-on-write registry of named entries (tools, prompts,
//! resources). Readers take a cheap snapshot; writers publish a new one.

use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// Something stored under a unique name.
pub(crate) trait Named {
    fn name(&self) -> &str;
}

/// One immutable view of the registry.
pub(crate) struct Snapshot<T> {
    items: Vec<T>,
    /// Looked up on every call. foldhash rather than SipHash: some 150
    /// instructions less a lookup; it is seeded per process, and its keys
    /// are the server's own names (a client only looks names up).
    index: HashMap<String, usize, foldhash::fast::RandomState>,
    /// Serialised list pages, built on first use and dropped with the snapshot.
    pub(crate) pages: OnceLock<Vec<Box<RawValue>>>,
}

impl<T: Named> Snapshot<T> {
    fn build(items: Vec<T>) -> Self {
        let index = items
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name().to_owned(), i))
            .collect();
        Self {
            items,
            index,
            pages: OnceLock::new(),
        }
    }

    /// Entries in registration order.
    pub(crate) fn items(&self) -> &[T] {
        &self.items
    }

    pub(crate) fn get(&self, name: &str) -> Option<&T> {
        self.index.get(name).map(|&i| &self.items[i])
    }

    /// Appends `item` (its name not taken), dropping the pages built.
    fn push(&mut self, item: T) {
        self.index.insert(item.name().to_owned(), self.items.len());
        self.items.push(item);
        self.pages = OnceLock::new();
    }

    /// Removes the entry at `at`, dropping the pages built.
    fn remove_at(&mut self, at: usize) {
        let item = self.items.remove(at);
        self.index.remove(item.name());
        for i in self.index.values_mut() {
            if *i > at {
                *i -= 1;
            }
        }
        self.pages = OnceLock::new();
    }
}

impl<T: Clone> Snapshot<T> {
    /// A copy of the entries and their index, without the pages.
    fn copy(&self) -> Self {
        Self {
            items: self.items.clone(),
            index: self.index.clone(),
            pages: OnceLock::new(),
        }
    }
}

/// The registry itself.
pub(crate) struct Registry<T> {
    current: RwLock<Arc<Snapshot<T>>>,
}

impl<T: Named + Clone> Default for Registry<T> {
    fn default() -> Self {
        Self {
            current: RwLock::new(Arc::new(Snapshot::build(Vec::new()))),
        }
    }
}

impl<T: Named + Clone> Registry<T> {
    /// The current snapshot.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot<T>> {
        match self.current.read() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Arc<Snapshot<T>>> {
        match self.current.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn update<R>(&self, f: impl FnOnce(&Snapshot<T>) -> (Option<Vec<T>>, R)) -> R {
        let mut guard = self.write();
        let (next, r) = f(&guard);
        if let Some(items) = next {
            *guard = Arc::new(Snapshot::build(items));
        }
        r
    }

    /// Changes the current snapshot with `change`: in place when no reader
    /// holds it (registration before serving, or any quiet moment), so that
    /// adding n entries one by one costs O(n) in all and not O(n²);
    /// otherwise on a copy, which is then published, the readers keeping
    /// the one they hold.
    fn change(guard: &mut Arc<Snapshot<T>>, change: impl FnOnce(&mut Snapshot<T>)) {
        match Arc::get_mut(guard) {
            Some(snapshot) => change(snapshot),
            None => {
                let mut next = guard.copy();
                change(&mut next);
                *guard = Arc::new(next);
            }
        }
    }

    /// Swaps in a snapshot of the same entries, without the pages built
    /// for the old one.
    pub(crate) fn rebuild_pages(&self) {
        self.update(|s| (Some(s.items.clone()), ()));
    }

    /// Names of the entries, in order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.snapshot()
            .items()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    }

    /// Adds `item`; `false` (and no change) if the name is taken.
    pub(crate) fn insert(&self, item: T) -> bool {
        let mut guard = self.write();
        if guard.index.contains_key(item.name()) {
            return false;
        }
        Self::change(&mut guard, |s| s.push(item));
        true
    }

    /// Replaces every entry with `items`, in their order, as one new
    /// snapshot; on a duplicate name, returns it and changes nothing.
    pub(crate) fn replace(&self, items: Vec<T>) -> Result<(), String> {
        let mut seen = std::collections::HashSet::with_capacity(items.len());
        if let Some(dup) = items.iter().find(|t| !seen.insert(t.name())) {
            return Err(dup.name().to_owned());
        }
        self.update(|_| (Some(items), ()));
        Ok(())
    }

    /// Removes the entry named `name`; `false` if there was none.
    pub(crate) fn remove(&self, name: &str) -> bool {
        let mut guard = self.write();
        let Some(&at) = guard.index.get(name) else {
            return false;
        };
        Self::change(&mut guard, |s| s.remove_at(at));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone)]
    struct N(&'static str);
    impl Named for N {
        fn name(&self) -> &str {
            self.0
        }
    }

    #[test]
    fn keeps_registration_order_and_refuses_duplicates() {
        let r = Registry::default();
        assert!(r.insert(N("b")));
        assert!(r.insert(N("a")));
        assert!(!r.insert(N("b")));
        let names: Vec<_> = r.snapshot().items().iter().map(|n| n.0).collect();
        assert_eq!(names, ["b", "a"]);
    }

    #[test]
    fn replace_swaps_all_entries_and_refuses_duplicates() {
        let r = Registry::default();
        r.insert(N("a"));
        assert_eq!(r.replace(vec![N("c"), N("b")]), Ok(()));
        let names: Vec<_> = r.snapshot().items().iter().map(|n| n.0).collect();
        assert_eq!(names, ["c", "b"]);
        assert_eq!(r.replace(vec![N("x"), N("x")]), Err("x".to_owned()));
        assert!(r.snapshot().get("c").is_some(), "unchanged on error");
    }

    #[test]
    fn remove_publishes_new_snapshot_old_one_unchanged() {
        let r = Registry::default();
        r.insert(N("a"));
        r.insert(N("b"));
        let before = r.snapshot();
        assert!(r.remove("a"));
        assert!(!r.remove("a"));
        assert!(before.get("a").is_some());
        assert!(r.snapshot().get("a").is_none());
        assert!(r.snapshot().get("b").is_some());
    }

    #[test]
    fn changes_in_place_keep_the_index_right() {
        let r = Registry::default();
        for n in ["a", "b", "c", "d"] {
            assert!(r.insert(N(n)));
        }
        // No reader holds the snapshot: changed in place.
        assert!(r.remove("b"));
        let s = r.snapshot();
        let names: Vec<_> = s.items().iter().map(|n| n.0).collect();
        assert_eq!(names, ["a", "c", "d"]);
        for n in names {
            assert_eq!(s.get(n).map(|e| e.0), Some(n));
        }
        assert!(s.get("b").is_none());
    }

    #[test]
    fn an_insert_leaves_a_held_snapshot_and_its_pages_alone() {
        let r = Registry::default();
        r.insert(N("a"));
        let held = r.snapshot();
        let _ = held.pages.set(Vec::new());
        assert!(r.insert(N("b")));
        assert_eq!(held.items().len(), 1);
        assert!(held.get("b").is_none());
        assert!(held.pages.get().is_some(), "the held pages stay");
        let now = r.snapshot();
        assert_eq!(now.get("b").map(|e| e.0), Some("b"));
        assert!(now.pages.get().is_none(), "new entries, no pages yet");
        drop((held, now));
        // Unheld, the pages built are dropped by a change made in place.
        let _ = r.snapshot().pages.set(Vec::new());
        assert!(r.insert(N("c")));
        assert!(r.snapshot().pages.get().is_none());
    }
}
