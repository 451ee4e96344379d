//! Serving one request of a legacy session: the legacy-only methods, and
//! the MRTR shim that runs the multi-round methods of the modern pipeline.
//!
//! The session supplies the `_meta` a modern request would carry (the
//! session's capabilities, client info and log level; the request's own
//! `progressToken`), see [`request_meta`]. When a handler answers
//! `input_required`, each input request becomes a real server-to-client
//! request (`elicitation/create`, `sampling/createMessage`, `roots/list`) on
//! the request's outbound channel; the answers and the sealed state go back
//! into the next round as `inputResponses` and `requestState`, up to
//! [`ServerConfig::legacy_max_rounds`](crate::ServerConfig) rounds. The
//! capability gate sees the session's capabilities, so an input request the
//! client did not declare is never sent. Everything here works on typed
//! values: the shim never reads an encoded reply back.
//!
//! Spec: basic/patterns/mrtr.mdx; (2025-11-25) client/elicitation.mdx,
//! client/sampling.mdx, client/roots.mdx, basic/utilities/ping.mdx,
//! server/utilities/logging.mdx, server/resources.mdx#subscriptions.

use super::Session;
use super::convert;
use crate::context::Outbound;
use crate::handler::BoxFuture;
use crate::server::{Job, LegacySession, Outcome, Prepared, Reply, Required, Server};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::{InputRequests, LoggingLevel, Method, RequestMeta};

/// How a legacy session serves the pipeline's requests.
impl LegacySession for Session {
    fn version(&self) -> &'static str {
        Session::version(self)
    }

    fn request_meta(&self, server: &Server, own: Option<Arc<RequestMeta>>) -> Arc<RequestMeta> {
        request_meta(server, self, own)
    }

    fn serve_method(&self, p: &Prepared) -> Outcome {
        serve_session_method(self, p)
    }

    fn rounds(
        self: Arc<Self>,
        server: Server,
        job: Job,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> BoxFuture<Outcome> {
        Box::pin(async move { rounds(&server, &self, job, cancel, outbound).await })
    }
}

/// Serves a method only the legacy revisions have, in `session`.
fn serve_session_method(session: &Session, p: &Prepared) -> Outcome {
    let empty = || Outcome::Complete(Reply::result(&p.id, &json!({})).into_body());
    match p.method {
        Method::Ping => empty(),
        Method::SetLoggingLevel => {
            #[derive(Deserialize)]
            struct SetLevel {
                level: LoggingLevel,
            }
            match p.params.raw.as_ref().map(|r| r.parse::<SetLevel>()) {
                Some(Ok(set)) => {
                    session.set_log_level(set.level);
                    empty()
                }
                Some(Err(e)) => {
                    Outcome::error(ErrorObject::invalid_params(format!("invalid params: {e}")))
                }
                None => Outcome::error(ErrorObject::invalid_params(
                    "logging/setLevel needs params.level",
                )),
            }
        }
        Method::SubscribeResource | Method::UnsubscribeResource => {
            let Some(uri) = p.params.uri.as_deref() else {
                return Outcome::error(ErrorObject::invalid_params(format!(
                    "{} needs params.uri",
                    p.method
                )));
            };
            if p.method == Method::SubscribeResource {
                session.subscribe(uri);
            } else {
                session.unsubscribe(uri);
            }
            empty()
        }
        // Spec (2025-11-25): basic/lifecycle.mdx#initialization — once.
        Method::Initialize => Outcome::error(ErrorObject::invalid_request(
            "the session is already initialized",
        )),
        _ => Outcome::error(ErrorObject::method_not_found(p.method.as_str())),
    }
}

/// The modern `_meta` for a request of `session`: the request's own legacy
/// `_meta` (its `progressToken`), plus what the session negotiated.
fn request_meta(
    server: &Server,
    session: &Session,
    legacy: Option<Arc<RequestMeta>>,
) -> Arc<RequestMeta> {
    let mut meta = legacy.map(Arc::unwrap_or_clone).unwrap_or_default();
    meta.protocol_version = server
        .config()
        .supported_versions
        .first()
        .cloned()
        .map(Into::into);
    meta.client_capabilities = Some(session.capabilities().clone());
    meta.client_info = session.client_info().cloned();
    meta.log_level = session.log_level();
    Arc::new(meta)
}

/// Runs a multi-round job for a legacy session: each `input_required`
/// round's requests go to the client, and the handler runs again with the
/// answers, as a modern client would retry.
async fn rounds(
    server: &Server,
    session: &Arc<Session>,
    job: Job,
    cancel: CancellationToken,
    out: Option<Outbound>,
) -> Outcome {
    let Job { p, kind } = job;
    let config = server.config();
    let mut round = 0u32;
    let mut next = p.params.clone();
    loop {
        round += 1;
        let prepared = p.with_params(next);
        // Each round counts, as a modern client's retry would: the first
        // was counted when the request was stepped.
        if round > 1
            && let Err(limited) = server.check_rate_limit(&prepared)
        {
            return limited;
        }
        let job = Job { p: prepared, kind };
        let Required { result, withdrawn } = match server
            .clone()
            .run_once(job, cancel.clone(), out.clone())
            .await
        {
            Outcome::InputRequired(required) => *required,
            done => return done,
        };
        if round >= config.legacy_max_rounds {
            return Outcome::error(ErrorObject::internal(format!(
                "the handler still required input after {round} rounds"
            )));
        }
        let Some(out) = &out else {
            return Outcome::error(ErrorObject::internal(
                "this transport cannot send requests to the client",
            ));
        };
        let requests = result.input_requests.unwrap_or_default();
        let answers = match ask(
            session,
            &requests,
            out,
            config.legacy_input_timeout,
            &cancel,
            withdrawn.as_ref(),
        )
        .await
        {
            Ok(a) => a,
            Err(e) => return Outcome::error(e),
        };
        // The next round: the original params, plus the answers and the
        // sealed state, exactly as a modern client would retry.
        next = p.params.clone();
        next.input_responses = Some(Box::new(Value::Object(answers)));
        next.request_state = result.request_state;
    }
}

/// Sends each input request to the client and collects the answers under
/// their keys. Once the handler withdraws its requests (`withdrawn`), the
/// one waiting is cancelled (dropping it sends `notifications/cancelled`)
/// and the answers so far are returned.
async fn ask(
    session: &Session,
    requests: &InputRequests,
    out: &Outbound,
    timeout: std::time::Duration,
    cancel: &CancellationToken,
    withdrawn: Option<&CancellationToken>,
) -> Result<Map<String, Value>, ErrorObject> {
    let mut answers = Map::new();
    for (key, request) in requests {
        let method = request.method();
        let params = convert::input_request(session.version(), request);
        let asked = session.request(method, params.as_ref(), out, timeout, cancel);
        let answer = match withdrawn {
            None => asked.await,
            Some(w) => tokio::select! {
                // Already withdrawn: nothing is sent.
                biased;
                () = w.cancelled() => {
                    tracing::debug!("the handler withdrew its {method} request");
                    return Ok(answers);
                }
                answer = asked => answer,
            },
        };
        let answer = answer.map_err(|e| {
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
