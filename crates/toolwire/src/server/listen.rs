//! `subscriptions/listen`: long-lived streams of change notifications,
//! independent of the transport.
//!
//! Spec: basic/patterns/subscriptions.mdx
//!
//! # How a transport serves a listen request
//!
//! 1. `Server::prepare` the request as usual, then call
//!    [`Server::listen`] instead of `Server::execute`. An `Err` is the
//!    complete JSON-RPC error reply (bad version, missing
//!    `params.notifications`, too many listeners, shutting down): send it
//!    like any other reply.
//! 2. Loop on [`Subscription::next`] and write what it yields, in order:
//!    - [`SubscriptionFrame::Notification`]: one encoded notification. The
//!      first is always `notifications/subscriptions/acknowledged` with the
//!      honoured subset of the filter; every one carries
//!      `_meta["io.modelcontextprotocol/subscriptionId"]` = the request's id.
//!    - [`SubscriptionFrame::Close`]: the server is shutting down; this is
//!      the graceful `subscriptions/listen` result. Write it, then end the
//!      stream.
//!    - `None`: the stream ended without a result (the notification bus
//!      went away). End the stream; see below for stdio.
//! 3. When the client goes away, drop the [`Subscription`]. That frees its
//!    listener slot and its bus subscription. Never send a response then.
//!
//! **stdio** (`transport/stdio.rs`): every stream shares stdout and is told
//! apart by its subscription id, the JSON-RPC id of the listen request. The
//! client ends one with `notifications/cancelled` naming that id; the stream
//! then stops without a response. When a stream ends without a result the
//! server sends `notifications/cancelled` referencing the listen request
//! (spec: basic/patterns/cancellation.mdx — the only use a server may make of
//! that notification).
//!
//! **Streamable HTTP** (`transport/http.rs`): each listen request is its own
//! `text/event-stream` response. Write each frame as one SSE event (one
//! `data:` line), send SSE comment keep-alives (`: keep-alive`) while idle so
//! proxies keep the connection open, and drop the `Subscription` when the
//! client disconnects: closing the stream is the client's cancellation. On
//! `Close`, write the result as the last event and end the response body.

use super::accept::Prepared;
use super::outcome::{Reply, RpcError};
use super::{Server, ServerInner};
use crate::bus::{BusEvent, BusStream, ListChanged};
use bytes::Bytes;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use toolwire_proto::meta::SUBSCRIPTION_ID_KEY;
use toolwire_proto::types::{
    Implementation, Meta, NotificationMethod, PromptListChangedNotification,
    ResourceListChangedNotification, ResourceUpdatedNotification, SubscriptionFilter,
    SubscriptionsAcknowledgedNotification, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenResult, TaskStatusNotification, TaskStatusNotificationParams,
    ToolListChangedNotification,
};
use toolwire_proto::{ErrorObject, RequestId, encode_notification};

/// The most task ids one listen stream follows.
const MAX_TASK_IDS: usize = 100;

/// One open `subscriptions/listen` stream. See the module docs for how a
/// transport drives it.
pub(crate) struct Subscription {
    id: RequestId,
    /// Boxed: the stream travels inside `Outcome`s, kept small.
    filter: Box<SubscriptionFilter>,
    ack: Option<Bytes>,
    events: BusStream,
    server: Server,
    done: bool,
    _slot: ListenerSlot,
    /// The caller: `notifications/tasks` go out for its own tasks only.
    principal: Option<Arc<str>>,
    /// The caller's grant, when the resource server is on: an update of a
    /// resource it may not read is not sent, should one come to need
    /// scopes after the stream opened (`listen` refused the ones that
    /// needed them then).
    #[cfg(feature = "auth")]
    grant: Option<Arc<crate::auth::scope::Grant>>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

/// What a [`Subscription`] yields.
#[derive(Debug)]
pub(crate) enum SubscriptionFrame {
    /// An encoded notification to write on the stream.
    Notification(Bytes),
    /// The graceful end: write this `subscriptions/listen` result, then close.
    Close(Reply),
}

/// A place among the open listeners, given back on drop.
struct ListenerSlot(Arc<ServerInner>);

impl ListenerSlot {
    fn acquire(inner: &Arc<ServerInner>) -> Option<Self> {
        let max = inner.config.max_listeners;
        inner
            .listeners
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(Arc::clone(inner)))
    }
}

