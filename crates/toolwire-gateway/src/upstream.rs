//! One upstream at run time: its client (reconnected or, for stdio,
//! respawned with backoff), what it lists, and its health.

use crate::config::{Endpoint, Upstream};
use crate::openapi::RestApi;
use crate::proxy::Holds;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::Notify;
use toolwire::proto::types::{
    CacheScope, Implementation, InputRequest, ListToolsRequest, PaginatedRequestParams, Prompt,
    Resource, ResourceTemplate, TASKS_EXTENSION, Tool,
};
use toolwire::{Client, ClientBuilder, ClientError, ProtocolEra, ProtocolMode, RequestOptions};

/// Most pages one upstream listing walks.
const MAX_PAGES: usize = 100;

/// The state of an upstream, as the gateway's health shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UpstreamState {
    /// Not connected yet.
    Starting,
    /// Connected and listed.
    Up,
    /// Unreachable, or its stdio process exited; being retried with backoff.
    Down,
}

/// One upstream's health.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamHealth {
    /// The upstream's key in the configuration.
    pub name: String,
    /// Up or down.
    pub state: UpstreamState,
    /// How often it was restarted (stdio) or reconnected (HTTP).
    pub restarts: u32,
    /// The protocol era it speaks, once known: `"modern"` or `"legacy"`.
    pub era: Option<&'static str>,
    /// Tools it contributes to the merged list.
    pub tools: usize,
    /// Why it was last down, if it was.
    pub last_error: Option<String>,
}

/// What an upstream lists.
#[derive(Debug, Default, Clone)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    /// Whether the upstream offers completion.
    pub(crate) completions: bool,
    /// `ttlMs` of the tool list, if the upstream is modern.
    pub(crate) ttl_ms: Option<u64>,
    /// Whether any of its lists is `private`.
    pub(crate) private: bool,
    /// Whether it is modern and offers the Tasks extension.
    pub(crate) tasks: bool,
    /// Each tool's input properties in the upstream's order, by tool name.
    pub(crate) orders: std::collections::HashMap<String, Vec<String>>,
}

/// A live upstream.
pub(crate) struct Link {
    pub(crate) spec: Upstream,
    client: RwLock<Option<Client>>,
    health: Mutex<UpstreamHealth>,
    /// Woken by a call that found the connection gone.
    pub(crate) broken: Notify,
    /// A legacy upstream's calls held open for a downstream answer.
    pub(crate) holds: Arc<Holds>,
    /// Whether the upstream, while up, offers the Tasks extension: only
    /// then do its calls pass a downstream client's declaration on.
    tasks: AtomicBool,
    /// How long start-up waits for the upstream's first listing (the
    /// gateway's `start_wait_ms`), named when a call finds it starting.
    start_wait: Duration,
    /// A REST API upstream, once its document is read.
    rest: RwLock<Option<Arc<RestApi>>>,
}

impl Link {
    pub(crate) fn new(spec: Upstream, start_wait: Duration) -> Arc<Self> {
        Arc::new(Self {
            start_wait,
            health: Mutex::new(UpstreamHealth {
                name: spec.key.clone(),
                state: UpstreamState::Starting,
                restarts: 0,
                era: None,
                tools: 0,
                last_error: None,
            }),
            holds: Arc::new(Holds::new(&spec.key)),
            spec,
            client: RwLock::new(None),
            broken: Notify::new(),
            tasks: AtomicBool::new(false),
            rest: RwLock::new(None),
        })
    }

    /// Whether the upstream is a REST API (`openapi`) rather than an MCP
    /// server.
    pub(crate) fn is_rest(&self) -> bool {
        matches!(self.spec.endpoint, Endpoint::OpenApi { .. })
    }

    /// The REST API, once its document is read.
    pub(crate) fn rest(&self) -> Option<Arc<RestApi>> {
        self.rest.read().ok().and_then(|r| r.clone())
    }

    pub(crate) fn name(&self) -> &str {
        &self.spec.key
    }

    /// Whether the upstream is up and offers the Tasks extension.
    pub(crate) fn offers_tasks(&self) -> bool {
        self.tasks.load(Ordering::Relaxed)
    }

    /// The client, while the upstream is up.
    pub(crate) fn client(&self) -> Option<Client> {
        self.client.read().ok().and_then(|c| c.clone())
    }

