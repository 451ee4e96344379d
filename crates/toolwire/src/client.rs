//! The MCP client: stdio or Streamable HTTP, stateless per request.
//!
//! A [`Client`] sends each request with the `_meta` the 2026-07-28 revision
//! requires (protocol version, the capabilities its input handlers imply,
//! `clientInfo`), and on HTTP with the standard headers and the
//! `Mcp-Param-*` mirrors of `x-mcp-header` parameters. On top of single
//! requests it handles:
//!
//! - version negotiation: a `-32022` answer is retried once with a version
//!   from `data.supported` that the client also speaks;
//! - multi round-trip requests: `input_required` results are answered by the
//!   registered [`InputHandler`]s and the request retried, up to a round cap
//!   ([`Client::call_tool_once`] hands the result to the caller instead);
//! - caching of the cacheable results, honouring `ttlMs` and `cacheScope`,
//!   invalidated by change notifications from a [`Subscription`];
//! - `x-mcp-header` rules: tools with invalid annotations are dropped from
//!   [`Client::list_tools`], and a `-32020` answer to `tools/call` refreshes
//!   the tool list once and retries once;
//! - `structuredContent` checked against the tool's `outputSchema` (a network
//!   `$ref` is never fetched; a tool whose `outputSchema` cannot be used is
//!   dropped from the list with a warning and never called);
//! - cancellation: dropping a call's future closes its HTTP stream, or sends
//!   `notifications/cancelled` on stdio.
//!
//! - both eras: in the default [`ProtocolMode::Auto`] the first request is a
//!   `server/discover` probe, and a legacy answer makes the client fall
//!   back to the `initialize` handshake (2025-11-25, 2025-06-18 or
//!   2025-03-26) for the client's lifetime. In a legacy session the
//!   server's own requests (elicitation, sampling, roots) are answered by
//!   the same input handlers, its list changes feed the cache and
//!   [`Subscription`]s, and results come back in the same types.
//!
//! HTTPS uses rustls with the platform's root certificates (or the Mozilla
//! roots with the `webpki-roots` feature) plus any CA given to
//! [`ClientBuilder::with_ca_pem`], and HTTP/2 where the server offers it.

mod answer;
#[cfg(feature = "oauth")]
pub mod auth;
mod builder;
mod cache;
mod engine;
mod era;
mod error;
mod input;
mod legacy;
mod listen;
mod method;
mod mrtr;
mod notification;
mod options;
mod task;
mod tools;
pub(crate) mod transport;
mod wire;

#[cfg(test)]
mod tests;

pub use answer::Relayed;
pub use builder::ClientBuilder;
pub use era::{ProtocolEra, ProtocolMode};
pub use error::ClientError;
pub use input::{InputError, InputHandler};
pub use listen::{ChangeNotification, MAX_PENDING_NOTIFICATIONS, Subscription};
pub use options::{RequestOptions, ToolCall};
pub use task::{Started, TaskHandle};

use cache::Cache;
use input::InputHandlers;
use method::MethodInfo;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tools::ToolIndex;
use toolwire_proto::types::{
    CallToolResult, ClientCapabilities, CompleteRequest, CompleteRequestParams, CompleteResult,
    DiscoverRequest, DiscoverResult, GetPromptRequest, GetPromptResult, ListPromptsRequest,
    ListResourceTemplatesRequest, ListResourcesRequest, ListToolsRequest, ListToolsResult, Prompt,
    ReadResourceRequest, ReadResourceResult, RequestMethod, Resource, ResourceTemplate,
    ResultOrInputRequired, SubscriptionFilter, Tool,
};
use transport::{Inbound, Transport, TransportKind};

/// Most pages one `list_*` walk fetches before it gives up, so a server
/// that keeps returning cursors cannot loop the client forever.
const MAX_PAGES: usize = 1000;

