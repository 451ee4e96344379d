//! Serving one request of a legacy session: the legacy-only methods, and
//! the MRTR shim that runs every other method through the modern pipeline.
//!
//! The shim gives the pipeline the `_meta` a modern request would carry
//! (the session's capabilities, client info and log level; the request's own
//! `progressToken`). When a handler answers `input_required`, each input
//! request becomes a real server-to-client request (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) on the request's outbound
//! channel; the answers and the sealed state go back into the pipeline as
//! `inputResponses` and `requestState`, up to
//! [`ServerConfig::legacy_max_rounds`](crate::ServerConfig) rounds. The
//! capability gate sees the session's capabilities, so an input request the
//! client did not declare is never sent.
//!
//! Spec: basic/patterns/mrtr.mdx; (2025-11-25) client/elicitation.mdx,
//! client/sampling.mdx, client/roots.mdx, basic/utilities/ping.mdx,
//! server/utilities/logging.mdx, server/resources.mdx#subscriptions.

use super::Session;
use super::convert;
use crate::context::Outbound;
use crate::server::{Params, Prepared, Reply, Server};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::types::{
    LoggingLevel, RequestMeta, RequestMethod, SubscriptionsListenRequest, removed,
};
use toolwire_proto::{ErrorObject, Request};

/// Serves `req` for `session`. `out` carries notifications and
/// server-to-client requests to the client (for HTTP, the request's own
/// stream).
pub(crate) async fn serve(
    server: &Server,
    session: &Arc<Session>,
    req: Request,
    cancel: CancellationToken,
    out: Option<Outbound>,
) -> Reply {
    let id = req.id.clone();
    match req.method.as_str() {
        removed::PING => Reply::result(&id, &json!({})),
        removed::LOGGING_SET_LEVEL => {
            #[derive(Deserialize)]
            struct SetLevel {
                level: LoggingLevel,
            }
            match parse::<SetLevel>(&req) {
                Ok(p) => {
                    session.set_log_level(p.level);
                    Reply::result(&id, &json!({}))
                }
                Err(e) => Reply::error(Some(&id), &e),
            }
        }
        removed::RESOURCES_SUBSCRIBE | removed::RESOURCES_UNSUBSCRIBE => {
            #[derive(Deserialize)]
            struct Uri {
                uri: String,
            }
            match parse::<Uri>(&req) {
                Ok(p) if req.method == removed::RESOURCES_SUBSCRIBE => {
                    session.subscribe(&p.uri);
                    Reply::result(&id, &json!({}))
                }
                Ok(p) => {
                    session.unsubscribe(&p.uri);
                    Reply::result(&id, &json!({}))
                }
                Err(e) => Reply::error(Some(&id), &e),
            }
        }
        // Spec (2025-11-25): basic/lifecycle.mdx#initialization — once.
        removed::INITIALIZE => Reply::error(
            Some(&id),
            &ErrorObject::invalid_request("the session is already initialized"),
        ),
        SubscriptionsListenRequest::METHOD => {
            Reply::error(Some(&id), &ErrorObject::method_not_found(&req.method))
        }
        _ => rounds(server, session, req, cancel, out).await,
    }
}

fn parse<T: serde::de::DeserializeOwned>(req: &Request) -> Result<T, ErrorObject> {
    let raw = req.params.as_ref().map_or("{}", |p| p.get());
    serde_json::from_str(raw)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid params: {e}")))
}

/// The pipeline's encoded reply, read back.
#[derive(Deserialize)]
struct Decoded {
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

/// The modern `_meta` for a legacy request.
fn meta_for(server: &Server, session: &Session, legacy: Option<RequestMeta>) -> RequestMeta {
    let mut meta = legacy.unwrap_or_default();
    meta.protocol_version = server.config().supported_versions.first().cloned();
    meta.client_capabilities = Some(session.capabilities().clone());
    meta.client_info = session.client_info().cloned();
    meta.log_level = session.log_level();
    meta
}

async fn rounds(
    server: &Server,
    session: &Arc<Session>,
    req: Request,
    cancel: CancellationToken,
    out: Option<Outbound>,
) -> Reply {
    let id = req.id;
    let method = req.method;
    let raw = req.params;
    let version = session.version();
    let fail = |e: ErrorObject| Reply::error(Some(&id), &convert::error(&method, e));
    let mut params: Params = match raw.as_ref().map(|p| serde_json::from_str(p.get())) {
        None => Params::default(),
        Some(Ok(p)) => p,
        Some(Err(e)) => return fail(ErrorObject::invalid_params(format!("invalid params: {e}"))),
    };
    let meta = Arc::new(meta_for(
        server,
        session,
        params.meta.take().map(Arc::unwrap_or_clone),
    ));
    let config = server.config();
    let mut round = 0u32;
    loop {
        round += 1;
        let prepared = Prepared {
            id: id.clone(),
            method: method.clone().into(),
            params,
            meta: Arc::clone(&meta),
            principal: None,
        };
        let reply = server.execute(prepared, cancel.clone(), out.clone()).await;
        let decoded: Decoded = match serde_json::from_slice(reply.body()) {
            Ok(d) => d,
            Err(_) => return reply,
        };
        let result = match (decoded.result, decoded.error) {
            (_, Some(e)) => return fail(e),
            (Some(r), None) => r,
            (None, None) => return reply,
        };
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return convert::reply(version, &id, result);
        }
        if round >= config.legacy_max_rounds {
            return fail(ErrorObject::internal(format!(
                "the handler still required input after {round} rounds"
            )));
        }
        let Some(out) = &out else {
            return fail(ErrorObject::internal(
                "this transport cannot send requests to the client",
            ));
        };
        let answers = match ask(session, &result, out, config.legacy_input_timeout, &cancel).await {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        // The next round: the original params, plus the answers and the
        // sealed state, exactly as a modern client would retry.
        params = match raw.as_ref().map(|p| serde_json::from_str(p.get())) {
            Some(Ok(p)) => p,
            _ => Params::default(),
        };
        params.meta = None;
        params.input_responses = Some(Box::new(Value::Object(answers)));
        params.request_state = result
            .get("requestState")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
}

/// Sends each input request of an `input_required` result to the client and
/// collects the answers under their keys.
async fn ask(
    session: &Session,
    result: &Value,
    out: &Outbound,
    timeout: std::time::Duration,
    cancel: &CancellationToken,
) -> Result<Map<String, Value>, ErrorObject> {
    let mut answers = Map::new();
    let Some(requests) = result.get("inputRequests").and_then(Value::as_object) else {
        return Ok(answers);
    };
    for (key, request) in requests {
        let Some(method) = request.get("method").and_then(Value::as_str) else {
            continue;
        };
        let params = convert::input_request(session.version(), method, request.get("params"));
        let answer = session
            .request(method, params.as_ref(), out, timeout, cancel)
            .await
            .map_err(|e| {
                ErrorObject::internal(format!(
                    "the client answered {method} with an error: {}",
                    e.message
                ))
                .with_data(json!({ "code": e.code.0, "data": e.data }))
            })?;
        answers.insert(key.clone(), answer);
    }
    Ok(answers)
}
