//! The [`Gateway`]: a [`Server`] whose tools and prompts are the merged,
//! namespaced lists of its upstreams, kept current by one supervisor task
//! per upstream.

use crate::GatewayError;
use crate::config::{GatewayConfig, Namespace};
use crate::names::{self, NameProblem, Naming};
use crate::proxy;
use crate::upstream::{Link, Listing, UpstreamHealth, UpstreamState};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;
use toolwire::proto::ErrorObject;
use toolwire::proto::types::CacheScope;
use toolwire::{
    ClientError, HandlerError, Prompt, Resource, ResourceTemplate, Server, ServerConfig, Tool,
};

mod supervise;

/// The gateway's own resource: its health as JSON (`toolwire read
/// gateway://health`).
pub const HEALTH_URI: &str = "gateway://health";

/// One MCP endpoint in front of many MCP servers.
///
/// [`Gateway::start`] connects to every upstream of a [`GatewayConfig`],
/// lists their tools and prompts, and registers them on a [`Server`] under
/// namespaced names (`<prefix><separator><name>`). Serve
/// [`server`](Self::server) like any other (stdio, HTTP, mounted in a
/// router). An upstream slower than the start-up wait joins the lists
/// when it answers. Each upstream has a supervisor that relays its list
/// changes (refreshing its part of the merged lists, which publishes
/// `list_changed` on the server's bus), reconnects it, and restarts a
/// stdio upstream that exits, with backoff.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use toolwire::ServerConfig;
/// use toolwire_gateway::{Gateway, GatewayConfig};
///
/// let config = GatewayConfig::parse(r#"
///     [upstreams.demo]
///     command = ["toolwire", "serve"]
/// "#)?;
/// let gateway = Gateway::start(config, ServerConfig::new("gateway", "1.0.0")).await?;
/// toolwire::serve_stdio(gateway.server().clone()).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("upstreams", &self.inner.links.len())
            .finish_non_exhaustive()
    }
}

struct Inner {
    server: Server,
    links: Vec<Arc<Link>>,
    naming: Naming,
    /// Lists fail while any upstream is down.
    fail_closed: bool,
    /// Set once start-up is over: from then on a name stays with the
    /// upstream serving it (see [`merge`]).
    serving: AtomicBool,
    /// How many upstreams have answered (or failed) their first listing.
    settled: tokio::sync::watch::Sender<usize>,
    /// Each upstream's current entries, by upstream index.
    parts: Mutex<Parts>,
    stop: CancellationToken,
}

#[derive(Default)]
struct Parts {
    tools: Kind<Tool>,
    prompts: Kind<Prompt>,
    resources: Kind<Resource>,
    templates: Kind<ResourceTemplate>,
    /// The gateway's own resources, first in the resource list.
    own: Vec<Resource>,
    problems: Vec<NameProblem>,
    /// Each upstream's list cache hints: its smallest `ttlMs` (if it gave
    /// one) and whether any of its lists is private.
    hints: Vec<(Option<u64>, bool)>,
}

/// One kind of entry (tools, prompts, resources or resource templates):
/// each upstream's part, by upstream index; which upstream claims each
/// merged name once serving (see [`merge`]); and the fingerprint of the
/// merged list the server has now, so that only a real change is swapped
/// in (and heard of by listeners).
struct Kind<T> {
    parts: Vec<Vec<T>>,
    claims: HashMap<String, usize>,
    served: Option<String>,
}

impl<T> Default for Kind<T> {
    fn default() -> Self {
        Self {
            parts: Vec::new(),
            claims: HashMap::new(),
            served: None,
        }
    }
}

impl<T: Clone + toolwire::Defined> Kind<T> {
    fn new(upstreams: usize) -> Self {
        Self {
            parts: std::iter::repeat_with(Vec::new).take(upstreams).collect(),
            ..Self::default()
        }
    }

    /// The merged list and the entries left out (see [`merge`]).
    fn merge(
        &mut self,
        name: impl Fn(&T) -> &str,
        serving: bool,
        waits: impl Fn(usize) -> bool,
    ) -> (Vec<T>, Vec<(String, usize, usize)>) {
        merge(&self.parts, name, &mut self.claims, serving, waits)
    }

