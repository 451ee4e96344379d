//! The in-process test kit (feature `testing`): a [`TestClient`] that
//! drives a [`Server`] through the pipeline the transports use, with no
//! socket and no process.
//!
//! A request is encoded as a client would send it, decoded by
//! `Server::prepare_message` (or `Server::accept`, which also serves a
//! legacy session), served by `Server::dispatch` (through the server's
//! layers), and its `Outcome` encoded as the transport's reply, which the
//! client reads back into the `toolwire_proto` types. Notifications a handler emits, and the legacy
//! shim's server-to-client requests, arrive on the request's outbound
//! channel as they would on stdio; the client collects the first and
//! answers the second with its scripted answers.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use toolwire::testing::TestClient;
//! use toolwire::{Server, ServerConfig, Tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo {
//!     text: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::new(ServerConfig::new("demo", "1.0.0")).with_tool(
//!     Tool::builder("echo")
//!         .input::<Echo>()
//!         .handler(|input: Echo, _cx| async move { input.text })?,
//! )?;
//! let client = TestClient::new(&server);
//! let result = client.call_tool("echo", json!({"text": "hi"})).await?;
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! # Ok(())
//! # }
//! ```

mod error;
mod exchange;
mod listen;
mod notification;
mod redact;
mod script;

pub use error::TestError;
pub use listen::{ListenItem, TestSubscription};
pub use notification::TestNotification;
pub use redact::redacted;

use crate::legacy::Session;
use crate::server::Server;
use script::Script;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use toolwire_proto::types::{
    CallToolRequest, CallToolResult, ClientCapabilities, CompleteRequest, CompleteResult,
    CompletionArgument, CompletionReference, CreateMessageRequestParams, DiscoverRequest,
    DiscoverResult, ElicitRequestParams, GetPromptRequest, GetPromptResult, ListPromptsRequest,
    ListPromptsResult, ListResourceTemplatesRequest, ListResourceTemplatesResult,
    ListResourcesRequest, ListResourcesResult, ListRootsRequestParams, ListToolsRequest,
    ListToolsResult, LoggingLevel, ReadResourceRequest, ReadResourceResult, RequestMethod,
    ResultOrInputRequired, SubscriptionFilter, SubscriptionsListenRequest, Tool,
};

/// How long a request may take before the client gives up with
/// [`TestError::Timeout`], unless [`TestClient::with_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// At most this many `input_required` rounds are answered automatically
/// before [`TestError::TooManyRounds`].
pub const MAX_ROUNDS: u32 = 16;

/// A client that drives a [`Server`] in-process, through the same pipeline
/// as stdio and HTTP: decoding, the era decision, the one dispatch, the
/// typed outcome, and the encoded reply.
///
/// By default it speaks 2026-07-28: every request carries `_meta` with
/// `io.modelcontextprotocol/protocolVersion` and
/// `io.modelcontextprotocol/clientCapabilities`. [`TestClient::legacy`]
/// opens a legacy session with a real `initialize` instead.
///
/// Multi round-trip requests are answered automatically from the scripted
/// answers ([`answer_elicitation`](Self::answer_elicitation),
/// [`answer_sampling`](Self::answer_sampling),
/// [`answer_roots`](Self::answer_roots), [`queue_answer`](Self::queue_answer)),
/// or one round at a time with [`call_tool_once`](Self::call_tool_once) and
/// [`call_tool_retry`](Self::call_tool_retry).
///
/// Notifications a handler emits (progress, logs) are collected; read them
/// with [`take_notifications`](Self::take_notifications).
pub struct TestClient {
    server: Server,
    capabilities: Option<ClientCapabilities>,
    meta: Map<String, Value>,
    log_level: Option<LoggingLevel>,
    progress: bool,
    principal: Option<Arc<str>>,
    #[cfg(feature = "auth")]
    grant: Option<Arc<crate::auth::scope::Grant>>,
    timeout: Duration,
    script: Script,
    session: Option<Legacy>,
    next_id: AtomicI64,
    notifications: Mutex<Vec<TestNotification>>,
}

