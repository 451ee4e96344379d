//! The pipeline's boundary: a request is decoded and its common parameters
//! read once, its era decided from the parsed `_meta`, and the result is a
//! [`Prepared`] request (or the reply that refuses it).
//!
//! [`Server::prepare_message`] is the one-pass fast path for the usual
//! modern request; [`Server::accept`] is the general path, which also
//! recognises a legacy `initialize` and requests of a legacy session.

use super::Server;
use super::era::{Era, LegacySession};
use super::outcome::Reply;
use super::shape::Shape;
use crate::ratelimit::Caller;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::net::IpAddr;
use std::sync::Arc;
use toolwire_proto::meta::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use toolwire_proto::types::{Method, RequestMeta, SubscriptionFilter};
use toolwire_proto::{ErrorObject, Request, RequestId, UniqueKeys, UniqueValue, from_str_unique};

mod fast;
mod initialize;
pub(crate) use initialize::InitializeParams;

/// The parameter members the pipeline reads, parsed once per request.
/// Method-specific members that are rarely used are read from the raw params.
#[derive(Debug, Default, Clone, Deserialize)]
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
    #[serde(default, deserialize_with = "unique_value")]
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
    /// `tasks/get`, `tasks/update`, `tasks/cancel`: the task.
    #[serde(default)]
    pub(crate) task_id: Option<String>,
    /// `subscriptions/listen`: the notifications wanted.
    #[serde(default, deserialize_with = "checked")]
    pub(crate) notifications: Option<Box<SubscriptionFilter>>,
    /// `completion/complete`: what is being completed.
    #[serde(rename = "ref", default, deserialize_with = "unique_boxed")]
    pub(crate) reference: Option<Box<Value>>,
    /// `completion/complete`: the argument and its partial value.
    #[serde(default, deserialize_with = "unique_boxed")]
    pub(crate) argument: Option<Box<Value>>,
    /// `completion/complete`: values of other arguments.
    #[serde(default, deserialize_with = "unique_boxed")]
    pub(crate) context: Option<Box<Value>>,
    /// What these were read from, when they were read from bytes: MRTR
    /// reads the arguments back from it to bind a sealed state.
    #[serde(skip)]
    pub(crate) raw: Option<RawParams>,
}

/// The bytes [`Params`] were read from.
#[derive(Debug, Clone)]
pub(crate) enum RawParams {
    /// The raw `params` member (`prepare`).
    Params(Box<RawValue>),
    /// The whole message (`prepare_message`).
    Message(Bytes),
}

impl RawParams {
    /// The params (of a message, its `params` member) as a `T`.
    pub(crate) fn parse<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        #[derive(Deserialize)]
        struct Envelope<T> {
            params: T,
        }
        match self {
            Self::Params(raw) => serde_json::from_str(raw.get()),
            Self::Message(bytes) => serde_json::from_slice::<Envelope<T>>(bytes).map(|e| e.params),
        }
    }

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

/// The fast path's decoding: id, method and `_meta`, the params into
/// `params` (empty, as [`Default`] makes it), or `None`.
fn read_request(
    message: &[u8],
    max_depth: usize,
    params: &mut Params,
) -> Option<(RequestId, Method, Arc<RequestMeta>)> {
    if toolwire_proto::exceeds_depth(message, max_depth.min(toolwire_proto::MAX_DEPTH)) {
        return None;
    }
    // One UTF-8 check of the whole message (vectorised) rather than one per
    // string, which is what parsing from bytes does.
    let text = std::str::from_utf8(message).ok()?;
    let (id, method) = fast::read(text, params)?;
    let meta = params.meta.take()?;
    if meta.protocol_version.is_none() || meta.client_capabilities.is_none() {
        return None;
    }
    Some((id, method, meta))
}

/// A `Value` member, refusing repeated member names inside.
fn unique_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Option::<UniqueValue>::deserialize(d).map(|v| v.map(|v| v.0))
}