    /// The fingerprint of `merged` if it is not the list served now.
    fn changed(&self, merged: &[T]) -> Option<String> {
        let now = toolwire::list_fingerprint(merged);
        (self.served.as_deref() != Some(now.as_str())).then_some(now)
    }
}

impl Gateway {
    /// Connects to every upstream (at once), builds the merged lists and
    /// starts the supervisors.
    ///
    /// Start-up waits for the upstreams' first listing at most
    /// [`GatewayConfig::start_wait`] (2 s by default), so one slow or
    /// hanging upstream does not delay serving: an upstream that has not
    /// answered by then is served like a down one (left out of the lists,
    /// or failing them with `fail_closed`) and joins the merged lists when
    /// its first listing arrives, which publishes `list_changed`.
    /// [`settled`](Self::settled) waits for every first answer.
    ///
    /// `server_config` names the gateway and carries the server settings
    /// (keyring, paging, bus); its `ttl` and `cacheScope` are the most the
    /// merged lists carry: `ttlMs` is the smallest of it and the upstreams'
    /// in the lists, `cacheScope` `private` if it is or any of those
    /// upstreams' is, recomputed whenever an upstream's part changes.
    ///
    /// An upstream that cannot be reached is left out and retried with
    /// backoff; its calls get an error naming it.
    ///
    /// # Errors
    ///
    /// [`GatewayError::Collision`] when `namespace = "never"` and two
    /// upstreams are renamed to the same name, or two upstreams that
    /// answered during start-up offer the same name. A collision that
    /// appears later (an upstream answering late, or changing its list)
    /// does not stop the gateway: the name stays with the upstream that
    /// was serving it, the newcomer's entry is left out, and an error
    /// naming both upstreams is logged and listed in
    /// [`problems`](Self::problems).
    pub async fn start(
        config: GatewayConfig,
        server_config: ServerConfig,
    ) -> Result<Self, GatewayError> {
        let naming = Naming {
            separator: config.separator().to_owned(),
            mode: config.namespace(),
        };
        if config.namespace() == Namespace::Never
            && let Some(NameProblem::Collision {
                exposed,
                first,
                second,
            }) = names::configured_collision(config.upstreams(), &naming)
        {
            return Err(GatewayError::Collision {
                name: exposed,
                first,
                second,
            });
        }
        let links: Vec<Arc<Link>> = config
            .upstreams()
            .iter()
            .cloned()
            .map(|u| Link::new(u, config.start_wait()))
            .collect();
        let firsts = first_listings(&links, config.start_wait()).await;
        let mut server_config = server_config;
        // Each merged list says which version it is, so replicas can be
        // compared.
        server_config = server_config.with_list_fingerprints(true);
        // Tasks pass through when an upstream offers them.
        server_config =
            server_config.with_task_forwarder(Arc::new(proxy::Forwarder::new(links.clone())));
        let settled = firsts
            .iter()
            .filter(|f| !matches!(f, First::Pending(_)))
            .count();
        let gateway = Self {
            inner: Arc::new(Inner {
                server: Server::new(server_config),
                naming,
                parts: Mutex::new(Parts {
                    tools: Kind::new(links.len()),
                    prompts: Kind::new(links.len()),
                    resources: Kind::new(links.len()),
                    templates: Kind::new(links.len()),
                    hints: vec![(None, false); links.len()],
                    ..Parts::default()
                }),
                links,
                fail_closed: config.fail_closed(),
                serving: AtomicBool::new(false),
                settled: tokio::sync::watch::Sender::new(settled),
                stop: CancellationToken::new(),
            }),
        };
        gateway.add_health_resource();
        let weak = Arc::downgrade(&gateway.inner);
        gateway
            .inner
            .server
            .set_unknown_tool_reason(move |name| weak.upgrade()?.unknown_tool_reason(name));
        for (i, first) in firsts.iter().enumerate() {
            if let First::Listed(listing) = first {
                gateway.set_part(i, listing);
            }
        }
        gateway.rebuild();
        let problems = gateway.problems();
        for p in &problems {
            tracing::warn!("{p}");
        }
        if config.namespace() == Namespace::Never
            && let Some(NameProblem::Collision {
                exposed,
                first,
                second,
            }) = problems
                .iter()
                .find(|p| matches!(p, NameProblem::Collision { .. }))
        {
            let e = GatewayError::Collision {
                name: exposed.clone(),
                first: first.clone(),
                second: second.clone(),
            };
            gateway.close().await;
            return Err(e);
        }
        // From now on a served name stays with its upstream.
        gateway.inner.serving.store(true, Ordering::Release);
        gateway.rebuild();
        // Serving starts once every listed upstream's change relay is
        // open, so no change made through the gateway can be missed. An
        // upstream still starting is not waited for.
        let mut ready = Vec::new();
        for (i, (link, first)) in gateway.inner.links.iter().zip(firsts).enumerate() {
            let (tx, rx) = tokio::sync::oneshot::channel();
            ready.push(rx);
            tokio::spawn(supervise::supervise(
                Arc::downgrade(&gateway.inner),
                i,
                Arc::clone(link),
                first,
                tx,
            ));
        }
        for rx in ready {
            let _ = rx.await;
        }
        Ok(gateway)
    }

