//! The request pipeline shared by every transport: `_meta` checks, the
//! version check, and the one `match` over the method.

use super::{Server, ServerInner, paging};
use crate::context::Outbound;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY};
use toolwire_proto::types::{
    CallToolRequest, DiscoverRequest, DiscoverResult, JsonObject, ListToolsRequest, RequestMeta,
    RequestMethod, ResultType, ServerCapabilities, SubscriptionFilter, SubscriptionsListenRequest,
    ToolsCapability,
};
use toolwire_proto::types::{
    CompleteRequest, GetPromptRequest, ListPromptsRequest, ListResourceTemplatesRequest,
    ListResourcesRequest, PromptsCapability, ReadResourceRequest, ResourcesCapability,
};
use toolwire_proto::{ErrorCode, ErrorObject, Request, RequestId, encode_error, encode_result};

/// The encoded response to one request, and its error code if it is an error.
#[derive(Debug, Clone)]
pub struct Reply {
    body: Bytes,
    error: Option<ErrorCode>,
}

impl Reply {
    pub(crate) fn result(id: &RequestId, result: &(impl serde::Serialize + ?Sized)) -> Self {
        Self {
            body: Bytes::from(encode_result(id, result)),
            error: None,
        }
    }

    /// [`result`](Self::result) for a `result` object that has no `_meta`
    /// member: `meta_member` (from [`meta_member`]) is added as its last
    /// member, as if it had been serialised with it.
    pub(crate) fn result_with_meta(
        id: &RequestId,
        result: &(impl serde::Serialize + ?Sized),
        meta_member: &[u8],
    ) -> Self {
        let mut out = Vec::with_capacity(RESULT_CAPACITY + meta_member.len());
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        let encoded = serde_json::to_writer(&mut out, id).and_then(|()| {
            out.extend_from_slice(br#","result":"#);
            serde_json::to_writer(&mut out, result)
        });
        // The result is an object: reopen it to add `_meta` as its last
        // member (after `{` there is no member yet, so no comma).
        if encoded.is_err() || out.pop() != Some(b'}') {
            return Self::result(id, result);
        }
        if out.last() != Some(&b'{') {
            out.push(b',');
        }
        out.extend_from_slice(meta_member);
        out.extend_from_slice(b"}}");
        Self {
            body: Bytes::from(out),
            error: None,
        }
    }

    /// [`result`](Self::result) for a result already encoded, in a buffer
    /// of the exact size.
    pub(crate) fn raw_result(id: &RequestId, result: &RawValue) -> Self {
        const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
        const MID: &[u8] = br#","result":"#;
        let raw = result.get().as_bytes();
        let mut out = Vec::with_capacity(HEAD.len() + 24 + MID.len() + raw.len() + 1);
        out.extend_from_slice(HEAD);
        if serde_json::to_writer(&mut out, id).is_err() {
            return Self::result(id, result);
        }
        out.extend_from_slice(MID);
        out.extend_from_slice(raw);
        out.push(b'}');
        Self {
            body: Bytes::from(out),
            error: None,
        }
    }

    /// `-32603` for a request whose handler panicked (logged here), which
    /// every transport answers instead of dropping the request.
    pub(crate) fn panicked(id: &RequestId) -> Self {
        tracing::error!(id = %id, "a request handler panicked");
        Self::error(
            Some(id),
            &ErrorObject::internal("the request handler panicked"),
        )
    }

    pub(crate) fn error(id: Option<&RequestId>, error: &ErrorObject) -> Self {
        Self {
            body: Bytes::from(encode_error(id, error)),
            error: Some(error.code),
        }
    }

    /// The encoded JSON-RPC response.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// Consumes the reply, returning the encoded response.
    pub fn into_body(self) -> Bytes {
        self.body
    }

    /// The error code, when the response is an error.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.error
    }
}

/// Room for the usual result (a tools/call text result with `_meta` is
/// ~150 bytes) without growing the buffer.
const RESULT_CAPACITY: usize = 256;

/// `"_meta":{"io.modelcontextprotocol/serverInfo":<server_info>}`, the member
/// [`Reply::result_with_meta`] splices into a result.
pub(crate) fn meta_member(server_info: &Value) -> Box<[u8]> {
    let mut meta = Map::new();
    meta.insert(SERVER_INFO_KEY.to_owned(), server_info.clone());
    let mut out = br#""_meta":"#.to_vec();
    serde_json::to_writer(&mut out, &meta).unwrap_or_else(|_| unreachable!("a JSON value encodes"));
    out.into_boxed_slice()
}

