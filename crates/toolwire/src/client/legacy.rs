//! What a legacy (initialize-era) server sends on its own, and the legacy
//! forms of modern features: the server's `elicitation/create`,
//! `sampling/createMessage`, `roots/list` and `ping` requests answered by
//! the same [`InputHandler`](super::InputHandler)s that answer MRTR input
//! requests (a `notifications/cancelled` for one drops its handler, and no
//! response is sent); list changes and resource updates fed into the cache and the
//! [`Subscription`]s; `listen` over `resources/subscribe`; and
//! `server/discover` answered from the `initialize` result.
//!
//! Spec (2025-11-25): client/elicitation.mdx, client/sampling.mdx,
//! client/roots.mdx, server/resources.mdx#subscriptions,
//! basic/utilities/ping.mdx

use super::Client;
use super::error::ClientError;
use super::listen::{ChangeNotification, Subscription};
use super::method::MethodInfo;
use super::notification::ServerNotification;
use super::options::RequestOptions;
use super::transport::Inbound;
use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::SERVER_INFO_KEY;
use toolwire_proto::types::{
    CancelledNotificationParams, CreateMessageRequest, ElicitRequest, ListRootsRequest,
    RequestMethod, SubscriptionFilter, removed,
};
use toolwire_proto::{ErrorCode, ErrorObject, RequestId, encode_error, encode_result};

impl Client {
    /// Starts the task that handles what the server sends on its own (once).
    pub(crate) fn start_inbound(&self) {
        let rx = self.inner.inbound_rx.lock().ok().and_then(|mut r| r.take());
        if let Some(rx) = rx {
            tokio::spawn(inbound_loop(Arc::downgrade(&self.inner), rx));
        }
    }

    /// A list change or resource update: stale cache entries go, and every
    /// legacy subscription hears of it.
    fn on_server_notification(&self, method: String, params: Option<Value>) {
        let note = ChangeNotification::parse(method, params);
        if let ChangeNotification::Other { method, .. } = &note {
            tracing::debug!("ignoring {method} from the server");
            return;
        }
        for what in note.invalidations() {
            self.inner.cache.invalidate(&what);
        }
        // No receivers is fine: nobody listens.
        let _ = self.inner.changes.send(Ok(note));
    }

    /// Refuses a request of the server: too many are being answered, or
    /// its id is already in use.
    async fn refuse_server_request(&self, id: RequestId, method: &str) {
        let e = ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("the client is answering too many requests of the server; {method} refused"),
        );
        if let Err(e) = self
            .inner
            .transport
            .post(Bytes::from(encode_error(Some(&id), &e)))
            .await
        {
            tracing::warn!("refusing the server's {method} failed: {e}");
        }
    }

    /// Answers one request of the server and posts the response.
    async fn answer_server_request(&self, id: RequestId, method: String, params: Option<Value>) {
        let outcome = if self.legacy_session().is_none() {
            // Spec: basic/transports/streamable-http.mdx#receiving-messages —
            // a 2026-07-28 server sends no requests.
            tracing::warn!("the server sent a {method} request, which 2026-07-28 does not allow");
            Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "server-to-client requests are not part of 2026-07-28",
            ))
        } else {
            self.handle_server_request(&id, &method, params).await
        };
        let body = match outcome {
            Ok(v) => encode_result(&id, &v),
            Err(e) => encode_error(Some(&id), &e),
        };
        if let Err(e) = self.inner.transport.post(Bytes::from(body)).await {
            tracing::warn!("answering the server's {method} failed: {e}");
        }
    }

    async fn handle_server_request(
        &self,
        id: &RequestId,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        let handlers = &self.inner.handlers;
        let key = id.to_string();
        let params = params.unwrap_or_else(|| Value::Object(Map::new()));
        let missing = || {
            ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("the client has no handler for {method}"),
            )
        };
        match method {
            removed::PING => Ok(json!({})),
            ElicitRequest::METHOD => {
                let h = handlers.elicit.as_ref().ok_or_else(missing)?;
                answer(h.call(key, typed(method, params)?).await)
            }
            CreateMessageRequest::METHOD => {
                let h = handlers.sampling.as_ref().ok_or_else(missing)?;
                answer(h.call(key, typed(method, params)?).await)
            }
            ListRootsRequest::METHOD => {
                let h = handlers.roots.as_ref().ok_or_else(missing)?;
                answer(h.call(key, typed(method, params)?).await)
            }
            _ => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        }
    }

    /// `listen` in a legacy session: the session's own notifications,
    /// filtered, after `resources/subscribe` for each URI asked for.
    pub(crate) async fn legacy_listen(
        &self,
        filter: SubscriptionFilter,
    ) -> Result<Subscription, ClientError> {
        let rx = self.inner.changes.subscribe();
        for uri in filter.resource_subscriptions.iter().flatten() {
            let mut params = Map::new();
            params.insert("uri".into(), Value::String(uri.clone()));
            self.request_value(
                MethodInfo::legacy(removed::RESOURCES_SUBSCRIBE),
                params,
                &RequestOptions::default(),
            )
            .await?;
        }
        let id = RequestId::Number(
            self.inner
                .next_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        );
        Ok(Subscription::from_broadcast(id, filter, rx))
    }

    /// `server/discover` for a legacy server: the `initialize` result in
    /// the discover shape, never cached (the session may change).
    pub(crate) fn legacy_discover(&self) -> Option<Value> {
        let session = self.legacy_session()?;
        let init = &session.initialize;
        let mut out = Map::new();
        out.insert("resultType".into(), Value::from("complete"));
        out.insert("supportedVersions".into(), json!([session.version]));
        out.insert(
            "capabilities".into(),
            init.get("capabilities")
                .cloned()
                .unwrap_or_else(|| json!({})),
        );
        if let Some(i) = init.get("instructions") {
            out.insert("instructions".into(), i.clone());
        }
        out.insert("ttlMs".into(), Value::from(0));
        out.insert("cacheScope".into(), Value::from("private"));
        if let Some(info) = init.get("serverInfo") {
            out.insert("_meta".into(), json!({ SERVER_INFO_KEY: info }));
        }
        Some(Value::Object(out))
    }
}

