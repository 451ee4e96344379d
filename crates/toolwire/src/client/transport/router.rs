//! Routing for transports where the messages of every request share one
//! channel (stdio, and the 2024-11-05 HTTP+SSE stream): each incoming
//! message goes to the request it belongs to, and a request dropped before
//! its response is cancelled with `notifications/cancelled`.
//!
//! Routing: a response by its `id`; `notifications/progress` by its
//! `progressToken`; a notification carrying
//! `_meta["io.modelcontextprotocol/subscriptionId"]` to the
//! `subscriptions/listen` request with that id; `notifications/message` to
//! the one in-flight request that asked for logs (there is no other way to
//! tell which request a log message is about; with several such requests it
//! goes to `tracing` instead). A request from the server, and a
//! notification no request waits for, go to the inbound sink.

use super::{Decoded, Exchange, Inbound, InboundSink, Incoming, Outgoing, decode_any};
use crate::client::error::ClientError;
use crate::client::notification::ServerNotification;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use toolwire_proto::meta::SUBSCRIPTION_ID_KEY;
use toolwire_proto::types::{CancelledNotification, NotificationMethod, ProgressToken};
use toolwire_proto::{RequestId, encode_notification};

struct Pending {
    tx: mpsc::UnboundedSender<Result<Incoming, ClientError>>,
    progress_token: Option<ProgressToken>,
    wants_logs: bool,
}

/// The requests waiting for messages, and where the rest goes.
#[derive(Default)]
pub(crate) struct Routes {
    pending: HashMap<RequestId, Pending>,
    /// Set when the reader has stopped: no more messages will come.
    pub(crate) closed: Option<String>,
    /// Requests from the server, and notifications no request waits for.
    pub(crate) inbound: InboundSink,
}

pub(crate) type Shared = Arc<Mutex<Routes>>;

/// Registers `request` before it is sent; its messages arrive on the
/// returned exchange, and dropping that early sends
/// `notifications/cancelled` through `out`.
pub(crate) fn register(
    routes: &Shared,
    request: &Outgoing,
    out: mpsc::UnboundedSender<Bytes>,
) -> Result<RoutedExchange, ClientError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut r = routes
        .lock()
        .map_err(|_| ClientError::Transport("routing table poisoned".into()))?;
    if let Some(reason) = &r.closed {
        return Err(ClientError::Transport(reason.clone()));
    }
    r.pending.insert(
        request.id.clone(),
        Pending {
            tx,
            progress_token: request.progress_token.clone(),
            wants_logs: request.wants_logs,
        },
    );
    Ok(RoutedExchange {
        id: request.id.clone(),
        rx,
        routes: Arc::clone(routes),
        out,
        done: false,
    })
}

/// The messages of one routed request.
pub(crate) struct RoutedExchange {
    id: RequestId,
    rx: mpsc::UnboundedReceiver<Result<Incoming, ClientError>>,
    routes: Shared,
    out: mpsc::UnboundedSender<Bytes>,
    done: bool,
}

impl RoutedExchange {
    /// Ends the request with `error` (its message could not be sent).
    pub(crate) fn fail(&mut self, error: ClientError) -> ClientError {
        self.done = true;
        error
    }
}

impl Exchange for RoutedExchange {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<Incoming, ClientError>>> {
        Box::pin(async move {
            if self.done {
                return None;
            }
            let item = self.rx.recv().await;
            match &item {
                Some(Ok(Incoming::Response(_))) | Some(Err(_)) | None => self.done = true,
                Some(Ok(Incoming::Notification { .. })) => {}
            }
            item
        })
    }
}

impl Drop for RoutedExchange {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.pending.remove(&self.id);
        }
        if !self.done {
            // Spec: basic/patterns/cancellation.mdx — without a stream of
            // its own, a request is cancelled by notification.
            let params = json!({ "requestId": self.id, "reason": "cancelled by the client" });
            let msg = encode_notification(CancelledNotification::METHOD, Some(&params));
            let _ = self.out.send(Bytes::from(msg));
        }
    }
}

/// Ends every pending request: no more messages will come, for `reason`.
pub(crate) fn close_routes(routes: &Shared, reason: String) {
    if let Ok(mut r) = routes.lock() {
        // Dropping the senders ends every exchange with `None`.
        r.pending.clear();
        r.closed.get_or_insert(reason);
    }
}

/// Fails every pending request with a transport error naming `reason`,
/// tells the inbound sink that the connection is lost, then closes the
/// routes: the connection broke under them.
pub(crate) fn fail_routes(routes: &Shared, reason: String) {
    if let Ok(mut r) = routes.lock() {
        for (_, p) in r.pending.drain() {
            let _ = p.tx.send(Err(ClientError::Transport(reason.clone())));
        }
        r.inbound.deliver(Inbound::Lost(reason.clone()));
        r.closed.get_or_insert(reason);
    }
}

/// Routes one message from the server.
pub(crate) fn route(routes: &Shared, message: &[u8]) {
    let (incoming, id) = match decode_any(message) {
        Ok(Decoded::Message(incoming, id)) => (incoming, id),
        Ok(Decoded::Request(request)) => {
            let sink = routes.lock().map(|r| r.inbound.clone());
            if let Ok(sink) = sink {
                sink.deliver(request);
            }
            return;
        }
        Err(e) => {
            tracing::warn!("ignoring a message from the server: {e}");
            return;
        }
    };
    let Ok(mut r) = routes.lock() else {
        return;
    };
    match &incoming {
        Incoming::Response(_) => {
            let Some(id) = id else {
                tracing::warn!("the server sent an error without an id: {incoming:?}");
                return;
            };
            match r.pending.remove(&id) {
                Some(p) => {
                    let _ = p.tx.send(Ok(incoming));
                }
                None => tracing::debug!("dropping a response to {id}, which is not pending"),
            }
        }
        Incoming::Notification { method, params } => {
            let target = notification_target(&r, method, params.as_ref());
            match target.and_then(|id| r.pending.get(&id)) {
                Some(p) => {
                    let _ = p.tx.send(Ok(incoming));
                }
                None if ServerNotification::of(method) == ServerNotification::Log => {
                    tracing::info!(target: "toolwire::client::server_log", params = ?params, "server log message");
                }
                None => {
                    let Incoming::Notification { method, params } = incoming else {
                        return;
                    };
                    r.inbound.deliver(Inbound::Notification { method, params });
                }
            }
        }
    }
}

/// Which pending request a notification belongs to.
fn notification_target(r: &Routes, method: &str, params: Option<&Value>) -> Option<RequestId> {
    if let Some(sub) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(SUBSCRIPTION_ID_KEY))
    {
        return serde_json::from_value(sub.clone()).ok();
    }
    let kind = ServerNotification::of(method);
    if kind == ServerNotification::Cancelled {
        // The server ends a subscription this way.
        return params
            .and_then(|p| p.get("requestId"))
            .and_then(|id| serde_json::from_value(id.clone()).ok());
    }
    if kind == ServerNotification::Progress {
        let token: ProgressToken =
            serde_json::from_value(params?.get("progressToken")?.clone()).ok()?;
        return r
            .pending
            .iter()
            .find(|(_, p)| p.progress_token.as_ref() == Some(&token))
            .map(|(id, _)| id.clone());
    }
    if kind == ServerNotification::Log {
        let mut logging = r.pending.iter().filter(|(_, p)| p.wants_logs);
        let first = logging.next()?;
        return logging.next().is_none().then(|| first.0.clone());
    }
    None
}
