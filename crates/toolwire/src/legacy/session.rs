//! One legacy session: what `initialize` negotiated, the session-wide log
//! level and resource subscriptions, the server-to-client requests awaiting
//! an answer, the client's requests in flight (for `notifications/cancelled`
//! over HTTP), and where unsolicited notifications go.
//!
//! Never hold a lock across an await: the client's answer to a
//! server-to-client request arrives while the request that sent it waits.

use super::notifier::Notifier;
use crate::bus::{BusEvent, NotificationBus};
use crate::context::Outbound;
use bytes::Bytes;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use toolwire_proto::types::{
    CancelledNotification, ClientCapabilities, Implementation, LoggingLevel, NotificationMethod,
    ResourceUpdatedNotification,
};
use toolwire_proto::{
    ErrorCode, ErrorObject, RequestId, Response, encode_notification, encode_request,
};

type Waiter = oneshot::Sender<Result<Value, ErrorObject>>;

/// Whether the session's caller may read a resource, by URI.
pub(crate) type MayRead = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// A legacy session. Shared by every request of the session.
#[derive(Debug)]
#[cfg_attr(not(feature = "http"), allow(dead_code))] // `in_flight`, `confirmed`: HTTP only
pub(crate) struct Session {
    version: &'static str,
    capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<HashSet<String>>,
    pending: Mutex<HashMap<RequestId, Waiter>>,
    next_id: AtomicI64,
    /// The client's requests in flight on HTTP, by id. (stdio keeps its own
    /// map for both eras.)
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    /// The stdio writer, or the HTTP session's open GET stream.
    notifier: Mutex<Option<Notifier>>,
    /// Whether the client made a request after `initialize` (or, on stdio,
    /// sent `notifications/initialized`): until then the session may be
    /// expired early.
    confirmed: std::sync::atomic::AtomicBool,
    closed: CancellationToken,
}

impl Session {
    pub(crate) fn new(
        version: &'static str,
        capabilities: ClientCapabilities,
        client_info: Option<Implementation>,
    ) -> Self {
        Self {
            version,
            capabilities,
            client_info,
            log_level: Mutex::new(None),
            subscriptions: Mutex::new(HashSet::new()),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(0),
            in_flight: Mutex::new(HashMap::new()),
            notifier: Mutex::new(None),
            confirmed: std::sync::atomic::AtomicBool::new(false),
            closed: CancellationToken::new(),
        }
    }

