//! The [`Gateway`]: a [`Server`] whose tools and prompts are the merged,
//! namespaced lists of its upstreams, kept current by one supervisor task
//! per upstream.

use crate::GatewayError;
use crate::config::{GatewayConfig, Namespace};
use crate::names::{self, NameProblem, Naming};
use crate::proxy;
use crate::upstream::{Link, Listing, UpstreamHealth, UpstreamState, backoff};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolwire::proto::ErrorObject;
use toolwire::proto::types::{CacheScope, SubscriptionFilter};
use toolwire::{HandlerError, Prompt, Resource, ResourceTemplate, Server, ServerConfig, Tool};

/// The gateway's own resource: its health as JSON (`toolwire read
/// gateway://health`).
pub const HEALTH_URI: &str = "gateway://health";

/// How often a supervisor checks that a stdio upstream is still alive.
const LIVENESS_TICK: Duration = Duration::from_millis(250);

/// One MCP endpoint in front of many MCP servers.
///
/// [`Gateway::start`] connects to every upstream of a [`GatewayConfig`],
/// lists their tools and prompts, and registers them on a [`Server`] under
/// namespaced names (`<prefix><separator><name>`). Serve
/// [`server`](Self::server) like any other (stdio, HTTP, mounted in a
/// router). Each upstream then has a supervisor that relays its list
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
    /// Each upstream's current entries, by upstream index.
    parts: Mutex<Parts>,
    stop: CancellationToken,
}

#[derive(Default)]
struct Parts {
    tools: Vec<Vec<Tool>>,
    prompts: Vec<Vec<Prompt>>,
    resources: Vec<Vec<Resource>>,
    templates: Vec<Vec<ResourceTemplate>>,
    /// The gateway's own resources, first in the resource list.
    own: Vec<Resource>,
    problems: Vec<NameProblem>,
}

