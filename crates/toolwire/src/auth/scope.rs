//! Scopes: what a verified token grants ([`Grant`], with the configured
//! hierarchy applied once, when the token is first verified) and what an
//! operation needs ([`ScopePolicy`]: the server-wide scopes, per-name
//! additions, the hierarchy).
//!
//! Spec: basic/authorization/index.mdx#scope-challenge-handling — servers
//! MUST account for scope hierarchies, where a broader scope implies
//! narrower ones.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

/// Which kind of entry a per-name scope requirement is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

/// The scopes operations need, beyond what entries declare themselves.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScopePolicy {
    /// Needed by every request.
    pub(crate) required: Vec<String>,
    /// Added to an entry's own scopes, by kind and name (a resource's or
    /// template's URI).
    pub(crate) by_name: BTreeMap<(Kind, String), Vec<String>>,
    /// A broader scope and the narrower ones it implies.
    pub(crate) implies: BTreeMap<String, Vec<String>>,
}

impl ScopePolicy {
    /// The granted scopes with every implied scope added (transitively; a
    /// cycle ends when nothing new is added).
    pub(crate) fn expand(&self, granted: impl IntoIterator<Item = String>) -> HashSet<Box<str>> {
        let mut out: HashSet<Box<str>> = HashSet::new();
        let mut todo: Vec<String> = granted.into_iter().collect();
        while let Some(scope) = todo.pop() {
            if let Some(narrower) = self.implies.get(&scope) {
                todo.extend(
                    narrower
                        .iter()
                        .filter(|n| !out.contains(n.as_str()))
                        .cloned(),
                );
            }
            out.insert(scope.into_boxed_str());
        }
        out
    }

    /// What an entry needs: its own scopes plus the configured additions
    /// for its name. The server-wide scopes are checked apart, when the
    /// token is verified.
    pub(crate) fn needs<'a>(
        &'a self,
        kind: Kind,
        name: &str,
        own: &'a [String],
    ) -> impl Iterator<Item = &'a String> {
        let extra = self
            .by_name
            .get(&(kind, name.to_owned()))
            .map(Vec::as_slice)
            .unwrap_or_default();
        own.iter().chain(extra)
    }

    /// Whether any entry of `kind` has configured scopes.
    pub(crate) fn scopes_any(&self, kind: Kind) -> bool {
        self.by_name.keys().any(|(k, _)| *k == kind)
    }
}

/// An authenticated caller: who (issuer and subject, as the principal
/// string) and what they may do (the granted scopes, hierarchy applied).
#[derive(Debug)]
pub(crate) struct Grant {
    pub(crate) principal: Arc<str>,
    /// The client the token was issued to, if it says (`client_id`).
    pub(crate) client: Option<Arc<str>>,
    pub(crate) scopes: HashSet<Box<str>>,
    pub(crate) policy: Arc<ScopePolicy>,
    /// The token itself, when the server lets handlers see it.
    pub(crate) caller: Option<crate::context::CallerToken>,
}

impl Grant {
    /// Whether the grant holds every one of `needed`.
    pub(crate) fn holds<'a>(&self, mut needed: impl Iterator<Item = &'a String>) -> bool {
        needed.all(|s| self.scopes.contains(s.as_str()))
    }

    /// Whether the grant may use the entry `name` of `kind` that declares
    /// `own` scopes.
    pub(crate) fn may(&self, kind: Kind, name: &str, own: &[String]) -> bool {
        self.holds(self.policy.needs(kind, name, own))
    }

    /// Every scope an entry needs (the server-wide ones too), sorted and
    /// without repeats: the `scope` of a 403 challenge, all in one.
    pub(crate) fn all_needed(&self, kind: Kind, name: &str, own: &[String]) -> Vec<String> {
        let set: BTreeSet<&String> = self
            .policy
            .required
            .iter()
            .chain(self.policy.needs(kind, name, own))
            .collect();
        set.into_iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> ScopePolicy {
        let mut p = ScopePolicy::default();
        p.implies.insert(
            "admin".into(),
            vec!["tools:write".into(), "tools:read".into()],
        );
        p.implies.insert(
            "tools:write".into(),
            vec!["tools:read".into(), "admin".into()],
        );
        p.by_name.insert(
            (Kind::Tool, "define_tool".into()),
            vec!["tools:define".into()],
        );
        p
    }

    #[test]
    fn broader_scopes_imply_narrower_ones_transitively_and_cycles_end() {
        let p = policy();
        let got = p.expand(["tools:write".to_owned()]);
        for s in ["tools:write", "tools:read", "admin"] {
            assert!(got.contains(s), "{s}: {got:?}");
        }
        assert_eq!(p.expand(["other".to_owned()]).len(), 1);
    }

    #[test]
    fn an_entry_needs_its_own_scopes_and_the_configured_ones() {
        let policy = Arc::new(policy());
        let grant = |scopes: &[&str]| Grant {
            client: None,
            principal: "p".into(),
            scopes: policy.expand(scopes.iter().map(|s| (*s).to_owned())),
            policy: Arc::clone(&policy),
            caller: None,
        };
        let own = ["tools:read".to_owned()];
        assert!(grant(&["tools:read"]).may(Kind::Tool, "echo", &own));
        assert!(!grant(&["x"]).may(Kind::Tool, "echo", &own));
        assert!(!grant(&["tools:read"]).may(Kind::Tool, "define_tool", &own));
        assert!(grant(&["tools:read", "tools:define"]).may(Kind::Tool, "define_tool", &own));
        assert!(grant(&["tools:write"]).may(Kind::Tool, "echo", &own));
        // The configured additions are per kind.
        assert!(grant(&["tools:read"]).may(Kind::Prompt, "define_tool", &own));
        assert_eq!(
            grant(&[]).all_needed(Kind::Tool, "define_tool", &own),
            ["tools:define", "tools:read"]
        );
    }
}