    /// Waits until every upstream has answered its first listing or failed
    /// it (each within its `timeout_ms`), so the merged lists hold every
    /// upstream that is up: for a report (`toolwire gateway check`), not
    /// for serving.
    pub async fn settled(&self) {
        let mut rx = self.inner.settled.subscribe();
        let all = self.inner.links.len();
        let _ = rx.wait_for(|n| *n >= all).await;
    }

    /// The server that serves the merged lists.
    pub fn server(&self) -> &Server {
        &self.inner.server
    }

    /// Each upstream's state, in configuration order.
    pub fn health(&self) -> Vec<UpstreamHealth> {
        self.inner.links.iter().map(|l| l.health()).collect()
    }

    /// Naming problems of the current lists: invalid names (left out),
    /// names over 64 characters, collisions (the later upstream's entry is
    /// left out).
    pub fn problems(&self) -> Vec<NameProblem> {
        self.inner
            .parts
            .lock()
            .map(|p| p.problems.clone())
            .unwrap_or_default()
    }

    /// A fingerprint of the merged tool list as served: the SHA-256 of the
    /// definitions in order, hex; the same value every `tools/list` result
    /// carries in `_meta` under `io.toolwire/fingerprint`. Two replicas
    /// with the same upstreams and configuration print the same one.
    pub fn tools_fingerprint(&self) -> String {
        self.inner.server.tools_fingerprint()
    }

    /// [`HEALTH_URI`]: the upstreams' health and the tool list's
    /// fingerprint as JSON, never cached.
    fn add_health_resource(&self) {
        let weak = Arc::downgrade(&self.inner);
        let resource = Resource::builder(HEALTH_URI, "gateway-health")
            .description("The gateway's upstreams (state, restarts, era, tools), its tool list's fingerprint and its naming problems")
            .mime_type("application/json")
            .ttl(Duration::ZERO)
            .cache_scope(CacheScope::Private)
            .handler(move |_cx| {
                let gateway = weak.upgrade().map(|inner| Gateway { inner });
                async move {
                    let Some(gateway) = gateway else {
                        return Err(HandlerError::failed("the gateway is closed"));
                    };
                    let problems: Vec<String> =
                        gateway.problems().iter().map(ToString::to_string).collect();
                    let report = serde_json::json!({
                        "upstreams": gateway.health(),
                        "toolsFingerprint": gateway.tools_fingerprint(),
                        "problems": problems,
                    });
                    Ok(report.to_string())
                }
            });
        match resource {
            Ok(r) => {
                if let Ok(mut parts) = self.inner.parts.lock() {
                    parts.own.push(r);
                }
            }
            Err(e) => tracing::error!("the health resource was refused: {e}"),
        }
    }

    /// Stops the supervisors and closes every upstream connection (stdio
    /// upstreams are shut down).
    pub async fn close(&self) {
        self.inner.stop.cancel();
        for link in &self.inner.links {
            link.shut().await;
        }
    }