    /// The negotiated protocol version.
    pub(crate) fn version(&self) -> &'static str {
        self.version
    }

    /// The capabilities the client declared in `initialize`.
    pub(crate) fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    pub(crate) fn client_info(&self) -> Option<&Implementation> {
        self.client_info.as_ref()
    }

    /// The level `logging/setLevel` set; `None` (no log messages) before.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level.lock().ok().and_then(|l| *l)
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        if let Ok(mut l) = self.log_level.lock() {
            *l = Some(level);
        }
    }

    pub(crate) fn subscribe(&self, uri: &str) {
        if let Ok(mut s) = self.subscriptions.lock() {
            s.insert(uri.to_owned());
        }
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        if let Ok(mut s) = self.subscriptions.lock() {
            s.remove(uri);
        }
    }

    /// Whether an update of `uri` concerns a subscription: the URI itself or
    /// a sub-resource of a subscribed one.
    fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions.lock().is_ok_and(|s| {
            s.iter()
                .any(|sub| uri == sub || uri.starts_with(&format!("{sub}/")))
        })
    }

    /// Where unsolicited notifications go from now on. A GET stream it
    /// replaces is closed.
    pub(crate) fn set_notifier(&self, notifier: Option<Notifier>) {
        let old = match self.notifier.lock() {
            Ok(mut n) => std::mem::replace(&mut *n, notifier),
            Err(_) => None,
        };
        if let Some(old) = old {
            old.close();
        }
    }

    /// Whether a notifier is attached and still open.
    pub(crate) fn has_notifier(&self) -> bool {
        self.notifier
            .lock()
            .is_ok_and(|n| n.as_ref().is_some_and(Notifier::is_open))
    }

    /// Marks the session as in use beyond its `initialize`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn confirm(&self) {
        self.confirmed.store(true, Ordering::Relaxed);
    }

    /// Whether the client did more than `initialize`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn is_confirmed(&self) -> bool {
        self.confirmed.load(Ordering::Relaxed)
    }

    fn notify(&self, msg: impl Into<Bytes>) {
        if let Ok(n) = self.notifier.lock()
            && let Some(notifier) = n.as_ref()
        {
            notifier.send(msg.into());
        }
    }

    fn notify_list(&self, list: crate::bus::ListChanged) {
        if let Ok(n) = self.notifier.lock()
            && let Some(notifier) = n.as_ref()
        {
            notifier.list_changed(list);
        }
    }

    /// Ends the session: the forwarder stops, the notifier is dropped, and
    /// every waiting server-to-client request fails.
    pub(crate) fn close(&self) {
        self.closed.cancel();
        self.set_notifier(None);
        if let Ok(mut p) = self.pending.lock() {
            p.clear();
        }
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    /// Forwards list changes and updates of subscribed resources to the
    /// notifier as plain notifications until the session closes. With
    /// `may_read` (the session's caller, when the resource server is on),
    /// only updates of resources the caller may read: a subscription also
    /// covers sub-resources, which may need scopes the subscribed one does
    /// not.
    pub(crate) fn spawn_forwarder(
        self: &Arc<Self>,
        bus: &Arc<dyn NotificationBus>,
        may_read: Option<MayRead>,
    ) {
        let mut events = bus.subscribe();
        let this = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    () = this.closed.cancelled() => break,
                    e = events.next() => match e { Some(e) => e, None => break },
                };
                match &event {
                    // Coalesced by a GET stream's queue: one pending change
                    // per list is enough.
                    BusEvent::ListChanged { list } => this.notify_list(*list),
                    BusEvent::ResourceUpdated { uri } => {
                        // Spec (2025-11-25): server/resources.mdx#subscriptions
                        if this.is_subscribed(uri) && may_read.as_ref().is_none_or(|f| f(uri)) {
                            let params = json!({ "uri": uri });
                            this.notify(encode_notification(
                                ResourceUpdatedNotification::METHOD,
                                Some(&params),
                            ));
                        }
                    }
                    // Legacy sessions have no tasks of this extension.
                    BusEvent::TaskChanged { .. } => {}
                }
            }
        });
    }

    /// Routes the client's answer to the server-to-client request it
    /// answers. Unknown ids are dropped.
    pub(crate) fn resolve(&self, response: Response) {
        let Some(id) = response.id else {
            return;
        };
        let waiter = self.pending.lock().ok().and_then(|mut p| p.remove(&id));
        let Some(waiter) = waiter else {
            tracing::debug!(%id, "a response to no pending request");
            return;
        };
        let outcome = response.outcome.and_then(|raw| {
            serde_json::from_str(raw.get())
                .map_err(|e| ErrorObject::invalid_params(format!("unreadable result: {e}")))
        });
        let _ = waiter.send(outcome);
    }

    /// Sends a server-to-client request on `out` and waits for the answer,
    /// at most `timeout`. However the wait ends without an answer (the
    /// timeout, `cancel`, or the future dropped with the request that needed
    /// it), the request is forgotten and the client is told with
    /// `notifications/cancelled`.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Option<&Value>,
        out: &Outbound,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, ErrorObject> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id.clone(), tx);
        }
        if out
            .send(Bytes::from(encode_request(&id, method, params)))
            .is_err()
        {
            self.forget(&id);
            return Err(ErrorObject::internal("the client connection is gone"));
        }
        let mut outstanding = Outstanding {
            session: self,
            id: Some(id),
            out,
            reason: "the request that needed it was cancelled",
        };
        let outcome = tokio::select! {
            r = tokio::time::timeout(timeout, rx) => r,
            () = cancel.cancelled() => return Err(ErrorObject::internal("cancelled")),
        };
        match outcome {
            Ok(Ok(answer)) => {
                outstanding.id = None;
                answer
            }
            Ok(Err(_)) => {
                // The session closed: there is nobody left to tell.
                outstanding.id = None;
                Err(ErrorObject::internal(
                    "the session ended before the client answered",
                ))
            }
            Err(_) => {
                outstanding.reason = "timed out";
                Err(ErrorObject::new(
                    ErrorCode::LEGACY_REQUEST_TIMEOUT,
                    format!(
                        "the client did not answer {method} within {} ms",
                        timeout.as_millis()
                    ),
                ))
            }
        }
    }

    /// Registers the client request `id` as in flight until the returned
    /// guard drops, so that `notifications/cancelled` naming it cancels
    /// `token`. `None` if another request of the session is in flight with
    /// the same id (cancellation is addressed by id).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn track(
        self: &Arc<Self>,
        id: &RequestId,
        token: &CancellationToken,
    ) -> Option<InFlight> {
        let mut map = self.in_flight.lock().ok()?;
        if map.get(id).is_some_and(|t| !t.is_cancelled()) {
            return None;
        }
        map.insert(id.clone(), token.clone());
        Some(InFlight {
            session: Arc::clone(self),
            id: id.clone(),
            token: token.clone(),
        })
    }

    /// Cancels the client request `id` if it is in flight. Spec
    /// (2025-11-25): basic/utilities/cancellation.mdx — a notification for
    /// an unknown or finished request is ignored.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn cancel(&self, id: &RequestId) {
        let token = self
            .in_flight
            .lock()
            .ok()
            .and_then(|map| map.get(id).cloned());
        match token {
            Some(token) => token.cancel(),
            None => tracing::debug!(%id, "notifications/cancelled for no request in flight"),
        }
    }

    fn forget(&self, id: &RequestId) {
        if let Ok(mut p) = self.pending.lock() {
            p.remove(id);
        }
    }
}

/// A server-to-client request still waiting for its answer. Dropped while
/// `id` is set, it withdraws the request: the waiter is forgotten and the
/// client gets `notifications/cancelled`, on the request's own channel or,
/// when that is gone (an HTTP response stream the client closed), on the
/// session's stream. Spec (2025-11-25): basic/utilities/cancellation.mdx
struct Outstanding<'a> {
    session: &'a Session,
    id: Option<RequestId>,
    out: &'a Outbound,
    reason: &'static str,
}

impl Drop for Outstanding<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        self.session.forget(&id);
        let params = json!({ "requestId": id, "reason": self.reason });
        let msg = Bytes::from(encode_notification(
            CancelledNotification::METHOD,
            Some(&params),
        ));
        if let Err(unsent) = self.out.send(msg) {
            self.session.notify(unsent.0);
        }
    }
}

/// A client request registered by [`Session::track`]; dropping it
/// unregisters the request.
#[derive(Debug)]
#[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP only
pub(crate) struct InFlight {
    session: Arc<Session>,
    id: RequestId,
    token: CancellationToken,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut map) = self.session.in_flight.lock()
            && map.get(&self.id).is_some_and(|t| *t == self.token)
        {
            map.remove(&self.id);
        }
    }
}