impl Drop for ListenerSlot {
    fn drop(&mut self) {
        self.0.listeners.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Server {
    /// Opens a listen stream for a prepared `subscriptions/listen` request.
    pub(crate) fn listen(&self, p: &Prepared) -> Result<Subscription, RpcError> {
        let Some(requested) = &p.params.notifications else {
            return Err(ErrorObject::invalid_params(
                "subscriptions/listen needs params.notifications",
            )
            .into());
        };
        // Spec: extensions/tasks#task-status-notifications — task
        // notifications need the extension declared.
        if requested.task_ids.is_some() && !super::tasks::declares_tasks(&p.meta) {
            return Err(RpcError::from(super::tasks::tasks_required(format!(
                "Missing required client capability: notifications.taskIds needs the {} extension declared in the request's client capabilities",
                toolwire_proto::types::TASKS_EXTENSION
            ))));
        }
        if self.is_shutting_down() {
            return Err(RpcError::Busy(ErrorObject::internal(
                "the server is shutting down; listen elsewhere",
            )));
        }
        let Some(slot) = ListenerSlot::acquire(&self.inner) else {
            let max = self.inner.config.max_listeners;
            return Err(RpcError::Busy(
                ErrorObject::internal(format!(
                    "too many open subscriptions (the limit is {max}); close one and retry"
                ))
                .with_data(json!({ "maxListeners": max })),
            ));
        };
        let filter = self.honoured(requested);
        // Subscribe before acknowledging, so no change after the ack is missed.
        let events = self.inner.bus.subscribe();
        let ack = encode_notification(
            SubscriptionsAcknowledgedNotification::METHOD,
            Some(&SubscriptionsAcknowledgedNotificationParams {
                notifications: filter.clone(),
                meta: Some(subscription_meta(&p.id)),
            }),
        );
        Ok(Subscription {
            id: p.id.clone(),
            filter: Box::new(filter),
            ack: Some(Bytes::from(ack)),
            events,
            server: self.clone(),
            done: false,
            _slot: slot,
            principal: p.principal().cloned(),
            #[cfg(feature = "auth")]
            grant: p.grant().cloned(),
        })
    }

    /// The part of `requested` this server honours: list changes it
    /// advertises `listChanged` for, and resource subscriptions if it
    /// advertises `resources.subscribe`.
    ///
    /// Spec: basic/patterns/subscriptions.mdx#acknowledgment — unsupported
    /// types are omitted.
    fn honoured(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let caps = self.capabilities();
        let yes = |asked: Option<bool>, offered: Option<bool>| {
            (asked == Some(true) && offered == Some(true)).then_some(true)
        };
        let resources = caps.resources.as_ref();
        SubscriptionFilter {
            tools_list_changed: yes(
                requested.tools_list_changed,
                caps.tools.as_ref().and_then(|t| t.list_changed),
            ),
            prompts_list_changed: yes(
                requested.prompts_list_changed,
                caps.prompts.as_ref().and_then(|t| t.list_changed),
            ),
            resources_list_changed: yes(
                requested.resources_list_changed,
                resources.and_then(|r| r.list_changed),
            ),
            resource_subscriptions: requested.resource_subscriptions.clone().filter(|uris| {
                !uris.is_empty() && resources.and_then(|r| r.subscribe) == Some(true)
            }),
            // Spec: extensions/tasks#task-status-notifications — the ack
            // names the ids notifications will go out for. Another
            // principal's or an unknown id is named too (so that the ack
            // tells nothing), but nothing is ever sent for it.
            task_ids: requested
                .task_ids
                .as_ref()
                .map(|ids| {
                    let mut ids: Vec<String> = ids.iter().take(MAX_TASK_IDS).cloned().collect();
                    ids.sort_unstable();
                    ids.dedup();
                    ids
                })
                .filter(|ids| !ids.is_empty() && self.offers_tasks()),
        }
    }
}

/// `notifications/tasks` with the task as `tasks/get` would show it now,
/// if it is the caller's.
///
/// Spec: extensions/tasks#task-status-notifications
async fn task_status(
    server: Server,
    principal: Option<Arc<str>>,
    subscription: &RequestId,
    task_id: &str,
) -> Option<Bytes> {
    let store = &server.inner.tasks.options.store;
    let record = store.get(task_id).await.ok()??;
    if record.owner.as_deref() != principal.as_deref() {
        return None;
    }
    let params = TaskStatusNotificationParams {
        task: record.detailed(),
        meta: Some(subscription_meta(subscription)),
    };
    Some(Bytes::from(encode_notification(
        TaskStatusNotification::METHOD,
        Some(&params),
    )))
}

fn subscription_meta(id: &RequestId) -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        SUBSCRIPTION_ID_KEY.to_owned(),
        serde_json::to_value(id).unwrap_or(Value::Null),
    );
    meta
}

impl Subscription {
    /// The subscription id: the listen request's JSON-RPC id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// The notifications this stream carries (what the ack announced).
    #[allow(dead_code, reason = "for transports and tests")]
    pub(crate) fn filter(&self) -> &SubscriptionFilter {
        &self.filter
    }