/// A boxed `Value` member, refusing repeated member names inside.
fn unique_boxed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<Value>>, D::Error> {
    Option::<UniqueValue>::deserialize(d).map(|v| v.map(|v| Box::new(v.0)))
}

/// A typed member read through [`UniqueKeys`] (a derived struct skips
/// members it does not know unread).
fn checked<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    T::deserialize(UniqueKeys::new(d))
}

/// `_meta` read straight into its `Arc` (serde's own `Arc` reads into a
/// `Box` first and copies it into the `Arc`; reading a value and then
/// moving it in copies it as well).
fn shared<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Arc<RequestMeta>>, D::Error> {
    struct Shared;
    impl<'de> serde::de::Visitor<'de> for Shared {
        type Value = Option<Arc<RequestMeta>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("the request _meta object or null")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            let mut meta = Arc::new(RequestMeta::default());
            // Just made: no other reference.
            if let Some(slot) = Arc::get_mut(&mut meta) {
                RequestMeta::deserialize_into(d, slot)?;
            }
            Ok(Some(meta))
        }
    }
    d.deserialize_option(Shared)
}

/// `Some(value)` whenever the member is present, even when it is `null`;
/// repeated member names inside are refused.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<Value>>, D::Error> {
    UniqueValue::deserialize(d).map(|v| Some(Box::new(v.0)))
}

/// A request whose envelope and common parameters have been read, whose
/// era is decided, and whose `_meta` has the members the era requires.
///
/// Boxed once, where the boundary reads it: the request passes by value
/// through the pipeline, every layer and the handler's future, and a box
/// moves as one pointer where the parts are some 300 bytes.
pub(crate) type Prepared = Box<PreparedRequest>;

/// [`Prepared`]'s parts.
#[derive(Debug)]
pub(crate) struct PreparedRequest {
    pub(crate) id: RequestId,
    pub(crate) method: Method,
    pub(crate) params: Params,
    pub(crate) meta: Arc<RequestMeta>,
    /// Who made the request, as the transport authenticated them.
    pub(crate) who: Who,
    /// The client's IP address, when the transport knows it: an
    /// unauthenticated caller's rate-limit key.
    pub(crate) peer: Option<IpAddr>,
    /// Decided by the transport; never recomputed downstream.
    pub(crate) era: Era,
}

impl PreparedRequest {
    /// The one constructor: a request as the boundary read it, its era
    /// decided, no caller recorded yet (the transport records it with
    /// [`set_grant`](Self::set_grant) or [`set_principal`](Self::set_principal)
    /// and its client's address in `peer`).
    #[inline(always)]
    fn new(
        id: RequestId,
        method: Method,
        params: Params,
        meta: Arc<RequestMeta>,
        era: Era,
    ) -> Prepared {
        Box::new(Self {
            id,
            method,
            params,
            meta,
            who: Who::Anonymous,
            peer: None,
            era,
        })
    }

    /// The same request with other `params`, the caller and era kept: the
    /// next round of the legacy MRTR shim.
    pub(crate) fn with_params(&self, params: Params) -> Prepared {
        Box::new(Self {
            id: self.id.clone(),
            method: self.method.clone(),
            params,
            meta: Arc::clone(&self.meta),
            who: self.who.clone(),
            peer: self.peer,
            era: self.era.clone(),
        })
    }

    /// Records the authenticated caller: its principal (issuer and
    /// subject) and its granted scopes.
    #[cfg(feature = "auth")]
    pub(crate) fn set_grant(&mut self, grant: &Arc<crate::auth::scope::Grant>) {
        self.who = Who::Granted(Arc::clone(grant));
    }