    /// Records upstream `i`'s listing as its part of the merged lists.
    fn set_part(&self, i: usize, listing: &Listing) {
        self.inner.set_part(i, listing);
    }

    fn rebuild(&self) {
        self.inner.rebuild();
    }
}

impl Inner {
    fn set_part(&self, i: usize, listing: &Listing) {
        let link = &self.links[i];
        let up = &link.spec;
        let space = proxy::UriSpace::new(
            (self.naming.mode == Namespace::Always).then_some(up.prefix.as_str()),
        );
        let mut tools = Vec::new();
        let mut problems = Vec::new();
        // App interfaces the tools name, for those the upstream does not
        // list.
        let mut interfaces = std::collections::BTreeSet::new();
        for def in &listing.tools {
            if !up.admits(&def.name) {
                continue;
            }
            let exposed = self.naming.exposed(up, &def.name);
            if let Some(p) = names::check(&up.key, &def.name, &exposed) {
                let drop = p.drops_entry();
                problems.push(p);
                if drop {
                    continue;
                }
            }
            let description = up
                .overrides
                .get(&def.name)
                .and_then(|o| o.description.as_deref());
            if let Some(uri) =
                toolwire::apps::ToolUi::of(def.meta.as_ref()).and_then(|ui| ui.resource_uri)
            {
                interfaces.insert(uri);
            }
            let order = listing.orders.get(&def.name).map(Vec::as_slice);
            match proxy::tool(link, def, order, &exposed, description, &space) {
                Ok(t) => tools.push(t),
                Err(e) => tracing::warn!(upstream = up.key, "tool {:?} left out: {e}", def.name),
            }
        }
        let mut resources = Vec::new();
        for def in &listing.resources {
            interfaces.remove(&def.uri);
            match proxy::resource(link, def, &space) {
                Ok(r) => resources.push(r),
                Err(e) => tracing::warn!(upstream = up.key, "resource {:?} left out: {e}", def.uri),
            }
        }
        for uri in &interfaces {
            match proxy::unlisted_interface(link, uri, &space) {
                Ok(r) => resources.push(r),
                Err(e) => tracing::warn!(upstream = up.key, "app interface {uri:?} left out: {e}"),
            }
        }
        let mut templates = Vec::new();
        for def in &listing.templates {
            match proxy::template(link, def, &space, listing.completions) {
                Ok(t) => templates.push(t),
                Err(e) => tracing::warn!(
                    upstream = up.key,
                    "resource template {:?} left out: {e}",
                    def.uri_template
                ),
            }
        }
        let mut prompts = Vec::new();
        for def in &listing.prompts {
            let exposed = self.naming.exposed(up, &def.name);
            match proxy::prompt(link, def, &exposed, listing.completions) {
                Ok(p) => prompts.push(p),
                Err(e) => tracing::warn!(upstream = up.key, "prompt {:?} left out: {e}", def.name),
            }
        }
        link.set_tool_count(tools.len());
        if let Ok(mut parts) = self.parts.lock() {
            parts.tools.parts[i] = tools;
            parts.prompts.parts[i] = prompts;
            parts.resources.parts[i] = resources;
            parts.templates.parts[i] = templates;
            parts.hints[i] = (listing.ttl_ms, listing.private);
            parts
                .problems
                .retain(|p| !matches!(p, NameProblem::Invalid { upstream, .. } | NameProblem::TooLong { upstream, .. } if *upstream == up.key));
            parts.problems.extend(problems);
        }
    }

