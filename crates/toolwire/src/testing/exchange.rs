//! One request through the pipeline, as a transport serves it: encoded,
//! decoded by `prepare_message` or `accept`, the caller recorded, served by
//! `dispatch` (the server's layers, then the pipeline), its outcome encoded as the reply; and the legacy
//! `initialize` that opens a session.

use super::{Legacy, TestClient, TestError};
use crate::context::Outbound;
use crate::legacy::{self, Session};
use crate::server::{Accepted, Prepared, Reply, Server, Subscription};
use bytes::Bytes;
use futures_util::FutureExt as _;
use serde_json::{Map, Value, json};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::{
    CLIENT_CAPABILITIES_KEY, LOG_LEVEL_KEY, PROGRESS_TOKEN_KEY, PROTOCOL_VERSION,
    PROTOCOL_VERSION_KEY,
};
use toolwire_proto::types::{ClientCapabilities, InputRequest, Method};
use toolwire_proto::{ErrorObject, MAX_DEPTH, Message, RequestId};

/// The headers of a request sent as over HTTP.
#[cfg(feature = "http")]
pub(super) type Headers = http::HeaderMap;
/// Without the HTTP transport there is no header check to run.
#[cfg(not(feature = "http"))]
pub(super) type Headers = std::convert::Infallible;

/// What the server answered.
pub(super) enum Answer {
    /// An encoded JSON-RPC response.
    Reply(Bytes),
    /// A `subscriptions/listen` stream.
    Stream(Subscription),
}

impl Answer {
    /// The response's `result`, or its error.
    pub(super) fn into_result(self) -> Result<Value, TestError> {
        match self {
            Self::Reply(body) => read_reply(&body),
            Self::Stream(_) => Err(TestError::Unexpected(
                "the server opened a stream for a request that is not subscriptions/listen".into(),
            )),
        }
    }
}

/// The `result` of an encoded response, or its error.
pub(super) fn read_reply(body: &[u8]) -> Result<Value, TestError> {
    let mut response: Map<String, Value> = serde_json::from_slice(body)
        .map_err(|e| TestError::Unexpected(format!("the reply is not a JSON object: {e}")))?;
    if let Some(error) = response.remove("error") {
        let error: ErrorObject = serde_json::from_value(error)
            .map_err(|e| TestError::Unexpected(format!("the error does not decode: {e}")))?;
        return Err(TestError::Rpc(error));
    }
    response
        .remove("result")
        .ok_or_else(|| TestError::Unexpected("a reply with neither result nor error".into()))
}

impl TestClient {
    /// The params a client sends: `params` with this client's `_meta`
    /// merged in (members the caller put in `_meta` win).
    fn params_with_meta(&self, id: i64, params: Value) -> Value {
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            // Not an object: sent as it is, for the server to refuse.
            other => return other,
        };
        let mut meta = Map::new();
        if self.session.is_none() {
            meta.insert(PROTOCOL_VERSION_KEY.into(), json!(PROTOCOL_VERSION));
            let caps = serde_json::to_value(self.declared_capabilities()).unwrap_or_default();
            meta.insert(CLIENT_CAPABILITIES_KEY.into(), caps);
            if let Some(level) = self.log_level {
                meta.insert(LOG_LEVEL_KEY.into(), json!(level));
            }
        }
        if self.progress {
            meta.insert(PROGRESS_TOKEN_KEY.into(), json!(id));
        }
        meta.extend(self.meta.clone());
        if let Some(Value::Object(own)) = params.remove("_meta") {
            meta.extend(own);
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        Value::Object(params)
    }