    pub(crate) fn health(&self) -> UpstreamHealth {
        match self.health.lock() {
            Ok(h) => h.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    fn update_health(&self, f: impl FnOnce(&mut UpstreamHealth)) {
        match self.health.lock() {
            Ok(mut h) => f(&mut h),
            Err(p) => f(&mut p.into_inner()),
        }
    }

    /// Why the upstream cannot serve now, for an error naming it.
    pub(crate) fn down_reason(&self) -> String {
        let h = self.health();
        if h.state == UpstreamState::Starting {
            return format!(
                "upstream {:?} has not answered yet (start-up waits start_wait_ms = {} for an \
                 upstream's first answer; raise start_wait_ms in the gateway configuration for \
                 one that starts slowly)",
                self.name(),
                self.start_wait.as_millis()
            );
        }
        match h.last_error {
            Some(e) => format!("upstream {:?} is unavailable: {e}", self.name()),
            None => format!("upstream {:?} is unavailable", self.name()),
        }
    }

    /// Connects (spawning a stdio upstream) and lists it. On success the
    /// upstream is up with the new client.
    pub(crate) async fn connect(&self) -> Result<Listing, ClientError> {
        if self.is_rest() {
            return self.read_document().await;
        }
        let client = self.build_client()?;
        let listed = tokio::time::timeout(self.spec.timeout, list(&client))
            .await
            .unwrap_or(Err(ClientError::Timeout(self.spec.timeout)));
        match listed {
            Ok(listing) => {
                let era = match client.era() {
                    Some(ProtocolEra::Legacy) => Some("legacy"),
                    Some(_) => Some("modern"),
                    None => None,
                };
                if let Ok(mut c) = self.client.write() {
                    *c = Some(client);
                }
                self.tasks.store(listing.tasks, Ordering::Relaxed);
                self.update_health(|h| {
                    h.state = UpstreamState::Up;
                    h.era = era;
                    h.tools = listing.tools.len();
                });
                Ok(listing)
            }
            Err(e) => {
                let _ = client.close().await;
                Err(e)
            }
        }
    }

    /// Reads a REST upstream's document: its operations are the listing.
    async fn read_document(&self) -> Result<Listing, ClientError> {
        let (api, tools) = RestApi::load(&self.spec)
            .await
            .map_err(ClientError::Transport)?;
        let orders = api.argument_orders();
        if let Ok(mut r) = self.rest.write() {
            *r = Some(Arc::new(api));
        }
        self.update_health(|h| {
            h.state = UpstreamState::Up;
            h.era = Some("openapi");
            h.tools = tools.len();
        });
        Ok(Listing {
            tools,
            orders,
            ..Listing::default()
        })
    }

    /// Lists the upstream again on its current client.
    pub(crate) async fn relist(&self) -> Result<Listing, ClientError> {
        if self.is_rest() {
            return self.read_document().await;
        }
        let client = self
            .client()
            .ok_or_else(|| ClientError::Transport(self.down_reason()))?;
        client.clear_cache();
        let listing = tokio::time::timeout(self.spec.timeout, list(&client))
            .await
            .unwrap_or(Err(ClientError::Timeout(self.spec.timeout)))?;
        self.update_health(|h| h.tools = listing.tools.len());
        self.tasks.store(listing.tasks, Ordering::Relaxed);
        Ok(listing)
    }

    /// Marks the upstream down, closing its client.
    pub(crate) async fn mark_down(&self, why: &str) {
        tracing::warn!(upstream = self.name(), "upstream down: {why}");
        let client = self.client.write().ok().and_then(|mut c| c.take());
        self.tasks.store(false, Ordering::Relaxed);
        self.update_health(|h| {
            h.state = UpstreamState::Down;
            h.last_error = Some(why.to_owned());
            h.tools = 0;
        });
        if let Some(client) = client {
            let _ = client.close().await;
        }
    }

    /// Closes the client for good (the gateway is closing).
    pub(crate) async fn shut(&self) {
        let client = self.client.write().ok().and_then(|mut c| c.take());
        if let Some(client) = client {
            let _ = client.close().await;
        }
    }

    pub(crate) fn note_restart(&self) {
        self.update_health(|h| h.restarts = h.restarts.saturating_add(1));
    }

    pub(crate) fn set_tool_count(&self, n: usize) {
        self.update_health(|h| h.tools = n);
    }

    fn build_client(&self) -> Result<Client, ClientError> {
        let mut builder = ClientBuilder::new()
            .with_protocol_mode(self.spec.mode)
            .with_request_timeout(Some(self.spec.timeout))
            .with_client_info(Implementation {
                name: "toolwire-gateway".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                title: None,
                description: None,
                icons: None,
                website_url: None,
            });
        if self.spec.mode != ProtocolMode::Legacy {
            // Its own requests (`tasks/*` of the tasks passed through)
            // declare the extension; a forwarded call declares what the
            // downstream client did.
            builder = builder.with_tasks();
        }
        if self.spec.mode != ProtocolMode::Modern {
            // A legacy upstream asks for input with its own requests; the
            // held-call relay turns them into `input_required` downstream.
            let holds = Arc::clone(&self.holds);
            builder = builder.with_elicitation(move |_key: String, params| {
                let holds = Arc::clone(&holds);
                async move { holds.ask(InputRequest::Elicit(params)).await }
            });
            let holds = Arc::clone(&self.holds);
            builder = builder.with_sampling(move |_key: String, params| {
                let holds = Arc::clone(&holds);
                async move { holds.ask(InputRequest::CreateMessage(params)).await }
            });
            let holds = Arc::clone(&self.holds);
            builder = builder.with_roots(move |_key: String, params| {
                let holds = Arc::clone(&holds);
                async move { holds.ask(InputRequest::ListRoots(params)).await }
            });
        }
        match &self.spec.endpoint {
            Endpoint::Stdio { argv, env, cwd } => {
                let mut command = tokio::process::Command::new(&argv[0]);
                command.args(&argv[1..]);
                command.envs(env.iter().map(|(k, v)| (k, v)));
                if let Some(cwd) = cwd {
                    command.current_dir(cwd);
                }
                builder.spawn(command)
            }
            Endpoint::OpenApi { .. } => Err(ClientError::Transport(
                "an openapi upstream has no MCP client".into(),
            )),
            Endpoint::Http {
                url,
                headers,
                bearer,
            } => {
                for (k, v) in headers {
                    builder = builder.with_http_header(k, v);
                }
                if let Some(token) = bearer {
                    builder = builder.with_bearer_token(token);
                }
                builder.connect_http(url)
            }
        }
    }
}

/// Every tool and prompt of `client`, page by page.
async fn list(client: &Client) -> Result<Listing, ClientError> {
    let legacy = matches!(client.era(), Some(ProtocolEra::Legacy));
    let mut listing = Listing::default();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = PaginatedRequestParams {
            cursor: cursor.take(),
            ..Default::default()
        };
        let page = client
            .request::<ListToolsRequest>(params, RequestOptions::new())
            .await?;
        for t in &page.tools {
            if let Some(order) = client.property_order(&t.name) {
                listing.orders.insert(t.name.clone(), order);
            }
        }
        listing.tools.extend(page.tools);
        if !legacy && !matches!(client.era(), Some(ProtocolEra::Legacy)) {
            listing.ttl_ms = Some(listing.ttl_ms.map_or(page.ttl_ms, |t| t.min(page.ttl_ms)));
            listing.private |= page.cache_scope == CacheScope::Private;
        }
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    if declares(client, "prompts").await {
        listing.prompts = client.list_prompts().await?;
    }
    if declares(client, "resources").await {
        listing.resources = client.list_resources().await?;
        listing.templates = client.list_resource_templates().await?;
    }
    listing.completions = declares(client, "completions").await;
    listing.tasks =
        !matches!(client.era(), Some(ProtocolEra::Legacy)) && offers_tasks(client).await;
    Ok(listing)
}

/// Whether the upstream declares the capability `name`.
async fn declares(client: &Client, name: &str) -> bool {
    match client.discover().await {
        Ok(d) => serde_json::to_value(&d.capabilities)
            .ok()
            .and_then(|c| c.get(name).cloned())
            .is_some_and(|v| !v.is_null()),
        Err(_) => false,
    }
}

/// Whether the (modern) upstream declares the Tasks extension.
async fn offers_tasks(client: &Client) -> bool {
    match client.discover().await {
        Ok(d) => d
            .capabilities
            .extensions
            .is_some_and(|e| e.contains_key(TASKS_EXTENSION)),
        Err(_) => false,
    }
}

/// The delay before attempt `n` (from 0) to bring an upstream back:
/// 250 ms doubling to 30 s.
pub(crate) fn backoff(n: u32) -> Duration {
    Duration::from_millis(250u64.saturating_mul(1 << n.min(7))).min(Duration::from_secs(30))
}
