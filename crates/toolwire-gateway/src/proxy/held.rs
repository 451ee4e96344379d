//! A legacy upstream's own requests during a call (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`), turned into an `input_required`
//! downstream (which the server's legacy shim turns into the same request
//! for a legacy downstream client). The upstream call cannot be resumed
//! anywhere else, so it is held open in this replica (in the upstream's
//! table, for at most [`HOLD_FOR`]) and the downstream retry must come back
//! here: its sealed state names the held call. A retry that reaches
//! another replica, or comes after the hold expired, gets `-32602`
//! ("... is not held by this gateway replica ...").
//!
//! A legacy server's request names no call, so it is routed only while the
//! upstream has exactly one call in flight; with several, the request is
//! refused (the upstream sees an error naming it, which a server such as
//! the TypeScript SDK's passes on as its call's `isError` text) rather than
//! shown to the wrong client. A held call stays in flight until its retry
//! or its expiry, so this is also the bound on the held calls: one per
//! legacy upstream. While one is held, another call on that upstream that
//! asks for input is refused ("... has a call waiting for its client's
//! answer ..."), and calls that ask for nothing are served as usual. A
//! request the downstream client did not declare the capability for is
//! refused the same way.
//!
//! Cancellation from the upstream's side: when the upstream withdraws its
//! request (`notifications/cancelled`) or its call ends while the request
//! waits downstream, the relayed request is withdrawn too
//! ([`InputRequired::withdrawn_by`]): a legacy downstream client gets
//! `notifications/cancelled` for it, and the next round goes on without
//! its answer, to what the upstream did instead (its result, or its next
//! request). A modern downstream client cannot be told (2026-07-28 servers
//! send no cancellations outside `subscriptions/listen`); its retry gets
//! the same outcome, its answer dropped.

use super::{Relay, failure};
use crate::upstream::Link;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;
use toolwire::proto::types::{CallToolResult, InputRequest, ResultOrInputRequired};
use toolwire::{
    Client, ClientError, HandlerError, HandlerOutput, InputError, InputRequired, RequestContext,
    ToolCall, ToolResult,
};

/// How long a held upstream call waits for the downstream retry.
pub(crate) const HOLD_FOR: Duration = Duration::from_secs(120);

type Outcome = Result<ResultOrInputRequired<CallToolResult>, ClientError>;

/// The key of a relayed request in `inputRequests`.
fn key_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicit(_) => "elicitation",
        InputRequest::CreateMessage(_) => "sampling",
        InputRequest::ListRoots(_) => "roots",
    }
}

/// A request the upstream sent, waiting for its answer.
pub(crate) struct Ask {
    request: InputRequest,
    reply: oneshot::Sender<Value>,
    /// Fired when the upstream withdraws the request.
    withdrawn: CancellationToken,
}

/// A call in flight that the upstream may ask through.
struct Inflight {
    id: u64,
    asks: mpsc::Sender<Ask>,
    /// The downstream request's context: what its client can answer.
    cx: RequestContext,
}

/// One upstream's held calls (at most one: see the module's docs) and the
/// calls in flight that may be asked.
pub(crate) struct Holds {
    /// The upstream's name, for errors.
    upstream: String,
    next: AtomicU64,
    inflight: Mutex<Vec<Inflight>>,
    held: Mutex<HashMap<u64, Held>>,
}

struct Held {
    call: AbortOnDropHandle<Outcome>,
    /// Fired when the upstream call has ended.
    done: CancellationToken,
    asks: mpsc::Receiver<Ask>,
    /// The key and the reply of the request waiting downstream.
    reply: Option<(&'static str, oneshot::Sender<Value>)>,
    /// Fired when this hold ends (taken by the retry), to stop its watcher.
    parked: CancellationToken,
}

impl Holds {
    pub(crate) fn new(upstream: &str) -> Self {
        Self {
            upstream: upstream.to_owned(),
            next: AtomicU64::new(0),
            inflight: Mutex::default(),
            held: Mutex::default(),
        }
    }