    /// The next frame to write; `None` once the stream is over. Cancel-safe:
    /// dropping the future loses nothing.
    pub(crate) async fn next(&mut self) -> Option<SubscriptionFrame> {
        if let Some(ack) = self.ack.take() {
            return Some(SubscriptionFrame::Notification(ack));
        }
        if self.done {
            return None;
        }
        loop {
            tokio::select! {
                biased;
                () = self.server.inner.closing.cancelled() => {
                    self.done = true;
                    return Some(SubscriptionFrame::Close(self.closing_result()));
                }
                event = self.events.next() => match event {
                    Some(BusEvent::TaskChanged { task_id }) if self.wants_task(&task_id) => {
                        let (server, principal) = (self.server.clone(), self.principal.clone());
                        if let Some(frame) = task_status(server, principal, &self.id, &task_id).await {
                            return Some(SubscriptionFrame::Notification(frame));
                        }
                    }
                    Some(BusEvent::TaskChanged { .. }) => {}
                    Some(event) => {
                        if let Some(frame) = self.encode(&event) {
                            return Some(SubscriptionFrame::Notification(frame));
                        }
                    }
                    None => {
                        self.done = true;
                        return None;
                    }
                },
            }
        }
    }

    /// Whether the client asked for `notifications/tasks` of this task.
    fn wants_task(&self, task_id: &str) -> bool {
        self.filter
            .task_ids
            .as_ref()
            .is_some_and(|ids| ids.binary_search_by(|id| id.as_str().cmp(task_id)).is_ok())
    }

    /// `event` as a notification on this stream, if the client asked for it.
    ///
    /// Spec: basic/patterns/subscriptions.mdx#opening-a-stream — never send
    /// a type the client did not request.
    fn encode(&self, event: &BusEvent) -> Option<Bytes> {
        let meta = subscription_meta(&self.id);
        let f = &self.filter;
        let (method, params) = match event {
            BusEvent::ListChanged { list } => {
                let (wanted, method) = match list {
                    ListChanged::Tools => {
                        (f.tools_list_changed, ToolListChangedNotification::METHOD)
                    }
                    ListChanged::Prompts => (
                        f.prompts_list_changed,
                        PromptListChangedNotification::METHOD,
                    ),
                    ListChanged::Resources => (
                        f.resources_list_changed,
                        ResourceListChangedNotification::METHOD,
                    ),
                };
                if wanted != Some(true) {
                    return None;
                }
                (method, json!({ "_meta": meta }))
            }
            BusEvent::ResourceUpdated { uri } => {
                if !f
                    .resource_subscriptions
                    .as_ref()
                    .is_some_and(|uris| uris.contains(uri))
                {
                    return None;
                }
                #[cfg(feature = "auth")]
                if let Some(grant) = &self.grant
                    && self.server.resource_lacking(grant, uri).is_some()
                {
                    return None;
                }
                (
                    ResourceUpdatedNotification::METHOD,
                    json!({ "uri": uri, "_meta": meta }),
                )
            }
            BusEvent::TaskChanged { .. } => return None,
        };
        Some(Bytes::from(encode_notification(method, Some(&params))))
    }

    /// The `subscriptions/listen` result that ends the stream gracefully.
    ///
    /// Spec: basic/patterns/subscriptions.mdx#graceful-closure
    fn closing_result(&self) -> Reply {
        let mut result = SubscriptionsListenResult::new(self.id.clone());
        let c = &self.server.inner.config;
        result.meta.server_info = Some(Implementation::new(&c.name, &c.version));
        Reply::result(&self.id, &result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerConfig;
    use crate::server::{Outcome, Step};
    use serde_json::json;
    use toolwire_proto::{Message, Request};

    fn request(id: i64, params: Value) -> Request {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let line =
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
        match Message::from_slice(line.to_string().as_bytes()) {
            Ok(Message::Request(r)) => r,
            other => panic!("not a request: {other:?}"),
        }
    }

    fn open(server: &Server, id: i64, filter: Value) -> Result<Subscription, ErrorObject> {
        let p = server
            .prepare(request(id, json!({ "notifications": filter })))
            .expect("prepared");
        open_prepared(server, p)
    }

    /// The pipeline's answer to a prepared listen request.
    fn open_prepared(server: &Server, p: Prepared) -> Result<Subscription, ErrorObject> {
        match server.step(p) {
            Step::Done(Outcome::Stream(s)) => Ok(*s),
            Step::Done(Outcome::Error(e)) => Err(e.modern().clone()),
            other => panic!("not a stream or an error: {other:?}"),
        }
    }

    async fn frame(s: &mut Subscription) -> Value {
        match s.next().await {
            Some(SubscriptionFrame::Notification(b)) => serde_json::from_slice(&b).expect("json"),
            other => panic!("expected a notification, got {other:?}"),
        }
    }

    fn error_code(e: &ErrorObject) -> i32 {
        e.code.0
    }

    #[tokio::test]
    async fn ack_comes_first_with_the_honoured_subset() {
        let server = Server::new(ServerConfig::default());
        let mut s = open(
            &server,
            7,
            json!({"toolsListChanged": true, "promptsListChanged": false,
                   "resourceSubscriptions": ["file:///a"]}),
        )
        .expect("opens");
        server.publish(ListChanged::Tools.into());
        let ack = frame(&mut s).await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        let honoured = &ack["params"]["notifications"];
        assert_eq!(honoured["toolsListChanged"], true, "{ack}");
        // Asked as `false`: not a subscription.
        assert!(honoured.get("promptsListChanged").is_none(), "{ack}");
        assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID_KEY], 7);
        let n = frame(&mut s).await;
        assert_eq!(n["method"], "notifications/tools/list_changed");
        assert_eq!(n["params"]["_meta"][SUBSCRIPTION_ID_KEY], 7);
    }