/// A connection to one MCP server. Cheap to clone; clones share the
/// transport, the cache and the negotiated protocol version.
///
/// ```no_run
/// # async fn run() -> Result<(), toolwire::ClientError> {
/// use serde_json::json;
///
/// let mut command = tokio::process::Command::new("toolwire");
/// command.arg("serve");
/// let client = toolwire::ClientBuilder::new().spawn(command)?;
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// let result = client.call_tool("echo", json!({"text": "hi"})).await?;
/// println!("{:?}", result.content);
/// client.close().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    transport: Arc<dyn Transport>,
    kind: TransportKind,
    capabilities: ClientCapabilities,
    /// The client's capabilities and `clientInfo` as the wire has them:
    /// written into every request's `_meta` as they are, not serialized
    /// each time (the legacy `initialize` reads them back).
    capabilities_raw: Box<RawValue>,
    info_raw: Option<Box<RawValue>>,
    handlers: InputHandlers,
    versions: Vec<String>,
    version: RwLock<String>,
    next_id: AtomicI64,
    next_token: AtomicU64,
    cache: Arc<Cache>,
    tools: ToolIndex,
    max_rounds: usize,
    /// Whether the client declared the Tasks extension.
    tasks: bool,
    timeout: Option<Duration>,
    max_time: Option<Duration>,
    credentials: RwLock<Option<Arc<str>>>,
    /// The HTTP transport's auth provider, whose principal partitions the
    /// `private` cache entries instead of `credentials`.
    #[cfg(feature = "oauth")]
    auth: Option<Arc<dyn auth::AuthProvider>>,
    mode: ProtocolMode,
    /// The era, once decided; kept for the client's lifetime.
    era: RwLock<Option<era::EraState>>,
    /// Serialises the probe and the legacy handshake.
    handshake: tokio::sync::Mutex<()>,
    /// What the server sends on its own, until the task that handles it
    /// starts.
    inbound_rx: Mutex<Option<mpsc::UnboundedReceiver<Inbound>>>,
    /// Legacy change notifications, for the legacy subscriptions; an error
    /// when the connection that carries them is gone.
    changes: broadcast::Sender<Result<ChangeNotification, Arc<str>>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("transport", &self.inner.kind)
            .field("protocol_version", &self.protocol_version())
            .field("capabilities", &self.inner.capabilities)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A builder with the default settings.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// Speaks stdio to `command`, with the default settings.
    pub fn spawn(command: tokio::process::Command) -> Result<Self, ClientError> {
        ClientBuilder::new().spawn(command)
    }

    /// Speaks Streamable HTTP to `url`, with the default settings.
    pub fn connect_http(url: &str) -> Result<Self, ClientError> {
        ClientBuilder::new().connect_http(url)
    }

    fn new(builder: ClientBuilder, transport: Arc<dyn Transport>) -> Self {
        let capabilities = builder.capabilities();
        let capabilities_json =
            serde_json::to_value(&capabilities).unwrap_or_else(|_| Value::Object(Map::new()));
        let info = builder
            .info
            .as_ref()
            .and_then(|i| serde_json::to_value(i).ok());
        let raw = |v: &Value| serde_json::value::to_raw_value(v).ok();
        // Serializing a `Value` cannot fail.
        let capabilities_raw = raw(&capabilities_json).unwrap_or_default();
        let info_raw = info.as_ref().and_then(raw);
        let version = builder.versions.first().cloned().unwrap_or_default();
        let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
        if let Some(sink) = transport.inbound() {
            sink.install(inbound_tx);
        }
        let kind = transport.kind();
        Self {
            inner: Arc::new(Inner {
                kind,
                transport,
                capabilities,
                capabilities_raw,
                info_raw,
                handlers: builder.handlers,
                versions: builder.versions,
                version: RwLock::new(version),
                next_id: AtomicI64::new(1),
                next_token: AtomicU64::new(1),
                cache: Arc::default(),
                tools: ToolIndex::default(),
                max_rounds: builder.max_input_rounds,
                tasks: builder.tasks,
                timeout: builder.timeout,
                max_time: builder.max_time,
                credentials: RwLock::new(builder.bearer.map(Into::into)),
                #[cfg(feature = "oauth")]
                auth: builder.auth.0.filter(|_| kind == TransportKind::Http),
                mode: builder.mode,
                era: RwLock::new(None),
                handshake: tokio::sync::Mutex::new(()),
                inbound_rx: Mutex::new(Some(inbound_rx)),
                changes: broadcast::channel(256).0,
            }),
        }
    }

    /// The protocol version in use: in a legacy session the negotiated
    /// one; otherwise the preferred modern one, or the one a `-32022`
    /// answer made the client switch to.
    pub fn protocol_version(&self) -> String {
        if let Some(session) = self.legacy_session() {
            return session.version.clone();
        }
        self.inner
            .version
            .read()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    /// The capabilities sent on every request, implied by the registered
    /// input handlers.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.inner.capabilities
    }

    /// Sets or clears the bearer token sent on HTTP requests. Cached
    /// `private` results of other credentials are not served to this one.
    pub fn set_bearer_token(&self, token: Option<String>) {
        self.inner
            .transport
            .set_authorization(token.as_ref().map(|t| format!("Bearer {t}")));
        if let Ok(mut c) = self.inner.credentials.write() {
            *c = token.map(Into::into);
        }
    }

    /// Why the connection is gone for good, once it is: on stdio, the
    /// server's output closed (it exited or crashed), and every request
    /// now fails. `None` while it serves, and always on HTTP, where each
    /// request opens its own connection. A supervisor polls this to
    /// restart a crashed server.
    pub fn connection_lost(&self) -> Option<String> {
        self.inner.transport.lost()
    }

    /// Forgets every cached result.
    pub fn clear_cache(&self) {
        self.inner.cache.clear();
    }

    /// `server/discover`: the server's versions, capabilities and
    /// instructions. Cached. With a legacy server, the `initialize` result
    /// in the same shape (`supportedVersions` is the negotiated version).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        self.ensure_era().await?;
        if let Some(v) = self.legacy_discover() {
            return parse(DiscoverRequest::METHOD, v);
        }
        let v = self
            .cached(
                MethodInfo::of::<DiscoverRequest>(),
                Map::new(),
                &RequestOptions::default(),
            )
            .await?;
        parse(DiscoverRequest::METHOD, v)
    }

    /// Every tool, walking all pages of `tools/list` (each page cached).
    /// Tools with invalid `x-mcp-header` annotations are left out, with a
    /// warning.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.all_pages::<ListToolsRequest, _>("tools").await
    }

    /// The names of a listed tool's input properties in the order the
    /// server wrote them: JSON objects are unordered, and a parsed
    /// [`Tool::input_schema`] holds its keys sorted, but servers write
    /// parameters in declaration order, the order a person expects to see.
    /// `None` until a `tools/list` page with the tool was fetched, or when
    /// its schema has no `properties` object.
    pub fn property_order(&self, tool: &str) -> Option<Vec<String>> {
        match self.inner.tools.lookup(tool) {
            tools::Lookup::Known(t) => t.property_order.as_deref().map(<[String]>::to_vec),
            _ => None,
        }
    }

    /// One page of `tools/list` (cached), without invalid tools.
    pub async fn list_tools_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListToolsResult, ClientError> {
        let v = self
            .cached(
                MethodInfo::of::<ListToolsRequest>(),
                cursor_params(cursor),
                &RequestOptions::default(),
            )
            .await?;
        parse(ListToolsRequest::METHOD, v)
    }

    /// Calls a tool, answering `input_required` results with the registered
    /// input handlers, and checks `structuredContent` against the tool's
    /// `outputSchema`.
    ///
    /// `arguments` must serialise to a JSON object (or `null` for none).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| ClientError::Protocol(format!("arguments do not serialise: {e}")))?;
        let call = match arguments {
            Value::Null => ToolCall::new(name),
            Value::Object(_) => ToolCall::new(name).with_arguments(arguments),
            other => {
                return Err(ClientError::Protocol(format!(
                    "tool arguments must be a JSON object, not {other}"
                )));
            }
        };
        self.call_tool_with(call).await
    }

    /// [`call_tool`](Self::call_tool) with options (progress, logs,
    /// timeout) and, possibly, answers from an earlier round.
    pub async fn call_tool_with(&self, call: ToolCall) -> Result<CallToolResult, ClientError> {
        match self.call_tool_inner(call, false).await? {
            ResultOrInputRequired::Complete(r) => Ok(r),
            ResultOrInputRequired::InputRequired(r) => Err(ClientError::InputRequired(Box::new(r))),
        }
    }

    /// Manual mode: one round of `tools/call`. An `input_required` result is
    /// returned as is; answer it and call again with
    /// [`ToolCall::retry`].
    pub async fn call_tool_once(
        &self,
        call: ToolCall,
    ) -> Result<ResultOrInputRequired<CallToolResult>, ClientError> {
        self.call_tool_inner(call, true).await
    }

    /// [`call_tool_once`](Self::call_tool_once) for an intermediary that
    /// passes the result on: a complete result is the JSON the server sent,
    /// unparsed (checked only to be an object with a `content` array, and
    /// not against the tool's `outputSchema`: the receiver checks it), with
    /// `resultType: "complete"` added if the server left it out. The
    /// arguments are still checked against the tool's input schema when
    /// the client knows the tool. When the request declares the Tasks
    /// extension (the client's [`with_tasks`](crate::ClientBuilder::with_tasks),
    /// or the capabilities of [`RequestOptions::with_client_capabilities`])
    /// and the server makes the call a task, the result is its
    /// `CreateTaskResult` (`resultType: "task"`), as the server sent it,
    /// not followed: the intermediary passes it on.
    ///
    /// [`call_tool_relayed`](Self::call_tool_relayed) says which of the
    /// two a complete answer is, from the scan that read it.
    ///
    /// # Errors
    ///
    /// As [`call_tool_once`](Self::call_tool_once).
    pub async fn call_tool_encoded(
        &self,
        call: ToolCall,
    ) -> Result<ResultOrInputRequired<Box<serde_json::value::RawValue>>, ClientError> {
        Ok(match self.call_tool_relayed_inner(call).await? {
            Relayed::Complete(raw) | Relayed::Task(raw) => ResultOrInputRequired::Complete(raw),
            Relayed::InputRequired(r) => ResultOrInputRequired::InputRequired(r),
        })
    }

    /// [`call_tool_encoded`](Self::call_tool_encoded), with a task handle
    /// told apart from a complete result: the one scan of the result that
    /// reads its `resultType` decides, so an intermediary need not read
    /// the result again to know what it passes on.
    ///
    /// # Errors
    ///
    /// As [`call_tool_once`](Self::call_tool_once).
    pub async fn call_tool_relayed(&self, call: ToolCall) -> Result<Relayed, ClientError> {
        self.call_tool_relayed_inner(call).await
    }

    /// Every prompt, walking all pages of `prompts/list` (each page cached).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.all_pages::<ListPromptsRequest, _>("prompts").await
    }

    /// `prompts/get`, answering `input_required` results with the input
    /// handlers.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        if !arguments.is_empty() {
            params.insert(
                "arguments".into(),
                serde_json::to_value(arguments).unwrap_or_default(),
            );
        }
        self.request_params::<GetPromptRequest>(params, &RequestOptions::default())
            .await
    }

    /// Every resource, walking all pages of `resources/list` (cached).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.all_pages::<ListResourcesRequest, _>("resources").await
    }

    /// Every resource template, walking all pages of
    /// `resources/templates/list` (cached).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.all_pages::<ListResourceTemplatesRequest, _>("resourceTemplates")
            .await
    }

    /// `resources/read`: cached when the first round completes; answers
    /// `input_required` results with the input handlers (those results are
    /// never cached).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        self.request_params::<ReadResourceRequest>(params, &RequestOptions::default())
            .await
    }

    /// `completion/complete`.
    pub async fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, ClientError> {
        self.request::<CompleteRequest>(params, RequestOptions::default())
            .await
    }

    /// Opens a `subscriptions/listen` stream and waits for its
    /// acknowledgement. Notifications it delivers invalidate the matching
    /// cached results.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        self.open_listen(filter).await
    }

    /// Any request, typed by its method marker. Cacheable methods go through
    /// the cache; methods that may answer `input_required` are driven by the
    /// input handlers. `params._meta` is completed with the protocol members.
    ///
    /// Prefer [`call_tool`](Self::call_tool) for tools: it also checks the
    /// output schema.
    pub async fn request<M: RequestMethod>(
        &self,
        params: M::Params,
        options: RequestOptions,
    ) -> Result<M::Result, ClientError> {
        let params = to_object(&params)?;
        self.request_params::<M>(params, &options).await
    }

    /// Manual mode for any request: one round; an `input_required` result is
    /// returned as is. Put `inputResponses` and `requestState` in the params
    /// of the retry yourself.
    pub async fn request_once<M: RequestMethod>(
        &self,
        params: M::Params,
        options: RequestOptions,
    ) -> Result<ResultOrInputRequired<M::Result>, ClientError> {
        let params = to_object(&params)?;
        match self
            .drive(MethodInfo::of::<M>(), params, &options, true)
            .await?
        {
            mrtr::Driven::Complete(v, _) | mrtr::Driven::Task(v) => {
                v.parse(M::METHOD).map(ResultOrInputRequired::Complete)
            }
            mrtr::Driven::InputRequired(r) => Ok(ResultOrInputRequired::InputRequired(r)),
        }
    }

    /// Closes the connection: on stdio, closes the server's stdin and waits
    /// for it to exit (killing it after a grace period).
    pub async fn close(&self) -> Result<(), ClientError> {
        self.inner.transport.close().await
    }

    async fn request_params<M: RequestMethod>(
        &self,
        params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<M::Result, ClientError> {
        if M::CALLS_TOOL {
            let call: ToolCall = tool_call_from_params(params, options)?;
            let v = match self.call_tool_inner(call, false).await? {
                ResultOrInputRequired::Complete(r) => serde_json::to_value(r).unwrap_or_default(),
                ResultOrInputRequired::InputRequired(r) => {
                    return Err(ClientError::InputRequired(Box::new(r)));
                }
            };
            return parse(M::METHOD, v);
        }
        match self
            .drive(MethodInfo::of::<M>(), params, options, false)
            .await?
        {
            mrtr::Driven::Complete(v, _) | mrtr::Driven::Task(v) => v.parse(M::METHOD),
            mrtr::Driven::InputRequired(r) => Err(ClientError::InputRequired(Box::new(r))),
        }
    }

    /// The items under `field` of every page of a list method, each page
    /// through the cache.
    async fn all_pages<M: RequestMethod, T: DeserializeOwned>(
        &self,
        field: &str,
    ) -> Result<Vec<T>, ClientError> {
        let (info, method) = (MethodInfo::of::<M>(), M::METHOD);
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut restarted = false;
        for _ in 0..MAX_PAGES {
            let page = self
                .cached(
                    info,
                    cursor_params(cursor.as_deref()),
                    &RequestOptions::default(),
                )
                .await;
            let mut page = match page {
                // Spec: server/utilities/pagination.mdx — cursors may stop
                // working (the list changed): drop every cached page and
                // walk again from the start, once.
                Err(e) if cursor.is_some() && e.is_definite() && !restarted => {
                    tracing::debug!("{method}: the cursor stopped working ({e}); starting over");
                    restarted = true;
                    self.inner.cache.remove_method(info);
                    items.clear();
                    cursor = None;
                    continue;
                }
                other => other?,
            };
            let next = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let list = page
                .as_object_mut()
                .and_then(|p| p.remove(field))
                .unwrap_or(Value::Null);
            let list: Vec<T> = serde_json::from_value(list).map_err(|e| {
                ClientError::Protocol(format!("malformed {method} result: `{field}`: {e}"))
            })?;
            items.extend(list);
            match next {
                Some(c) => cursor = Some(c),
                None => return Ok(items),
            }
        }
        Err(ClientError::Protocol(format!(
            "{method} returned more than {MAX_PAGES} pages"
        )))
    }
}