    /// The upstream client's handler of a request the server sends: routes
    /// it to the one call in flight, and waits for the downstream answer.
    /// Dropping the returned future (the upstream cancelled the request)
    /// withdraws it downstream.
    pub(crate) async fn ask<T: DeserializeOwned>(
        &self,
        request: InputRequest,
    ) -> Result<T, InputError> {
        let upstream = &self.upstream;
        let method = request.method();
        let holding = self.held.lock().is_ok_and(|h| !h.is_empty());
        let tx = {
            let inflight = self
                .inflight
                .lock()
                .map_err(|_| InputError::new("gateway state poisoned"))?;
            match inflight.as_slice() {
                [one] if one.cx.supports_input(&request) => one.asks.clone(),
                [_] => {
                    return Err(InputError::new(format!(
                        "the gateway's client cannot answer {method} from upstream {upstream:?}: it did not declare the capability"
                    )));
                }
                [] => {
                    return Err(InputError::new(format!(
                        "no call of the gateway to upstream {upstream:?} is in flight"
                    )));
                }
                _ if holding => {
                    return Err(InputError::new(format!(
                        "upstream {upstream:?} already has a call waiting for its client's answer; a legacy server's {method} does not say which call it belongs to, so the gateway holds one such call per legacy upstream. Try again once that call is answered (or in at most {} s, when it expires)",
                        HOLD_FOR.as_secs()
                    )));
                }
                _ => {
                    return Err(InputError::new(format!(
                        "upstream {upstream:?} has several calls in flight; a legacy server's {method} does not say which one it belongs to, so it is refused rather than shown to the wrong client. Try again"
                    )));
                }
            }
        };
        let withdrawn = CancellationToken::new();
        let guard = withdrawn.clone().drop_guard();
        let (reply, answer) = oneshot::channel();
        tx.send(Ask {
            request,
            reply,
            withdrawn,
        })
        .await
        .map_err(|_| InputError::new("the call ended"))?;
        let answer = answer
            .await
            .map_err(|_| InputError::new("the downstream client did not answer in time"))?;
        guard.disarm();
        serde_json::from_value(answer)
            .map_err(|e| InputError::new(format!("the downstream client's answer is invalid: {e}")))
    }