    /// Merges the parts (upstream order, then each upstream's order; a
    /// name two upstreams offer goes as [`merge`] decides) and swaps them
    /// in.
    fn rebuild(&self) {
        let Ok(mut parts) = self.parts.lock() else {
            return;
        };
        let parts = &mut *parts;
        let serving = self.serving.load(Ordering::Acquire);
        // A down upstream's names wait for it to come back.
        let waits = |i: usize| self.links[i].health().state == UpstreamState::Down;
        let (tools, lost) = parts.tools.merge(Tool::name, serving, waits);
        let collisions: Vec<NameProblem> = lost
            .into_iter()
            .map(|(exposed, first, second)| NameProblem::Collision {
                exposed,
                first: self.links[first].name().to_owned(),
                second: self.links[second].name().to_owned(),
            })
            .collect();
        let (prompts, _) = parts.prompts.merge(Prompt::name, serving, waits);
        if serving {
            for c in &collisions {
                if !parts.problems.contains(c) {
                    tracing::error!("{c}");
                }
            }
        }
        let (merged, _) = parts.resources.merge(Resource::uri, serving, waits);
        // The gateway's own resources come first and keep their URIs.
        let resources: Vec<Resource> = parts
            .own
            .iter()
            .cloned()
            .chain(
                merged
                    .into_iter()
                    .filter(|r| !parts.own.iter().any(|o| o.uri() == r.uri())),
            )
            .collect();
        let (templates, _) = parts
            .templates
            .merge(ResourceTemplate::uri_template, serving, waits);
        parts
            .problems
            .retain(|p| !matches!(p, NameProblem::Collision { .. }));
        parts.problems.extend(collisions);
        // The parts stay locked until the lists are swapped in, so two
        // supervisors refreshing at once cannot swap in an older merge
        // after a newer one.
        self.apply_fail_closed();
        self.apply_cache_hints(parts);
        // Names are unique by construction, so no call can fail. A list
        // whose fingerprint did not change is left alone, so listeners hear
        // only of real changes.
        let server = &self.server;
        if let Some(f) = parts.tools.changed(&tools) {
            match server.replace_tools(tools) {
                Ok(()) => parts.tools.served = Some(f),
                Err(e) => tracing::error!("merged tool list refused: {e}"),
            }
        }
        if let Some(f) = parts.prompts.changed(&prompts) {
            match server.replace_prompts(prompts) {
                Ok(()) => parts.prompts.served = Some(f),
                Err(e) => tracing::error!("merged prompt list refused: {e}"),
            }
        }
        // Resources and templates are swapped in together.
        let resources_changed = parts.resources.changed(&resources);
        let templates_changed = parts.templates.changed(&templates);
        if resources_changed.is_some() || templates_changed.is_some() {
            match server.replace_resources(resources, templates) {
                Ok(()) => {
                    if let Some(f) = resources_changed {
                        parts.resources.served = Some(f);
                    }
                    if let Some(f) = templates_changed {
                        parts.templates.served = Some(f);
                    }
                }
                Err(e) => tracing::error!("merged resource list refused: {e}"),
            }
        }
    }

    /// The merged lists' cache hints, from the upstreams in them: `ttlMs`
    /// the smallest any gave (and at most the gateway's configured one),
    /// `private` if any upstream's lists are (or the gateway's configured
    /// scope is). An upstream that is down or has not answered yet has
    /// nothing in the lists, and so no say.
    // Spec: server/utilities/caching.mdx
    fn apply_cache_hints(&self, parts: &Parts) {
        let configured = self.server.config();
        let ttl = parts
            .hints
            .iter()
            .filter_map(|(t, _)| *t)
            .map(Duration::from_millis)
            .fold(configured.ttl(), Duration::min);
        let private =
            configured.cache_scope() == CacheScope::Private || parts.hints.iter().any(|(_, p)| *p);
        let scope = if private {
            CacheScope::Private
        } else {
            CacheScope::Public
        };
        self.server.set_cache_hints(ttl, scope);
    }

    /// Why `name` is not a tool now, when an upstream that is down (or has
    /// not answered yet) may serve it: with prefixes, the upstream whose
    /// prefix it has; without, every upstream not serving.
    fn unknown_tool_reason(&self, name: &str) -> Option<String> {
        let serving = |l: &Link| l.health().state == UpstreamState::Up;
        match self.naming.mode {
            Namespace::Always => self
                .links
                .iter()
                .filter(|l| {
                    name.strip_prefix(l.spec.prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(self.naming.separator.as_str()))
                })
                .max_by_key(|l| l.spec.prefix.len())
                .filter(|l| !serving(l))
                .map(|l| l.down_reason()),
            Namespace::Never => {
                let down: Vec<String> = self
                    .links
                    .iter()
                    .filter(|l| !serving(l))
                    .map(|l| l.down_reason())
                    .collect();
                (!down.is_empty()).then(|| {
                    format!(
                        "it may be served by an upstream that is not serving now: {}",
                        down.join("; ")
                    )
                })
            }
        }
    }