/// A legacy session the client opened, and where its unsolicited
/// notifications arrive.
struct Legacy {
    session: Arc<Session>,
    initialize: Value,
    unsolicited: Mutex<mpsc::UnboundedReceiver<bytes::Bytes>>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("server", &self.server)
            .field(
                "legacy",
                &self.session.as_ref().map(|l| l.session.version()),
            )
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// A 2026-07-28 client of `server` (a clone: it shares the server's
    /// registries, so tools added later are seen).
    pub fn new(server: &Server) -> Self {
        Self {
            server: server.clone(),
            capabilities: None,
            meta: Map::new(),
            log_level: None,
            progress: false,
            principal: None,
            #[cfg(feature = "auth")]
            grant: None,
            timeout: DEFAULT_TIMEOUT,
            script: Script::default(),
            session: None,
            next_id: AtomicI64::new(1),
            notifications: Mutex::new(Vec::new()),
        }
    }

    /// A legacy client of `server`: a real `initialize` at `version` (one
    /// of [`LEGACY_PROTOCOL_VERSIONS`](crate::LEGACY_PROTOCOL_VERSIONS); the
    /// server answers another with its newest) through the pipeline, then
    /// `notifications/initialized`. It declares every input capability
    /// (form elicitation, sampling, roots), since a legacy session's
    /// capabilities are fixed at `initialize`; use
    /// [`into_legacy`](Self::into_legacy) to declare fewer.
    ///
    /// The MRTR shim's server-to-client requests are answered from the
    /// scripted answers; one without an answer gets a JSON-RPC error.
    pub async fn legacy(server: &Server, version: &str) -> Result<Self, TestError> {
        let all = ClientCapabilities {
            elicitation: Some(Default::default()),
            sampling: Some(Default::default()),
            roots: Some(Default::default()),
            ..ClientCapabilities::default()
        };
        Self::new(server)
            .with_capabilities(all)
            .into_legacy(version)
            .await
    }

    /// Opens a legacy session at `version` with this client's capabilities
    /// (see [`legacy`](Self::legacy)).
    pub async fn into_legacy(mut self, version: &str) -> Result<Self, TestError> {
        let capabilities = self.declared_capabilities();
        let legacy = exchange::initialize(&self.server, version, &capabilities, self.next())?;
        self.session = Some(legacy);
        Ok(self)
    }

