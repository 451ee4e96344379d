//! How one request travels: the `_meta` and HTTP headers it carries, one
//! round trip with its notifications, the retries after `-32022` and
//! `-32020`, and the cache in front of cacheable methods.

use super::answer::{Answer, Kind, Members, Relayed, result_kind, to_value};
use super::cache::{Hit, Invalidation};
use super::error::ClientError;
use super::listen::Subscription;
use super::method::MethodInfo;
use super::notification::ServerNotification;
use super::options::{RequestOptions, ToolCall};
use super::tools::{KnownTool, Lookup};
use super::transport::{Incoming, Outgoing, TransportKind};
use super::{Client, mrtr};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;
use toolwire_proto::types::{
    CallToolRequest, CallToolResult, ListToolsRequest, LoggingMessageNotificationParams,
    ProgressNotificationParams, ProgressToken, RequestMethod, ResultOrInputRequired,
    SubscriptionFilter, SubscriptionsListenRequest, Tool, UnsupportedProtocolVersionData,
};
use toolwire_proto::{ErrorCode, ErrorObject, RequestId};

/// The shape of one outgoing request: the modern `_meta` and headers at a
/// version, a request in a legacy session at its version, or the legacy
/// `initialize` itself.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wire<'a> {
    Modern(&'a str),
    Legacy(&'a str),
    Initialize,
}

/// The legacy code for an unknown resource.
// Spec (2025-11-25): server/resources.mdx#error-handling
const LEGACY_RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

/// Fills in the cache hints an older server may leave out, so the result
/// parses: `ttlMs` 0 (a missing or negative one counts as 0) and
/// `cacheScope` `private`, the safe choice.
// Spec: server/utilities/caching.mdx#time-to-live-ttl-field
pub(crate) fn normalize_cache_hints(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else {
        return;
    };
    if !obj.get("ttlMs").is_some_and(Value::is_u64) {
        obj.insert("ttlMs".into(), Value::from(0));
    }
    if !matches!(
        obj.get("cacheScope").and_then(Value::as_str),
        Some("public" | "private")
    ) {
        obj.insert("cacheScope".into(), Value::from("private"));
    }
}

impl Client {
    /// Whom the request about to go out speaks for, which partitions the
    /// `private` cache entries: the auth provider's principal (feature
    /// `oauth`), else the bearer token.
    pub(crate) async fn credentials(&self) -> Option<Arc<str>> {
        #[cfg(feature = "oauth")]
        if let Some(auth) = &self.inner.auth {
            return auth.principal().await;
        }
        self.inner.credentials.read().ok().and_then(|c| c.clone())
    }

    /// Whether `before` still names the credentials once a request is
    /// back: an auth provider may have logged in as someone else while it
    /// was out, and that result is then not cached under either.
    pub(crate) async fn still(&self, before: Option<&Arc<str>>) -> bool {
        #[cfg(feature = "oauth")]
        if self.inner.auth.is_some() {
            return self.credentials().await.as_ref() == before;
        }
        let _ = before;
        true
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// One request in the era the client settled on (deciding it first).
    pub(crate) async fn request_value(
        &self,
        method: MethodInfo,
        params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        to_value(&self.request_raw(method, &params, options).await?)
    }

    /// [`request_value`](Self::request_value), the result as the server
    /// sent it.
    pub(crate) async fn request_raw(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        self.ensure_era().await?;
        match self.legacy_session() {
            Some(_) => self.legacy_raw(method, params, options).await,
            None => self.modern_raw(method, params, options).await,
        }
    }

    /// One request in a legacy session: re-initialises once when the server
    /// forgot the session, and maps legacy errors to their modern form.
    async fn legacy_raw(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut reinitialized = false;
        loop {
            let Some(session) = self.legacy_session() else {
                return Err(ClientError::Protocol("no legacy session".into()));
            };
            if let Some((level, _)) = &options.log {
                self.legacy_log_level(&session, level).await;
            }
            match self
                .round_raw(method, params, Wire::Legacy(&session.version), options)
                .await
            {
                // Spec (2025-11-25): basic/transports.mdx#session-management
                // — on 404 start a new session with a fresh initialize.
                Err(ClientError::SessionExpired) if !reinitialized => {
                    reinitialized = true;
                    tracing::debug!("the server forgot the legacy session; initializing again");
                    self.reinitialize().await?;
                }
                Err(ClientError::Rpc(mut e))
                    if method.reads_resource && e.code == LEGACY_RESOURCE_NOT_FOUND =>
                {
                    // The same error a modern server gives: -32602 with the
                    // URI in `data`.
                    e.code = ErrorCode::INVALID_PARAMS;
                    if e.data.is_none() {
                        e.data = params.get("uri").map(|u| serde_json::json!({ "uri": u }));
                    }
                    return Err(ClientError::Rpc(e));
                }
                other => return other,
            }
        }
    }

    /// A legacy session has one log level, set with `logging/setLevel`: set
    /// it to what this request asks for, if the server offers logging and
    /// the level differs. A failure only costs the logs.
    // Spec (2025-11-25): server/utilities/logging.mdx#setting-log-level
    async fn legacy_log_level(
        &self,
        session: &super::era::LegacySession,
        level: &toolwire_proto::types::LoggingLevel,
    ) {
        let level = serde_json::to_value(level).unwrap_or_default();
        let offers = session
            .initialize
            .get("capabilities")
            .is_some_and(|c| c.get("logging").is_some());
        let current = session.log_level.lock().ok().and_then(|l| l.clone());
        if !offers || current.as_ref() == Some(&level) {
            return;
        }
        let mut params = Map::new();
        params.insert("level".into(), level.clone());
        match self
            .round(
                MethodInfo::legacy(toolwire_proto::types::removed::LOGGING_SET_LEVEL),
                &params,
                Wire::Legacy(&session.version),
                &RequestOptions::default(),
            )
            .await
        {
            Ok(_) => {
                if let Ok(mut l) = session.log_level.lock() {
                    *l = Some(level);
                }
            }
            Err(e) => tracing::debug!("logging/setLevel failed: {e}"),
        }
    }

    /// One modern request: a round trip, retried once after `-32022` with a
    /// version both sides speak, and for `tools/call` over HTTP once after
    /// `-32020` with a refreshed tool list. The result as the server sent
    /// it.
    pub(crate) async fn modern_raw(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut version_retried = false;
        let mut headers_retried = false;
        loop {
            let version = self.protocol_version();
            match self
                .round_raw(method, params, Wire::Modern(&version), options)
                .await
            {
                Err(ClientError::Rpc(e))
                    if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION && !version_retried =>
                {
                    version_retried = true;
                    self.adopt_version(&e)?;
                }
                // Spec: basic/transports/streamable-http.mdx#client-behavior —
                // on HeaderMismatch, re-read tools/list, then retry.
                Err(ClientError::Rpc(e))
                    if e.code == ErrorCode::HEADER_MISMATCH
                        && method.calls_tool
                        && self.inner.kind == TransportKind::Http
                        && !headers_retried =>
                {
                    headers_retried = true;
                    tracing::debug!(
                        "tools/call got -32020 ({}); refreshing tools/list",
                        e.message
                    );
                    self.inner
                        .cache
                        .invalidate(&Invalidation::Method(MethodInfo::of::<ListToolsRequest>()));
                    if let Err(refresh) = Box::pin(self.list_tools()).await {
                        tracing::debug!("refreshing tools/list failed: {refresh}");
                        return Err(ClientError::Rpc(e));
                    }
                }
                other => return other,
            }
        }
    }

    /// Switches to a version from `-32022`'s `data.supported` that this
    /// client speaks, in the client's order of preference.
    // Spec: basic/versioning.mdx#protocol-version-negotiation
    pub(crate) fn adopt_version(&self, e: &ErrorObject) -> Result<(), ClientError> {
        let supported = e
            .data
            .as_ref()
            .and_then(|d| serde_json::from_value::<UnsupportedProtocolVersionData>(d.clone()).ok())
            .map(|d| d.supported)
            .or_else(|| {
                let list = e.data.as_ref()?.get("supported")?.as_array()?;
                Some(
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                )
            })
            .unwrap_or_default();
        let Some(chosen) = self.inner.versions.iter().find(|v| supported.contains(v)) else {
            return Err(ClientError::UnsupportedVersion {
                supported,
                ours: self.inner.versions.clone(),
            });
        };
        tracing::debug!("server asked for another protocol version; retrying with {chosen}");
        if let Ok(mut v) = self.inner.version.write() {
            v.clone_from(chosen);
        }
        Ok(())
    }

    /// One round trip with a fresh id, within the timeout; the result as
    /// a `Value`.
    pub(crate) async fn round(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        wire: Wire<'_>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        to_value(&self.round_raw(method, params, wire, options).await?)
    }

    /// One round trip with a fresh id, within the timeout; the result as
    /// the server sent it.
    pub(crate) async fn round_raw(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        wire: Wire<'_>,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let id = self.next_id();
        let headers = self.http_headers(method, params, wire, options)?;
        let (body, token) = self.encode(&id, method.name, params, wire, options);
        let out = Outgoing {
            body,
            id,
            headers,
            progress_token: token.clone(),
            wants_logs: options.log.is_some(),
            initialize: matches!(wire, Wire::Initialize),
        };
        // Spec: basic/patterns/cancellation.mdx#timeouts — the idle clock
        // starts again on the request's progress; the maximum holds anyway.
        let mut clock = Clock::start(
            options.timeout.or(self.inner.timeout),
            options.max_time.or(self.inner.max_time),
        );
        // Returning drops the exchange, which cancels the request.
        let mut exchange = bounded(clock.deadline(), self.inner.transport.send(out)).await?;
        loop {
            let next = bounded(clock.deadline(), async { Ok(exchange.next().await) }).await?;
            match next.ok_or(ClientError::Disconnected)?? {
                Incoming::Notification { method, params } => {
                    if on_notification(&method, params, options, token.as_ref()) {
                        clock.progressed();
                    }
                }
                Incoming::Response(Ok(v)) => return Ok(v),
                Incoming::Response(Err(e)) => return Err(ClientError::Rpc(e)),
            }
        }
    }

    /// A cacheable request: a fresh cache entry if there is one, otherwise
    /// the server's answer (stored when complete), or a stale entry when
    /// asking fails. `tools/list` pages are checked with the tool index
    /// before they are stored.
    pub(crate) async fn cached(
        &self,
        method: MethodInfo,
        params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<Value, ClientError> {
        if !method.cacheable {
            return self.request_value(method, params, options).await;
        }
        let credentials = self.credentials().await;
        let stale = match self.inner.cache.get(method, &params, credentials.as_ref()) {
            Some(Hit::Fresh(v)) => return Ok(v),
            Some(Hit::Stale(v)) => Some(v),
            None => None,
        };
        let fetched: Result<Value, ClientError> = async {
            let raw = self.request_raw(method, &params, options).await?;
            let mut v = to_value(&raw)?;
            match result_kind(&v)? {
                // Spec: server/utilities/caching.mdx — interim results are
                // not cacheable.
                Kind::InputRequired => return Ok(v),
                // Spec: extensions/tasks#capability-negotiation — a task
                // handle for a method that has none is an invalid response.
                Kind::Task => return Err(ClientError::UnknownResultType("task".into())),
                Kind::Complete => {}
            }
            normalize_cache_hints(&mut v);
            if method.lists_tools {
                self.admit_tools(&mut v, super::tools::property_orders(raw.get()))?;
            }
            if self.still(credentials.as_ref()).await {
                self.inner
                    .cache
                    .put(method, &params, credentials.as_ref(), &v);
            }
            Ok(v)
        }
        .await;
        match (fetched, stale) {
            (Ok(v), _) => Ok(v),
            (Err(e), Some(stale)) if e.allows_stale() => {
                // Spec: server/utilities/caching.mdx — clients MAY serve stale
                // responses if errors occur during re-fetching.
                tracing::warn!(
                    "{} failed ({e}); serving the stale cached result",
                    method.name
                );
                Ok(stale)
            }
            (Err(e), _) => {
                if e.is_definite() {
                    // The server said no: what was cached is no answer.
                    self.inner
                        .cache
                        .remove(method, &params, credentials.as_ref());
                }
                Err(e)
            }
        }
    }

    /// Drops invalid tools from a `tools/list` result and records the valid
    /// ones. A tool that does not even parse is dropped too.
    fn admit_tools(
        &self,
        v: &mut Value,
        orders: super::tools::PropertyOrders,
    ) -> Result<(), ClientError> {
        let Some(list) = v.get_mut("tools").and_then(Value::as_array_mut) else {
            return Err(ClientError::Protocol(
                "tools/list result has no `tools` array".into(),
            ));
        };
        let tools: Vec<Tool> = std::mem::take(list)
            .into_iter()
            .filter_map(|t| {
                let name = t.get("name").cloned();
                serde_json::from_value::<Tool>(t)
                    .map_err(|e| {
                        tracing::warn!("rejecting tool {name:?}: malformed definition: {e}")
                    })
                    .ok()
            })
            .collect();
        let kept = self.inner.tools.admit(tools, orders);
        *list = kept
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect();
        Ok(())
    }

    /// What the client knows about a tool, listing the tools first when it
    /// has not seen it. A rejected tool is an error: it must not be called.
    pub(crate) async fn known_tool(
        &self,
        name: &str,
    ) -> Result<Option<Arc<KnownTool>>, ClientError> {
        for attempt in 0..2 {
            match self.inner.tools.lookup(name) {
                Lookup::Known(t) => return Ok(Some(t)),
                Lookup::Rejected(reason) => {
                    return Err(ClientError::InvalidTool {
                        name: name.to_owned(),
                        reason,
                    });
                }
                Lookup::Unknown if attempt == 0 => {
                    if let Err(e) = self.list_tools().await {
                        tracing::debug!("listing tools before calling {name:?} failed: {e}");
                        return Ok(None);
                    }
                }
                Lookup::Unknown => {}
            }
        }
        Ok(None)
    }

    pub(crate) async fn call_tool_inner(
        &self,
        call: ToolCall,
        manual: bool,
    ) -> Result<ResultOrInputRequired<CallToolResult>, ClientError> {
        let (tool, driven) = self.drive_call(call, manual).await?;
        let v = match driven {
            mrtr::Driven::Complete(v, _) | mrtr::Driven::Task(v) => v,
            mrtr::Driven::InputRequired(r) => return Ok(ResultOrInputRequired::InputRequired(r)),
        };
        let result: CallToolResult = v.parse(CallToolRequest::METHOD)?;
        if let Some(tool) = tool {
            check_output(&tool, &result)?;
        }
        Ok(ResultOrInputRequired::Complete(result))
    }

    /// One round of `tools/call` whose complete result stays the JSON the
    /// server sent, checked only to be a complete result with a `content`
    /// array; a task handle is passed on as it came.
    pub(crate) async fn call_tool_relayed_inner(
        &self,
        call: ToolCall,
    ) -> Result<Relayed, ClientError> {
        let mut call = call;
        // A task is passed on, not followed.
        call.options.detach_task = true;
        let (raw, members) = match self.drive_call(call, true).await?.1 {
            mrtr::Driven::Complete(Answer::Raw(raw), members) => (raw, members),
            mrtr::Driven::Complete(Answer::Value(v), _) => (encode_result(&v)?, None),
            // Only a request that declared the extension gets here with a
            // task (`drive_call` refuses one otherwise).
            mrtr::Driven::Task(Answer::Raw(raw)) => return Ok(Relayed::Task(raw)),
            mrtr::Driven::Task(Answer::Value(v)) => return Ok(Relayed::Task(encode_result(&v)?)),
            mrtr::Driven::InputRequired(r) => return Ok(Relayed::InputRequired(r)),
        };
        let malformed =
            |e| ClientError::Protocol(format!("malformed {} result: {e}", CallToolRequest::METHOD));
        // The scan that read the kind read these members too; a result it
        // could not read that way (or a cached `Value`) is checked again.
        let (typed, content) = match members.filter(Members::well_typed) {
            Some(m) => (m.result_type().is_some(), m.has_content()),
            None => {
                /// What is checked of a result passed on encoded.
                #[derive(serde::Deserialize)]
                struct Shape {
                    content: Option<Vec<serde::de::IgnoredAny>>,
                    #[serde(rename = "isError")]
                    #[allow(dead_code, reason = "read only to check its type")]
                    is_error: Option<bool>,
                    #[serde(rename = "resultType")]
                    result_type: Option<String>,
                }
                let shape = serde_json::from_str::<Shape>(raw.get()).map_err(malformed)?;
                (shape.result_type.is_some(), shape.content.is_some())
            }
        };
        if !content {
            return Err(malformed(serde::de::Error::missing_field("content")));
        }
        if typed {
            return Ok(Relayed::Complete(raw));
        }
        // A legacy server (or a careless one) leaves `resultType` out; what
        // is passed on is a whole result of this revision.
        let mut v = to_value(&raw)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("resultType".into(), Value::from("complete"));
        }
        serde_json::value::to_raw_value(&v)
            .map(Relayed::Complete)
            .map_err(malformed)
    }

    /// Checks a call's arguments against the tool, if the client knows it,
    /// and drives the call.
    pub(crate) async fn drive_call(
        &self,
        call: ToolCall,
        manual: bool,
    ) -> Result<(Option<Arc<KnownTool>>, mrtr::Driven), ClientError> {
        let tool = self.known_tool(&call.name).await?;
        let mut params = Map::new();
        if let Some(args) = call.arguments {
            let args = Value::Object(args);
            if call.check_arguments
                && let Some(tool) = &tool
                && let Err((parameter, reason)) = tool.check_arguments(&args)
            {
                return Err(ClientError::InvalidArgument {
                    tool: call.name,
                    parameter,
                    reason,
                });
            }
            params.insert("arguments".into(), args);
        }
        params.insert("name".into(), Value::String(call.name));
        let driven = self
            .drive_from(
                MethodInfo::of::<CallToolRequest>(),
                params,
                call.input_responses,
                call.request_state,
                &call.options,
                manual,
            )
            .await?;
        Ok((tool, driven))
    }

    pub(crate) async fn open_listen(
        &self,
        filter: SubscriptionFilter,
    ) -> Result<Subscription, ClientError> {
        self.ensure_era().await?;
        if self.legacy_session().is_some() {
            return self.legacy_listen(filter).await;
        }
        let method = MethodInfo::of::<SubscriptionsListenRequest>();
        let mut params = Map::new();
        params.insert(
            "notifications".into(),
            serde_json::to_value(&filter).unwrap_or_default(),
        );
        let mut version_retried = false;
        loop {
            let version = self.protocol_version();
            let id = self.next_id();
            let wire = Wire::Modern(&version);
            let (body, _) =
                self.encode(&id, method.name, &params, wire, &RequestOptions::default());
            let out = Outgoing {
                headers: self.http_headers(method, &params, wire, &RequestOptions::default())?,
                body,
                id: id.clone(),
                progress_token: None,
                wants_logs: false,
                initialize: false,
            };
            let opened = async {
                let mut exchange = self.inner.transport.send(out).await?;
                let first = exchange.next().await;
                Ok::<_, ClientError>((exchange, first))
            };
            let (exchange, first) = match self.inner.timeout {
                Some(t) => tokio::time::timeout(t, opened)
                    .await
                    .map_err(|_| ClientError::Timeout(t))??,
                None => opened.await?,
            };
            match first {
                // Spec: basic/patterns/subscriptions.mdx#acknowledgment — the
                // first message acknowledges, with the honoured filter.
                Some(Ok(Incoming::Notification { method, params }))
                    if ServerNotification::of(&method)
                        == ServerNotification::SubscriptionsAcknowledged =>
                {
                    let acknowledged = params
                        .as_ref()
                        .and_then(|p| p.get("notifications"))
                        .and_then(|n| serde_json::from_value(n.clone()).ok())
                        .unwrap_or_default();
                    return Ok(Subscription::start(
                        id,
                        acknowledged,
                        exchange,
                        Arc::clone(&self.inner.cache),
                    ));
                }
                Some(Ok(Incoming::Notification { method, .. })) => {
                    return Err(ClientError::Protocol(format!(
                        "the subscription began with {method}, not its acknowledgement"
                    )));
                }
                Some(Ok(Incoming::Response(Err(e))))
                    if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION && !version_retried =>
                {
                    version_retried = true;
                    self.adopt_version(&e)?;
                }
                Some(Ok(Incoming::Response(Err(e)))) => return Err(ClientError::Rpc(e)),
                Some(Ok(Incoming::Response(Ok(_)))) => {
                    return Err(ClientError::Protocol(
                        "the server ended the subscription before acknowledging it".into(),
                    ));
                }
                Some(Err(e)) => return Err(e),
                None => return Err(ClientError::Disconnected),
            }
        }
    }
}

/// The deadlines of one round trip: an idle timeout that progress starts
/// again, and a maximum that nothing extends.
struct Clock {
    idle: Option<Duration>,
    max: Option<(Instant, Duration)>,
    since: Instant,
}

impl Clock {
    fn start(idle: Option<Duration>, max: Option<Duration>) -> Self {
        let now = Instant::now();
        Self {
            idle,
            max: max.map(|m| (now + m, m)),
            since: now,
        }
    }

    /// The request made progress: the idle timeout starts again.
    fn progressed(&mut self) {
        self.since = Instant::now();
    }

    /// The deadline that passes first, with the error it means.
    fn deadline(&self) -> Option<(Instant, ClientError)> {
        let idle = self.idle.map(|d| (self.since + d, ClientError::Timeout(d)));
        let max = self.max.map(|(at, d)| (at, ClientError::MaxTime(d)));
        match (idle, max) {
            (Some(i), Some(m)) => Some(if m.0 <= i.0 { m } else { i }),
            (i, m) => i.or(m),
        }
    }
}

/// `f`, unless the deadline passes first.
async fn bounded<T>(
    deadline: Option<(Instant, ClientError)>,
    f: impl Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    match deadline {
        Some((at, error)) => tokio::time::timeout_at(at, f).await.map_err(|_| error)?,
        None => f.await,
    }
}

/// Delivers a notification of a request to its callbacks; true for progress
/// on the request's own token.
fn on_notification(
    method: &str,
    params: Option<Value>,
    options: &RequestOptions,
    token: Option<&ProgressToken>,
) -> bool {
    let kind = ServerNotification::of(method);
    if kind == ServerNotification::Progress {
        let Some(params) = params else {
            return false;
        };
        match serde_json::from_value::<ProgressNotificationParams>(params) {
            Ok(p) if Some(&p.progress_token) == token => {
                if let Some(f) = &options.progress {
                    f(&p);
                }
                return true;
            }
            Ok(_) => tracing::debug!("ignoring progress for another token"),
            Err(e) => tracing::debug!("ignoring malformed progress: {e}"),
        }
    } else if kind == ServerNotification::Log {
        let (Some((_, f)), Some(params)) = (&options.log, params) else {
            return false;
        };
        match serde_json::from_value::<LoggingMessageNotificationParams>(params) {
            Ok(m) => f(&m),
            Err(e) => tracing::debug!("ignoring malformed log message: {e}"),
        }
    } else {
        tracing::debug!("ignoring {method} on a request's stream");
    }
    false
}

/// Checks a complete, successful result against the tool's output schema.
// Spec: server/tools.mdx#output-schema — clients SHOULD validate.
pub(crate) fn check_output(tool: &KnownTool, result: &CallToolResult) -> Result<(), ClientError> {
    let Some(schema) = tool.output_schema() else {
        return Ok(());
    };
    if result.is_error() {
        return Ok(());
    }
    let name = || tool.definition.name.clone();
    // Spec: basic/index.mdx#ref-resolution — a schema whose `$ref` cannot be
    // resolved (network refs never are) is rejected, not treated as
    // permissive.
    let schema = schema.as_ref().map_err(|e| ClientError::OutputSchema {
        tool: name(),
        message: format!(" the outputSchema cannot be used: {e}"),
    })?;
    let Some(structured) = &result.structured_content else {
        return Err(ClientError::OutputSchema {
            tool: name(),
            message: " the tool declares an outputSchema but returned no structuredContent".into(),
        });
    };
    schema
        .check(structured)
        .map_err(|message| ClientError::OutputSchema {
            tool: name(),
            message,
        })
}

/// A result kept as a `Value` (from the cache), encoded to be passed on.
fn encode_result(v: &Value) -> Result<Box<RawValue>, ClientError> {
    serde_json::value::to_raw_value(v)
        .map_err(|e| ClientError::Protocol(format!("unencodable result: {e}")))
}