    /// With `fail_closed`, lists fail while an upstream is down, naming it.
    fn apply_fail_closed(&self) {
        if !self.fail_closed {
            return;
        }
        let down: Vec<String> = self
            .links
            .iter()
            .filter(|l| l.health().state != UpstreamState::Up)
            .map(|l| l.down_reason())
            .collect();
        let error = (!down.is_empty()).then(|| {
            ErrorObject::internal(format!(
                "the list is incomplete (fail_closed): {}",
                down.join("; ")
            ))
        });
        self.server.set_list_failure(error);
    }

    fn refresh(&self, i: usize, listing: &Listing) {
        self.set_part(i, listing);
        self.rebuild();
    }

    fn clear(&self, i: usize) {
        self.refresh(i, &Listing::default());
    }
}

/// Merges one kind of entry in upstream order, then each upstream's
/// order, each name once. Before serving starts (`serving` false), a name
/// two upstreams offer goes to the first in configuration order, so every
/// replica decides alike. Once serving, a name stays with the upstream it
/// is claimed by, so an upstream that answers late (or adds a name) never
/// takes a name that clients already call: its entry is the one left out.
/// A claim lasts while its upstream offers the name, or while `waits` says
/// the upstream is down. Returns the merged entries and each left-out
/// `(name, keeper, left out)`.
fn merge<T: Clone>(
    parts: &[Vec<T>],
    name: impl Fn(&T) -> &str,
    claims: &mut HashMap<String, usize>,
    serving: bool,
    waits: impl Fn(usize) -> bool,
) -> (Vec<T>, Vec<(String, usize, usize)>) {
    let mut owner: HashMap<&str, usize> = HashMap::new();
    for (i, part) in parts.iter().enumerate() {
        for item in part {
            let n = name(item);
            let claimed = claims.get(n).copied();
            match owner.get(n) {
                // The claimant keeps it over anyone before it.
                Some(_) if claimed == Some(i) => {
                    owner.insert(n, i);
                }
                Some(_) => {}
                None => {
                    // Claimed by another upstream that still offers it or
                    // is down: not this one's.
                    let other = claimed
                        .filter(|&c| c != i && (waits(c) || parts[c].iter().any(|t| name(t) == n)));
                    owner.insert(n, other.unwrap_or(i));
                }
            }
        }
    }
    let mut merged = Vec::new();
    let mut lost = Vec::new();
    let mut taken = std::collections::HashSet::new();
    for (i, part) in parts.iter().enumerate() {
        for item in part {
            let n = name(item);
            let keeper = owner.get(n).copied().unwrap_or(i);
            if keeper == i && taken.insert(n) {
                merged.push(item.clone());
            } else if keeper != i {
                lost.push((n.to_owned(), keeper, i));
            }
        }
    }
    if serving {
        claims.retain(|n, c| waits(*c) && !owner.contains_key(n.as_str()));
        for (n, i) in owner {
            claims.insert(n.to_owned(), i);
        }
    }
    (merged, lost)
}

/// An upstream's first listing, as start-up found it.
pub(crate) enum First {
    /// Listed in time.
    Listed(Listing),
    /// Failed (it is marked down).
    Failed,
    /// Still connecting: the supervisor takes it over.
    Pending(AbortOnDropHandle<Result<Listing, ClientError>>),
}