impl Gateway {
    /// Connects to every upstream (at once), builds the merged lists and
    /// starts the supervisors.
    ///
    /// `server_config` names the gateway and carries the server settings
    /// (keyring, paging, bus); its `ttl` is lowered to the smallest `ttlMs`
    /// a modern upstream lists with, and its `cacheScope` becomes `private`
    /// if any upstream's is.
    ///
    /// An upstream that cannot be reached is left out and retried with
    /// backoff; its calls get an error naming it.
    ///
    /// # Errors
    ///
    /// [`GatewayError::Collision`] when `namespace = "never"` and two
    /// upstreams offer the same name.
    pub async fn start(
        config: GatewayConfig,
        server_config: ServerConfig,
    ) -> Result<Self, GatewayError> {
        let links: Vec<Arc<Link>> = config.upstreams().iter().cloned().map(Link::new).collect();
        let listings = futures_join(&links).await;
        let mut server_config = server_config;
        let mut ttl: Option<u64> = None;
        let mut private = false;
        for listing in listings.iter().flatten() {
            if let Some(t) = listing.ttl_ms {
                ttl = Some(ttl.map_or(t, |m| m.min(t)));
            }
            private |= listing.private;
        }
        if let Some(t) = ttl {
            let t = Duration::from_millis(t);
            if t < server_config.ttl() {
                server_config = server_config.with_ttl(t);
            }
        }
        if private {
            server_config = server_config.with_cache_scope(CacheScope::Private);
        }
        // Each merged list says which version it is, so replicas can be
        // compared.
        server_config = server_config.with_list_fingerprints(true);
        let gateway = Self {
            inner: Arc::new(Inner {
                server: Server::new(server_config),
                naming: Naming {
                    separator: config.separator().to_owned(),
                    mode: config.namespace(),
                },
                parts: Mutex::new(Parts {
                    tools: vec![Vec::new(); links.len()],
                    prompts: vec![Vec::new(); links.len()],
                    resources: vec![Vec::new(); links.len()],
                    templates: vec![Vec::new(); links.len()],
                    own: Vec::new(),
                    problems: Vec::new(),
                }),
                links,
                fail_closed: config.fail_closed(),
                stop: CancellationToken::new(),
            }),
        };
        gateway.add_health_resource();
        for (i, listing) in listings.iter().enumerate() {
            if let Some(listing) = listing {
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
        // Serving starts once every reachable upstream's change relay is
        // open, so no change made through the gateway can be missed.
        let mut ready = Vec::new();
        for (i, link) in gateway.inner.links.iter().enumerate() {
            let (tx, rx) = tokio::sync::oneshot::channel();
            ready.push(rx);
            tokio::spawn(supervise(
                Arc::downgrade(&gateway.inner),
                i,
                Arc::clone(link),
                listings[i].is_some(),
                tx,
            ));
        }
        for rx in ready {
            let _ = rx.await;
        }
        Ok(gateway)
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
        let server = &self.inner.server;
        let mut hash = Sha256::new();
        for name in server.tool_names() {
            if let Some(tool) = server.tool(&name) {
                hash.update(serde_json::to_vec(tool.definition()).unwrap_or_default());
                hash.update(b"\n");
            }
        }
        hex(&hash.finalize())
    }

    /// [`HEALTH_URI`]: the upstreams' health and the tool list's
    /// fingerprint as JSON, never cached.
    fn add_health_resource(&self) {
        let weak = Arc::downgrade(&self.inner);
        let resource = Resource::builder(HEALTH_URI, "gateway-health")
            .description("The gateway's upstreams (state, restarts, era, tools) and its tool list's fingerprint")
            .mime_type("application/json")
            .ttl(Duration::ZERO)
            .cache_scope(CacheScope::Private)
            .handler(move |_cx| {
                let gateway = weak.upgrade().map(|inner| Gateway { inner });
                async move {
                    let Some(gateway) = gateway else {
                        return Err(HandlerError::failed("the gateway is closed"));
                    };
                    let report = serde_json::json!({
                        "upstreams": gateway.health(),
                        "toolsFingerprint": gateway.tools_fingerprint(),
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
        let mut tools = Vec::new();
        let mut problems = Vec::new();
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
            match proxy::tool(link, def, &exposed, description) {
                Ok(t) => tools.push(t),
                Err(e) => tracing::warn!(upstream = up.key, "tool {:?} left out: {e}", def.name),
            }
        }
        let space = proxy::UriSpace::new(
            (self.naming.mode == Namespace::Always).then_some(up.prefix.as_str()),
        );
        let mut resources = Vec::new();
        for def in &listing.resources {
            match proxy::resource(link, def, &space) {
                Ok(r) => resources.push(r),
                Err(e) => tracing::warn!(upstream = up.key, "resource {:?} left out: {e}", def.uri),
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
            parts.tools[i] = tools;
            parts.prompts[i] = prompts;
            parts.resources[i] = resources;
            parts.templates[i] = templates;
            parts
                .problems
                .retain(|p| !matches!(p, NameProblem::Invalid { upstream, .. } | NameProblem::TooLong { upstream, .. } if *upstream == up.key));
            parts.problems.extend(problems);
        }
    }

    /// Merges the parts (upstream order, then each upstream's order; the
    /// first upstream keeps a name two offer) and swaps them in.
    fn rebuild(&self) {
        let Ok(mut parts) = self.parts.lock() else {
            return;
        };
        let mut owner: HashMap<String, usize> = HashMap::new();
        let mut tools = Vec::new();
        let mut collisions = Vec::new();
        for (i, part) in parts.tools.iter().enumerate() {
            for tool in part {
                match owner.get(tool.name()) {
                    Some(&first) => collisions.push(NameProblem::Collision {
                        exposed: tool.name().to_owned(),
                        first: self.links[first].name().to_owned(),
                        second: self.links[i].name().to_owned(),
                    }),
                    None => {
                        owner.insert(tool.name().to_owned(), i);
                        tools.push(tool.clone());
                    }
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        let prompts: Vec<Prompt> = parts
            .prompts
            .iter()
            .flatten()
            .filter(|p| seen.insert(p.name().to_owned()))
            .cloned()
            .collect();
        let mut seen = std::collections::HashSet::new();
        let resources: Vec<Resource> = parts
            .own
            .iter()
            .chain(parts.resources.iter().flatten())
            .filter(|r| seen.insert(r.uri().to_owned()))
            .cloned()
            .collect();
        let mut seen = std::collections::HashSet::new();
        let templates: Vec<ResourceTemplate> = parts
            .templates
            .iter()
            .flatten()
            .filter(|t| seen.insert(t.uri_template().to_owned()))
            .cloned()
            .collect();
        parts
            .problems
            .retain(|p| !matches!(p, NameProblem::Collision { .. }));
        parts.problems.extend(collisions);
        // The parts stay locked until the lists are swapped in, so two
        // supervisors refreshing at once cannot swap in an older merge
        // after a newer one.
        self.apply_fail_closed();
        // Names are unique by construction, so no call can fail. A list
        // whose definitions did not change is left alone, so listeners hear
        // only of real changes.
        let server = &self.server;
        let same_tools = {
            let now = server.tool_names();
            now.len() == tools.len()
                && tools.iter().zip(&now).all(|(t, n)| {
                    server
                        .tool(n)
                        .is_some_and(|old| old.definition() == t.definition())
                })
        };
        if !same_tools && let Err(e) = server.replace_tools(tools) {
            tracing::error!("merged tool list refused: {e}");
        }
        let same_prompts = {
            let now = server.prompt_names();
            now.len() == prompts.len()
                && prompts.iter().zip(&now).all(|(p, n)| {
                    server
                        .prompt(n)
                        .is_some_and(|old| old.definition() == p.definition())
                })
        };
        if !same_prompts && let Err(e) = server.replace_prompts(prompts) {
            tracing::error!("merged prompt list refused: {e}");
        }
        let same_resources = server.resource_uris()
            == resources
                .iter()
                .map(|r| r.uri().to_owned())
                .collect::<Vec<_>>()
            && server.resource_template_uris()
                == templates
                    .iter()
                    .map(|t| t.uri_template().to_owned())
                    .collect::<Vec<_>>();
        if !same_resources && let Err(e) = server.replace_resources(resources, templates) {
            tracing::error!("merged resource list refused: {e}");
        }
        drop(parts);
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

/// Connects every upstream at once.
async fn futures_join(links: &[Arc<Link>]) -> Vec<Option<Listing>> {
    let tasks: Vec<_> = links
        .iter()
        .map(|l| {
            let l = Arc::clone(l);
            tokio::spawn(async move {
                match l.connect().await {
                    Ok(listing) => Some(listing),
                    Err(e) => {
                        l.mark_down(&e.to_string()).await;
                        None
                    }
                }
            })
        })
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        out.push(t.await.ok().flatten());
    }
    out
}

/// Keeps upstream `i` current until the gateway stops: follows its list
/// changes, and brings it back with backoff when it goes down.
async fn supervise(
    gateway: std::sync::Weak<Inner>,
    i: usize,
    link: Arc<Link>,
    mut up: bool,
    ready: tokio::sync::oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    if !up && let Some(r) = ready.take() {
        let _ = r.send(());
    }
    let mut attempt: u32 = 0;
    loop {
        let Some(stop) = gateway.upgrade().map(|g| g.stop.clone()) else {
            return;
        };
        if stop.is_cancelled() {
            return;
        }
        if !up {
            tokio::select! {
                () = tokio::time::sleep(backoff(attempt)) => {}
                () = stop.cancelled() => return,
            }
            attempt = attempt.saturating_add(1);
            match link.connect().await {
                Ok(listing) => {
                    link.note_restart();
                    tracing::info!(upstream = link.name(), "upstream is back");
                    let Some(g) = gateway.upgrade() else { return };
                    g.refresh(i, &listing);
                    up = true;
                }
                Err(e) => {
                    link.mark_down(&e.to_string()).await;
                    continue;
                }
            }
        }
        // Up: follow the upstream's list changes until the relay breaks.
        let why = follow(&gateway, i, &link, &stop, ready.take()).await;
        let Some(why) = why else { return };
        let stdio_lost = link.client().and_then(|c| c.connection_lost());
        match stdio_lost {
            Some(lost) => {
                // The stdio process is gone: its tools go until it is back.
                let why = if why == lost {
                    why
                } else {
                    format!("{why} ({lost})")
                };
                link.mark_down(&why).await;
                if let Some(g) = gateway.upgrade() {
                    g.clear(i);
                }
                up = false;
            }
            None => {
                // The relay broke but the upstream may still serve: list it
                // again when the relay is back.
                tracing::info!(upstream = link.name(), "change relay lost: {why}");
                tokio::select! {
                    () = tokio::time::sleep(backoff(attempt)) => {}
                    () = stop.cancelled() => return,
                }
                attempt = attempt.saturating_add(1);
                match link.relist().await {
                    Ok(listing) => {
                        attempt = 0;
                        let Some(g) = gateway.upgrade() else { return };
                        g.refresh(i, &listing);
                    }
                    Err(e) => {
                        link.mark_down(&e.to_string()).await;
                        if let Some(g) = gateway.upgrade() {
                            g.clear(i);
                        }
                        up = false;
                    }
                }
            }
        }
    }
}

/// Follows one upstream's change notifications; returns why it stopped, or
/// `None` when the gateway stopped.
async fn follow(
    gateway: &std::sync::Weak<Inner>,
    i: usize,
    link: &Link,
    stop: &CancellationToken,
    ready: Option<tokio::sync::oneshot::Sender<()>>,
) -> Option<String> {
    let client = link.client()?;
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        resources_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let mut subscription = match client.listen(filter).await {
        Ok(s) => Some(s),
        Err(e) => {
            // An upstream without subscriptions still gets supervised.
            tracing::debug!(upstream = link.name(), "no change relay: {e}");
            None
        }
    };
    // What changed before the relay opened (since the listing that
    // brought the upstream up) is caught by listing once more.
    match link.relist().await {
        Ok(listing) => gateway.upgrade()?.refresh(i, &listing),
        Err(e) => return Some(format!("listing after the relay opened failed: {e}")),
    }
    if let Some(r) = ready {
        let _ = r.send(());
    }
    let mut tick = tokio::time::interval(LIVENESS_TICK);
    loop {
        let next = async {
            match subscription.as_mut() {
                Some(s) => s.next().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = stop.cancelled() => return None,
            () = link.broken.notified() => {
                if let Some(lost) = client.connection_lost() {
                    return Some(lost);
                }
            }
            _ = tick.tick() => {
                if let Some(lost) = client.connection_lost() {
                    return Some(lost);
                }
            }
            n = next => match n {
                Some(Ok(_change)) => {
                    let listing = match link.relist().await {
                        Ok(l) => l,
                        Err(e) => return Some(format!("listing after a change failed: {e}")),
                    };
                    let g = gateway.upgrade()?;
                    g.refresh(i, &listing);
                }
                Some(Err(e)) => return Some(format!("the change relay failed: {e}")),
                None => return Some("the upstream closed the change relay".into()),
            },
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