    /// Serves one request, collecting what the handler emits.
    pub(super) async fn exchange(
        &self,
        method: &str,
        params: Value,
        headers: Option<&Headers>,
    ) -> Result<Answer, TestError> {
        let id = self.next();
        let message = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": method,
            "params": self.params_with_meta(id, params),
        });
        let bytes = Bytes::from(serde_json::to_vec(&message).unwrap_or_default());
        let mut p = match self.prepare(bytes) {
            Ok(p) => p,
            Err(reply) => return Ok(Answer::Reply(reply)),
        };
        self.authenticate(&mut p);
        #[cfg(feature = "http")]
        if let (Some(headers), crate::server::Era::Modern) = (headers, &p.era) {
            crate::transport::http::check_metadata_headers(headers, &p, &self.server)
                .map_err(TestError::Rpc)?;
        }
        #[cfg(not(feature = "http"))]
        let _ = headers;
        let served = tokio::time::timeout(self.timeout, self.execute(p)).await;
        served.map_err(|_| TestError::Timeout(self.timeout))?
    }

    /// The transport's boundary: the one-pass decoder, else the general
    /// path with this client's legacy session.
    fn prepare(&self, bytes: Bytes) -> Result<Prepared, Bytes> {
        let bytes = match self.server.prepare_message(bytes, MAX_DEPTH) {
            Ok(p) => return Ok(p),
            Err(bytes) => bytes,
        };
        let session = self
            .session
            .as_ref()
            .map(|l| legacy::for_pipeline(&l.session));
        match Message::from_slice(&bytes) {
            Ok(Message::Request(req)) => match self.server.accept(req, session) {
                Accepted::Request(p) => Ok(p),
                Accepted::Refused(reply, _) | Accepted::NoSession(reply) => Err(reply.into_body()),
                // As on stdio: a second `initialize` of a session.
                Accepted::Initialize(id, _) => Err(Reply::error(
                    Some(&id),
                    &ErrorObject::invalid_request(match &self.session {
                        Some(_) => "the session is already initialized",
                        None => "initialize opens a legacy session: use TestClient::legacy",
                    }),
                )
                .into_body()),
            },
            Ok(_) => {
                Err(Reply::error(None, &ErrorObject::invalid_request("not a request")).into_body())
            }
            Err(e) => Err(Reply::error(e.id(), &e.to_error_object()).into_body()),
        }
    }

    /// Records the caller, as an authenticating transport does (the
    /// pipeline's scope check refuses what a grant does not allow).
    fn authenticate(&self, p: &mut Prepared) {
        if let Some(principal) = &self.principal {
            p.set_principal(principal);
        }
        #[cfg(feature = "auth")]
        if let Some(grant) = &self.grant {
            p.set_grant(grant);
        }
    }

    /// `Server::dispatch` (the layers, then the pipeline) with the request's outbound channel drained while
    /// it runs: notifications are collected, the legacy shim's requests
    /// answered. A panicking handler is answered `-32603`, as on every
    /// transport.
    async fn execute(&self, p: Prepared) -> Result<Answer, TestError> {
        let id = p.id.clone();
        let shape = p.era.shape();
        let (tx, mut rx) = mpsc::unbounded_channel::<Bytes>();
        let cancel = CancellationToken::new();
        let serving = self
            .server
            .dispatch(p, || cancel, Some(Outbound::from(tx)))
            .outcome();
        let serving = AssertUnwindSafe(serving).catch_unwind();
        tokio::pin!(serving);
        let mut open = true;
        let outcome = loop {
            tokio::select! {
                biased;
                msg = rx.recv(), if open => match msg {
                    Some(msg) => self.on_outbound(&msg),
                    None => open = false,
                },
                outcome = &mut serving => break outcome,
            }
        };
        while let Ok(msg) = rx.try_recv() {
            self.on_outbound(&msg);
        }
        Ok(match outcome {
            Ok(outcome) => match outcome.into_reply(&id, shape) {
                // The HTTP transport's `403`, with the scopes of its challenge.
                Ok(reply) => {
                    #[cfg(feature = "auth")]
                    if let crate::server::Retry::StepUp(scopes) = reply.retry() {
                        let scopes = scopes.split(' ').map(str::to_owned).collect();
                        return Err(TestError::Forbidden { scopes });
                    }
                    Answer::Reply(reply.into_body())
                }
                Err(sub) => Answer::Stream(sub),
            },
            Err(_) => Answer::Reply(Reply::panicked(&id).into_body()),
        })
    }

    /// A message on a request's outbound channel: a notification to keep,
    /// or a server-to-client request of the legacy shim to answer.
    fn on_outbound(&self, msg: &[u8]) {
        #[derive(serde::Deserialize)]
        struct ServerRequest {
            id: RequestId,
            method: String,
            #[serde(default)]
            params: Option<Value>,
        }
        let Ok(request) = serde_json::from_slice::<ServerRequest>(msg) else {
            self.collect(msg);
            return;
        };
        let Some(legacy) = &self.session else {
            return;
        };
        let input = json!({ "method": request.method, "params": request.params });
        let answer = serde_json::from_value::<InputRequest>(input)
            .ok()
            .and_then(|r| self.script.answer(&r));
        let response = match answer {
            Some(result) => json!({ "jsonrpc": "2.0", "id": request.id, "result": result }),
            None => json!({
                "jsonrpc": "2.0",
                "id": request.id,
                "error": {
                    "code": -32601,
                    "message": format!("the test client has no answer for {}", request.method),
                },
            }),
        };
        if let Ok(Message::Response(r)) =
            Message::from_slice(&serde_json::to_vec(&response).unwrap_or_default())
        {
            legacy.session.resolve(r);
        }
    }
}

/// A legacy `initialize` at `version` through the general path, then what
/// `notifications/initialized` does on stdio: the session's notifications
/// flow to the returned receiver.
pub(super) fn initialize(
    server: &Server,
    version: &str,
    capabilities: &ClientCapabilities,
    id: i64,
) -> Result<Legacy, TestError> {
    let message = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": Method::Initialize.as_str(),
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": { "name": "toolwire-test-client", "version": env!("CARGO_PKG_VERSION") },
        },
    });
    let bytes = serde_json::to_vec(&message).unwrap_or_default();
    let Ok(Message::Request(req)) = Message::from_slice(&bytes) else {
        return Err(TestError::Unexpected("initialize does not encode".into()));
    };
    let (session, reply): (Arc<Session>, Bytes) = match server.accept(req, None) {
        Accepted::Initialize(id, init) => legacy::open(server, &id, *init),
        Accepted::Request(_) => {
            return Err(TestError::Unexpected(
                "initialize was taken for a modern request".into(),
            ));
        }
        Accepted::Refused(reply, _) | Accepted::NoSession(reply) => {
            read_reply(&reply.into_body())?;
            return Err(TestError::Unexpected("initialize was refused".into()));
        }
    };
    let initialize = read_reply(&reply)?;
    let (tx, rx) = mpsc::unbounded_channel();
    session.set_notifier(Some(legacy::Notifier::Writer(Outbound::from(tx))));
    session.spawn_forwarder(server.notification_bus(), None);
    Ok(Legacy {
        session,
        initialize,
        unsolicited: Mutex::new(rx),
    })
}

impl Drop for Legacy {
    /// The session ends with its client: its forwarder stops.
    fn drop(&mut self) {
        self.session.close();
    }
}