/// Connects every upstream at once, waiting for their first listing until
/// `wait` has passed.
async fn first_listings(links: &[Arc<Link>], wait: Duration) -> Vec<First> {
    let deadline = tokio::time::Instant::now() + wait;
    let tasks: Vec<_> = links
        .iter()
        .map(|l| {
            let l = Arc::clone(l);
            AbortOnDropHandle::new(tokio::spawn(async move { l.connect().await }))
        })
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    for (mut task, link) in tasks.into_iter().zip(links) {
        // One line for each upstream: serving, starting or down (the
        // last said by `mark_down`).
        out.push(match tokio::time::timeout_at(deadline, &mut task).await {
            Ok(Ok(Ok(listing))) => {
                tracing::info!(
                    upstream = link.name(),
                    "serving: {} tools, {} prompts, {} resources",
                    listing
                        .tools
                        .iter()
                        .filter(|t| link.spec.admits(&t.name))
                        .count(),
                    listing.prompts.len(),
                    listing.resources.len() + listing.templates.len()
                );
                First::Listed(listing)
            }
            Ok(Ok(Err(e))) => {
                link.mark_down(&e.to_string()).await;
                First::Failed
            }
            Ok(Err(e)) => {
                link.mark_down(&e.to_string()).await;
                First::Failed
            }
            Err(_) => {
                tracing::info!(
                    upstream = link.name(),
                    "starting: no answer within start_wait_ms = {}; serving without it until it \
                     answers",
                    wait.as_millis()
                );
                First::Pending(task)
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Kind, merge};
    use std::collections::HashMap;
    use toolwire::Resource;

    fn resource(uri: &str, description: &str) -> Resource {
        Resource::builder(uri, "r")
            .description(description)
            .handler(|_cx| async { "x" })
            .expect("a resource")
    }

    #[test]
    fn a_merged_list_is_changed_when_any_definition_is_not_only_a_name() {
        let mut kind: Kind<Resource> = Kind::new(1);
        let list = vec![resource("mem://a", "one")];
        let first = kind.changed(&list).expect("nothing served yet");
        kind.served = Some(first.clone());
        assert_eq!(kind.changed(&list), None, "the same list");
        assert_eq!(
            kind.changed(&[resource("mem://a", "one")]),
            None,
            "an equal list"
        );
        let redescribed = kind
            .changed(&[resource("mem://a", "two")])
            .expect("same URI, new description: changed");
        assert_ne!(redescribed, first);
        assert!(kind.changed(&[]).is_some(), "emptied");
    }

    fn names(
        parts: &[Vec<&'static str>],
        claims: &mut HashMap<String, usize>,
        serving: bool,
        down: &[usize],
    ) -> (Vec<&'static str>, Vec<(String, usize, usize)>) {
        merge(parts, |s: &&str| *s, claims, serving, |i| down.contains(&i))
    }

    #[test]
    fn before_serving_the_first_upstream_in_order_keeps_a_name() {
        let mut claims = HashMap::new();
        let (merged, lost) = names(&[vec!["a", "b"], vec!["b", "c"]], &mut claims, false, &[]);
        assert_eq!(merged, ["a", "b", "c"]);
        assert_eq!(lost, [("b".to_owned(), 0, 1)]);
        assert!(claims.is_empty(), "nothing is claimed before serving");
    }

    #[test]
    fn once_serving_a_late_upstream_cannot_take_a_served_name() {
        let mut claims = HashMap::new();
        // Upstream 0 is late: only upstream 1 is served.
        let (merged, _) = names(&[vec![], vec!["b", "c"]], &mut claims, true, &[]);
        assert_eq!(merged, ["b", "c"]);
        let (merged, lost) = names(&[vec!["a", "b"], vec!["b", "c"]], &mut claims, true, &[]);
        assert_eq!(merged, ["a", "b", "c"], "`b` still from upstream 1");
        assert_eq!(lost, [("b".to_owned(), 1, 0)]);
        assert_eq!(claims.get("b"), Some(&1));
    }

    #[test]
    fn a_down_upstreams_names_wait_for_it_and_a_dropped_name_is_free() {
        let mut claims = HashMap::new();
        names(&[vec!["x"], vec![]], &mut claims, true, &[]);
        // Upstream 0 is down; upstream 1 offers its name meanwhile.
        let (merged, lost) = names(&[vec![], vec!["x"]], &mut claims, true, &[0]);
        assert!(merged.is_empty(), "{merged:?}");
        assert_eq!(lost, [("x".to_owned(), 0, 1)]);
        // Back up without `x`: the name is free for upstream 1.
        let (merged, lost) = names(&[vec!["y"], vec!["x"]], &mut claims, true, &[]);
        assert_eq!(merged, ["y", "x"]);
        assert!(lost.is_empty());
        assert_eq!(claims.get("x"), Some(&1));
    }
}