/// Most of the server's requests the client answers at once; past it, a
/// request is refused with an error.
const MAX_SERVER_REQUESTS: usize = 256;

/// The server's requests being answered, by id, each with what stops it.
type Answering = Arc<Mutex<HashMap<RequestId, CancellationToken>>>;

async fn inbound_loop(inner: Weak<super::Inner>, mut rx: mpsc::UnboundedReceiver<Inbound>) {
    let answering: Answering = Arc::default();
    while let Some(message) = rx.recv().await {
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let client = Client { inner };
        match message {
            // Spec (2025-11-25): basic/utilities/cancellation.mdx — the
            // server withdraws a request it sent: its handler stops, and no
            // response is sent.
            Inbound::Notification { method, params }
                if ServerNotification::of(&method) == ServerNotification::Cancelled =>
            {
                let withdrawn = params
                    .and_then(|p| serde_json::from_value::<CancelledNotificationParams>(p).ok());
                let stop = withdrawn.and_then(|w| {
                    answering
                        .lock()
                        .ok()
                        .and_then(|mut a| a.remove(&w.request_id))
                });
                if let Some(stop) = stop {
                    stop.cancel();
                }
            }
            Inbound::Notification { method, params } => {
                client.on_server_notification(method, params);
            }
            // Each answer may wait for a person: never block the others.
            Inbound::Request { id, method, params } => {
                let stop = CancellationToken::new();
                let admitted = answering.lock().is_ok_and(|mut a| {
                    let free = a.len() < MAX_SERVER_REQUESTS && !a.contains_key(&id);
                    if free {
                        a.insert(id.clone(), stop.clone());
                    }
                    free
                });
                if !admitted {
                    tokio::spawn(async move { client.refuse_server_request(id, &method).await });
                    continue;
                }
                let answering = Arc::clone(&answering);
                tokio::spawn(async move {
                    tokio::select! {
                        () = client.answer_server_request(id.clone(), method, params) => {}
                        () = stop.cancelled() => {}
                    }
                    if let Ok(mut a) = answering.lock() {
                        a.remove(&id);
                    }
                });
            }
            Inbound::Lost(reason) => {
                let _ = client.inner.changes.send(Err(reason.into()));
            }
        }
    }
}

fn typed<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, ErrorObject> {
    serde_json::from_value(params).map_err(|e| {
        ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("invalid {method} params: {e}"),
        )
    })
}

fn answer<T: Serialize>(
    outcome: Result<T, super::input::InputError>,
) -> Result<Value, ErrorObject> {
    let result = outcome.map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))?;
    serde_json::to_value(result).map_err(|e| {
        ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("the answer does not serialise: {e}"),
        )
    })
}