    /// Records a caller known by principal alone, without a grant (the
    /// test kit's `with_principal`).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn set_principal(&mut self, principal: &Arc<str>) {
        self.who = Who::Principal(Arc::clone(principal));
    }

    /// Who made the request (issuer and subject), when the transport
    /// authenticated them. Sealed `requestState` is bound to it.
    pub(crate) fn principal(&self) -> Option<&Arc<str>> {
        match &self.who {
            Who::Anonymous => None,
            Who::Principal(principal) => Some(principal),
            #[cfg(feature = "auth")]
            Who::Granted(grant) => Some(&grant.principal),
        }
    }

    /// The OAuth client the caller's token was issued to, when the
    /// resource server verified one that names it.
    pub(crate) fn client_id(&self) -> Option<&Arc<str>> {
        match &self.who {
            #[cfg(feature = "auth")]
            Who::Granted(grant) => grant.client.as_ref(),
            _ => None,
        }
    }

    /// The caller's granted scopes, when the transport's resource server
    /// authenticated them: lists show only what they may use.
    #[cfg(feature = "auth")]
    pub(crate) fn grant(&self) -> Option<&Arc<crate::auth::scope::Grant>> {
        match &self.who {
            Who::Granted(grant) => Some(grant),
            _ => None,
        }
    }

    /// Who the request counts against for rate limits: the principal,
    /// else the client's address, else the process.
    pub(crate) fn caller(&self) -> Caller {
        match (self.principal(), self.peer) {
            (Some(principal), _) => Caller::Principal(Arc::clone(principal)),
            (None, Some(ip)) => Caller::Addr(ip),
            (None, None) => Caller::Process,
        }
    }

    /// `_meta`'s protocol version (present: checked when prepared).
    pub(crate) fn protocol_version(&self) -> &str {
        self.meta.protocol_version.as_deref().unwrap_or_default()
    }
}

/// Who made a request, as its transport authenticated them: the principal
/// is kept once, in the grant when there is one.
#[derive(Debug, Clone)]
pub(crate) enum Who {
    /// Not authenticated (stdio, or HTTP without a resource server).
    Anonymous,
    /// Known by principal alone (the test kit's `with_principal`).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    Principal(Arc<str>),
    /// Verified by the resource server, with the scopes granted.
    #[cfg(feature = "auth")]
    Granted(Arc<crate::auth::scope::Grant>),
}

impl Who {
    /// The caller's token, when the server lets handlers see it.
    pub(crate) fn caller_token(&self) -> Option<crate::context::CallerToken> {
        match self {
            #[cfg(feature = "auth")]
            Self::Granted(grant) => grant.caller.clone(),
            _ => None,
        }
    }

    /// The principal, for the handler's context.
    pub(crate) fn into_principal(self) -> Option<Arc<str>> {
        match self {
            Self::Anonymous => None,
            Self::Principal(principal) => Some(principal),
            #[cfg(feature = "auth")]
            Self::Granted(grant) => Some(Arc::clone(&grant.principal)),
        }
    }
}

/// What the general path made of a request.
#[derive(Debug)]
pub(crate) enum Accepted {
    /// A request to serve, in its era.
    Request(Prepared),
    /// A legacy `initialize` (the legacy shape, no modern `_meta`): the
    /// transport opens a session with `legacy::open`.
    /// (Boxed: rare, and larger than a request.)
    Initialize(RequestId, Box<InitializeParams>),
    /// Refused before the pipeline, answered in `Shape` (which the HTTP
    /// transport reads).
    Refused(
        Reply,
        #[cfg_attr(not(feature = "http"), allow(dead_code))] Shape,
    ),
    /// Neither a modern request nor one of a legacy session: the `-32602`
    /// for the missing `_meta` members. (An HTTP transport may answer
    /// otherwise, for a request that names a legacy session it does not
    /// know.)
    NoSession(Reply),
}

/// Whether raw `params` carry the modern `_meta` version key, read by a
/// parse (not a scan): for params that do not parse as [`Params`].
fn declares_modern(raw: &str) -> bool {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "_meta", default)]
        meta: Option<Map<String, Value>>,
    }
    serde_json::from_str::<Probe>(raw)
        .ok()
        .and_then(|p| p.meta)
        .is_some_and(|m| m.contains_key(PROTOCOL_VERSION_KEY))
}

