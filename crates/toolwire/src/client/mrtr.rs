//! The multi round-trip driver: send, and while the server answers
//! `input_required`, have the input handlers answer its input requests and
//! retry with a new id, the answers, and the `requestState` echoed byte for
//! byte (omitted when there was none). Answers and state live only in this
//! loop, so no other request ever carries them.
//!
//! Spec: basic/patterns/mrtr.mdx

use super::Client;
use super::answer::{Answer, Kind, Members};
use super::error::ClientError;
use super::method::MethodInfo;
use super::options::RequestOptions;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolwire_proto::types::{
    CallToolRequest, InputRequest, InputRequiredResult, InputResponses, RequestMethod,
};

/// How a driven request ended.
#[derive(Debug)]
pub(crate) enum Driven {
    /// A complete result, with the members its scan read (a raw result's).
    Complete(Answer, Option<Members>),
    /// A task handle, passed on rather than followed (`detach_task`).
    Task(Answer),
    /// Manual mode, or no input handlers at all: the caller decides.
    InputRequired(InputRequiredResult),
}

impl Client {
    /// Drives `method` from a first request without answers.
    pub(crate) async fn drive(
        &self,
        method: MethodInfo,
        params: Map<String, Value>,
        options: &RequestOptions,
        manual: bool,
    ) -> Result<Driven, ClientError> {
        let mut params = params;
        let responses = match params.remove("inputResponses") {
            Some(Value::Object(r)) => Some(r),
            _ => None,
        };
        let state = match params.remove("requestState") {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        self.drive_from(method, params, responses, state, options, manual)
            .await
    }

    /// Drives `method`, starting with the given answers and state (a manual
    /// retry) or none.
    pub(crate) async fn drive_from(
        &self,
        method: MethodInfo,
        mut params: Map<String, Value>,
        mut responses: Option<InputResponses>,
        mut state: Option<String>,
        options: &RequestOptions,
        manual: bool,
    ) -> Result<Driven, ClientError> {
        let mut rounds = 0;
        loop {
            let retry = responses.is_some() || state.is_some();
            // Each round carries its own answers and state, or none.
            match responses.take() {
                Some(r) => params.insert("inputResponses".into(), Value::Object(r)),
                None => params.remove("inputResponses"),
            };
            match state.take() {
                Some(s) => params.insert("requestState".into(), Value::String(s)),
                None => params.remove("requestState"),
            };
            // Spec: server/utilities/caching.mdx#cache-key — results of MRTR
            // retries are never cached, so only a first round goes through
            // the cache.
            let answer = if !retry && method.cacheable {
                Answer::Value(self.cached(method, params.clone(), options).await?)
            } else {
                Answer::Raw(self.request_raw(method, &params, options).await?)
            };
            let (kind, members) = answer.scan();
            let input_required = match kind? {
                Kind::Complete => return Ok(Driven::Complete(answer, members)),
                Kind::InputRequired => parse_input_required(method, answer)?,
                // Spec: extensions/tasks#capability-negotiation — only a
                // client that declared the extension takes a task handle,
                // and only from `tools/call`.
                Kind::Task
                    if self.declares_tasks(options)
                        && method.name == CallToolRequest::METHOD
                        && options.detach_task =>
                {
                    return Ok(Driven::Task(answer));
                }
                Kind::Task
                    if self.declares_tasks(options) && method.name == CallToolRequest::METHOD =>
                {
                    return self
                        .follow_task(answer, options)
                        .await
                        .map(|answer| Driven::Complete(answer, None));
                }
                Kind::Task => return Err(ClientError::UnknownResultType("task".into())),
            };
            if manual || !self.has_input_handlers() {
                return Ok(Driven::InputRequired(input_required));
            }
            if rounds == self.inner.max_rounds {
                return Err(ClientError::TooManyRounds(rounds));
            }
            rounds += 1;
            responses = self.answer(&input_required).await?;
            // Spec: basic/patterns/mrtr.mdx — echo the exact requestState,
            // and none when none was given.
            state = input_required.request_state;
        }
    }

    /// Whether a request with `options` declares the Tasks extension: the
    /// capabilities it sends instead of the client's say so, or the client
    /// was built [`with_tasks`](crate::ClientBuilder::with_tasks).
    fn declares_tasks(&self, options: &RequestOptions) -> bool {
        match &options.capabilities {
            Some(declared) => declared
                .extensions
                .as_ref()
                .is_some_and(|e| e.contains_key(toolwire_proto::types::TASKS_EXTENSION)),
            None => self.inner.tasks,
        }
    }

    pub(crate) fn has_input_handlers(&self) -> bool {
        let h = &self.inner.handlers;
        h.elicit.is_some() || h.sampling.is_some() || h.roots.is_some()
    }

    /// Answers every input request; `None` when there were none (the retry
    /// then carries only the state).
    pub(crate) async fn answer(
        &self,
        input_required: &InputRequiredResult,
    ) -> Result<Option<InputResponses>, ClientError> {
        let Some(requests) = &input_required.input_requests else {
            return Ok(None);
        };
        let handlers = &self.inner.handlers;
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let unsupported = || ClientError::UnsupportedInputRequest {
                key: key.clone(),
                method: request.method(),
            };
            let answer = match request {
                InputRequest::Elicit(p) => {
                    let h = handlers.elicit.as_ref().ok_or_else(unsupported)?;
                    to_value(h.call(key.clone(), p.clone()).await?)
                }
                InputRequest::CreateMessage(p) => {
                    let h = handlers.sampling.as_ref().ok_or_else(unsupported)?;
                    to_value(h.call(key.clone(), p.clone()).await?)
                }
                InputRequest::ListRoots(p) => {
                    let h = handlers.roots.as_ref().ok_or_else(unsupported)?;
                    to_value(h.call(key.clone(), p.clone()).await?)
                }
            }?;
            responses.insert(key.clone(), answer);
        }
        Ok(Some(responses))
    }
}

fn parse_input_required(method: MethodInfo, v: Answer) -> Result<InputRequiredResult, ClientError> {
    if !method.may_require_input {
        // Spec: basic/patterns/mrtr.mdx#supported-requests
        return Err(ClientError::Protocol(format!(
            "the server answered {} with input_required, which only tools/call, prompts/get and resources/read may get",
            method.name
        )));
    }
    parse_as::<InputRequiredResult>(method.name, v)
}

fn parse_as<T: DeserializeOwned>(method: &str, v: Answer) -> Result<T, ClientError> {
    v.parse_with(|e| {
        ClientError::Protocol(format!("malformed input_required result of {method}: {e}"))
    })
}

fn to_value<T: Serialize>(answer: T) -> Result<Value, ClientError> {
    serde_json::to_value(answer)
        .map_err(|e| ClientError::Protocol(format!("an input answer does not serialise: {e}")))
}
