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
    index: HashMap<String, usize>,
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

    fn update<R>(&self, f: impl FnOnce(&Snapshot<T>) -> (Option<Vec<T>>, R)) -> R {
        let mut guard = match self.current.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let (next, r) = f(&guard);
        if let Some(items) = next {
            *guard = Arc::new(Snapshot::build(items));
        }
        r
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
        self.update(|s| {
            if s.index.contains_key(item.name()) {
                return (None, false);
            }
            let mut items = s.items.clone();
            items.push(item);
            (Some(items), true)
        })
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
        self.update(|s| {
            if !s.index.contains_key(name) {
                return (None, false);
            }
            let items = s
                .items
                .iter()
                .filter(|t| t.name() != name)
                .cloned()
                .collect();
            (Some(items), true)
        })
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
}