/// The parameter members the pipeline reads, parsed once per request.
/// Method-specific members that are rarely used are read from the raw params.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Params {
    /// Read straight into its `Arc`: it is shared with the request context,
    /// and kept out of line it keeps `Params` small to move.
    #[serde(rename = "_meta", default, deserialize_with = "shared")]
    pub(crate) meta: Option<Arc<RequestMeta>>,
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) uri: Option<String>,
    #[serde(default)]
    pub(crate) arguments: Option<Value>,
    #[serde(default)]
    pub(crate) cursor: Option<String>,
    /// MRTR: answers to earlier input requests. Kept raw so that a present
    /// but malformed value (`null`, a string) can be told from an absent one.
    #[serde(default, deserialize_with = "present")]
    pub(crate) input_responses: Option<Box<Value>>,
    /// MRTR: the echoed `requestState`.
    #[serde(default)]
    pub(crate) request_state: Option<String>,
    /// `subscriptions/listen`: the notifications wanted.
    #[serde(default)]
    pub(crate) notifications: Option<Box<SubscriptionFilter>>,
    /// `completion/complete`: what is being completed.
    #[serde(rename = "ref", default)]
    pub(crate) reference: Option<Box<Value>>,
    /// `completion/complete`: the argument and its partial value.
    #[serde(default)]
    pub(crate) argument: Option<Box<Value>>,
    /// `completion/complete`: values of other arguments.
    #[serde(default)]
    pub(crate) context: Option<Box<Value>>,
    /// What these were read from, when they were read from bytes: MRTR
    /// reads the arguments back from it to bind a sealed state.
    #[serde(skip)]
    pub(crate) raw: Option<RawParams>,
}

/// The bytes [`Params`] were read from.
#[derive(Debug)]
pub(crate) enum RawParams {
    /// The raw `params` member (`prepare`).
    Params(Box<RawValue>),
    /// The whole message (`prepare_message`).
    Message(Bytes),
}

impl RawParams {
    /// `params.arguments` as it was read (a missing or `null` member is
    /// `{}`): read back when a sealed state must be bound to arguments that
    /// were moved into the handler.
    pub(crate) fn arguments(&self) -> Value {
        #[derive(Deserialize)]
        struct Arguments {
            #[serde(default)]
            arguments: Option<Value>,
        }
        #[derive(Deserialize)]
        struct Envelope {
            #[serde(default)]
            params: Option<Arguments>,
        }
        let read = match self {
            Self::Params(raw) => serde_json::from_str::<Arguments>(raw.get()).ok(),
            Self::Message(bytes) => serde_json::from_slice::<Envelope>(bytes)
                .ok()
                .and_then(|e| e.params),
        };
        read.and_then(|a| a.arguments)
            .unwrap_or_else(|| Value::Object(Map::new()))
    }
}

/// The fast path's decoding: id, method, params and `_meta`, or `None`.
fn read_request(
    message: &[u8],
    max_depth: usize,
) -> Option<(RequestId, Cow<'static, str>, Params, Arc<RequestMeta>)> {
    if toolwire_proto::exceeds_depth(message, max_depth.min(toolwire_proto::MAX_DEPTH)) {
        return None;
    }
    // One UTF-8 check of the whole message (vectorised) rather than one per
    // string, which is what parsing from bytes does.
    let text = std::str::from_utf8(message).ok()?;
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    if envelope.jsonrpc.get() != "\"2.0\"" {
        return None;
    }
    let mut params = envelope.params?;
    let meta = params.meta.take()?;
    if meta.protocol_version.is_none() || meta.client_capabilities.is_none() {
        return None;
    }
    Some((envelope.id, interned(envelope.method), params, meta))
}

/// The methods this server serves.
const METHODS: [&str; 10] = [
    CallToolRequest::METHOD,
    ListToolsRequest::METHOD,
    DiscoverRequest::METHOD,
    ListPromptsRequest::METHOD,
    GetPromptRequest::METHOD,
    ListResourcesRequest::METHOD,
    ListResourceTemplatesRequest::METHOD,
    ReadResourceRequest::METHOD,
    CompleteRequest::METHOD,
    SubscriptionsListenRequest::METHOD,
];

/// `method` as a `'static` borrow when it is one of [`METHODS`].
fn interned(method: Cow<'_, str>) -> Cow<'static, str> {
    match METHODS.iter().find(|m| **m == method) {
        Some(m) => Cow::Borrowed(m),
        None => Cow::Owned(method.into_owned()),
    }
}

/// A request envelope read in one pass with its common parameters: the
/// fast path of [`Server::prepare_message`]. Any member besides these four
/// (`result`, `error`, an extension) makes it decline, as does anything
/// else unusual, and the general decoder takes over.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: &'a RawValue,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(default)]
    params: Option<Params>,
}