    #[tokio::test]
    async fn unrequested_types_are_never_sent() {
        let server = Server::new(ServerConfig::default());
        let mut s = open(&server, 1, json!({"promptsListChanged": true})).expect("opens");
        let ack = frame(&mut s).await;
        let prompts_honoured = ack["params"]["notifications"]["promptsListChanged"] == true;
        server.publish(ListChanged::Tools.into());
        server.publish(ListChanged::Resources.into());
        server.publish(BusEvent::ResourceUpdated {
            uri: "file:///a".into(),
        });
        server.publish(ListChanged::Prompts.into());
        let mut got = Vec::new();
        while let Ok(Some(f)) =
            tokio::time::timeout(std::time::Duration::from_millis(100), s.next()).await
        {
            match f {
                SubscriptionFrame::Notification(b) => {
                    got.push(serde_json::from_slice::<Value>(&b).expect("json"));
                }
                SubscriptionFrame::Close(_) => panic!("closed"),
            }
        }
        let methods: Vec<&Value> = got.iter().map(|m| &m["method"]).collect();
        if prompts_honoured {
            assert_eq!(methods, [&json!("notifications/prompts/list_changed")]);
        } else {
            assert!(methods.is_empty(), "{got:?}");
        }
    }

    #[tokio::test]
    async fn the_listener_limit_is_enforced_and_slots_come_back() {
        let server = Server::new(ServerConfig::default().with_max_listeners(2));
        let a = open(&server, 1, json!({})).expect("first");
        let _b = open(&server, 2, json!({})).expect("second");
        let full = open(&server, 3, json!({})).expect_err("third is refused");
        assert_eq!(error_code(&full), -32603);
        let body = json!({ "error": full });
        assert_eq!(body["error"]["data"]["maxListeners"], 2);
        assert!(
            body["error"]["message"]
                .as_str()
                .expect("message")
                .contains("too many")
        );
        drop(a);
        assert!(open(&server, 4, json!({})).is_ok());
    }

    #[tokio::test]
    async fn shutdown_closes_with_the_listen_result() {
        let server = Server::new(ServerConfig::default());
        let mut s = open(&server, 9, json!({"toolsListChanged": true})).expect("opens");
        let _ack = frame(&mut s).await;
        server.shutdown();
        let Some(SubscriptionFrame::Close(reply)) = s.next().await else {
            panic!("expected the closing result");
        };
        let v: Value = serde_json::from_slice(reply.body()).expect("json");
        assert_eq!(v["id"], 9);
        assert_eq!(v["result"]["resultType"], "complete");
        assert_eq!(v["result"]["_meta"][SUBSCRIPTION_ID_KEY], 9);
        assert!(s.next().await.is_none());
        assert_eq!(
            error_code(&open(&server, 10, json!({})).expect_err("refused")),
            -32603
        );
    }

    #[tokio::test]
    async fn missing_filter_and_bad_version_are_errors() {
        let server = Server::new(ServerConfig::default());
        let p = server.prepare(request(1, json!({}))).expect("prepared");
        assert_eq!(
            error_code(&open_prepared(&server, p).expect_err("no filter")),
            -32602
        );
        let mut r = request(2, json!({"notifications": {}}));
        r.params = Some(
            serde_json::value::to_raw_value(&json!({"notifications": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "v999",
                "io.modelcontextprotocol/clientCapabilities": {}
            }}))
            .expect("raw"),
        );
        let p = server.prepare(r).expect("prepared");
        assert_eq!(
            error_code(&open_prepared(&server, p).expect_err("version")),
            -32022
        );
    }
}