    /// The client capabilities every request declares, replacing the ones
    /// derived from the scripted answers (which are: `elicitation` with an
    /// elicitation answer, `sampling` with a sampling answer, `roots` with
    /// a roots answer).
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Adds a member to every request's `_meta` (after the protocol
    /// version and capabilities, which it may replace: to test the
    /// server's answer to a bad `_meta`).
    #[must_use]
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.insert(key.into(), value.into());
        self
    }

    /// Asks for log messages at `level` and above on every request
    /// (`io.modelcontextprotocol/logLevel`; in a legacy session,
    /// `logging/setLevel` through [`request`](Self::request)).
    #[must_use]
    pub fn with_log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Sends a `progressToken` with every request (the request's JSON-RPC
    /// id), so that handlers' progress notifications are sent.
    #[must_use]
    pub fn with_progress(mut self) -> Self {
        self.progress = true;
        self
    }

    /// Makes every request run as the authenticated `principal`
    /// ([`RequestContext::principal`](crate::RequestContext::principal), the
    /// rate-limit key, the binding of sealed `requestState`), as if a
    /// transport had verified it.
    #[must_use]
    pub fn with_principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(Arc::from(principal.into()));
        self
    }

    /// Makes every request run as `principal` holding `scopes`, as if the
    /// HTTP transport's resource server had verified a token granting them:
    /// entries declaring scopes (`ToolBuilder::scopes` and its kin) are
    /// refused with [`TestError::Forbidden`] and left out of lists when a
    /// scope is lacking. Only the entries' own scopes apply; the scope
    /// hierarchy and per-name scopes of an `AuthConfig` do not.
    #[cfg(feature = "auth")]
    #[must_use]
    pub fn with_grant(
        mut self,
        principal: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let principal: Arc<str> = Arc::from(principal.into());
        let policy = Arc::new(crate::auth::scope::ScopePolicy::default());
        let grant = crate::auth::scope::Grant {
            principal: Arc::clone(&principal),
            client: None,
            scopes: policy.expand(scopes.into_iter().map(Into::into)),
            policy,
            caller: None,
        };
        self.principal = Some(principal);
        self.grant = Some(Arc::new(grant));
        self
    }

    /// How long one request (and one wait on a listen stream) may take.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Answers elicitation input requests (MRTR rounds, and the legacy
    /// shim's `elicitation/create`) with `answer(params)`, an
    /// `ElicitResult` such as `{"action": "accept", "content": {...}}`.
    #[must_use]
    pub fn answer_elicitation<R: Serialize>(
        self,
        answer: impl Fn(&ElicitRequestParams) -> R + Send + Sync + 'static,
    ) -> Self {
        self.script
            .set_elicit(Box::new(move |p| to_value(&answer(p))));
        self
    }

    /// Answers sampling input requests with `answer(params)`, a
    /// `CreateMessageResult`.
    #[must_use]
    pub fn answer_sampling<R: Serialize>(
        self,
        answer: impl Fn(&CreateMessageRequestParams) -> R + Send + Sync + 'static,
    ) -> Self {
        self.script
            .set_sample(Box::new(move |p| to_value(&answer(p))));
        self
    }

    /// Answers `roots/list` input requests with `answer(params)`, a
    /// `ListRootsResult`.
    #[must_use]
    pub fn answer_roots<R: Serialize>(
        self,
        answer: impl Fn(&ListRootsRequestParams) -> R + Send + Sync + 'static,
    ) -> Self {
        self.script
            .set_roots(Box::new(move |p| to_value(&answer(p))));
        self
    }

    /// Queues `answer` for the next input request of any kind: queued
    /// answers are used first, in order (within a round, in the order of
    /// the input requests' keys), before the answer functions.
    pub fn queue_answer(&self, answer: impl Serialize) {
        self.script.queue(to_value(&answer));
    }

    /// The server this client drives.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The `initialize` result, in a legacy session.
    pub fn initialize_result(&self) -> Option<&Value> {
        self.session.as_ref().map(|l| &l.initialize)
    }

    /// The capabilities requests declare: [`with_capabilities`](Self::with_capabilities)'
    /// if set, else those of the scripted answers.
    pub fn declared_capabilities(&self) -> ClientCapabilities {
        match &self.capabilities {
            Some(c) => c.clone(),
            None => self.script.capabilities(),
        }
    }

    /// Every notification received since the last call, in order: those
    /// handlers emitted during requests (progress, logs, the legacy shim's
    /// `notifications/cancelled`) and, in a legacy session, the session's
    /// own (list changes, resource updates).
    pub fn take_notifications(&self) -> Vec<TestNotification> {
        if let Some(legacy) = &self.session
            && let Ok(mut rx) = legacy.unsolicited.lock()
        {
            while let Ok(msg) = rx.try_recv() {
                self.collect(&msg);
            }
        }
        self.notifications
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// Sends `method` with `params` (an object; `_meta` is added) and
    /// returns the result as it came, or the JSON-RPC error as
    /// [`TestError::Rpc`]. One round: an `input_required` result is
    /// returned as is. The escape hatch for anything the typed calls do not
    /// cover, such as malformed params or legacy-only methods.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, TestError> {
        self.exchange(method, params, None).await?.into_result()
    }

    /// [`request`](Self::request) as over HTTP with `headers`: the server's
    /// check of `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
    /// `Mcp-Param-*` against the body runs first (for a 2026-07-28
    /// request), and a mismatch is the `-32020` error the HTTP transport
    /// sends with `400`. Without this, no header check runs (stdio has
    /// none); the rest of the HTTP transport (status codes, `Accept`,
    /// `Origin`, sessions) needs a real HTTP server.
    #[cfg(feature = "http")]
    pub async fn request_with_headers(
        &self,
        method: &str,
        params: Value,
        headers: &[(&str, &str)],
    ) -> Result<Value, TestError> {
        let mut map = http::HeaderMap::new();
        for (name, value) in headers {
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| TestError::Unexpected(format!("header name {name:?}: {e}")))?;
            let value = http::HeaderValue::from_str(value)
                .map_err(|e| TestError::Unexpected(format!("header value {value:?}: {e}")))?;
            map.append(name, value);
        }
        self.exchange(method, params, Some(&map))
            .await?
            .into_result()
    }

    /// A typed request of any method (`M` is a marker type of
    /// [`toolwire_proto::types`], such as `ListToolsRequest`), with
    /// multi round-trip requests answered automatically.
    pub async fn send<M: RequestMethod>(&self, params: M::Params) -> Result<M::Result, TestError> {
        let params = to_value(&params);
        if M::MAY_REQUIRE_INPUT {
            self.rounds::<M::Result>(M::METHOD, params).await
        } else {
            let result = self.request(M::METHOD, params).await?;
            decode(M::METHOD, result)
        }
    }

    /// `server/discover`.
    pub async fn discover(&self) -> Result<DiscoverResult, TestError> {
        self.typed::<DiscoverRequest>(json!({})).await
    }

    /// `tools/list`: the first page.
    pub async fn list_tools(&self) -> Result<ListToolsResult, TestError> {
        self.typed::<ListToolsRequest>(json!({})).await
    }

    /// The listed tool named `name`, following every page; `None` if no
    /// page lists it.
    pub async fn listed_tool(&self, name: &str) -> Result<Option<Tool>, TestError> {
        let mut params = json!({});
        loop {
            let page: ListToolsResult = self.typed::<ListToolsRequest>(params).await?;
            if let Some(tool) = page.tools.into_iter().find(|t| t.name == name) {
                return Ok(Some(tool));
            }
            match page.next_cursor {
                Some(cursor) => params = json!({ "cursor": cursor }),
                None => return Ok(None),
            }
        }
    }

    /// `tools/call`, answering `input_required` rounds from the scripted
    /// answers. A tool execution error is an `isError` result, not an
    /// `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, TestError> {
        let params = json!({ "name": name, "arguments": to_value(&arguments) });
        self.rounds(CallToolRequest::METHOD, params).await
    }

    /// One round of `tools/call`: the result, or the `input_required` result
    /// for the test to answer with [`call_tool_retry`](Self::call_tool_retry).
    pub async fn call_tool_once(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<ResultOrInputRequired<CallToolResult>, TestError> {
        let params = json!({ "name": name, "arguments": to_value(&arguments) });
        let result = self.request(CallToolRequest::METHOD, params).await?;
        decode(CallToolRequest::METHOD, result)
    }

    /// A retry of `tools/call` with `inputResponses` and the echoed
    /// `requestState` (any string, to test what the server makes of it).
    pub async fn call_tool_retry(
        &self,
        name: &str,
        arguments: impl Serialize,
        request_state: Option<&str>,
        input_responses: impl Serialize,
    ) -> Result<ResultOrInputRequired<CallToolResult>, TestError> {
        let mut params = json!({
            "name": name,
            "arguments": to_value(&arguments),
            "inputResponses": to_value(&input_responses),
        });
        if let Some(state) = request_state {
            params["requestState"] = json!(state);
        }
        let result = self.request(CallToolRequest::METHOD, params).await?;
        decode(CallToolRequest::METHOD, result)
    }

    /// `prompts/list`: the first page.
    pub async fn list_prompts(&self) -> Result<ListPromptsResult, TestError> {
        self.typed::<ListPromptsRequest>(json!({})).await
    }

    /// `prompts/get` with `arguments` (an object of strings), answering
    /// `input_required` rounds from the scripted answers.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<GetPromptResult, TestError> {
        let params = json!({ "name": name, "arguments": to_value(&arguments) });
        self.rounds(GetPromptRequest::METHOD, params).await
    }

    /// `resources/list`: the first page.
    pub async fn list_resources(&self) -> Result<ListResourcesResult, TestError> {
        self.typed::<ListResourcesRequest>(json!({})).await
    }

    /// `resources/templates/list`: the first page.
    pub async fn list_resource_templates(&self) -> Result<ListResourceTemplatesResult, TestError> {
        self.typed::<ListResourceTemplatesRequest>(json!({})).await
    }

    /// `resources/read`, answering `input_required` rounds from the scripted
    /// answers.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, TestError> {
        self.rounds(ReadResourceRequest::METHOD, json!({ "uri": uri }))
            .await
    }

    /// `completion/complete` of argument `argument` at `value`, for a prompt
    /// or a resource template.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
    ) -> Result<CompleteResult, TestError> {
        let argument = CompletionArgument {
            name: argument.to_owned(),
            value: value.to_owned(),
        };
        let params = json!({ "ref": to_value(&reference), "argument": to_value(&argument) });
        self.typed::<CompleteRequest>(params).await
    }

    /// `subscriptions/listen` for the notifications of `filter`: the open
    /// stream, its acknowledgment already read.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<TestSubscription, TestError> {
        let params = json!({ "notifications": to_value(&filter) });
        let method = SubscriptionsListenRequest::METHOD;
        match self.exchange(method, params, None).await? {
            exchange::Answer::Stream(sub) => TestSubscription::open(sub, self.timeout).await,
            answer => {
                answer.into_result()?;
                Err(TestError::Unexpected(format!(
                    "{method} answered without opening a stream"
                )))
            }
        }
    }

    async fn typed<M: RequestMethod>(&self, params: Value) -> Result<M::Result, TestError> {
        let result = self.request(M::METHOD, params).await?;
        decode(M::METHOD, result)
    }

    /// A multi round-trip request: each `input_required` round is answered
    /// from the script and retried with the original params, the answers
    /// and the echoed state, as a client would.
    async fn rounds<R: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<R, TestError> {
        let mut next = params.clone();
        for _ in 0..MAX_ROUNDS {
            let result = self.request(method, next).await?;
            let required = match decode::<ResultOrInputRequired<R>>(method, result)? {
                ResultOrInputRequired::Complete(done) => return Ok(done),
                ResultOrInputRequired::InputRequired(required) => required,
            };
            let mut answers = Map::new();
            for (key, request) in required.input_requests.unwrap_or_default() {
                match self.script.answer(&request) {
                    Some(answer) => {
                        answers.insert(key, answer);
                    }
                    None => {
                        return Err(TestError::Unanswered {
                            key,
                            request: Box::new(request),
                        });
                    }
                }
            }
            next = params.clone();
            next["inputResponses"] = Value::Object(answers);
            if let Some(state) = required.request_state {
                next["requestState"] = Value::String(state);
            }
        }
        Err(TestError::TooManyRounds(MAX_ROUNDS))
    }

    fn next(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Records an encoded notification.
    fn collect(&self, msg: &[u8]) {
        if let Some(n) = TestNotification::from_message(msg)
            && let Ok(mut list) = self.notifications.lock()
        {
            list.push(n);
        }
    }
}

fn to_value(v: &impl Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn decode<T: DeserializeOwned>(method: &str, result: Value) -> Result<T, TestError> {
    serde_json::from_value(result.clone()).map_err(|e| TestError::Decode {
        method: method.to_owned(),
        message: e.to_string(),
        result,
    })
}

#[cfg(test)]
mod tests;
