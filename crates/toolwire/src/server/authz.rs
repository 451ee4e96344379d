//! Scopes at the pipeline's boundary (feature `auth`): the scopes a
//! request's operation needs that its grant lacks (the transport answers
//! `403` with them; a `subscriptions/listen` needs what reading each of
//! its `resourceSubscriptions` needs), and the entries a grant may see in
//! lists.
//!
//! Spec: server/tools.mdx#capabilities — the set MAY depend on the
//! request's authorization; server/utilities/caching.mdx — such a list is
//! `cacheScope: "private"`.

use super::Server;
use super::accept::Prepared;
use crate::auth::scope::{Grant, Kind};
use crate::prompt::Prompt;
use crate::registry::{Named, Snapshot};
use crate::resource::{Resource, ResourceTemplate};
use crate::tool::Tool;
use toolwire_proto::types::{CompletionReference, Method};

/// An entry that may need scopes.
pub(crate) trait Scoped: Named + Clone {
    const KIND: Kind;
    fn own_scopes(&self) -> &[String];
}

impl Scoped for Tool {
    const KIND: Kind = Kind::Tool;
    fn own_scopes(&self) -> &[String] {
        self.scopes()
    }
}

impl Scoped for Prompt {
    const KIND: Kind = Kind::Prompt;
    fn own_scopes(&self) -> &[String] {
        self.scopes()
    }
}

impl Scoped for Resource {
    const KIND: Kind = Kind::Resource;
    fn own_scopes(&self) -> &[String] {
        self.scopes()
    }
}

impl Scoped for ResourceTemplate {
    const KIND: Kind = Kind::Resource;
    fn own_scopes(&self) -> &[String] {
        self.scopes()
    }
}

/// The entries of `snapshot` the request's grant may use, when the list
/// depends on the grant (some entry needs scopes); `None` otherwise, and
/// always without a grant, so the shared pages serve it.
pub(crate) fn visible<T: Scoped>(p: &Prepared, snapshot: &Snapshot<T>) -> Option<Vec<T>> {
    let grant = p.grant()?;
    let items = snapshot.items();
    let scoped =
        grant.policy.scopes_any(T::KIND) || items.iter().any(|t| !t.own_scopes().is_empty());
    scoped.then(|| {
        items
            .iter()
            .filter(|t| grant.may(T::KIND, t.name(), t.own_scopes()))
            .cloned()
            .collect()
    })
}

fn lacking<T: Scoped>(grant: &Grant, entry: &T) -> Option<Vec<String>> {
    (!grant.may(T::KIND, entry.name(), entry.own_scopes()))
        .then(|| grant.all_needed(T::KIND, entry.name(), entry.own_scopes()))
}

impl Server {
    /// Every scope the request's operation needs, when `grant` lacks any
    /// of them (all of them, for one challenge); `None` when it may go on.
    /// An operation on an entry that does not exist needs nothing here:
    /// the pipeline answers it as usual.
    pub(crate) fn missing_scopes(&self, p: &Prepared, grant: &Grant) -> Option<Vec<String>> {
        match &p.method {
            Method::CallTool => {
                let tools = self.inner.tools.snapshot();
                lacking(grant, tools.get(p.params.name.as_deref()?)?)
            }
            Method::GetPrompt => {
                let prompts = self.inner.prompts.snapshot();
                lacking(grant, prompts.get(p.params.name.as_deref()?)?)
            }
            Method::ReadResource | Method::SubscribeResource | Method::UnsubscribeResource => {
                self.resource_lacking(grant, p.params.uri.as_deref()?)
            }
            // A stream of a resource's updates needs what reading it needs:
            // refused like a read, with every scope its URIs need at once.
            Method::SubscriptionsListen => {
                let uris = p
                    .params
                    .notifications
                    .as_ref()?
                    .resource_subscriptions
                    .as_ref()?;
                let mut needed: Vec<String> = Vec::new();
                for uri in uris {
                    if let Some(more) = self.resource_lacking(grant, uri) {
                        needed.extend(more);
                    }
                }
                needed.sort_unstable();
                needed.dedup();
                (!needed.is_empty()).then_some(needed)
            }
            Method::Complete => {
                let reference = p.params.reference.as_deref()?;
                match serde_json::from_value::<CompletionReference>(reference.clone()).ok()? {
                    CompletionReference::Prompt(r) => {
                        let prompts = self.inner.prompts.snapshot();
                        lacking(grant, prompts.get(&r.name)?)
                    }
                    CompletionReference::ResourceTemplate(r) => {
                        let templates = self.inner.resource_templates.snapshot();
                        match templates.get(&r.uri) {
                            Some(t) => lacking(grant, t),
                            None => self.resource_lacking(grant, &r.uri),
                        }
                    }
                }
            }
            _ => None,
        }
    }

    /// The scopes `grant` lacks to read `uri`: those of the fixed resource
    /// at `uri`, else of the first template that matches it (the one
    /// `resources/read` would use); `None` when it may, or nothing serves
    /// `uri`.
    pub(crate) fn resource_lacking(&self, grant: &Grant, uri: &str) -> Option<Vec<String>> {
        if let Some(r) = self.inner.resources.snapshot().get(uri) {
            return lacking(grant, r);
        }
        let templates = self.inner.resource_templates.snapshot();
        let t = templates
            .items()
            .iter()
            .find(|t| t.inner.template.match_uri(uri).is_some())?;
        lacking(grant, t)
    }
}
