//! A legacy upstream's `elicitation/create` during a call, turned into an
//! `input_required` downstream. The upstream call cannot be resumed
//! anywhere else, so it is held open in this replica (in the upstream's
//! table, for at most [`HOLD_FOR`]) and the downstream retry must come back
//! here: its sealed state names the held call. A retry that reaches
//! another replica, or comes after the hold expired, gets `-32602`
//! ("... is not held by this gateway replica ...").
//!
//! A legacy server's request names no call, so it is routed only while the
//! upstream has exactly one call in flight; with several, the elicitation
//! is refused (the upstream sees an error) rather than shown to the wrong
//! client.

use super::{Relay, failure};
use crate::upstream::Link;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::task::AbortOnDropHandle;
use toolwire::proto::types::{
    CallToolResult, ElicitRequestParams, ElicitResult, InputRequest, ResultOrInputRequired,
};
use toolwire::{
    Client, ClientError, HandlerError, HandlerOutput, InputError, InputRequired, RequestContext,
    ToolCall, ToolResult,
};

/// How long a held upstream call waits for the downstream retry.
pub(crate) const HOLD_FOR: Duration = Duration::from_secs(120);
/// Most calls one upstream holds at once; more are refused.
const MAX_HELD: usize = 64;
/// The key of the relayed elicitation in `inputRequests`.
const KEY: &str = "elicitation";

type Outcome = Result<ResultOrInputRequired<CallToolResult>, ClientError>;

/// An elicitation the upstream sent, waiting for its answer.
pub(crate) struct Ask {
    params: ElicitRequestParams,
    reply: oneshot::Sender<ElicitResult>,
}

/// One upstream's held calls and the calls in flight that may be asked.
#[derive(Default)]
pub(crate) struct Holds {
    next: AtomicU64,
    /// Calls in flight, each with where its elicitations go.
    inflight: Mutex<Vec<(u64, mpsc::Sender<Ask>)>>,
    held: Mutex<HashMap<u64, Held>>,
}

struct Held {
    call: AbortOnDropHandle<Outcome>,
    asks: mpsc::Receiver<Ask>,
    reply: Option<oneshot::Sender<ElicitResult>>,
}

impl Holds {
    /// The upstream client's elicitation handler: routes the request to
    /// the one call in flight.
    pub(crate) async fn ask(
        &self,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, InputError> {
        let tx = {
            let inflight = self
                .inflight
                .lock()
                .map_err(|_| InputError::new("gateway state poisoned"))?;
            match inflight.as_slice() {
                [(_, tx)] => tx.clone(),
                [] => return Err(InputError::new("no call of this gateway is in flight")),
                _ => {
                    return Err(InputError::new(
                        "several calls are in flight; the gateway cannot tell which one this elicitation belongs to",
                    ));
                }
            }
        };
        let (reply, answer) = oneshot::channel();
        tx.send(Ask { params, reply })
            .await
            .map_err(|_| InputError::new("the call ended"))?;
        answer
            .await
            .map_err(|_| InputError::new("the downstream client did not answer in time"))
    }

    fn leave(&self, id: u64) {
        if let Ok(mut v) = self.inflight.lock() {
            v.retain(|(i, _)| *i != id);
        }
    }
}

/// A call to a legacy upstream: the first round, or (with `hold`) the retry
/// that carries the answer to a held call's elicitation.
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
                v.push((id, tx));
            }
            let c = client.clone();
            let task =
                AbortOnDropHandle::new(tokio::spawn(async move { c.call_tool_once(call).await }));
            (
                id,
                Held {
                    call: task,
                    asks,
                    reply: None,
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
            let answer: ElicitResult = cx.input(KEY)?.ok_or_else(|| {
                HandlerError::invalid_params(format!("inputResponses lacks {KEY:?}"))
            })?;
            if let Some(reply) = held.reply.take() {
                let _ = reply.send(answer);
            }
            (id, held)
        }
    };
    let outcome = tokio::select! {
        r = &mut held.call => r.map_err(|e| ClientError::Transport(e.to_string())),
        ask = held.asks.recv() => match ask {
            Some(ask) => {
                held.reply = Some(ask.reply);
                return park(link, id, held, ask.params);
            }
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

/// Keeps `held` for the retry and asks the downstream client.
fn park(
    link: &Link,
    id: u64,
    held: Held,
    params: ElicitRequestParams,
) -> Result<ToolResult, HandlerError> {
    {
        let mut table = link
            .holds
            .held
            .lock()
            .map_err(|_| HandlerError::failed("gateway state poisoned"))?;
        if table.len() >= MAX_HELD {
            link.holds.leave(id);
            return Ok(ToolResult::error_text(format!(
                "upstream {:?} has too many calls waiting for input; try again later",
                link.name()
            )));
        }
        table.insert(id, held);
    }
    let holds = std::sync::Arc::clone(&link.holds);
    tokio::spawn(async move {
        tokio::time::sleep(HOLD_FOR).await;
        let expired = holds.held.lock().ok().and_then(|mut h| h.remove(&id));
        if expired.is_some() {
            holds.leave(id);
        }
        // Dropping the held call aborts it upstream.
    });
    let ir = InputRequired::new()
        .request(KEY, InputRequest::Elicit(params))
        .with_state(&Relay {
            u: link.name().to_owned(),
            s: None,
            h: Some(id),
        });
    Ok(HandlerOutput::InputRequired(ir))
}
