//! The server side of one MRTR round, shared by `tools/call`, `prompts/get`
//! and `resources/read`: before the handler runs, check `inputResponses` and
//! open `requestState` ([`Server::begin_round`]); after, turn an
//! [`InputRequired`] into the `input_required` result
//! ([`Server::input_required`]).
//!
//! A method handler uses it like this:
//!
//! ```text
//! let (round, input) = self.begin_round::<GetPromptRequest>(&mut p, &name, &args)?;
//! let cx = RequestContext::new(..).with_round(input);
//! match handler(args, cx).await {
//!     Ok(Outcome::InputRequired(ir)) => self.input_required(round, ir, &name, &args),
//!     ..
//! }
//! ```
//!
//! `begin_round` refuses, at compile time, a method whose
//! `RequestMethod::MAY_REQUIRE_INPUT` is false, and [`Mrtr`] can only be made
//! by it, so no other method can answer `input_required`.

use super::{Outcome, Prepared, Required, Server};
use crate::mrtr::seal::{self, Binding};
use crate::mrtr::{self, InputRequired, RoundInput};
use serde_json::Value;
use std::sync::Arc;
use std::time::SystemTime;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::{
    ClientCapabilities, InputRequiredResult, RequestMeta, RequestMethod, ResultType,
};

/// A request that may answer `input_required`, between [`Server::begin_round`]
/// and [`Server::input_required`].
///
/// The [`Binding`] (a SHA-256 over the method, target and canonical
/// arguments) is computed only when it is needed: by `begin_round` to open
/// an echoed `requestState`, or by `input_required` to seal a new one. A
/// first-round call that completes, nearly every call, never computes it.
#[derive(Debug)]
pub(crate) struct Mrtr {
    meta: Arc<RequestMeta>,
    method: &'static str,
    principal: Option<Arc<str>>,
    /// Computed already (to open the echoed state). Boxed: only a retry
    /// has one, and this travels in every call's future.
    binding: Option<Box<Binding>>,
    round: u32,
}

impl Mrtr {
    /// The binding of this request, whose target and arguments (the same
    /// that were given to `begin_round`) are `target` and `arguments`.
    fn binding(&self, target: &str, arguments: &Value) -> Binding {
        match &self.binding {
            Some(b) => (**b).clone(),
            None => Binding::new(self.method, target, arguments, self.principal.as_deref()),
        }
    }
}

static NO_CAPABILITIES: std::sync::OnceLock<ClientCapabilities> = std::sync::OnceLock::new();

