//! Multi round-trip requests (MRTR) for handler authors: [`InputRequired`],
//! the value a handler returns to ask the client for input, and the pieces
//! behind it (typed answers, the capability gate, sealed `requestState`).
//!
//! Spec: basic/patterns/mrtr.mdx
//!
//! A handler that needs input returns an [`InputRequired`] carrying input
//! requests under keys it chooses, and optionally some state. The framework
//! drops or refuses requests the client cannot answer, seals the state
//! (plus the round number) into `requestState`, and answers
//! `resultType: "input_required"`. The client retries the same request with
//! `inputResponses` and the echoed `requestState`; the handler runs again
//! from the top and reads the answers and its state through
//! [`RequestContext`](crate::RequestContext).
//!
//! Only `tools/call`, `prompts/get` and `resources/read` may answer
//! `input_required`; the server glue in `server/rounds.rs` refuses, at
//! compile time, to be used for any other method. This module knows no
//! server: it sits below it.

mod answer;
mod gate;
mod round;
pub(crate) mod seal;

pub use answer::ElicitAnswer;
pub(crate) use gate::{admit, supports};
pub(crate) use round::{RoundInput, split_answers};
pub use seal::{STATE_KEY_LEN, STATE_KEYS_ENV, StateKeyError, StateKeys};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use toolwire_proto::types::{
    CreateMessageRequestParams, ElicitRequestFormParams, ElicitRequestUrlParams,
    ElicitRequestedSchema, InputRequest,
};

/// "I need input before I can finish": what a handler returns to ask the
/// client for elicitation, sampling or roots.
///
/// ```no_run
/// use toolwire::{ElicitAnswer, InputRequired, RequestContext, ToolError, ToolResult};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Name { name: String }
///
/// async fn greet(_: serde_json::Value, cx: RequestContext) -> Result<ToolResult, ToolError> {
///     match cx.input::<ElicitAnswer<Name>>("name")? {
///         Some(ElicitAnswer::Accept(n)) => Ok(ToolResult::text(format!("Hello, {}!", n.name))),
///         Some(_) => Ok(ToolResult::text("Hello, stranger!")),
///         None => Ok(InputRequired::new().elicit::<Name>("name", "What is your name?").into()),
///     }
/// }
/// ```
///
/// Every request is required by default: if the client did not declare the
/// capability it needs, the call fails with `-32021` listing what is missing.
/// A request added with [`request_if_supported`](Self::request_if_supported)
/// is dropped instead; if every request is dropped the call fails with
/// `-32021` as well, since the handler cannot proceed.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct InputRequired {
    pub(crate) requests: BTreeMap<String, Pending>,
    pub(crate) state: Option<Value>,
    /// Fired when the requests are withdrawn before they are answered.
    pub(crate) withdrawn: Option<tokio_util::sync::CancellationToken>,
    /// The first thing that went wrong while building, reported as an
    /// internal error when the value reaches the pipeline.
    pub(crate) error: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub(crate) request: InputRequest,
    pub(crate) optional: bool,
}

impl InputRequired {
    /// No requests and no state yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(mut self, key: impl Into<String>, request: InputRequest, optional: bool) -> Self {
        self.requests
            .insert(key.into(), Pending { request, optional });
        self
    }

    fn fail(mut self, why: String) -> Self {
        self.error.get_or_insert(why);
        self
    }

    /// Adds an input request under `key`, replacing any earlier one with the
    /// same key. The call fails with `-32021` if the client cannot answer it.
    pub fn request(self, key: impl Into<String>, request: impl Into<InputRequest>) -> Self {
        self.push(key, request.into(), false)
    }

    /// Adds an input request under `key` that is sent only if the client
    /// declared the capability it needs, and silently dropped otherwise.
    pub fn request_if_supported(
        self,
        key: impl Into<String>,
        request: impl Into<InputRequest>,
    ) -> Self {
        self.push(key, request.into(), true)
    }

    /// Asks the user to fill in a form whose fields are those of `T` (a flat
    /// struct of strings, numbers, booleans and string enums; doc comments
    /// become field descriptions). Read the answer as
    /// `cx.input::<ElicitAnswer<T>>(key)`.
    pub fn elicit<T: JsonSchema>(self, key: impl Into<String>, message: impl Into<String>) -> Self {
        match answer::form_schema::<T>() {
            Ok(schema) => self.elicit_form(key, message, schema),
            Err(why) => self.fail(why),
        }
    }

    /// Asks the user to fill in a form with a hand-written schema.
    pub fn elicit_form(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        schema: ElicitRequestedSchema,
    ) -> Self {
        let params = ElicitRequestFormParams::new(message, schema);
        self.request(key, InputRequest::Elicit(params.into()))
    }

    /// Sends the user to `url` for an interaction that must not pass through
    /// the client (URL mode). Read the answer as `cx.input::<ElicitAnswer<()>>(key)`.
    pub fn elicit_url(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        let params = ElicitRequestUrlParams::new(message, url);
        self.request(key, InputRequest::Elicit(params.into()))
    }

    /// Asks the client's model for a completion. Read the answer as
    /// `cx.input::<CreateMessageResult>(key)`.
    pub fn sample(self, key: impl Into<String>, params: CreateMessageRequestParams) -> Self {
        self.request(key, InputRequest::CreateMessage(params))
    }

    /// Asks for the client's roots. Read the answer as
    /// `cx.input::<ListRootsResult>(key)`.
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.request(key, InputRequest::list_roots())
    }

    /// Lets the handler withdraw these requests before they are answered,
    /// by cancelling `token`. It matters for a legacy client only, which
    /// gets real server-to-client requests and is waited for: once `token`
    /// fires, the requests not yet answered are cancelled
    /// (`notifications/cancelled`) and the handler runs the next round
    /// without their answers (its `requestState` as usual). A modern client
    /// has the `input_required` result already and is not told; its retry
    /// finds the handler's state as usual. (`toolwire-gateway` uses this
    /// when an upstream cancels the request it relays.)
    pub fn withdrawn_by(mut self, token: tokio_util::sync::CancellationToken) -> Self {
        self.withdrawn = Some(token);
        self
    }

    /// Carries `state` to the retry, sealed: the client cannot read or change
    /// it, and it opens only on a retry of the same request (same method,
    /// name and arguments, same principal) before it expires. Read it back
    /// with [`RequestContext::state`](crate::RequestContext::state).
    pub fn with_state<S: Serialize + ?Sized>(mut self, state: &S) -> Self {
        match serde_json::to_value(state) {
            Ok(v) => {
                self.state = Some(v);
                self
            }
            Err(e) => self.fail(format!("unserialisable request state: {e}")),
        }
    }

    /// The keys of the requests, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.requests.keys().map(String::as_str)
    }

    /// How many input requests there are.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether there are no input requests.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Confirm {
        confirm: bool,
    }

    #[test]
    fn builder_keeps_keys_unique_and_sorted() {
        let ir = InputRequired::new()
            .list_roots("b")
            .elicit::<Confirm>("a", "sure?")
            .list_roots("b");
        assert_eq!(ir.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert!(ir.error.is_none());
    }

    #[test]
    fn a_bad_form_type_is_remembered_as_an_error() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Bad {
            inner: Confirm,
        }
        let ir = InputRequired::new().elicit::<Bad>("k", "?");
        assert!(ir.error.as_deref().is_some_and(|e| e.contains("Bad")));
        assert!(ir.is_empty());
    }
}