impl Server {
    /// The general path: reads a request's parameters, decides its era from
    /// the parsed `_meta` (`session` is the legacy session the transport
    /// associates with it, if any), and checks the `_meta` members the era
    /// requires.
    ///
    /// Spec: basic/versioning.mdx#backward-compatibility-with-initialization-based-versions;
    /// basic/index.mdx#meta — a modern request's `protocolVersion` and
    /// `clientCapabilities` are required; a missing one is `-32602`.
    pub(crate) fn accept(&self, req: Request, session: Option<Arc<dyn LegacySession>>) -> Accepted {
        let Request {
            id,
            method,
            params: raw,
        } = req;
        let method = Method::parse(&method);
        let mut params: Params = match raw {
            None => Params::default(),
            // Spec: RFC 8259 §4 — a repeated member name is read differently
            // by different parsers (a gateway may act on the first value,
            // serde_json keeps the last), so `params` must not have one.
            Some(raw) => match from_str_unique::<Params>(raw.get()) {
                Ok(mut p) => {
                    p.raw = Some(RawParams::Params(raw));
                    p
                }
                Err(e) => {
                    let shape = match &session {
                        Some(s) if !declares_modern(raw.get()) => Shape::Legacy(s.version()),
                        _ => Shape::Modern,
                    };
                    let e = ErrorObject::invalid_params(format!("invalid params: {e}"));
                    return Accepted::Refused(Reply::error(Some(&id), &e), shape);
                }
            },
        };
        let modern = params
            .meta
            .as_ref()
            .is_some_and(|m| m.protocol_version.is_some());
        if !modern {
            if method == Method::Initialize
                && let Some(init) = initialize::parse_initialize(&params)
            {
                return Accepted::Initialize(id, Box::new(init));
            }
            if let Some(session) = session {
                let meta = session.request_meta(self, params.meta.take());
                return Accepted::Request(PreparedRequest::new(
                    id,
                    method,
                    params,
                    meta,
                    Era::Legacy(session),
                ));
            }
        }
        let Some(meta) = params.meta.take() else {
            return Accepted::NoSession(Reply::error(
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
                let reply = Reply::error(
                    Some(&id),
                    &ErrorObject::invalid_params(format!("params._meta is missing {key:?}")),
                );
                return if modern {
                    Accepted::Refused(reply, Shape::Modern)
                } else {
                    Accepted::NoSession(reply)
                };
            }
        }
        Accepted::Request(PreparedRequest::new(id, method, params, meta, Era::Modern))
    }

    /// [`accept`](Self::accept) with no session, for tests: a legacy
    /// `initialize` is refused like any request without `_meta`.
    #[cfg(test)]
    pub(crate) fn prepare(&self, req: Request) -> Result<Prepared, Reply> {
        match self.accept(req, None) {
            Accepted::Request(p) => Ok(p),
            Accepted::Refused(reply, _) | Accepted::NoSession(reply) => Err(reply),
            Accepted::Initialize(id, _) => Err(Reply::error(
                Some(&id),
                &ErrorObject::invalid_params("params._meta is required"),
            )),
        }
    }

    /// Decodes a whole message that is a well-formed 2026-07-28 request
    /// (an object with `jsonrpc`, `id`, `method` and `params` carrying the
    /// required `_meta` members) and prepares it, in one pass over the
    /// bytes; anything else is handed back.
    ///
    /// Whenever it returns a request, `Message::from_slice_with_max_depth`
    /// followed by [`accept`](Self::accept) would have produced the same
    /// one: otherwise the caller takes that general path, which gives every
    /// error and every legacy message its usual answer. The nesting bound is
    /// checked before the parser sees the bytes, as there.
    pub(crate) fn prepare_message(
        &self,
        message: Bytes,
        max_depth: usize,
    ) -> Result<Prepared, Bytes> {
        let mut params = Params::default();
        let Some((id, method, meta)) = read_request(&message, max_depth, &mut params) else {
            return Err(message);
        };
        // Moved, not cloned: a clone of a `Vec`-backed `Bytes` allocates.
        params.raw = Some(RawParams::Message(message));
        Ok(PreparedRequest::new(id, method, params, meta, Era::Modern))
    }
}