    fn leave(&self, id: u64) {
        if let Ok(mut v) = self.inflight.lock() {
            v.retain(|i| i.id != id);
        }
    }
}

/// A call to a legacy upstream: the first round, or (with `hold`) the retry
/// that carries the answer to a held call's request.
pub(crate) async fn call(
    link: &Link,
    client: Client,
    call: ToolCall,
    hold: Option<u64>,
    cx: &RequestContext,
) -> Result<ToolResult, HandlerError> {
    let holds = &link.holds;
    let (id, mut held) = match hold {
        None => {
            let id = holds.next.fetch_add(1, Ordering::Relaxed);
            let (tx, asks) = mpsc::channel(1);
            if let Ok(mut v) = holds.inflight.lock() {
                v.push(Inflight {
                    id,
                    asks: tx,
                    cx: cx.clone(),
                });
            }
            let c = client.clone();
            let done = CancellationToken::new();
            let ended = done.clone();
            let task = AbortOnDropHandle::new(tokio::spawn(async move {
                let outcome = c.call_tool_once(call).await;
                ended.cancel();
                outcome
            }));
            (
                id,
                Held {
                    call: task,
                    done,
                    asks,
                    reply: None,
                    parked: CancellationToken::new(),
                },
            )
        }
        Some(id) => {
            let held = holds.held.lock().ok().and_then(|mut h| h.remove(&id));
            let Some(mut held) = held else {
                return Err(HandlerError::invalid_params(format!(
                    "the call to upstream {:?} this answer belongs to is not held by this gateway replica (it expired, or the retry reached another replica); call the tool again",
                    link.name()
                )));
            };
            if let Some((key, reply)) = held.reply.take() {
                match cx.input::<Value>(key)? {
                    // The upstream may have withdrawn it meanwhile: then
                    // the answer goes nowhere.
                    Some(answer) => {
                        let _ = reply.send(answer);
                    }
                    // Withdrawn (a legacy client's request was cancelled),
                    // or the call ended: go on to what the upstream did.
                    None if reply.is_closed() || held.done.is_cancelled() => {}
                    None => {
                        // Put it back (its watcher still runs): a retry
                        // with the answer may follow.
                        held.reply = Some((key, reply));
                        if let Ok(mut table) = holds.held.lock() {
                            table.insert(id, held);
                        }
                        return Err(HandlerError::invalid_params(format!(
                            "inputResponses lacks {key:?}"
                        )));
                    }
                }
            }
            // Taken by its retry: its watcher stops.
            held.parked.cancel();
            if let Ok(mut v) = holds.inflight.lock()
                && let Some(i) = v.iter_mut().find(|i| i.id == id)
            {
                // The retry's context answers what comes next.
                i.cx = cx.clone();
            }
            (id, held)
        }
    };
    let outcome = tokio::select! {
        r = &mut held.call => r.map_err(|e| ClientError::Transport(e.to_string())),
        ask = held.asks.recv() => match ask {
            Some(ask) => return park(link, id, held, ask),
            None => Err(ClientError::Disconnected),
        },
        () = cx.cancelled() => {
            holds.leave(id);
            return Err(HandlerError::failed("cancelled"));
        }
    };
    holds.leave(id);
    match outcome.and_then(|r| r) {
        Ok(ResultOrInputRequired::Complete(result)) => Ok(HandlerOutput::Complete(result)),
        Ok(ResultOrInputRequired::InputRequired(ir)) => {
            Ok(HandlerOutput::InputRequired(super::relay_input(link, ir)))
        }
        Err(e) => failure(link, &client, e).map(ToolResult::error_text),
    }
}

/// Keeps `held` for the retry and asks the downstream client; watches for
/// the upstream withdrawing its request, the call ending, and expiry.
fn park(link: &Link, id: u64, mut held: Held, ask: Ask) -> Result<ToolResult, HandlerError> {
    let key = key_of(&ask.request);
    held.reply = Some((key, ask.reply));
    let parked = CancellationToken::new();
    held.parked = parked.clone();
    let done = held.done.clone();
    {
        // At most one entry: an upstream's request is routed only while
        // it has one call in flight, and a held call stays in flight.
        let mut table = link
            .holds
            .held
            .lock()
            .map_err(|_| HandlerError::failed("gateway state poisoned"))?;
        table.insert(id, held);
    }
    let withdraw = CancellationToken::new();
    let holds = std::sync::Arc::clone(&link.holds);
    let upstream = link.name().to_owned();
    let tell = withdraw.clone();
    let withdrawn = ask.withdrawn;
    tokio::spawn(async move {
        let expiry = tokio::time::sleep(HOLD_FOR);
        tokio::pin!(expiry);
        tokio::select! {
            () = parked.cancelled() => return,
            () = withdrawn.cancelled() => {
                tracing::debug!(upstream, "the upstream withdrew its request");
                tell.cancel();
            }
            () = done.cancelled() => {
                tracing::debug!(upstream, "the upstream call ended while its request waited");
                tell.cancel();
            }
            () = &mut expiry => {}
        }
        tokio::select! {
            () = parked.cancelled() => return,
            () = &mut expiry => {}
        }
        let expired = holds.held.lock().ok().and_then(|mut h| {
            if parked.is_cancelled() {
                None
            } else {
                h.remove(&id)
            }
        });
        if expired.is_some() {
            holds.leave(id);
        }
        // Dropping the held call aborts it upstream.
    });
    let ir = InputRequired::new()
        .request(key, ask.request)
        .with_state(&Relay {
            u: link.name().to_owned(),
            s: None,
            h: Some(id),
        })
        .withdrawn_by(withdraw);
    Ok(HandlerOutput::InputRequired(ir))
}