/// `_meta` read in place and moved into its `Arc` once (serde's own `Arc`
/// reads into a `Box` first, then copies it into the `Arc`).
fn shared<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Arc<RequestMeta>>, D::Error> {
    Option::<RequestMeta>::deserialize(d).map(|m| m.map(Arc::new))
}

/// `Some(value)` whenever the member is present, even when it is `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<Value>>, D::Error> {
    Box::<Value>::deserialize(d).map(Some)
}

/// A request whose envelope and common parameters have been read and whose
/// `_meta` has the required members.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) id: RequestId,
    /// Borrowed from [`METHODS`] for the methods served, so the usual
    /// request does not allocate its name.
    pub(crate) method: Cow<'static, str>,
    pub(crate) params: Params,
    pub(crate) meta: Arc<RequestMeta>,
    /// Who made the request, when the transport authenticated them. Sealed
    /// `requestState` is bound to it.
    pub(crate) principal: Option<Arc<str>>,
}

impl Prepared {
    /// Records the authenticated principal (for example an OAuth subject).
    #[allow(dead_code, reason = "for transports that authenticate")]
    pub(crate) fn set_principal(&mut self, principal: impl Into<Arc<str>>) {
        self.principal = Some(principal.into());
    }

    /// `_meta`'s protocol version (present: checked by `prepare`).
    pub(crate) fn protocol_version(&self) -> &str {
        self.meta.protocol_version.as_deref().unwrap_or_default()
    }
}

impl Server {
    /// Reads a request's parameters and checks the `_meta` members every
    /// request must carry.
    ///
    /// Spec: basic/index.mdx#meta — `protocolVersion` and `clientCapabilities`
    /// are required; a missing one is `-32602`.
    pub(crate) fn prepare(&self, req: Request) -> Result<Prepared, Reply> {
        let id = req.id;
        let mut params: Params = match req.params {
            None => Params::default(),
            Some(raw) => match serde_json::from_str::<Params>(raw.get()) {
                Ok(mut p) => {
                    p.raw = Some(RawParams::Params(raw));
                    p
                }
                Err(e) => {
                    return Err(Reply::error(
                        Some(&id),
                        &ErrorObject::invalid_params(format!("invalid params: {e}")),
                    ));
                }
            },
        };
        let Some(meta) = params.meta.take() else {
            return Err(Reply::error(
                Some(&id),
                &ErrorObject::invalid_params(
                    "params._meta is required and must carry protocolVersion and clientCapabilities",
                ),
            ));
        };
        for (present, key) in [
            (meta.protocol_version.is_some(), PROTOCOL_VERSION_KEY),
            (meta.client_capabilities.is_some(), CLIENT_CAPABILITIES_KEY),
        ] {
            if !present {
                return Err(Reply::error(
                    Some(&id),
                    &ErrorObject::invalid_params(format!("params._meta is missing {key:?}")),
                ));
            }
        }
        Ok(Prepared {
            id,
            method: interned(Cow::Owned(req.method)),
            params,
            meta,
            principal: None,
        })
    }

    /// Decodes a whole message that is a well-formed 2026-07-28 request
    /// (an object with `jsonrpc`, `id`, `method` and `params` carrying the
    /// required `_meta` members) and prepares it, in one pass over the
    /// bytes; anything else is handed back.
    ///
    /// Whenever it returns a request, `Message::from_slice_with_max_depth`
    /// followed by [`prepare`](Self::prepare) would have produced the same
    /// one: otherwise the caller takes that general path, which gives every
    /// error and every legacy message its usual answer. The nesting bound is
    /// checked before the parser sees the bytes, as there.
    pub(crate) fn prepare_message(
        &self,
        message: Bytes,
        max_depth: usize,
    ) -> Result<Prepared, Bytes> {
        let Some((id, method, mut params, meta)) = read_request(&message, max_depth) else {
            return Err(message);
        };
        // Moved, not cloned: a clone of a `Vec`-backed `Bytes` allocates.
        params.raw = Some(RawParams::Message(message));
        Ok(Prepared {
            id,
            method,
            params,
            meta,
            principal: None,
        })
    }