impl Server {
    /// Reads the MRTR members of a request to `M` whose target (tool or
    /// prompt name, resource URI) is `target`: `inputResponses` must be an
    /// object (`-32602`), and an echoed `requestState` must open under this
    /// server's keys and be bound to this method, target, arguments and
    /// principal (`-32602` otherwise, never a new prompt).
    ///
    /// Takes `inputResponses` and `requestState` out of `p`.
    pub(crate) fn begin_round<M: RequestMethod>(
        &self,
        p: &mut Prepared,
        target: &str,
        arguments: &Value,
    ) -> Result<(Mrtr, RoundInput), Outcome> {
        const {
            assert!(
                M::MAY_REQUIRE_INPUT,
                "only tools/call, prompts/get and resources/read may answer input_required"
            );
        }
        // Spec: basic/patterns/mrtr.mdx#error-handling — a malformed
        // InputResponses is a protocol error.
        let responses = match p.params.input_responses.take().map(|b| *b) {
            None => None,
            Some(Value::Object(map)) => Some(map),
            Some(_) => {
                return Err(Outcome::error(ErrorObject::invalid_params(
                    "inputResponses must be an object keyed like the inputRequests it answers",
                )));
            }
        };
        let (round, state, binding, asked) = match p.params.request_state.take() {
            None => (1, Value::Null, None, Vec::new()),
            Some(sealed) => {
                let Some(keys) = self.state_keys() else {
                    return Err(no_keys());
                };
                let binding =
                    Binding::new(M::METHOD, target, arguments, p.principal().map(|p| &**p));
                match seal::open(keys, &binding, &sealed, SystemTime::now()) {
                    Ok(opened) => (
                        opened.round.saturating_add(1),
                        opened.state,
                        Some(Box::new(binding)),
                        opened.asked,
                    ),
                    Err(why) => {
                        tracing::debug!(method = M::METHOD, target, "requestState refused: {why}");
                        // Spec: basic/patterns/mrtr.mdx#server-requirements-basic-workflow
                        // — reject state that fails verification; never re-prompt.
                        return Err(Outcome::error(ErrorObject::invalid_params(format!(
                            "requestState failed verification: {why}"
                        ))));
                    }
                }
            }
        };
        // Spec: basic/patterns/mrtr.mdx#error-handling — information the
        // server did not ask for is ignored. Only answers to the requests the
        // verified state's round sent count: without a state (toolwire always
        // seals one with its input requests) nothing was asked, and the
        // round starts again as if no answers had come.
        let (responses, unsolicited) = match responses {
            None => (None, None),
            Some(all) => mrtr::split_answers(all, binding.is_some().then_some(asked.as_slice())),
        };
        let mrtr = Mrtr {
            meta: Arc::clone(&p.meta),
            method: M::METHOD,
            principal: p.principal().cloned(),
            binding,
            round,
        };
        Ok((
            mrtr,
            RoundInput {
                round,
                responses,
                unsolicited,
                state,
            },
        ))
    }

    /// The `input_required` answer: input requests the client can answer,
    /// and the sealed state. `-32021` if a required request needs a
    /// capability the client lacks, or if every request had to be dropped.
    ///
    /// `target` and `arguments` must be those given to `begin_round`: the
    /// state is bound to them.
    pub(crate) fn input_required(
        &self,
        m: Mrtr,
        ir: InputRequired,
        target: &str,
        arguments: &Value,
    ) -> Outcome {
        if let Some(why) = ir.error {
            crate::log_limit::error_limited!("a handler built an invalid input_required: {why}");
            return Outcome::error(ErrorObject::internal(
                "the server built an invalid input request",
            ));
        }
        let caps = m
            .meta
            .client_capabilities
            .as_ref()
            .unwrap_or_else(|| NO_CAPABILITIES.get_or_init(ClientCapabilities::default));
        let requests = match mrtr::admit(caps, ir.requests) {
            Ok(requests) => requests,
            Err(e) => return Outcome::error(e),
        };
        let Some(keys) = self.state_keys() else {
            return no_keys();
        };
        let state = ir.state.unwrap_or(Value::Null);
        let ttl = self.inner.config.state_ttl;
        // The state is always sealed, even when the handler keeps none: it
        // carries the round and binds the retry to this request.
        let binding = m.binding(target, arguments);
        // The keys sent, so that the retry accepts answers to them only.
        let asked = requests.keys().cloned().collect();
        let now = SystemTime::now();
        let sealed = match seal::seal(keys, &binding, m.round, asked, &state, ttl, now) {
            Ok(s) => s,
            Err(e) => {
                crate::log_limit::error_limited!("sealing requestState failed: {e}");
                return Outcome::error(ErrorObject::internal("could not seal requestState"));
            }
        };
        let result = InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: (!requests.is_empty()).then_some(requests),
            request_state: Some(sealed),
            meta: Some(self.result_meta()),
        };
        Outcome::InputRequired(Box::new(Required {
            result,
            withdrawn: ir.withdrawn,
        }))
    }

    /// The configured keyring, or the process's random one.
    pub(crate) fn state_keys(&self) -> Option<&seal::StateKeys> {
        self.inner
            .config
            .state_keys
            .as_ref()
            .or_else(|| seal::process_keys())
    }
}

fn no_keys() -> Outcome {
    Outcome::error(ErrorObject::internal(
        "no key is available for requestState",
    ))
}