fn cursor_params(cursor: Option<&str>) -> Map<String, Value> {
    let mut params = Map::new();
    if let Some(c) = cursor {
        params.insert("cursor".into(), Value::String(c.to_owned()));
    }
    params
}

fn to_object<T: Serialize>(params: &T) -> Result<Map<String, Value>, ClientError> {
    match serde_json::to_value(params) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(other) => Err(ClientError::Protocol(format!(
            "request params must be a JSON object, not {other}"
        ))),
        Err(e) => Err(ClientError::Protocol(format!(
            "params do not serialise: {e}"
        ))),
    }
}

fn tool_call_from_params(
    mut params: Map<String, Value>,
    options: &RequestOptions,
) -> Result<ToolCall, ClientError> {
    let Some(Value::String(name)) = params.remove("name") else {
        return Err(ClientError::Protocol(
            "tools/call needs a string `name`".into(),
        ));
    };
    let mut call = ToolCall::new(name).with_options(options.clone());
    if let Some(args) = params.remove("arguments") {
        call = call.with_arguments(args);
    }
    if let Some(Value::Object(r)) = params.remove("inputResponses") {
        call.input_responses = Some(r);
    }
    if let Some(Value::String(s)) = params.remove("requestState") {
        call.request_state = Some(s);
    }
    Ok(call)
}

/// Reads a complete result as `T`.
pub(crate) fn parse<T: DeserializeOwned>(method: &str, v: Value) -> Result<T, ClientError> {
    serde_json::from_value(v)
        .map_err(|e| ClientError::Protocol(format!("malformed {method} result: {e}")))
}