    /// `-32022` unless the request's protocol version is one this server
    /// serves.
    pub(crate) fn check_version(&self, p: &Prepared) -> Result<(), Reply> {
        let version = p.protocol_version();
        if self
            .inner
            .config
            .supported_versions
            .iter()
            .any(|v| v == version)
        {
            Ok(())
        } else {
            Err(Reply::error(
                Some(&p.id),
                &unsupported_version(&self.inner, version),
            ))
        }
    }

    /// Serves a prepared request: version check, then the method.
    pub(crate) async fn execute(
        &self,
        p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Reply {
        if let Some(reply) = self.execute_now(&p) {
            return reply;
        }
        match &*p.method {
            CallToolRequest::METHOD => self.call_tool(p, cancel, outbound).await,
            GetPromptRequest::METHOD => self.get_prompt(p, cancel, outbound).await,
            ReadResourceRequest::METHOD => self.read_resource(p, cancel, outbound).await,
            CompleteRequest::METHOD => self.complete_argument(p, cancel, outbound).await,
            // A stream, not one reply: transports serve it with `Server::listen`.
            SubscriptionsListenRequest::METHOD => Reply::error(
                Some(&p.id),
                &ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    "subscriptions/listen is not available on this transport",
                ),
            ),
            other => Reply::error(Some(&p.id), &ErrorObject::method_not_found(other)),
        }
    }

    /// The part of [`execute`](Self::execute) that never waits: the version
    /// check, discovery and the lists (which run no handler). `None` when
    /// the request needs the rest, so a transport can answer these without
    /// building a future.
    pub(crate) fn execute_now(&self, p: &Prepared) -> Option<Reply> {
        if let Err(reply) = self.check_version(p) {
            return Some(reply);
        }
        Some(match &*p.method {
            DiscoverRequest::METHOD => self.discover(&p.id),
            ListToolsRequest::METHOD => self.list_tools(p),
            ListPromptsRequest::METHOD => self.list_prompts(p),
            ListResourcesRequest::METHOD => self.list_resources(p),
            ListResourceTemplatesRequest::METHOD => self.list_resource_templates(p),
            _ => return None,
        })
    }

    /// `prepare` then `execute`: the whole pipeline, for tests.
    #[cfg(test)]
    pub(crate) async fn handle(
        &self,
        req: Request,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Reply {
        match self.prepare(req) {
            Ok(p) => self.execute(p, cancel, outbound).await,
            Err(reply) => reply,
        }
    }

    /// The reply carrying `result`, which has no `_meta` member, with this
    /// server's `_meta` (`serverInfo`) added.
    pub(crate) fn reply_with_meta(
        &self,
        id: &RequestId,
        result: &(impl serde::Serialize + ?Sized),
    ) -> Reply {
        Reply::result_with_meta(id, result, &self.inner.result_meta_member)
    }

    pub(crate) fn result_meta(&self) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(SERVER_INFO_KEY.to_owned(), self.inner.server_info.clone());
        meta
    }

    /// What `server/discover` advertises. `subscriptions/listen` honours the
    /// `listChanged` (and resource `subscribe`) flags found here.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..ToolsCapability::default()
            }),
            // Handlers may log through `RequestContext::log`.
            // Spec: server/utilities/logging.mdx#capabilities
            logging: Some(JsonObject::new()),
            // Always served (an empty list is a valid answer), so always
            // declared. Spec: server/prompts.mdx#capabilities,
            // server/resources.mdx#capabilities,
            // server/utilities/completion.mdx#capabilities
            prompts: Some(PromptsCapability {
                list_changed: Some(true),
                ..PromptsCapability::default()
            }),
            resources: Some(ResourcesCapability {
                list_changed: Some(true),
                ..ResourcesCapability::default()
            }),
            completions: Some(JsonObject::new()),
            ..ServerCapabilities::default()
        }
    }

    fn discover(&self, id: &RequestId) -> Reply {
        let raw = self.inner.discover.get_or_init(|| {
            let c = &self.inner.config;
            let capabilities = self.capabilities();
            let result = DiscoverResult {
                result_type: ResultType::Complete,
                supported_versions: c.supported_versions.clone(),
                capabilities,
                instructions: c.instructions.clone(),
                ttl_ms: c.ttl_ms,
                cache_scope: c.cache_scope,
                meta: Some(self.result_meta()),
            };
            paging::to_raw(&result)
        });
        Reply::raw_result(id, raw)
    }
}

fn unsupported_version(inner: &ServerInner, requested: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("unsupported protocol version {requested:?}"),
    )
    .with_data(json!({
        "supported": inner.config.supported_versions,
        "requested": requested,
    }))
}

#[cfg(test)]
mod tests;
